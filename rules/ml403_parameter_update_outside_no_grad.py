import ast

from mllint.analysis.facets.gradients import under_no_grad, updated_in_place
from mllint.rule import Rule

PARAMETER_ITERATORS = {"parameters", "named_parameters"}


class ParameterUpdateOutsideNoGrad(Rule):
    """
    ## What it does
    Reports in-place updates of parameters in a loop over `model.parameters()` (or
    `named_parameters()`) that is not under `torch.no_grad()`: `p -= lr * p.grad`, `p.add_(...)`,
    `p.zero_()`. Updates through `p.data`, flag changes (`p.requires_grad_(False)`, `p.detach_()`), and
    updates under `torch.no_grad()` or in a function decorated with it are fine and not reported.

    ## Why is this bad?
    A parameter is a leaf that requires grad: changing it in place while autograd records raises
    `RuntimeError: a leaf Variable that requires grad is being used in an in-place operation` at the
    first update, after the data loading and the first forward pass have already run.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    model(torch.randn(4, 3)).sum().backward()
    for p in model.parameters():
        p -= 0.1 * p.grad
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    model(torch.randn(4, 3)).sum().backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
    ```

    ## Fix safety
    There is no fix: which statements belong under `torch.no_grad()` is for the author to decide.
    """

    code = "ML403"
    name = "parameter-update-outside-no-grad"
    message = "in-place update of parameter `{name}` outside `torch.no_grad()`: raises at the first step"
    requires_any_text = ("parameters",)

    def visit_For(self, node: ast.For) -> None:
        if not (isinstance(node.target, (ast.Name, ast.Tuple)) and self._iterates_parameters(node.iter)):
            return
        parameter = node.target if isinstance(node.target, ast.Name) else node.target.elts[-1]
        if not isinstance(parameter, ast.Name):
            return
        for statement in ast.walk(node):
            target = updated_in_place(statement)
            if isinstance(target, ast.Name) and target.id == parameter.id and not under_no_grad(self.ctx, statement):
                self.report(statement, self.message.format(name=parameter.id))

    def _iterates_parameters(self, iterator: ast.AST) -> bool:
        return (
            isinstance(iterator, ast.Call)
            and isinstance(iterator.func, ast.Attribute)
            and iterator.func.attr in PARAMETER_ITERATORS
        )
