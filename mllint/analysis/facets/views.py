"""Views: which tensor an expression shares its storage with, so that an in-place change of it changes
that tensor too.

`viewed(ctx, expr)` answers, for one step, the expression whose storage `expr` is a view of: the receiver
of a view method (`x.view(B, -1)`, `x.narrow(1, 0, 3)`, `x.transpose(1, 2)`, `x.detach()`), the tensor of
`torch.narrow(x, ...)`, an item of what `split`/`chunk`/`unbind` return (`xyz, i = torch.split(x, [3, 1])`
binds `i` to `torch.split(x, [3, 1])[1]`), a basic index (`x[..., 2:4]`, `x[:, 0]`: slices, integers,
`...`, `None`; an index by a tensor or a list copies), and an in-place method, which returns its
receiver (`x.sub_(m).div_(s)`). None when `expr` is none of these (a fresh tensor, or unknown).

`changed_in_place(ctx, function)` lists the in-place changes of a function's tensors that go through a local
name: `coords.mul_(s)`, `flat.sub_(m).div_(s)`, `x[..., :3] *= s`, `x[:, 0] = 0`, each with the expression
whose storage it changes, followed back through views and plain aliases to where it comes from
(`storage_root`): a parameter, or an item of what an object keeps (`sample = self.points[idx]`). Writes
into a buffer (`copy_`, `zero_`, `fill_`) and direct stores into an attribute's items (`self.cache[i] = x`,
a cache on purpose) are not changes of this kind.
"""
from __future__ import annotations

import ast

from mllint.analysis.values.values import ValueKinds

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
        if isinstance(base, ast.Call) and _split_of(ctx, base) is not None and isinstance(expr.slice, ast.Constant):
            return _split_of(ctx, base)
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


def unshared(ctx, expr: ast.AST, use: ast.AST) -> bool:
    """Is `expr`, given at `use`, a tensor nothing else holds: made there by a torch operation
    (`torch.cat([a, b])`, `a + b`), or a name bound only to such tensors and read nowhere after `use`?"""
    if isinstance(expr, ast.Name):
        values = ctx.analysis(ValueKinds)
        definitions = [d for d in values.reaching_definitions(expr)]
        if not definitions or any(d.value is None or not unshared(ctx, d.value, d.node) for d in definitions):
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
    if not isinstance(expr, ast.Call) or viewed(ctx, expr) is not None or any(k.arg == "inplace" for k in expr.keywords):
        return False
    func = expr.func
    qualified = ctx.qualified_name(func)
    if qualified is None:  # a layer of torch (`self.fc(x)`, `nn.Linear`): its output is new
        layer = ctx.analysis(ValueKinds).constructor(func)
        in_place = layer is None or any(k.arg == "inplace" for k in layer.keywords) or any(
            isinstance(a, ast.Constant) and a.value is True for a in layer.args
        )  # fmt: skip
        qualified = None if in_place else ctx.qualified_name(layer.func)
        return qualified is not None and qualified.startswith("torch.nn.") and qualified.rpartition(".")[2] not in PASSING_LAYERS
    name = func.attr if isinstance(func, ast.Attribute) else None
    return qualified.startswith("torch.") and name not in RETURNS_ITS_TENSOR | SPLITS


# In-place methods that write into a buffer rather than transform its values, or change a flag.
WRITES = frozenset({
    "copy_", "zero_", "fill_", "set_", "resize_", "requires_grad_", "share_memory_", "detach_", "retain_grad",
    "normal_", "uniform_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_",
})  # fmt: skip
MAX_ROOT_STEPS = 8  # views and aliases followed back to where a tensor comes from


def changed_in_place(ctx, function: ast.AST) -> list[tuple[ast.AST, ast.Name]]:
    """(the change, the local name whose storage it changes) for the function's in-place changes."""
    found = []
    for node in ctx.index.within(function, ast.AugAssign, ast.Assign, ast.Call):
        if isinstance(node, ast.Call):
            func = node.func
            if not (isinstance(func, ast.Attribute) and _in_place(func.attr) and func.attr not in WRITES and ctx.qualified_name(func) is None):
                continue
            changed = func.value
        elif isinstance(node, ast.AugAssign):  # `x *= s` may rebind a number: in place for a sliced item or a view
            changed = node.target if _sliced(node.target) or _holds_view(ctx, node.target) else None
        else:  # `x[..., :3] = v`; `d["key"] = v`, `items[i] = v` may be a dict's or a list's
            changed = next((t for t in node.targets if _sliced(t)), None)
        name = _local_name(ctx, changed) if changed is not None else None
        if name is not None and ctx.scopes.enclosing_function(node) is function:
            found.append((node, name))
    return found


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
    values = ctx.analysis(ValueKinds)
    expr: ast.AST = name
    last = name
    for _ in range(MAX_ROOT_STEPS):
        if isinstance(expr, ast.Name):
            last = expr
            definitions = values.reaching_definitions(expr)
            if len(definitions) != 1:
                return None
            definition = definitions[0]
            if isinstance(definition.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return definition.node, last
            if definition.value is None:
                return None
            expr = definition.value
            continue
        inner = viewed(ctx, expr)
        if inner is None:
            return expr, last
        expr = inner
    return None
