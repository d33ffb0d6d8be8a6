import ast

from mllint.analysis.dims import broadcast, format_shape, trailing_one_added
from mllint.analysis.shapes import REDUCTIONS, SAME_SHAPE_METHODS, Shapes
from mllint.analysis.values import ValueKinds
from mllint.rule import Rule

ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
REDUCING_FUNCTIONS = {"torch." + name for name in ("sum", "mean", "nansum", "nanmean", "norm")}
SAME_SHAPE_FUNCTIONS = {"torch." + name for name in ("abs", "square", "exp", "log", "sqrt", "pow")}


class BroadcastThenReduce(Rule):
    """
    ## What it does
    Reports an element-wise operation between a `(N,)` and a `(N, 1)` tensor (one is the other with a
    trailing size-1 dimension) whose result is then reduced (`.sum()`, `.mean()`, `torch.mean(...)`),
    directly or through a local variable. Both shapes must be known to the shape analysis. Broadcasting
    with matching size-1 dimensions (`(B, 1) * (B, N)`) and outer products written on purpose
    (`a[:, None] * b[None, :]`) are not reported.

    ## Why is this bad?
    `(N,)` and `(N, 1)` broadcast to `(N, N)`: the reduction averages N * N pairs instead of N
    differences, so a hand-written loss or metric is silently wrong (and N times slower). Nothing
    raises, and the value often looks plausible.

    ## Example
    ```python
    import torch

    predictions = torch.randn(32, 1)
    targets = torch.randn(32)
    mse = ((predictions - targets) ** 2).mean()
    ```

    ## Use instead
    ```python
    import torch

    predictions = torch.randn(32, 1)
    targets = torch.randn(32)
    mse = ((predictions.squeeze(-1) - targets) ** 2).mean()
    ```

    ## Fix safety
    There is no fix: which operand to reshape is the author's decision.
    """

    code = "ML602"
    name = "broadcast-then-reduce"
    message = "`{expression}`: {left} and {right} broadcast to {result} before the reduction"
    requires_any_text = ("sum", "mean", "norm")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reads_index: dict[tuple, list[ast.Name]] | None = None

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if not isinstance(node.op, ELEMENTWISE) or not self._reduced(node):
            return
        shapes = self.ctx.analysis(Shapes)
        left, right = shapes.shape(node.left), shapes.shape(node.right)
        if left is None or right is None or not (trailing_one_added(left, right) or trailing_one_added(right, left)):
            return
        message = self.message.format(
            expression=self.ctx.text(node), left=format_shape(left), right=format_shape(right),
            result=format_shape(broadcast(left, right)),
        )  # fmt: skip
        self.report(node, message)

    def _reduced(self, node: ast.AST, through_names: int = 1) -> bool:
        """Does the value of `node` reach a reduction through element-wise operations, or through a
        local variable read only that way?"""
        parent = self.ctx.scopes.parent(node)
        while True:
            if isinstance(parent, ast.BinOp) and isinstance(parent.op, ELEMENTWISE):
                node, parent = parent, self.ctx.scopes.parent(parent)
            elif isinstance(parent, ast.UnaryOp):
                node, parent = parent, self.ctx.scopes.parent(parent)
            elif isinstance(parent, ast.Attribute) and parent.value is node:
                call = self.ctx.scopes.parent(parent)
                if not isinstance(call, ast.Call) or call.func is not parent:
                    return False
                if parent.attr in REDUCTIONS or parent.attr == "norm":
                    return True
                if parent.attr not in SAME_SHAPE_METHODS and parent.attr != "pow":
                    return False
                node, parent = call, self.ctx.scopes.parent(call)
            elif isinstance(parent, ast.Call) and node in parent.args and parent.args[0] is node:
                name = self.ctx.qualified_name(parent.func)
                if name in REDUCING_FUNCTIONS:
                    return True
                if name not in SAME_SHAPE_FUNCTIONS:
                    return False
                node, parent = parent, self.ctx.scopes.parent(parent)
            elif isinstance(parent, ast.Assign) and through_names and len(parent.targets) == 1:
                return self._variable_reduced(parent.targets[0], through_names - 1)
            else:
                return False

    def _variable_reduced(self, target: ast.AST, through_names: int) -> bool:
        if not isinstance(target, ast.Name):
            return False
        values = self.ctx.analysis(ValueKinds)
        uses = [
            name for name in self._reads().get((self.ctx.scopes.enclosing_scope(target), target.id), ())
            if any(d.node is target for d in values.reaching_definitions(name))
        ]  # fmt: skip
        return any(self._reduced(use, through_names) for use in uses)

    def _reads(self) -> dict[tuple, list[ast.Name]]:
        """The names read in the file, by scope and name (built once, when first needed)."""
        if self._reads_index is None:
            self._reads_index = {}
            for name in self.ctx.index.by_type.get(ast.Name, ()):
                if isinstance(name.ctx, ast.Load):
                    key = (self.ctx.scopes.enclosing_scope(name), name.id)
                    self._reads_index.setdefault(key, []).append(name)
        return self._reads_index
