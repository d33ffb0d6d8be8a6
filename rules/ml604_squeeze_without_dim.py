import ast
from functools import cached_property

from mllint.analysis.objects.callees import called_names, loss_function_name
from mllint.analysis.program.callers import Callers
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.facets.data_shapes import full_batches, reshaped_to_size
from mllint.analysis.facets.dims import Sym, format_shape, is_known
from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.facets.loops import LOOP_NODES, loop_or_function
from mllint.analysis.program.project_view import place_in
from mllint.analysis.syntax.names import call_argument, callee_name
from mllint.analysis.facets.shapes import Shapes
from mllint.analysis.syntax.tree import position
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import ValueKinds, canonical_class
from mllint.findings import Applicability, Severity
from mllint.rule import Rule

LOSS_FUNCTIONS = {
    "torch.nn.functional." + name
    for name in (
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
        "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "soft_margin_loss",
        "multilabel_soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    )
}  # fmt: skip
# Element-wise losses that broadcast input against target: for a batch of one, `()` against `(1,)` (or `(k,)`
# against `(1, k)`) gives the same values, so a dropped batch dimension changes nothing there.
BROADCASTING_LOSSES = {
    *("torch.nn.functional." + name for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "poisson_nll_loss")),
    *("torch.nn." + name for name in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "PoissonNLLLoss")),
}
CONVERSIONS = {"float", "double", "long", "int", "half", "to", "type_as", "contiguous"}
SCALAR_METHODS = {"item", "tolist"}


def _position(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def _size_of(node: ast.AST) -> str | None:
    """`x` for `x.shape` and `x.size` (called or indexed)."""
    if isinstance(node, ast.Attribute) and node.attr in ("shape", "size") and isinstance(node.value, ast.Name):
        return node.value.id
    return None


def _definitions(values: ValueKinds, name: ast.Name) -> list[ast.AST]:
    return [d.node for d in values.reaching_definitions(name)]


def _batch_column(value: object) -> bool:
    """A tensor of unknown rank known to be `(B, ..., 1)`, B a symbol (a batch): a `Linear(h, 1)` output
    of inputs whose rank the code does not show."""
    ends = getattr(value, "ends", None)
    return bool(ends and ends[0] and isinstance(ends[0][0], Sym) and ends[1] and ends[1][-1] == 1)


def _unconverted(node: ast.AST) -> ast.AST:
    """`x` for `x.float()`, `x.to(device)`."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CONVERSIONS:
        node = node.func.value
    return node


class SqueezeWithoutDim(Rule):
    """
    ## What it does
    Reports `.squeeze()` (and `torch.squeeze(x)`) without a dimension on a value passed to a loss,
    directly or through a local variable, and inside a module's `forward` on a value the shape analysis
    knows to have one size-1 dimension next to symbolic ones (`(batch, 1)`, also `(batch, ..., 1)` of a
    `Linear(h, 1)` on inputs of unknown rank), or only trailing size-1
    dimensions after a symbolic batch (`(batch, C, 1, 1)` of an adaptive pool). When the shape analysis
    knows which dimension is the size-1 one, the message names it. A loss whose input and target are
    both squeezed (`loss(logits.squeeze(), labels.squeeze())`) and `x.squeeze().item()` are not
    reported: a batch of one gives two aligned scalars, or the scalar was meant. Nor are the
    element-wise regression losses (`mse_loss`, `l1_loss`, `smooth_l1_loss`, `huber_loss`,
    `poisson_nll_loss` and their modules): they broadcast `()` against `(1,)` (or `(k,)` against
    `(1, k)`) to the same values, so the lost dimension changes nothing there. Classification losses
    do change: cross-entropy takes `(C,)` for one unbatched sample, BCE raises on a size mismatch.
    Nor is a squeeze whose batch dimension cannot be 1: a value of a fully known shape (`(64, 1)`, a
    fixed batch), in a loop over a `DataLoader` with `drop_last=True` or a `BatchSampler` built so (also
    when the loader is passed in by a call site), after the iteration skips a batch of one (`if
    x.size(0) == 1: continue`, or under `if len(x) > 1:`), on a value reshaped to a stated number of rows
    (`out.view(batch_size, 1)`: a smaller batch fails there first), or after an `assert` on the value's size.
    A squeeze whose value a `forward` returns, its shape known from a call site of the module, is judged
    at that call (its shape the module's own: at every call of its instances): not reported when the call's output goes to an element-wise regression loss (or a loss
    whose both sides are squeezed) or every batch of the call's loop is full; nor when every call of the
    module runs in a loop whose batches are full or whose literal batch size divides the rows of its
    `TensorDataset`.
    Also reported where the lost dimension is read: a count of the batch in a loop (`total +=
    logits.size(0)`, `out.shape[0]`) of a value whose batch dimension a dim-less `squeeze()` dropped
    because the batch held one sample: a model's `forward` (in whichever module) that squeezes a pooled
    `(B, C, 1, 1)` map, run on a loader of batch size one (`batch_size=1`, or the default) that the
    loop, or the call site passing it, iterates. The message names the `squeeze()`.

    ## Why is this bad?
    `squeeze()` removes every dimension of size 1, including the batch dimension when a batch holds a
    single sample (the last, smaller batch of an epoch, or inference on one example). The model's
    output or the loss input then loses a dimension: the loss broadcasts differently or raises, only
    on that batch.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F



    def binary_loss(batch_size):
        logits = torch.randn(batch_size, 1)
        targets = torch.ones(batch_size)
        return F.binary_cross_entropy_with_logits(logits.squeeze(), targets)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F



    def binary_loss(batch_size):
        logits = torch.randn(batch_size, 1)
        targets = torch.ones(batch_size)
        return F.binary_cross_entropy_with_logits(logits.squeeze(1), targets)
    ```

    ## Fix safety
    Where the shape analysis knows the only size-1 dimension, the fix names it (`squeeze(1)`). It is
    unsafe: for a batch of one the result keeps its batch dimension (that is the point).
    """

    code = "ML604"
    name = "squeeze-without-dim"
    message = "`squeeze()` without a dim also drops the batch dimension of a batch of one: name the dim{hint}"
    severity = Severity.INFO
    fix_applicability = Applicability.UNSAFE
    count_message = (
        "`{read}` counts no batch: the `squeeze()` without a dim at {place} also dropped the batch dimension of "
        "this batch of one (the value is {shape})"
    )
    requires_any_text = ("squeeze", "size(0)", "shape[0]")  # the squeeze may be in the model's module

    def visit_Subscript(self, node: ast.Subscript) -> None:
        """`logits.shape[0]` in a loop: a count of the batch, unless a `squeeze()` dropped it."""
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr == "shape" and int_literal(node.slice) == 0:
            self._check_count(node, value.value)

    def visit_Call(self, node: ast.Call) -> None:
        if callee_name(node) == "size" and isinstance(node.func, ast.Attribute) and len(node.args) == 1 and int_literal(node.args[0]) == 0:
            self._check_count(node, node.func.value)
            return
        receiver = self._squeezed(node)
        if receiver is None or self._made_scalar(node):
            return
        loss = self._loss_reached(node)
        if loss is not None and (self._loss_name(loss) in BROADCASTING_LOSSES or self._both_sides_squeezed(loss)):
            return  # for a batch of one: the same values broadcast, or two aligned scalars
        if loss is None and not self._in_forward(node):
            return
        shape = self.ctx.analysis(Shapes).shape(receiver)
        ones = [i for i, d in enumerate(shape or ()) if d == 1]
        certain = is_known(shape) and len(ones) == 1
        # `(B, C, 1, 1)` of an adaptive pool: every size-1 dim trailing, after a batch the analysis names
        trailing = is_known(shape) and len(ones) > 1 and ones[0] > 0 and ones[-1] - ones[0] == len(ones) - 1 == len(shape) - 1 - ones[0]
        batched = trailing and isinstance(shape[0], Sym)
        column = shape is None and _batch_column(self.ctx.analysis(Shapes).value(receiver))
        if loss is None and not ((certain and any(isinstance(d, Sym) for d in shape)) or batched or column):
            return  # in `forward`, only a value known to have a batch-like size next to its size-1 dimensions
        if (is_known(shape) and all(isinstance(d, int) for d in shape)) or self._batch_never_one(node, receiver):
            return
        if loss is None and self._caller_excuses(node):
            return
        if column:  # `(B, ..., 1)`: the last dim is the size-1 one
            ones = [-1]
        elif not certain:
            self.report(node, self.message.format(hint=f" (`squeeze({tuple(ones)})`)" if trailing else ""))
            return
        if isinstance(node.func, ast.Attribute):
            replacement = f"{self.ctx.text(node.func)}({ones[0]})"
        else:
            replacement = f"{self.ctx.text(node.func)}({self.ctx.text(receiver)}, {ones[0]})"
        fix = self.ctx.fix(f"Name the dim: `{replacement}`", Applicability.UNSAFE, self.ctx.replace(node, replacement))
        self.report(node, self.message.format(hint=f" (`squeeze({ones[0]})`)"), fix)

    def _check_count(self, read: ast.AST, counted: ast.AST) -> None:
        """A count of the batch (`total += logits.size(0)`) in a loop, of a value whose batch dimension a
        dim-less `squeeze()` dropped on the way (in the model's `forward`, run on a batch of one)."""
        if not isinstance(loop_or_function(self.ctx, read), LOOP_NODES):
            return
        shapes = self.ctx.analysis(Shapes)
        found = shapes.unbatched(counted)
        if found is not None:
            place = place_in(self.ctx, *found)
            self.report(read, self.count_message.format(read=self.ctx.text(read), place=place, shape=format_shape(shapes.shape(counted))))

    def _batch_never_one(self, node: ast.Call, receiver: ast.AST) -> bool:
        """Can the batch dimension not be 1 here: every batch of the loop is full (`drop_last=True`), the
        receiver is reshaped to a stated number of rows (`out.view(batch_size, 1)`), or an `assert` on the
        way reads the receiver's size (`assert out.shape == (64, 1)`)?"""
        if full_batches(self.ctx, node) or reshaped_to_size(self.ctx, receiver):
            return True
        if not isinstance(receiver, ast.Name):
            return False
        values = self.ctx.analysis(ValueKinds)
        held = _definitions(values, receiver)
        return any(
            _position(statement) < _position(node) and values.same_path(statement, node)
            and any(_size_of(n) == receiver.id and _definitions(values, n.value) == held for n in ast.walk(statement.test))
            for statement in self._asserts.get(self.ctx.scopes.enclosing_function(node), ())
        )  # fmt: skip

    @cached_property
    def _asserts(self) -> dict[ast.AST | None, list[ast.Assert]]:
        """The file's `assert` statements by the function they are in."""
        found: dict[ast.AST | None, list[ast.Assert]] = {}
        for statement in self.ctx.index.by_type.get(ast.Assert, ()):
            found.setdefault(self.ctx.scopes.enclosing_function(statement), []).append(statement)
        return found

    def _squeezed(self, call: ast.AST, ctx=None) -> ast.AST | None:
        """The tensor a dim-less squeeze is applied to."""
        ctx = ctx or self.ctx
        if callee_name(call) != "squeeze":
            return None
        if ctx.qualified_name(call.func) == "torch.squeeze":
            return call.args[0] if len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred) else None
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "squeeze" and not call.args and not call.keywords:
            return func.value if ctx.qualified_name(func) is None else None
        return None

    def _in_forward(self, node: ast.AST) -> bool:
        function = self.ctx.scopes.enclosing_function(node)
        return (
            isinstance(function, ast.FunctionDef)
            and function.name == "forward"
            and self.ctx.analysis(ModuleClasses).method_of_module(function, self.ctx) is not None
        )

    def _made_scalar(self, node: ast.AST) -> bool:
        """`x.squeeze().item()`: the value is meant to become a Python scalar."""
        parent = self.ctx.scopes.parent(node)
        call = self.ctx.scopes.parent(parent)
        return isinstance(parent, ast.Attribute) and parent.attr in SCALAR_METHODS and isinstance(call, ast.Call)

    def _both_sides_squeezed(self, loss: ast.Call, ctx=None) -> bool:
        sides = [call_argument(loss, 0, "input"), call_argument(loss, 1, "target")]
        return all(side is not None and self._squeezed(_unconverted(side), ctx) is not None for side in sides)

    def _caller_excuses(self, node: ast.Call) -> bool:
        """A squeeze in `forward` never given a batch of one (`Shapes.batch_never_one`), or whose value
        `forward` returns to a loss on which the lost dimension changes nothing (element-wise, or both sides
        squeezed) at the call site its shapes come from."""
        shapes = self.ctx.analysis(Shapes)
        if shapes.batch_never_one(node):
            return True
        if not self._returned(node):
            return False
        binding = shapes.call_site(node)
        sites = self.ctx.analysis(Callers).instance_bindings(self.ctx, self.ctx.scopes.enclosing_function(node))
        if binding is None:  # its shapes its own: judged at every call of the module's instances
            return bool(sites) and all(self._harmless_at(site) for site in sites)
        return self._harmless_at(binding) and all(self._harmless_at(site) for site in sites)  # (every call of the instances)

    def _harmless_at(self, binding) -> bool:
        """Does the output of the call `binding` binds go to a loss the lost dimension changes nothing in, or
        is it made in a loop whose batches are all full?"""
        if binding.call is None or binding.caller is None:
            return False
        if full_batches(binding.caller, binding.call):
            return True  # no batch of one there
        loss = self._loss_reached(binding.call, ctx=binding.caller, outer=binding.outer)
        return loss is not None and (self._loss_name(loss, binding.caller, binding.outer) in BROADCASTING_LOSSES or self._both_sides_squeezed(loss, binding.caller))

    def _returned(self, node: ast.AST) -> bool:
        """Does the function return the value of `node`: `return x.squeeze()`, or a name assigned it alone?"""
        parent = self.ctx.scopes.parent(node)
        if isinstance(parent, ast.Return):
            return True
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
            return False
        values = self.ctx.analysis(ValueKinds)
        function = self.ctx.scopes.enclosing_function(node)
        returns = [r for r in self.ctx.index.within(function, ast.Return) if self.ctx.scopes.enclosing_function(r) is function]
        return bool(returns) and all(
            isinstance(r.value, ast.Name) and [d.node for d in values.reaching_definitions(r.value)] == [parent.targets[0]] for r in returns
        )

    def _loss_reached(self, node: ast.AST, depth: int = 0, ctx=None, outer=None) -> ast.Call | None:
        """The loss call the value is an argument of, directly or through variables assigned it (in `ctx`,
        the linted file unless given)."""
        ctx = ctx or self.ctx
        if depth > MAX_DEPTH:
            return None
        parent = ctx.scopes.parent(node)
        if isinstance(parent, ast.Call) and node in parent.args:
            return parent if self._loss_name(parent, ctx, outer) else None
        if isinstance(parent, ast.Attribute) and parent.attr in CONVERSIONS:
            call = ctx.scopes.parent(parent)
            return self._loss_reached(call, depth, ctx, outer) if isinstance(call, ast.Call) and call.func is parent else None
        if isinstance(parent, ast.keyword):
            call = ctx.scopes.parent(parent)
            return call if isinstance(call, ast.Call) and self._loss_name(call, ctx, outer) else None
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            target = parent.targets[0]
            scope = ctx.scopes.enclosing_function(node)
            values = ctx.analysis(ValueKinds)
            for name in ctx.scopes.loads(target.id):  # the file's loads of the name: those in the scope
                if (
                    (scope is None or position(scope) <= position(name) <= (scope.end_lineno, scope.end_col_offset))
                    and any(d.node is target for d in values.reaching_definitions(name))
                ):  # fmt: skip
                    loss = self._loss_reached(name, depth + 1, ctx, outer)
                    if loss is not None:
                        return loss
        return None

    def _loss_name(self, call: ast.Call, ctx=None, outer=None) -> str | None:
        """`torch.nn.functional.mse_loss`, or the class of the loss object called (`torch.nn.MSELoss`), also
        a parameter's function under the caller's binding `outer`; None for a call that computes no torch loss."""
        ctx = ctx or self.ctx
        name = ctx.qualified_name(call.func)
        if name in LOSS_FUNCTIONS:
            return name
        if isinstance(call.func, ast.Attribute) and name is not None:
            return None
        if name is None and loss_function_name(ctx, call.func) in LOSS_FUNCTIONS:  # `mse = partial(F.mse_loss)`
            return loss_function_name(ctx, call.func)
        name = canonical_class(ctx.analysis(ValueKinds).constructed_class(call.func))
        if name is not None and name.startswith("torch.nn.") and name.endswith("Loss"):
            return name
        passed = called_names(ctx, call.func, outer) if outer is not None and isinstance(call.func, ast.Name) else None
        return next(iter(passed)) if passed and len(passed) == 1 and passed <= LOSS_FUNCTIONS else None  # `loss_fn` given `F.mse_loss`

