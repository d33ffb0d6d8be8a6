import ast

from mllint.analysis.program.callers import call_sites, per_call_site
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.values.values import Kind, ValueKinds, kept_value
from mllint.rule import Rule

NORM_FUNCTIONS = {"torch.norm", "torch.linalg.norm", "torch.linalg.vector_norm"}


class DivisionByNormOfReluOutput(Rule):
    """
    ## What it does
    Reports a division by the norm of a ReLU output with nothing keeping it away from zero: `z / z.norm(dim=1,
    keepdim=True)` where `z` comes from `F.relu`, `torch.relu`, `x.relu()`, an `nn.ReLU` or an
    `nn.Sequential` ending in one (a projection head of the project too), also pooled, flattened or
    dropped out after it (`nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()`), directly or through a name
    bound to the norm (`n = torch.norm(z, dim=-1, keepdim=True)` then `z / n`). A denominator with an
    epsilon (`z.norm(...) + 1e-8`) or a clamp (`.clamp(min=eps)`) and `F.normalize(z)` are not reported;
    nor is the norm of any other value, which is zero only for an all-zero input.

    ## Why is this bad?
    A ReLU output is exactly zero wherever a unit is off, and a row whose units are all off (dead units,
    a dark image, an early training step) has a norm of 0: the division gives 0/0 = NaN, which the
    loss spreads into every weight at the next step. Nothing raises.

    ## Example
    ```python
    import torch
    from torch import nn

    head = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
    with torch.no_grad():
        head[0].bias.fill_(-100.0)  # every unit off
    z = head(torch.randn(2, 4))
    normalized = z / z.norm(dim=1, keepdim=True)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn
    from torch.nn import functional as F

    head = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
    with torch.no_grad():
        head[0].bias.fill_(-100.0)  # every unit off
    z = head(torch.randn(2, 4))
    normalized = F.normalize(z, dim=1)
    ```

    ## Fix safety
    There is no fix: whether to use `F.normalize`, an epsilon, or a projection that cannot be all zero
    is for the author to decide.
    """

    code = "ML704"
    name = "division-by-norm-of-relu-output"
    message = "division by `{denominator}`, the norm of {what}, with no epsilon: a row of zeros gives 0/0 = NaN"
    requires_any_text = ("norm",)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Div):
            self._check(node, node.right)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.Div):
            self._check(node, node.value)

    def _check(self, node: ast.AST, denominator: ast.AST) -> None:
        normed = self._normed(denominator)
        if normed is None:
            return
        view = self.ctx.analysis(ProjectView)
        origins = per_call_site(self.ctx, normed, lambda binding: view.origin(normed, binding))
        found = next(((o, b) for o, b in origins if o.kind is Kind.RELU), None)
        if found is not None:
            origin, binding = found
            what = f"`{self.ctx.text(normed)}`, ReLU output{origin.where(normed)}"
            self.report(node, self.message.format(denominator=self.ctx.text(denominator), what=what), related=call_sites(binding))

    def _normed(self, denominator: ast.AST, depth: int = 0) -> ast.AST | None:
        """What the denominator is the norm of: `z` of `z.norm(...)` or `torch.norm(z, ...)`, or of the one
        norm every binding of a name that reaches it binds."""
        denominator = kept_value(self.ctx, denominator)  # `z.norm(dim=1).detach()`
        if isinstance(denominator, ast.Name) and depth == 0:
            values = self.ctx.analysis(ValueKinds).reaching_values(denominator) or []
            normed = [self._normed(v, 1) for v in values]
            return normed[0] if len(normed) == 1 and normed[0] is not None else None
        if not isinstance(denominator, ast.Call):
            return None
        func = denominator.func
        if self.ctx.qualified_name(func) in NORM_FUNCTIONS and denominator.args:
            return denominator.args[0]
        if isinstance(func, ast.Attribute) and func.attr == "norm" and self.ctx.qualified_name(func) is None:
            return func.value
        return None
