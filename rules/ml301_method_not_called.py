import ast

from mllint.findings import Applicability, Severity
from mllint.rule import Rule

# Methods whose only purpose is their side effect: naming them without calling them does nothing.
SIDE_EFFECT_METHODS = frozenset({"eval", "train", "zero_grad", "step", "backward"})


class MethodNotCalled(Rule):
    """
    ## What it does
    Reports `model.eval`, `model.train`, `optimizer.zero_grad`, `optimizer.step`, `scheduler.step` and
    `loss.backward` written as a statement without the call parentheses.

    ## Why is this bad?
    The statement only looks the method up and throws it away: nothing happens, and Python raises no
    error. `model.eval` leaves dropout and batch-norm in training mode during evaluation,
    `optimizer.zero_grad` lets gradients accumulate across steps, and `loss.backward` or
    `optimizer.step` silently skip the update, so the model does not learn.

    ## Example
    ```python
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    model.eval
    with torch.no_grad():
        predictions = model(torch.randn(2, 4))
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    model.eval()
    with torch.no_grad():
        predictions = model(torch.randn(2, 4))
    ```

    ## Fix safety
    The fix adds `()`. It is safe: the statement had no effect, and calling the method is what it was
    written for.
    """

    code = "ML301"
    name = "method-not-called"
    message = "`{method}` is not called: the statement does nothing"
    severity = Severity.ERROR
    fix_applicability = Applicability.SAFE
    requires_any_text = tuple(sorted(SIDE_EFFECT_METHODS))

    def visit_Expr(self, node: ast.Expr) -> None:
        target = node.value
        if not (isinstance(target, ast.Attribute) and target.attr in SIDE_EFFECT_METHODS):
            return
        if self.ctx.qualified_name(target.value) is not None:
            return  # an imported module or class (`torch.backward`), not an object in the training code
        method = self.ctx.text(target)
        fix = self.ctx.fix(f"Call `{method}()`", Applicability.SAFE, self.ctx.insert_after(target, "()"))
        self.report(target, self.message.format(method=method), fix)
