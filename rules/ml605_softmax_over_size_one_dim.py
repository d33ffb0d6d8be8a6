import ast

from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.facets.shapes import Shapes
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.values.values import canonical_class
from mllint.findings import Severity
from mllint.rule import Rule

FUNCTIONS = {
    "torch.softmax": "softmax",
    "torch.nn.functional.softmax": "softmax",
    "torch.log_softmax": "log_softmax",
    "torch.nn.functional.log_softmax": "log_softmax",
}
MODULES = {"torch.nn.Softmax": "softmax", "torch.nn.LogSoftmax": "log_softmax"}
RESULT = {"softmax": "1", "log_softmax": "0"}


class SoftmaxOverSizeOneDim(Rule):
    """
    ## What it does
    Reports `softmax` / `log_softmax` (`torch.softmax(x, dim=-1)`, `F.log_softmax`, `x.softmax(-1)`, an
    `nn.Softmax(dim=...)` module called on `x`) taken over a dimension the shape analysis knows has size
    1: the last dimension of a scorer's output `nn.Linear(h, 1)` (also of an input of unknown rank:
    `(..., 1)`), an `unsqueeze(-1)`, a `keepdim=True` reduction, a literal size. Only a dimension written
    as a literal and a size known to be 1 are reported; a size the analysis does not know is left alone.

    ## Why is this bad?
    Softmax normalises over the dimension it is given. Over a dimension of size 1 every output is exactly
    1 (`log_softmax`: 0), whatever the scores: attention pooling weights of `(B, T, 1)` scores taken over
    the last dimension become all ones, the pool a plain sum, and the scorer gets no gradient at all. The
    normalisation was meant over the other dimension (the time steps, the classes).

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class AttentionPool(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.score = nn.Linear(hidden, 1)

        def forward(self, h):
            w = torch.softmax(self.score(h), dim=-1)
            return (w * h).sum(dim=1)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class AttentionPool(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.score = nn.Linear(hidden, 1)

        def forward(self, h):
            w = torch.softmax(self.score(h), dim=1)
            return (w * h).sum(dim=1)
    ```

    ## Fix safety
    There is no fix: which dimension holds the alternatives is for the author to say.
    """

    code = "ML605"
    name = "softmax-over-size-one-dim"
    message = (
        "`{function}` over dim {dim}, whose size is 1 (`{value}` is {shape}): every output is {result}, whatever "
        "the scores, and nothing flows back to them; take it over the dimension that holds the alternatives"
    )
    severity = Severity.ERROR
    requires_any_text = ("softmax", "Softmax")

    def visit_Call(self, node: ast.Call) -> None:
        found = self._softmax(node)
        if found is None:
            return
        function, value, dim = found
        shapes = self.ctx.analysis(Shapes)
        known = shapes.dim_size(value, dim) if value is not None and dim is not None else None
        if known is None or known[0] != 1:
            return
        text = self.ctx.text(value)
        shown = text if len(text) <= 30 else f"{text[:27]}..."
        self.report(node, self.message.format(function=function, dim=dim, value=shown, shape=known[1], result=RESULT[function]))

    def _softmax(self, call: ast.Call) -> tuple[str, ast.AST | None, int | None] | None:
        """(`softmax` or `log_softmax`, the tensor it normalises, the dim written as a literal) of a call."""
        name = canonical_class(self.ctx.qualified_name(call.func))
        if name in FUNCTIONS:
            return FUNCTIONS[name], call_argument(call, 0, "input"), int_literal(call_argument(call, 1, "dim"))
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in RESULT and name is None:
            return func.attr, func.value, int_literal(call_argument(call, 0, "dim"))
        built = self.ctx.analysis(Shapes).constructor(func) if len(call.args) == 1 and not call.keywords else None
        kind = MODULES.get(canonical_class(built[0].qualified_name(built[1].func))) if built is not None else None
        if kind is None:
            return None
        return kind, call.args[0], int_literal(call_argument(built[1], 0, "dim"))
