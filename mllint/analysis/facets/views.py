"""Views: which tensor an expression shares its storage with, so that an in-place change of it changes
that tensor too.

`viewed(ctx, expr)` answers, for one step, the expression whose storage `expr` is a view of: the receiver
of a view method (`x.view(B, -1)`, `x.narrow(1, 0, 3)`, `x.transpose(1, 2)`, `x.detach()`), the tensor of
`torch.narrow(x, ...)`, an item of what `split`/`chunk`/`unbind` return (`xyz, i = torch.split(x, [3, 1])`
binds `i` to `torch.split(x, [3, 1])[1]`), a basic index (`x[..., 2:4]`, `x[:, 0]`: slices, integers,
`...`, `None`; an index by a tensor or a list copies), and an in-place method, which returns its
receiver (`x.sub_(m).div_(s)`). None when `expr` is none of these (a fresh tensor, or unknown).

`changed_in_place(ctx, function)` lists the in-place changes of a function's tensors that go through a local
name: `coords.mul_(s)`, `flat.sub_(m).div_(s)`, `x[..., :3] *= s`, `x[:, 0] = 0`, `x[mask] = 0` (`tensor_store`), each with the expression
whose storage it changes, followed back through views and plain aliases to where it comes from
(`storage_root`): a parameter, or an item of what an object keeps (`sample = self.points[idx]`); a loop
variable over a literal tuple (`for v, s in ((x1, w), (y1, h))`) comes from where all its items agree. Writes
into a buffer (`copy_`, `zero_`, `fill_`) and direct stores into an attribute's items (`self.cache[i] = x`,
a cache on purpose) are not changes of this kind.

`changed_by_callee(ctx, call, argument, binding)` answers, for a tensor a call passes to a function or a
callable object of the project, where that callee changes it in place: itself, or a callee it passes the
tensor on to (a `Compose` running the transforms it was built with), the objects found by points-to.

`kept_view(ctx, name)` answers where a tensor is a view of data an object keeps: a slice of an attribute, a
batch a generator method yields of one, the stored item a dataset gives without a copy (`DataLoader(ds,
batch_size=None)`, `for x, y in ds`). `passed_through(binding, parameter)` follows an argument up a chain of
callers that pass their own parameter on. `unshared(ctx, expr, use)` tells a fresh tensor (`torch.cat(...)`,
`h.clone()`, `x[idx]` of an index array) from one a caller still holds.

`stored_back(ctx, argument)` tells a call whose result goes back where its argument came from (`w = f(w)`).

`held_after(ctx, argument, call)` answers, for a tensor a function passes at a call, where the function
reads it again after the call, itself or through what it made of it before: an alias, a layer's output that
is the same tensor or a view of it (`nn.Identity`, `nn.Flatten`), a view, a list it was appended to; an
operand written before the call in the expression that takes its result counts (`x * self.block(x)`,
`read_with`).
"""
from __future__ import annotations

import ast
import re

from mllint.analysis.facets.data_shapes import DATA_LOADERS, LOADER_WRAPPERS, PROGRESS_BARS
from mllint.analysis.objects.callees import function_called, method_called, methods_called
from mllint.analysis.objects.points_to import Obj, Objects
from mllint.analysis.program.callers import per_call_site
from mllint.analysis.program.calls import CallResolver, bind_arguments
from mllint.analysis.program.hierarchy import inherited_method
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.values.values import ValueKinds, canonical_class

# Tensor methods (and `torch.` functions taking the tensor first) whose result shares the tensor's storage.
VIEW_METHODS = frozenset({
    "view", "view_as", "narrow", "select", "transpose", "permute", "squeeze", "unsqueeze", "expand", "expand_as",
    "t", "diagonal", "unfold", "as_strided", "movedim", "moveaxis", "swapaxes", "swapdims", "unflatten", "detach",
})  # fmt: skip
SPLITS = frozenset({"split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit"})  # items are views


def viewed(ctx, expr: ast.AST) -> ast.AST | None:
    """The expression whose storage `expr` is a view of (one step); None when it is no view."""
    if isinstance(expr, ast.Subscript):
        base = expr.value
        split = _listed_split(ctx, base) if not isinstance(expr.slice, ast.Slice) else None
        if split is not None:  # `x.split(n)[k]`, `chunks[int(k)]` of `chunks = list(x.split(n))`
            return split
        return base if _basic_index(expr.slice) else None
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    if isinstance(func, ast.Attribute) and (func.attr in VIEW_METHODS or _in_place(func.attr)):
        qualified = ctx.qualified_name(func)
        if qualified is not None and qualified.startswith("torch."):  # `torch.narrow(x, ...)`
            return expr.args[0] if expr.args and func.attr in VIEW_METHODS else None
        return func.value
    return None


def _listed_split(ctx, base: ast.AST) -> ast.AST | None:
    """`x` when `base` holds the items of a split of it: `x.split(n)`, `list(x.chunk(k))`, a name bound once
    to either."""
    if isinstance(base, ast.Name):
        definitions = ctx.analysis(ValueKinds).reaching_definitions(base)
        base = definitions[0].value if len(definitions) == 1 else None
    if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id in ("list", "tuple") and len(base.args) == 1:
        base = base.args[0]
    return _split_of(ctx, base) if isinstance(base, ast.Call) else None


def _split_of(ctx, call: ast.Call) -> ast.AST | None:
    """`x` of `x.split(...)`, `torch.split(x, ...)`, `x.chunk(2)`, `x.unbind(1)`."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in SPLITS):
        return None
    qualified = ctx.qualified_name(func)
    if qualified is not None and qualified.startswith("torch."):
        return call.args[0] if call.args else None
    return func.value


def _in_place(method: str) -> bool:
    """`sub_`, `mul_`, `clamp_`: a tensor's in-place method (it returns its receiver)."""
    return method.endswith("_") and not method.startswith("_")


def _basic_index(index: ast.AST) -> bool:
    """Slices, integer constants, `...` and `None`: an index that makes a view (not a copy)."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(i, ast.Slice) for i in items) and all(
        isinstance(i, ast.Slice) or (isinstance(i, ast.Constant) and (i.value is None or i.value is Ellipsis or type(i.value) is int))
        for i in items
    )  # fmt: skip


# Calls that may return the tensor they are given, or its storage, rather than a new one.
RETURNS_ITS_TENSOR = frozenset({"to", "cuda", "cpu", "float", "half", "double", "type", "contiguous", "reshape", "flatten", "type_as"})
# Layers of torch that may return what they are given, or work on it in place.
PASSING_LAYERS = frozenset({"Identity", "Sequential", "ModuleList", "ModuleDict", "Flatten", "Unflatten"})


# Tensor methods whose result is always a new tensor (`x.clone()`, `x.add(y)`), unlike `x.float()`, `x.to(d)`,
# `x.contiguous()`, `x.reshape(...)`, which may return `x` itself or a view of it.
COPYING_METHODS = frozenset(
    "clone add sub mul div true_divide pow neg abs exp log log1p sqrt rsqrt sigmoid tanh relu softmax log_softmax "
    "clamp clip masked_fill square reciprocal sign floor ceil round matmul mm bmm sum mean cumsum flip roll repeat "
    "tile gather index_select masked_select new_tensor lerp addcmul sin cos nan_to_num erf expm1".split()
)
COPYING_FUNCTIONS = frozenset({"copy.deepcopy", "copy.copy"})


def unshared(ctx, expr: ast.AST, use: ast.AST) -> bool:
    """Is `expr`, given at `use`, a tensor nothing else holds: made there by a torch operation
    (`torch.cat([a, b])`, `a + b`) or a copying tensor method (`h.clone()`, `h.detach().clone()`; a view
    of such a tensor, `h.clone().detach()`, too), a copy made by indexing with an array (`x[mb]` of an index
    array, `x[x > 0]`, `x[[0, 1]]`; not `x[t]`, `x[:, 0]`), or a name bound only to such tensors and read nowhere
    after `use`, nor again at `use` by a loop around it that does not bind it (`model(X)` at every epoch)?"""
    if isinstance(expr, ast.Name):
        values = ctx.analysis(ValueKinds)
        definitions = [d for d in values.reaching_definitions(expr)]
        if not definitions or any(d.value is None or not unshared(ctx, d.value, d.node) for d in definitions):
            return False
        if reused_over_loop(ctx, expr) is not None:
            return False
        scope = ctx.scopes.enclosing_function(use) or ctx.tree
        held = [d.node for d in definitions]
        return not any(
            n.id == expr.id and isinstance(n.ctx, ast.Load) and (n.lineno, n.col_offset) > (use.end_lineno, use.end_col_offset)
            and [d.node for d in values.reaching_definitions(n)] == held
            for n in ctx.index.within(scope, ast.Name)
        )  # fmt: skip
    if isinstance(expr, ast.BinOp):
        return True
    if isinstance(expr, ast.Subscript):  # `x[idx]`: a copy for an index array; `x[t]`, `x[:, 0]`: a view
        return _copying_index(ctx, expr.slice)
    if not isinstance(expr, ast.Call) or any(k.arg == "inplace" for k in expr.keywords):
        return False
    base = viewed(ctx, expr)
    if base is not None:  # a view of a tensor made right there (`h.clone().detach()`)
        return isinstance(base, (ast.Call, ast.BinOp)) and unshared(ctx, base, use)
    func = expr.func
    qualified = ctx.qualified_name(func)
    if qualified is None and isinstance(func, ast.Attribute) and func.attr in COPYING_METHODS:
        return True  # `h.clone()`, `h.detach().clone()`, `h.add(b)`
    if qualified is None and isinstance(func, ast.Attribute) and func.attr in RETURNS_ITS_TENSOR and isinstance(func.value, (ast.Call, ast.BinOp)):
        return unshared(ctx, func.value, use)  # `h.clone().to(device)`: the copy, or a copy of it
    if qualified in COPYING_FUNCTIONS:
        return True
    if qualified is None:  # a layer of torch (`self.fc(x)`, `nn.Linear`): its output is new
        layer = ctx.analysis(ValueKinds).constructor(func)
        in_place = layer is None or any(k.arg == "inplace" for k in layer.keywords) or any(
            isinstance(a, ast.Constant) and a.value is True for a in layer.args
        )  # fmt: skip
        qualified = None if in_place else ctx.qualified_name(layer.func)
        return qualified is not None and qualified.startswith("torch.nn.") and qualified.rpartition(".")[2] not in PASSING_LAYERS
    name = func.attr if isinstance(func, ast.Attribute) else None
    return qualified.startswith("torch.") and name not in RETURNS_ITS_TENSOR | SPLITS


# Calls that make an array or a tensor of indices (`np.arange(n)`, `torch.randperm(n)`), and that make one of a list.
INDEX_ARRAYS = frozenset({"numpy.arange", "numpy.random.permutation", "torch.arange", "torch.randperm"})
ARRAYS_OF = frozenset({"numpy.array", "numpy.asarray", "torch.tensor", "torch.as_tensor"})
INDEX_METHODS = frozenset({"permutation", "nonzero", "argsort"})  # `rng.permutation(n)`, `mask.nonzero()`


def _copying_index(ctx, index: ast.AST, depth: int = 0) -> bool:
    """An index that selects by an array, so that indexing copies (advanced indexing): a list, a boolean mask
    (`x[x > 0]`), a tensor or array of indices (`inds[start:end]` of `inds = np.arange(n)`), in any item of a
    tuple index. Ints, slices, `None` and `...` make a view; an index of unknown form is not taken as a copy."""
    if depth > MAX_ROOT_STEPS:
        return False
    if isinstance(index, ast.Tuple):
        return any(_copying_index(ctx, i, depth + 1) for i in index.elts)
    if isinstance(index, ast.List | ast.ListComp | ast.Compare) or (isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert)):
        return True
    if isinstance(index, ast.Subscript) and isinstance(index.slice, ast.Slice):  # a slice of an index array
        return _copying_index(ctx, index.value, depth + 1)
    if isinstance(index, ast.Name):
        values = ctx.analysis(ValueKinds).reaching_values(index)
        return bool(values) and all(_copying_index(ctx, v, depth + 1) for v in values)
    if not isinstance(index, ast.Call):
        return False
    qualified = ctx.qualified_name(index.func)
    if qualified is None and isinstance(index.func, ast.Attribute) and index.func.attr in INDEX_METHODS:
        return True
    return qualified in INDEX_ARRAYS or (qualified in ARRAYS_OF and bool(index.args) and isinstance(index.args[0], ast.List))


# In-place methods that write into a buffer rather than transform its values, or change a flag.
WRITES = frozenset({
    "copy_", "zero_", "fill_", "set_", "resize_", "requires_grad_", "share_memory_", "detach_", "retain_grad",
    "normal_", "uniform_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_",
})  # fmt: skip
MAX_ROOT_STEPS = 8  # views and aliases followed back to where a tensor comes from
YIELD_TEXT = re.compile(rb"yield")  # what a module must mention for its generator methods to be read


def changed_in_place(ctx, function: ast.AST) -> list[tuple[ast.AST, ast.Name]]:
    """(the change, the local name whose storage it changes) for the function's in-place changes (the
    module's own statements' for the module)."""
    found = []
    for node, changed in _changes(ctx, function):
        name = _local_name(ctx, changed)
        if name is not None:
            found.append((node, name))
    return found


def kept_view_changes(ctx, scope: ast.AST) -> list[tuple[ast.AST, ast.AST, ast.AST]]:
    """(the change, what it changes, where it reads kept data) for the in-place changes in `scope` of a
    view of data an object keeps: through a local name (`kept_view`), or written on the attribute
    (`data.X[:256].log1p_()`, `self.X.narrow(0, i, n).add_(noise)`; not a store into its items)."""
    found = []
    for node, changed in _changes(ctx, scope):
        name = _local_name(ctx, changed)
        kept = kept_view(ctx, name, reused=compounds(node)) if name is not None else None
        if name is None and not isinstance(node, ast.Assign):
            kept = _viewed_attribute(ctx, changed)
            kept = None if kept is not None and _owner_per_item(ctx, kept, node) else kept
        if kept is not None:
            found.append((node, name or changed, kept))
    return found


def _owner_per_item(ctx, kept: ast.AST, change: ast.AST) -> bool:
    """Is the object keeping `kept` the item of the only loop around `change` in its function (`for track in
    tracks: track.mean[4:8] *= damp`): each turn updates another object's own state, once, on purpose?"""
    owner = kept
    while isinstance(owner, ast.Attribute):
        owner = owner.value
    function = ctx.scopes.enclosing_function(change)
    loops = [a for a in ctx.scopes.ancestors(change) if isinstance(a, (ast.For, ast.AsyncFor, ast.While)) and ctx.scopes.enclosing_function(a) is function]
    targets = ast.walk(loops[0].target) if len(loops) == 1 and not isinstance(loops[0], ast.While) else ()
    return isinstance(owner, ast.Name) and any(isinstance(n, ast.Name) and n.id == owner.id for n in targets)


def _changes(ctx, scope: ast.AST):
    """(the change, the expression whose storage it changes) for the in-place changes of the scope's own
    statements: in-place methods, augmented assignments of a sliced item or a view, stores into slices."""
    for node in ctx.index.within(scope, ast.AugAssign, ast.Assign, ast.Call):
        if isinstance(node, ast.Call):
            func = node.func
            if not (isinstance(func, ast.Attribute) and _in_place(func.attr) and func.attr not in WRITES and ctx.qualified_name(func) is None):
                continue
            changed = func.value
        elif isinstance(node, ast.AugAssign):  # `x *= s` may rebind a number: in place for a sliced item or a view
            changed = node.target if _sliced(node.target) or _holds_view(ctx, node.target) else None
        else:  # `x[..., :3] = v`, `x[mask] = 0`; `d["key"] = v`, `items[i] = v` may be a dict's or a list's
            changed = next((t for t in node.targets if tensor_store(ctx, t)), None)
        if changed is not None and (ctx.scopes.enclosing_function(node) or ctx.tree) is scope:
            yield node, changed


def _viewed_attribute(ctx, expr: ast.AST) -> ast.AST | None:
    """The kept attribute `expr` is a view of, written out (`data.X` of `data.X[:256]`); None for the
    attribute itself or anything else."""
    viewing = False
    for _ in range(MAX_ROOT_STEPS):
        inner = viewed(ctx, expr)
        if inner is None:
            return expr if viewing and _kept_attribute(ctx, expr) else None
        expr, viewing = inner, True
    return None


def stored_back(ctx, argument: ast.AST) -> bool:
    """Is `argument` passed to a call whose result its statement stores back where it came from (`w = f(w)`,
    `self.pred[..., i] = f(data=self.pred[..., i])`)? The caller replaces what it passed by the result: a change
    of it in place surprises no one."""
    site = ctx.scopes.parent(argument)
    site = ctx.scopes.parent(site) if isinstance(site, ast.keyword) else site
    statement = ctx.scopes.parent(site) if isinstance(site, ast.Call) else None
    if not (isinstance(statement, ast.Assign) and statement.value is site and len(statement.targets) == 1):
        return False
    return ast.unparse(statement.targets[0]) == ast.unparse(argument)


def tensor_store(ctx, target: ast.AST) -> bool:
    """`x[:, :3]`, `x[..., 0]`, `x[mask]`, `x[x < 0]`: an item target only a tensor (or an array) takes, by a
    slice, `...` or a boolean mask (a comparison, `~m`, `m1 & m2`, or a name bound only to those)."""
    return _sliced(target) or (isinstance(target, ast.Subscript) and _mask(ctx, target.slice))


def _mask(ctx, index: ast.AST, depth: int = 0) -> bool:
    if isinstance(index, ast.Compare) or (isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert)):
        return True
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr)):
        return _mask(ctx, index.left, depth + 1) or _mask(ctx, index.right, depth + 1)
    if not isinstance(index, ast.Name) or depth > MAX_ROOT_STEPS:
        return False
    values = ctx.analysis(ValueKinds).reaching_values(index)
    return bool(values) and all(_mask(ctx, v, depth + 1) for v in values)


def _sliced(target: ast.AST) -> bool:
    """`x[:, :3]`, `x[..., 0]`: an index with a slice or `...`, which only a tensor or an array takes."""
    if not isinstance(target, ast.Subscript):
        return False
    items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    return any(isinstance(i, ast.Slice) or (isinstance(i, ast.Constant) and i.value is Ellipsis) for i in items)


def _holds_view(ctx, name: ast.AST) -> bool:
    """Is `name` bound, before an augmented assignment to it, to a view only (`xyz = cloud[:, :3]`)?"""
    if not isinstance(name, ast.Name):
        return False
    definitions = [d for d in ctx.analysis(ValueKinds).reaching_definitions(name) if d.node is not name]
    return bool(definitions) and all(d.value is not None and viewed(ctx, d.value) is not None for d in definitions)


def _local_name(ctx, expr: ast.AST | None) -> ast.Name | None:
    """The name whose storage `expr` is, or is a view of (`x[..., :3]`, `x.narrow(1, 0, 3).mul_(s)`)."""
    for _ in range(MAX_ROOT_STEPS):
        if expr is None or isinstance(expr, ast.Name):
            return expr
        expr = viewed(ctx, expr) if not isinstance(expr, ast.Subscript) else expr.value
    return None


def storage_root(ctx, name: ast.Name) -> tuple[ast.AST, ast.Name] | None:
    """Where the tensor a name holds comes from, through plain aliases and views with one reaching
    definition each, and the last name on the way: (the function, its parameter) for a parameter, else the
    first expression that is neither a name nor a view (`self.points[idx]`, a fresh `x.clone()`); None
    when unknown or several."""
    return _root(ctx, name, name, 0)


def _root(ctx, expr: ast.AST, last: ast.Name, steps: int) -> tuple[ast.AST, ast.Name] | None:
    values = ctx.analysis(ValueKinds)
    for step in range(steps, MAX_ROOT_STEPS):
        if isinstance(expr, ast.Name):
            last = expr
            definitions = values.reaching_definitions(expr)
            if len(definitions) != 1:
                return None
            definition = definitions[0]
            if isinstance(definition.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return definition.node, last
            split = _split_iterated(ctx, definition.node) if definition.value is None else None
            if split is not None:  # `xb` of `for xb, yb in zip(x.split(n), y.split(n))`: a view of `x`
                expr = split
                continue
            if definition.value is None:  # `v` of `for v, s in ((x1, w), (y1, h))`: where every item comes from
                roots = [_root(ctx, item, last, step + 1) for item in literal_loop_items(ctx, definition.node)]
                agreed = roots and roots[0] is not None and all(r is not None and r[0] is roots[0][0] for r in roots)
                return roots[0] if agreed else None
            expr = definition.value
            continue
        inner = viewed(ctx, expr)
        if inner is None:
            return expr, last
        expr = inner
    return None


def kept_view(ctx, name: ast.AST, reused: bool = False) -> ast.AST | None:
    """Where the tensor a name (or an expression) holds is a view of data an object keeps: through aliases, views (slices,
    `narrow`, items of `chunk`/`split`) and loops over them (`for xb in data.X.split(256)`, `for xb, yb in
    zip(...)`, or the batches a generator method yields of what its object keeps: `for xb, yb in
    data.batches(256)` yielding `self.X[i:i + bs], ...`), the expression of this file that reads that
    data (`data.X`, `self.X`, `data.batches(256)`); with `reused`, also a name a loop reads again at
    every iteration (`reused_over_loop`: `images` of `for xb in images.split(128)` in an epoch loop); None
    for a fresh tensor, a parameter, the whole attribute itself, or unknown."""
    values = ctx.analysis(ValueKinds)
    expr, viewing = name, False
    for _ in range(MAX_ROOT_STEPS):
        if isinstance(expr, ast.Name):
            if viewing and reused and reused_over_loop(ctx, expr, nested=True) is not None:
                return expr
            definitions = _innermost_loop_binding(ctx, expr, values.reaching_definitions(expr))
            if len(definitions) != 1 or isinstance(definitions[0].node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return None
            if definitions[0].value is not None:
                expr = definitions[0].value
                continue
            iterated = _iterated(ctx, definitions[0].node)
            if iterated is None:
                return None
            if isinstance(iterated, ast.Call):  # a generator method's batches of its object's data
                return iterated
            expr, viewing = iterated, True
            continue
        if _constant_item(expr):  # `batch["y"]`, `batch[0]` of a batch that is a dataset's stored item
            expr = expr.value
            continue
        inner = viewed(ctx, expr)
        if inner is None:
            return expr if viewing and _kept_attribute(ctx, expr) else None
        expr, viewing = inner, True
    return None


def _constant_item(expr: ast.AST) -> bool:
    """`batch["y"]`, `batch[1]`: an item of a name at a constant key."""
    return isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, (str, int))


def reused_over_loop(ctx, name: ast.AST, nested: bool = False) -> ast.AST | None:
    """The loop (of `name`'s function, or of the module's top level) whose body reads `name` at every
    iteration while every value it may hold was bound before the loop: the epoch loop around
    `iterate_batches(images, 128)` with `images` made once above it (or `data.X`, `data` bound above it). With `nested`, a loop around the
    loop that takes views of it (`for xb in images.split(128)`, `images[i:i + bs]` in `for i in ...`):
    one pass of that loop alone changes each view once. None for a name bound in the loop (a fresh
    batch) or read outside any."""
    base = name
    while isinstance(base, ast.Attribute) and ctx.qualified_name(base) is None:  # `data.X`: what `data` holds
        base = base.value
    if not isinstance(base, ast.Name):
        return None
    definitions = ctx.analysis(ValueKinds).reaching_definitions(base)
    scope = ctx.scopes.enclosing_function(name)
    child, loops = name, 0
    for loop in ctx.scopes.ancestors(name):
        if loop is scope or isinstance(loop, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None
        header = loop.iter if isinstance(loop, (ast.For, ast.AsyncFor)) else loop.test if isinstance(loop, ast.While) else None
        if header is not None:
            loops += 1
            if child is not header and (loops > 1 or not nested):
                inside = any(loop.lineno <= getattr(d.node, "lineno", 0) <= loop.end_lineno for d in definitions)
                return loop if definitions and not inside else None
        child = loop
    return None


# In-place methods that leave a tensor as it is when applied again: a repeated call changes nothing more.
IDEMPOTENT = frozenset({
    "clamp_", "clamp_min_", "clamp_max_", "clip_", "relu_", "abs_", "round_", "sign_", "floor_", "ceil_", "trunc_",
    "masked_fill_", "index_fill_", "nan_to_num_",
})  # fmt: skip


def compounds(change: ast.AST) -> bool:
    """Does a change made again change the tensor again (`x.div_(255)`, `x -= m`), unlike `x.clamp_(0, 1)`
    or a store `x[:, 0] = 0`?"""
    if isinstance(change, ast.Call):
        return isinstance(change.func, ast.Attribute) and change.func.attr not in IDEMPOTENT
    return isinstance(change, ast.AugAssign)


def _innermost_loop_binding(ctx, use: ast.Name, definitions: list) -> list:
    """The one definition of a loop variable read in its loop's body (`xb` of the loop around it, not of
    the loops before it in an outer loop), when no other reaching definition is inside that loop."""
    loop = next((a for a in ctx.scopes.ancestors(use) if isinstance(a, (ast.For, ast.AsyncFor)) and any(
        d.node in set(ast.walk(a.target)) for d in definitions)), None)
    if loop is None:
        return definitions
    inside = [d for d in definitions if loop.lineno <= getattr(d.node, "lineno", 0) <= loop.end_lineno]
    return inside if len(inside) == 1 and inside[0].node in set(ast.walk(loop.target)) else definitions


def _kept_attribute(ctx, expr: ast.AST) -> bool:
    """`self.X`, `data.X`, `self.data.X`: an attribute of an object (not of a module: `torch.pi`)."""
    base = expr
    while isinstance(base, ast.Attribute):
        base = base.value
    return isinstance(expr, ast.Attribute) and isinstance(base, ast.Name) and ctx.qualified_name(expr) is None


def _iterated(ctx, target: ast.Name) -> ast.AST | None:
    """For a loop variable: the tensor each item is a view of (`data.X` of `for xb in data.X.split(256)`,
    also an item of `zip(...)`), or the call of a generator method of the project whose batches at the
    variable's position are views of what its object keeps; None otherwise."""
    split = _split_iterated(ctx, target)
    if split is not None:
        return split
    iterable, position = _loop_iterable(ctx, target)
    uncopied = _uncopied_items(ctx, _unwrapped(ctx, iterable, position))
    if uncopied is not None:
        return uncopied
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute):
        callee = method_called(ctx, iterable, followed=YIELD_TEXT)
        yielded = _yielded(callee.function) if callee is not None else []
        items = [y.elts[position] if position is not None and isinstance(y, ast.Tuple) and position < len(y.elts) else None if position is not None else y for y in yielded]
        if items and all(i is not None and _kept_parts(callee.ctx, i) for i in items):
            return iterable
    return None


def _kept_parts(ctx, item: ast.AST) -> bool:
    """Is a yielded item a view of what its object keeps, or a tuple or dict of such views
    (`self.X[i:j]`, `(self.X[i:j], self.y[i:j])`, `{"obs": self.obs[i:j]}`)?"""
    parts = item.elts if isinstance(item, ast.Tuple) else item.values if isinstance(item, ast.Dict) else [item]
    return bool(parts) and all(_is_self_attribute(_viewed_attribute(ctx, p)) for p in parts)


def _unwrapped(ctx, iterable: ast.AST | None, position: int | None) -> ast.AST | None:
    """The loader a loop's iterable wraps: `loader` of `enumerate(loader)` (for the item, at position 1),
    `tqdm(loader)`, `iter(loader)`."""
    if not (isinstance(iterable, ast.Call) and iterable.args):
        return iterable
    name = iterable.func.id if isinstance(iterable.func, ast.Name) else ctx.qualified_name(iterable.func)
    if name == "enumerate":
        return iterable.args[0] if position == 1 else None
    return iterable.args[0] if name in LOADER_WRAPPERS or name in PROGRESS_BARS else iterable


def _uncopied_items(ctx, iterable: ast.AST | None) -> ast.Call | None:
    """The construction of the dataset whose stored tensors iterating `iterable` gives as they are, not
    copies: a `DataLoader(ds, batch_size=None)` in the main process (no collation: each batch is `ds[i]`), or
    the dataset itself (`for x, y in ds`), when its `__getitem__` returns items of what it keeps
    (`self.items[i]`, `self.X[i], self.y[i]`, a dict of them)."""
    if isinstance(iterable, ast.Name):
        definitions = ctx.analysis(ValueKinds).reaching_definitions(iterable)
        iterable = definitions[0].value if len(definitions) == 1 else None
    dataset = iterable
    if isinstance(iterable, ast.Call) and canonical_class(ctx.qualified_name(iterable.func)) in DATA_LOADERS:
        size, workers = call_argument(iterable, 1, "batch_size"), call_argument(iterable, 5, "num_workers")
        if not (isinstance(size, ast.Constant) and size.value is None) or call_argument(iterable, 6, "collate_fn") is not None:
            return None
        if workers is not None and not (isinstance(workers, ast.Constant) and workers.value == 0):
            return None  # worker processes send copies
        dataset = call_argument(iterable, 0, "dataset")
    if isinstance(dataset, ast.Name):
        definitions = ctx.analysis(ValueKinds).reaching_definitions(dataset)
        dataset = definitions[0].value if len(definitions) == 1 else None
    if not isinstance(dataset, ast.Call):
        return None
    objects = ctx.analysis(Objects)
    found = objects.class_of(Obj("made", dataset, ctx=ctx))
    method = inherited_method(found[0], found[1], "__getitem__", objects.view) if found is not None else None
    return dataset if method is not None and _returns_stored_items(method[0], method[1]) else None


def _returns_stored_items(ctx, getitem: ast.AST) -> bool:
    """Does every value `__getitem__` returns hold only items of what its object keeps, at the index it is
    given (`self.items[i]`, `self.X[i], self.y[i]`, `{"x": self.X[i]}`)?"""
    indices = {p.arg for p in parameters(getitem, variadic=False)[1:2]}
    returned = function_returns(getitem) or []
    parts = [e for r in returned for e in (r.elts if isinstance(r, (ast.Tuple, ast.List)) else r.values if isinstance(r, ast.Dict) else [r])]
    return bool(parts) and all((root := storage_root(ctx, p)) is not None and stored_item(root[0], indices) for p in parts)


def stored_item(root: ast.AST | None, indices: set[str]) -> bool:
    """`self.points[idx]`: an item of what a dataset stores, at the index `__getitem__` is given."""
    return (
        isinstance(root, ast.Subscript) and _is_self_attribute(root.value)
        and isinstance(root.slice, ast.Name) and root.slice.id in indices
    )  # fmt: skip


def _split_iterated(ctx, target: ast.Name) -> ast.AST | None:
    """The tensor a loop variable's items are views of: `x` of `for xb in x.split(256)`, of `xb` in `for
    xb, yb in zip(x.split(n), y.split(n))`."""
    iterable, position = _loop_iterable(ctx, target)
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "zip" and position is not None:
        iterable, position = (iterable.args[position] if position < len(iterable.args) else None), None
    return _split_of(ctx, iterable) if isinstance(iterable, ast.Call) and position is None else None


def _loop_iterable(ctx, target: ast.Name) -> tuple[ast.AST | None, int | None]:
    """(what the loop of a loop variable iterates, the variable's position in a tuple target or None)."""
    parent = ctx.scopes.parent(target)
    position = parent.elts.index(target) if isinstance(parent, ast.Tuple) else None
    loop = ctx.scopes.parent(parent) if position is not None else parent
    if not isinstance(loop, (ast.For, ast.comprehension)) or loop.target is not (parent if position is not None else target):
        return None, None
    return loop.iter, position


def _yielded(function: ast.AST) -> list[ast.AST]:
    """What a generator function's own `yield`s give (not those of functions inside it)."""
    found, pending = [], list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Yield) and node.value is not None:
            found.append(node.value)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _is_self_attribute(node: ast.AST | None) -> bool:
    """`self.X` (in a method: what its object keeps)."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def literal_loop_items(ctx, target: ast.Name) -> list[ast.AST]:
    """What a loop variable takes from a tuple or list written out: `x1`, `y1` for `v` of `for v in (x1, y1)`
    or of `for v, s in ((x1, w), (y1, h))`; [] for any other target."""
    parent = ctx.scopes.parent(target)
    position = parent.elts.index(target) if isinstance(parent, ast.Tuple) else None
    loop = ctx.scopes.parent(parent) if position is not None else parent
    if not isinstance(loop, (ast.For, ast.comprehension)) or loop.target is not (parent if position is not None else target):
        return []
    if not isinstance(loop.iter, (ast.Tuple, ast.List)):
        return []
    if position is None:
        return list(loop.iter.elts)
    rows = loop.iter.elts
    if not all(isinstance(r, (ast.Tuple, ast.List)) and len(r.elts) == len(parent.elts) for r in rows):
        return []
    return [r.elts[position] for r in rows]


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

IN_PLACE_TEXT = re.compile(rb"_\(|\[[^\]\n]*\]\s*[-+*/]?=")  # what a module changing a tensor in place shows
MAX_PASSED_ON = 2  # callees a tensor is passed on through, to the one that changes it


def changed_by_callee(ctx, call: ast.Call, argument: ast.AST, binding=None, linted=None, depth: int = 0) -> tuple[object, ast.AST, str] | None:
    """Where the project function or callable object `call` runs (`self.transform(x)` with the transform a
    call site of the class passes, under `binding`) changes in place the tensor `argument` gives it: its
    own change of the parameter (`x.add_(noise)`, or a view of it), or one made by a callee it passes the
    parameter on to (`for f in self.fns: x = f(x)`); (the callee's context, the change, the callee's
    name). `linted`: the linted file, whose callers layer finds call sites (default `ctx`)."""
    linted = linted or ctx
    method = method_called(ctx, call, binding)
    methods = [method] if method is not None else methods_called(ctx, call, binding)
    function = (function_called(ctx, call, binding) or _resolved(ctx, call)) if not methods else None
    for callee, skips in [(m, True) for m in methods] + ([(function, False)] if function is not None else []):
        found = _changed_in_callee(callee, call, argument, skips, linted, depth)
        if found is not None:
            return found
    return None


def _resolved(ctx, call: ast.Call):
    """A function of the module or of another module of the project a call names (`standardize(x)`), read
    when its module makes a change in place."""
    return CallResolver(ctx, ctx.analysis(ProjectView)).resolve(call, followed=IN_PLACE_TEXT)


def _changed_in_callee(callee, call: ast.Call, argument: ast.AST, method: bool, linted, depth: int) -> tuple[object, ast.AST, str] | None:
    function, home = callee.function, callee.ctx
    skips = method and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
    parameter = next((name for name, value in bind_arguments(call, function, skips).items() if value is argument), None)
    if parameter is None:
        return None
    for change, name in changed_in_place(home, function):
        root = storage_root(home, name)
        if root is not None and root[0] is function and root[1].id == parameter:
            owner = home.scopes.parent(function)
            return home, change, f"{owner.name}.{function.name}" if isinstance(owner, ast.ClassDef) else function.name
    if depth >= MAX_PASSED_ON:
        return None
    values = home.analysis(ValueKinds)
    for inner in home.index.within(function, ast.Call):
        passed = next((a for a in inner.args if isinstance(a, ast.Name) and a.id == parameter and any(
            d.node is function for d in values.reaching_definitions(a))), None)
        if passed is not None and home.scopes.enclosing_function(inner) is function:
            ask = lambda b, inner=inner, passed=passed: changed_by_callee(home, inner, passed, b, linted, depth + 1)  # noqa: E731
            found = next((answer for answer, _ in per_call_site(home, inner, ask, linted)), None)
            if found is not None:
                return found
    return None


def passed_through(binding, parameter: str) -> tuple[object, ast.AST, object] | None:
    """(the caller's context, the argument, the binding it is passed under) for what a call site passes for
    `parameter`; when that argument is, or is a view of, a parameter of the caller itself (`self.preprocess(obs)`
    in `def dist(self, obs)`), what the caller's own call site passes for it, up the chain of callers."""
    passed = binding.argument(parameter)
    for _ in range(MAX_ROOT_STEPS):
        if passed is None:
            return None
        caller, argument, passage = passed
        outer = None if passage.default else binding.outer
        root = storage_root(caller, argument) if outer is not None else None
        if root is None or root[0] is not outer.function:
            return caller, argument, binding
        binding, passed = outer, outer.argument(root[1].id)
    return None


# Layers of torch that return their input, or a view of it.
RETURNING_LAYERS = frozenset({"torch.nn.Identity", "torch.nn.Flatten", "torch.nn.Unflatten"})
SHAPE_READS = frozenset({"shape", "size", "dim", "dtype", "device", "ndim"})  # reads of a tensor that see no values


def held_after(ctx, argument: ast.AST, call: ast.AST, scripts: bool = False) -> ast.Name | None:
    """Where the function around `call` (with `scripts`, also a script's module level) reads the values of
    the tensor `argument` (a name) gives there, after the call: the name itself, or a holder made from it
    before the call (an alias `identity = x`, a layer returning it or a view of it: `self.shortcut(x)` with
    `nn.Identity`, `self.tap(x)` with `nn.Flatten`, `x.flatten(1)`; a list or dict it was put in:
    `skips.append(x)`, `feats[k] = x`); None when it reads none."""
    if not scripts and ctx.scopes.enclosing_function(call) is None:
        return None
    return _read_after(ctx, _holders(ctx, argument, call), call)


def read_again(ctx, argument: ast.AST, call: ast.AST) -> ast.Name | None:
    """Where the code around `call` (a function, or a script's module level) reads the name `argument`
    again after the call, holding what it held there (`feats` of `student(x, feats)`, then `feats` read)."""
    holders = _holders(ctx, argument, call, containers=True)
    return _read_after(ctx, {argument.id: holders[argument.id]} if holders else None, call)


def kept_after(ctx, argument: ast.AST, call: ast.AST) -> ast.Name | None:
    """Where the function around `call` reads, after the call, a list or dict the tensor `argument` was put
    in before it (`feats.append(x)` then `x.relu_()`, then `feats` read); None when it reads none."""
    holders = _holders(ctx, argument, call, containers=True)
    return _read_after(ctx, {k: v for k, v in holders.items() if k != argument.id} if holders else None, call)


def _read_after(ctx, holders: dict[str, list[ast.AST]] | None, call: ast.AST) -> ast.Name | None:
    if not holders:
        return None
    values, scope, end = ctx.analysis(ValueKinds), ctx.scopes.enclosing_function(call) or ctx.tree, (call.end_lineno, call.end_col_offset)
    together = read_with(ctx, call, set(holders))  # `x * self.block(x)`
    for name in [*together, *ctx.index.within(scope, ast.Name)]:
        if name.id not in holders or not isinstance(name.ctx, ast.Load) or (name.lineno, name.col_offset) <= end and name not in together:
            continue
        parent = ctx.scopes.parent(name)
        if isinstance(parent, ast.Attribute) and parent.attr in SHAPE_READS or _length_of(parent, name):
            continue
        if [d.node for d in values.reaching_definitions(name)] == holders[name.id]:
            return name
    return None


def _length_of(node: ast.AST, name: ast.Name) -> bool:
    """`len(x)`: a read of a tensor that sees no values."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and node.args == [name]


def parameter_holders(ctx, argument: ast.AST, call: ast.AST) -> list[str]:
    """The parameters of the function around `call` that hold the tensor `argument` gives there, a list
    its caller passes and reads afterwards: `skips` of `skips.append(s)` in `def forward(self, x, skips)`."""
    holders = _holders(ctx, argument, call, containers=True) or {}
    function = ctx.scopes.enclosing_function(call)
    return [name for name, held in holders.items() if name != argument.id and held and all(node is function for node in held)]


def _holders(ctx, argument: ast.AST, call: ast.AST, containers: bool = False) -> dict[str, list[ast.AST]] | None:
    """The names that hold the tensor `argument` gives at `call` (it, its aliases and views made before the
    call, the lists and dicts it was put in; with `containers`, it and those only), each with the
    definitions it has there; None when not known."""
    if not isinstance(argument, ast.Name):
        return None
    values = ctx.analysis(ValueKinds)
    held = [d.node for d in values.reaching_definitions(argument)]
    scope = ctx.scopes.enclosing_function(call) or ctx.tree  # a function, or a script's module level
    if not held:
        return None
    holders = {argument.id: held}
    start = (call.lineno, call.col_offset)

    def same(node: ast.AST | None) -> bool:  # read where the name may hold every value it holds at the call
        return isinstance(node, ast.Name) and node.id == argument.id and {d.node for d in values.reaching_definitions(node)} >= set(held)

    statement = ctx.scopes.statement(call)
    stores = [(n.lineno, n.col_offset) for n in ctx.index.within(scope, ast.Name) if n.id == argument.id and isinstance(n.ctx, ast.Store)]
    for node in ctx.index.within(scope, ast.Assign, ast.Call):
        if (node.lineno, node.col_offset) >= start:
            continue
        if any((node.end_lineno, node.end_col_offset) < store < (statement.lineno, statement.col_offset) for store in stores):
            continue  # the name is bound again before the call: it held another tensor
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name):
            if not containers and same(_returned_tensor(ctx, node.value)):
                holders[target.id] = [target]
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and same(node.value):  # `feats["c1"] = s`
            holders[target.value.id] = [d.node for d in values.reaching_definitions(target.value)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
            receiver = node.func.value
            if isinstance(receiver, ast.Name) and node.args and same(node.args[0]):
                holders[receiver.id] = [d.node for d in values.reaching_definitions(receiver)]
    return holders


def read_after_change(ctx, name: ast.Name, change: ast.AST) -> ast.Name | None:
    """Where the function reads the tensor `name` holds again after an in-place change of it (`held_after`
    of `x.mul_(s)`); after `x *= s`, a read of what it binds; after `x[..., :n] *= s` or `x.data *= s`,
    which change the tensor `x` holds without binding `x`, a read that the same assignments reach."""
    if not isinstance(change, ast.AugAssign):
        return held_after(ctx, name, change)
    values = ctx.analysis(ValueKinds)
    scope = ctx.scopes.enclosing_function(change) or ctx.tree
    changed = {*ast.walk(change.target), *(d.node for d in values.reaching_definitions(name))}
    for read in ctx.index.within(scope, ast.Name):
        if read.id == name.id and isinstance(read.ctx, ast.Load) and read.lineno > change.end_lineno:
            defined = {d.node for d in values.reaching_definitions(read)}
            if defined and defined <= changed:
                return read
    return None


HOLDING = (ast.List, ast.Tuple, ast.Starred, ast.keyword)  # what keeps a tensor object, not its values


def read_with(ctx, call: ast.AST, names: set[str]) -> list[ast.Name]:
    """The reads of `names` written before `call` in an expression that takes them as they are together with
    its result, and so sees what the call changes in place: `x` of `x * self.gate(x)`, of
    `torch.cat([x, f(x)])`, of `x.mul(f(x))` (not of `(x + 1) * f(x)`, computed before the call)."""
    found = []
    inner, outer = call, ctx.scopes.parent(call)
    while outer is not None and not isinstance(outer, (ast.stmt, ast.Lambda, ast.comprehension, *COMPREHENSIONS)):
        for child in ast.iter_child_nodes(outer):
            if child is not inner:
                found += [n for n in _held_names(child) if n.id in names and (n.lineno, n.col_offset) < (call.lineno, call.col_offset)]
        inner, outer = outer, ctx.scopes.parent(outer)
    return found


def _held_names(node: ast.AST) -> list[ast.Name]:
    """`x` of `x`, `[x, y]`, `*x`, `x.mul` (a method of `x`, called with the result)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return [node]
    if isinstance(node, ast.Attribute):
        return _held_names(node.value)
    if isinstance(node, HOLDING):
        return [n for child in ast.iter_child_nodes(node) for n in _held_names(child)]
    return []


def _returned_tensor(ctx, expr: ast.AST) -> ast.AST | None:
    """The tensor `expr` is, or may share its storage with: itself for a name, the input of a view or of a
    method that may return its receiver (`x.flatten(1)`, `x.contiguous()`), of a layer returning it."""
    if isinstance(expr, ast.Name):
        return expr
    inner = viewed(ctx, expr)
    if inner is not None:
        return inner
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    if isinstance(func, ast.Attribute) and func.attr in RETURNS_ITS_TENSOR and ctx.qualified_name(func) is None:
        return func.value
    layer = ctx.analysis(ValueKinds).constructor(func) if len(expr.args) == 1 else None
    return expr.args[0] if layer is not None and canonical_class(ctx.qualified_name(layer.func)) in RETURNING_LAYERS else None
