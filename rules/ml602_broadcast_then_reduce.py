import ast

from mllint.analysis.facets.broadcasts import column_and_row, with_itself, written_outer
from mllint.analysis.facets.operations import REDUCTIONS, SAME_SHAPE_FUNCTIONS, keeps_shape
from mllint.analysis.facets.shapes import Shapes
from mllint.analysis.facets.tensor_values import Tensor
from mllint.analysis.program.callers import Callers, call_sites
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.values.values import ValueKinds
from mllint.rule import Rule

ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)  # element-wise too: `(pred == y).float().mean()`
COMPARING_METHODS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
REDUCING_FUNCTIONS = {"torch." + name for name in ("sum", "mean", "nansum", "nanmean", "norm")}
PAIRWISE_FUNCTIONS = {"torch." + name for name in ("max", "min", "maximum", "minimum", "fmax", "fmin")}
ELEMENTWISE_FUNCTIONS = SAME_SHAPE_FUNCTIONS | {"torch.pow"}  # `F.relu(margin - pos + neg).mean()` too


class BroadcastThenReduce(Rule):
    """
    ## What it does
    Reports an element-wise operation (arithmetic, or a comparison: `(pred == y).float().mean()`, `pred.eq(y)`) between
    a `(N,)` and a `(N, 1)` tensor (one is the other with a trailing size-1 dimension) whose result is
    then reduced (`.sum()`, `.mean()`, `torch.mean(...)`),
    directly or through a local variable, also inside a helper function of the file called with such
    tensors (`pinball_loss(model(x), y)`, reported at the call), also through the helper's locals
    assigned from its parameters (`pos = (a * p).sum(-1, keepdim=True)`). Both shapes must be known to
    the shape analysis (or be `(B, ..., 1)` of unknown rank against `(B,)`, or have a size unknown on
    one side where the ranks decide: a critic's `(T, 1)` values against `(?,)` returns). Broadcasting
    with matching size-1 dimensions (`(B, 1) * (B, N)`) and outer products written on purpose
    (`a[:, None] * b[None, :]`, `a.view(-1, 1) - b`, also through a name's one assignment:
    `counts = c.reshape(-1, 1)` then `np.arange(k) < counts`; then only known sizes decide, but never for a vector
    paired with itself: `(s.view(-1, 1) > s).sum(1)` counts ranks) are not reported;
    a view that keeps a column already there (a critic's `(T, N, 1)` values viewed `(-1, 1)`) or adds
    none (`returns.view(-1)`) writes no outer product. A
    helper of the file whose operands are the arguments a module-level call gives it (`target - pred`) is
    reported at that call; one whose own operations make the mismatch, in the helper. A helper of another
    module, or of the file called in another function (`evaluate(net, loader)` in `main()`), is checked
    with what the first call site that tells passes (the message names it), through shape-keeping
    functions on the way to the reduction (`F.relu(margin - pos + neg).mean()`). So is the `forward` of a
    module class of the project (a weighted loss module), with what the first call of its instances
    passes: `loss_fn(out, batch["y"], batch["w"])` with `loss_fn = WeightedMSE()`, also where the
    instance is given to a function (`run_epoch(model, loader, loss_fn)`) or to a trainer's constructor
    that keeps it (`self.criterion = criterion`). A `(N, N)` such an operation makes in one function and
    another reduces (a `forward` returning `dot + self.item_bias(items)` of `(B,)` and `(B, 1)`, in a tuple
    or a dict, a helper returning it, a caller passing it to a loss helper) is reported at the reduction,
    naming where it was made.

    ## Why is this bad?
    `(N,)` and `(N, 1)` broadcast to `(N, N)`: the reduction averages N * N pairs instead of N
    differences (an accuracy counts every prediction against every label), so a hand-written loss or
    metric is silently wrong (and N times slower). Nothing
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
    helper_message = "`{call}`: in `{helper}`, `{expression}` (line {line}) broadcasts {left} and {right} to {result} before the reduction"
    flowed_message = "`{call}` reduces a {result}: `{expression}` ({place}) broadcast {left} and {right} to it"
    requires_any_text = ("sum", "mean", "norm")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._candidates: dict[ast.FunctionDef, list[ast.BinOp]] = {}
        self._reducing: dict[tuple[ast.AST | None, str], list[ast.Name]] = {}
        self._calls_reported: set[ast.Call] = set()  # a helper's call, reported once from either side

    def visit_Compare(self, node: ast.Compare) -> None:
        self.visit_BinOp(node)

    def visit_BinOp(self, node: ast.BinOp | ast.Compare) -> None:
        shapes = self.ctx.analysis(Shapes)
        found = self._broadcast_then_reduced(node, shapes.value)
        if found is not None:
            left, right, result = found
            site = shapes.call_site(node)  # the operands' shapes are what a call passes
            function = self.ctx.scopes.enclosing_function(node)
            if site is not None and not site.path and site.call is not None and _passed_as_given(node, function):
                message = self.helper_message.format(
                    call=self.ctx.text(site.call), helper=function.name, expression=self.ctx.text(node), line=node.lineno,
                    left=left, right=right, result=result,
                )  # fmt: skip
                if site.call not in self._calls_reported:
                    self._calls_reported.add(site.call)
                    self.report(site.call, message, related=call_sites(site.outer))
                return
            message = self.message.format(expression=self.ctx.text(node), left=left, right=right, result=result)
            message += f" (with what the call at {site.place} passes)" if site is not None else ""
            self.report(node, message, related=call_sites(site))

    def visit_Call(self, node: ast.Call) -> None:
        """A comparing method (`pred.eq(y)`), a helper of this file (`pinball_loss(model(x), y)`) that
        broadcasts its arguments inside, or a reduction of what another function broadcast."""
        if _operands(node) is not None:
            self.visit_BinOp(node)
        self._reduces_flowed(node)
        if not isinstance(node.func, ast.Name):
            return
        shapes = self.ctx.analysis(Shapes)
        helper = shapes.own_function(node.func)
        candidates = self._reduced_operations(helper) if helper is not None else []
        values = shapes.values_in_helper(node) if candidates else None
        for operation in candidates if values else []:
            found = self._broadcast_then_reduced(operation, values.get)
            if found is not None and not _passed_as_given(operation, helper) and self._broadcast_then_reduced(operation, shapes.value):
                return  # the helper's own mismatch, with what its first call site passes: reported in the helper
            if found is not None:
                left, right, result = found
                message = self.helper_message.format(
                    call=self.ctx.text(node), helper=helper.name, expression=self.ctx.text(operation), line=operation.lineno,
                    left=left, right=right, result=result,
                )  # fmt: skip
                if node not in self._calls_reported:
                    self._calls_reported.add(node)
                    self.report(node, message)
                return

    def _reduces_flowed(self, node: ast.Call) -> None:
        """A reduction (`loss = ((pred - r) ** 2).mean()`) of a `(N, N)` that another function broadcast (a
        `forward` returning `dot + bias` of `(B,)` and `(B, 1)`, a caller passing it in): reported here,
        naming where it was made."""
        reduced = _reduced_operand(node, self.ctx)
        value = self.ctx.analysis(Shapes).value(reduced) if reduced is not None else None
        origin = value.broadcast_at if isinstance(value, Tensor) else None
        scopes = self.ctx.scopes
        if origin is None or origin.ctx is self.ctx and scopes.enclosing_function(origin.node) is scopes.enclosing_function(node):
            return  # (in the same function, the operation itself is reported)
        path, line, related = self.ctx.analysis(Callers).located(origin.ctx, origin.node, "the broadcast")
        message = self.flowed_message.format(
            call=self.ctx.text(node), expression=origin.ctx.text(origin.node), place=f"{path}:{line}" if path else f"line {line}",
            left=origin.left, right=origin.right, result=origin.result,
        )  # fmt: skip
        self.report(node, message, related=(related,))

    def _reduced_operations(self, helper: ast.FunctionDef) -> list[ast.BinOp]:
        """The element-wise operations of a helper between two expressions of its parameters (or of
        locals assigned from them: `pos = (a * p).sum(-1, keepdim=True)`), whose result may be reduced
        (by syntax; built once)."""
        if helper not in self._candidates:
            parameters = {a.arg for a in [*helper.args.posonlyargs, *helper.args.args]}
            for assignment in self.ctx.index.within(helper, ast.Assign):  # in source order
                if any(isinstance(n, ast.Name) and n.id in parameters for n in ast.walk(assignment.value)):
                    parameters |= {t.id for target in assignment.targets for t in ast.walk(target) if isinstance(t, ast.Name)}

            def reads_parameter(node: ast.AST) -> bool:
                return any(isinstance(n, ast.Name) and n.id in parameters for n in ast.walk(node))

            self._candidates[helper] = [
                operation for operation in self.ctx.index.within(helper, ast.BinOp, ast.Compare, ast.Call)
                if (pair := _operands(operation)) is not None and reads_parameter(pair[0])
                and reads_parameter(pair[1]) and self._reduced(operation) is not False
            ]  # fmt: skip
        return self._candidates[helper]

    def _broadcast_then_reduced(self, node: ast.BinOp, value_of) -> tuple[str, str, str] | None:
        """The shapes (as text) of an element-wise operation between `(N, 1)` and `(N,)` whose result is
        reduced, given the values of its operands."""
        pair = _operands(node)
        if pair is None or any(isinstance(o, ast.Constant) for o in pair):
            return None  # a Python number broadcasts to nothing
        reduced = self._reduced(node)
        # Assigned to a variable: its reads that reach a reduction (checked by syntax first; whether the
        # assignment reaches them is checked last, after the shapes, as it costs the most).
        reads = [] if reduced is True or reduced is False else self._reducing_reads(reduced)
        if reduced is False or (reduced is not True and not reads):
            return None
        values = self.ctx.analysis(ValueKinds)
        outer = written_outer(pair, self.ctx, values.reaching_definitions, self.ctx.analysis(Shapes).value)
        if outer and with_itself(pair):
            return None  # `(s.view(-1, 1) > s).sum(1)`: ranks, a matrix of pairs meant whatever the sizes
        found = column_and_row(value_of(pair[0]), value_of(pair[1]), not outer)
        if found is None:
            return None
        if reads and not any(d.node is reduced for read in reads for d in values.reaching_definitions(read)):
            return None
        return found

    def _reduced(self, node: ast.AST) -> bool | ast.Name:
        """Does the value of `node` reach a reduction through element-wise operations? The variable
        it is assigned to on the way, if any."""
        parent = self.ctx.scopes.parent(node)
        while True:
            if isinstance(parent, (ast.BinOp, ast.Compare)) and _operands(parent) is not None:
                node, parent = parent, self.ctx.scopes.parent(parent)
            elif isinstance(parent, ast.UnaryOp):
                node, parent = parent, self.ctx.scopes.parent(parent)
            elif isinstance(parent, ast.Attribute) and parent.value is node:
                call = self.ctx.scopes.parent(parent)
                if not isinstance(call, ast.Call) or call.func is not parent:
                    return False
                if parent.attr in REDUCTIONS or parent.attr == "norm":
                    return True
                if not keeps_shape(parent.attr) and parent.attr != "pow" and parent.attr not in COMPARING_METHODS:
                    return False
                node, parent = call, self.ctx.scopes.parent(call)
            elif isinstance(parent, ast.Call) and node in parent.args and _elementwise_of_two(self.ctx.qualified_name(parent.func), parent):
                node, parent = parent, self.ctx.scopes.parent(parent)
            elif isinstance(parent, ast.Call) and node in parent.args and parent.args[0] is node:
                name = self.ctx.qualified_name(parent.func)
                if name in REDUCING_FUNCTIONS:
                    return True
                if name not in ELEMENTWISE_FUNCTIONS:
                    return False
                node, parent = parent, self.ctx.scopes.parent(parent)
            elif isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                return parent.targets[0]
            else:
                return False

    def _reducing_reads(self, target: ast.Name) -> list[ast.Name]:
        """The reads of the variable in its scope that reach a reduction (once per scope and name: a
        module-level script assigns the same names again and again)."""
        scopes = self.ctx.scopes
        scope = scopes.enclosing_scope(target)
        if (scope, target.id) not in self._reducing:
            reads = scopes.reads(scopes.enclosing_function(target), target.id)  # with those of classes in the scope
            self._reducing[(scope, target.id)] = [
                r for r in reads if scopes.enclosing_scope(r) is scope and self._reduced(r) is True
            ]
        return self._reducing[(scope, target.id)]


def _operands(node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """The two operands of an element-wise operation: `a - b`, or one comparison `a == b`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ELEMENTWISE):
        return node.left, node.right
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], COMPARISONS):
        return node.left, node.comparators[0]
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr in COMPARING_METHODS and len(node.args) == 1 and not node.keywords:
        return func.value, node.args[0]  # `pred.eq(y)`
    return None


def _reduced_operand(node: ast.Call, ctx) -> ast.AST | None:
    """What a reduction reduces: `x` of `x.mean()`, `x.sum(1)`, `torch.mean(x)`."""
    if ctx.qualified_name(node.func) is not None:
        return node.args[0] if node.args and ctx.qualified_name(node.func) in REDUCING_FUNCTIONS else None
    if isinstance(node.func, ast.Attribute) and (node.func.attr in REDUCTIONS or node.func.attr == "norm"):
        return node.func.value
    return None


def _passed_as_given(operation: ast.BinOp | ast.Compare, function: ast.AST | None) -> bool:
    """Are both operands parameters of the helper, as its call gives them (`target - pred`)? Then the
    mismatch is the call's; one the helper makes of them (`close.unsqueeze(-1) + far`) is its own."""
    names = {a.arg for a in parameters(function)} if function is not None else set()
    return all(isinstance(o, ast.Name) and o.id in names for o in _operands(operation))


def _elementwise_of_two(name: str | None, call: ast.Call) -> bool:
    """`torch.max(a, b)`, `torch.maximum(a, b)`, ...: element-wise over two tensors (a pinball loss)."""
    pair = len(call.args) == 2 and not call.keywords and not isinstance(call.args[1], ast.Constant)
    return name in PAIRWISE_FUNCTIONS and pair
