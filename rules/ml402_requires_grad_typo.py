import ast

from mllint.analysis.facets.parameters import REQUIRES_GRAD_TYPOS, is_module
from mllint.findings import Applicability, Edit, Position, Severity
from mllint.rule import Rule


class RequiresGradTypo(Rule):
    """
    ## What it does
    Reports assignments to `require_grad` (and `requires_grads`, `requires_grad_`) where
    `requires_grad` was meant: `param.require_grad = False`. On a module (`model.require_grad = False`),
    ML411 reports it: `requires_grad` would freeze nothing there either.

    ## Why is this bad?
    Tensors accept any attribute, so the assignment succeeds and does nothing: the layer meant to be
    frozen keeps training (or the one meant to train stays frozen), and no error says so.

    ## Example
    ```python
    import torch

    backbone = torch.nn.Linear(4, 4)
    for param in backbone.parameters():
        param.require_grad = False
    ```

    ## Use instead
    ```python
    import torch

    backbone = torch.nn.Linear(4, 4)
    for param in backbone.parameters():
        param.requires_grad = False
    ```

    ## Fix safety
    The fix renames the attribute to `requires_grad`. It is safe: the assignment had no effect, and the
    fix makes it do what it says.
    """

    code = "ML402"
    name = "requires-grad-typo"
    message = "`{attribute}` is not a tensor attribute: the assignment does nothing; `requires_grad` was meant"
    severity = Severity.ERROR
    fix_applicability = Applicability.SAFE
    requires_any_text = ("require",)  # every typo of `requires_grad` it knows

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr in REQUIRES_GRAD_TYPOS and not is_module(self.ctx, target.value):
                end = self.ctx.end(target)  # the attribute's name ends the expression
                name = Edit(Position(end.line, end.column - len(target.attr)), end, "requires_grad")
                fix = self.ctx.fix("Use `requires_grad`", Applicability.SAFE, name)
                self.report(target, self.message.format(attribute=target.attr), fix)
