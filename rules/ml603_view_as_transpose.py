import ast

from mllint.analysis.facets.dims import Dim, Sym, counted_alike, dim_key, format_shape, is_known, label
from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.facets.shapes import Shapes
from mllint.analysis.program.callers import call_sites
from mllint.analysis.syntax.tree import position
from mllint.findings import Severity
from mllint.rule import Rule

VIEWS = ("view", "reshape")


class ViewAsTranspose(Rule):
    """
    ## What it does
    Reports `x.view(...)` / `x.reshape(...)` whose target reorders dimensions the shape analysis knows
    `x` has: `(B, T, C)` viewed as `(B, C, T)`; an attention head split written
    `x.view(B, heads, T, C // heads)` for `x` of `(B, T, C)`; heads merged back with
    `out.view(B, T, heads * head_dim)` from `(B, heads, T, head_dim)`; a tensor of unknown rank viewed
    as its own leading sizes in another order (`x.view(x.shape[1], x.shape[0], -1)`); tokens `(B, N, C)`
    reshaped to a feature map `(B, C, h, w)` (`C` put ahead of `N`, whose elements become `h, w`, whatever
    `h` and `w` are: `side = round(N ** 0.5)`; not a
    `(B, T, H)` viewed as `(B, H)`, which only runs when `T` is 1). Dimensions are matched by what
    they stand for (`x.size(1)`, names unpacked from `x.shape`, the `__init__` parameters a layer and
    `self.head_dim = dim // heads` are built from), so only symbolic sizes count: a view
    between literal sizes (`(2, 3)` as `(3, 2)`) is not reported, except where the view names the sizes
    it swaps (`x.view(b, self.n_feat, self.seq_len)` of a `(B, 50, 8)` batch a call site passes, the
    attributes 8 and 50 under every construction: distinct sizes above 1), and an image batch's channels moved
    across its sides: `(n, 32, 32, 3)` (as an `assert images.shape[1:] == (32, 32, 3)` states, say)
    viewed as `(n, 3, 32, 32)`, or back (2 to 4 channels). Nor is a view of a parameter made in
    `__init__` (`nn.Parameter(torch.empty(head_dim, heads))` viewed as `(heads, head_dim)`): its values
    are whatever training makes of them, so the view lays them out rather than reordering them. Nor is a
    view that undoes an earlier one of the same function (`x.view(b, c * w, -1)`, then `out.view(b, c, h,
    w)`): it restores the layout `x` had; the earlier view is the one reported.

    ## Why is this bad?
    A view keeps the elements in memory order and only changes how they are counted: viewing
    `(B, T, C)` as `(B, C, T)` does not swap T and C, it cuts the rows into pieces of the wrong length.
    The result has the shape the next line expects, so nothing raises, and attention mixes positions
    with heads. A transpose (or permute) was meant.

    ## Example
    ```python
    import torch


    def split_heads(x, heads):
        batch, length, width = x.shape
        return x.view(batch, heads, length, width // heads)
    ```

    ## Use instead
    ```python
    import torch


    def split_heads(x, heads):
        batch, length, width = x.shape
        return x.view(batch, length, heads, width // heads).transpose(1, 2)
    ```

    ## Fix safety
    There is no fix: the right transpose depends on the layout the next lines expect.
    """

    code = "ML603"
    name = "view-as-transpose"
    message = "`{call}` views {source} as {target}: a view does not reorder dimensions ({moved} moved); use transpose/permute"
    severity = Severity.ERROR
    requires_any_text = VIEWS

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._views: dict[ast.AST, dict[tuple, list[ast.Call]]] = {}  # a function -> its views by (source, target)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in VIEWS or not node.args:
            return
        if all(_literal_size(a) for a in node.args) and int_literal(node.args[0]) != -1:  # `view(6, 2)`: no symbol to reorder
            return  # (a leading -1 stands for the source's dims the others leave: `(n, 32, 32, 3)` as `(-1, 3, 32, 32)`)
        shapes = self.ctx.analysis(Shapes)
        source, target = shapes.view_source(node), shapes.view_target(node)
        if not is_known(source) or target is None or shapes.is_fresh(func.value):
            return
        if not is_known(target):  # `(B, N, C)` as `(B, C, h, w)` whatever h and w are
            moved = _moved_ahead(source, target)
        else:
            moved = _moved_dimension(source, counted_alike(source, target))
            moved = moved if moved is not None else _moved_channels(source, target)
            moved = moved if moved is not None else _moved_ahead(source, target)
        site = None
        if moved is None:  # sizes the code names, fixed by its constructions: `view(b, self.n_feat, self.seq_len)` of (B, 50, 8)
            fixed = shapes.constant_view_target(node)
            moved = _moved_named(source, fixed, node.args) if fixed is not None else None
            target, site = (fixed, shapes.call_site(node)) if moved is not None else (target, None)
        if moved is not None and self._undoes_a_view(node, source, target):
            return  # `x.view(B, C * W, -1)` ... `out.view(B, C, H, W)`: back to the layout `x` had
        if moved is not None:
            call = f"{self.ctx.text(func)}(...)"
            message = self.message.format(call=call, source=format_shape(source), target=format_shape(target), moved=label(moved))
            self.report(node, message + (f" (with what the call at {site.place} passes)" if site is not None else ""), related=call_sites(site))


    def _undoes_a_view(self, node: ast.Call, source: tuple, target: tuple) -> bool:
        """Does an earlier view of the same function take a tensor of the target's shape to the source's (this
        view undoes it, whatever ran in between: that one is reported)? The function's views are indexed once."""
        function = self.ctx.scopes.enclosing_function(node) or self.ctx.tree
        views = self._views.get(function)
        if views is None:
            shapes, views = self.ctx.analysis(Shapes), {}
            for call in self.ctx.index.within(function, ast.Call):
                if isinstance(call.func, ast.Attribute) and call.func.attr in VIEWS:
                    before, after = shapes.view_source(call), shapes.view_target(call)
                    if is_known(before) and is_known(after):
                        views.setdefault((_keys(before), _keys(after)), []).append(call)
            self._views[function] = views
        return any(position(call) < position(node) for call in views.get((_keys(target), _keys(source)), ())[:2])


def _keys(shape: tuple) -> tuple:
    return tuple(repr(dim_key(d)) for d in shape)


def _literal_size(argument: ast.AST) -> bool:
    """`2` or `-1` written literally. A target of literal sizes holds at most one symbolic dimension (the
    one `-1` infers), so it reorders none of the source's symbols; only an image's channels can move."""
    if isinstance(argument, ast.UnaryOp) and isinstance(argument.op, ast.USub):
        argument = argument.operand
    return isinstance(argument, ast.Constant) and type(argument.value) is int


def _moved_dimension(source: tuple, target: tuple) -> Dim:
    """A symbolic dimension the target puts out of the source's order (swapped with another symbol or with
    an int), when the target is a reordering of the source's dimensions (after splitting products both
    sides name the parts of)."""
    source = [d for d in source if d != 1]
    target = [d for d in target if d != 1]
    source = _split(source, target)
    target = _split(target, source)
    keys = [dim_key(d) for d in source]
    if len(set(keys)) != len(keys) or sorted(map(repr, keys)) != sorted(repr(dim_key(d)) for d in target):
        return None
    order = [keys.index(dim_key(d)) for d in target]
    for i, first in enumerate(order):
        for second in order[i + 1 :]:
            if first > second and isinstance(source[first], Sym) | isinstance(source[second], Sym):  # not two literals
                return source[first] if isinstance(source[first], Sym) else source[second]
    return None


def _moved_ahead(source: tuple, target: tuple) -> Dim:
    """A symbolic dimension both sides hold once whose leading dimensions in the target are some of its
    leading dimensions in the source, the others above 1 left to new dimensions after it: `(B, N, C)` viewed
    as `(B, C, h, w)` puts `C` where `B * N` elements came first, so it is no longer `C`."""
    source = [d for d in source if d != 1]
    target = _split([d for d in target if d != 1], source)
    keys, viewed = [repr(dim_key(d)) for d in source], [repr(dim_key(d)) for d in target]
    for i, dim in enumerate(source):
        if not isinstance(dim, Sym) or keys.count(keys[i]) != 1 or viewed.count(keys[i]) != 1:
            continue
        before, ahead = list(keys[:i]), viewed[: viewed.index(keys[i])]
        for key in ahead:
            if key not in before:
                break
            before.remove(key)
        else:
            after = viewed[viewed.index(keys[i]) + 1 :]
            if before and any(key not in keys for key in after):  # their elements are viewed as new dims after it
                return dim
    return None


def _moved_named(source: tuple, target: tuple, arguments: list[ast.AST]) -> Dim:
    """An int size the target moves among others of the source's (distinct, above 1), the target naming
    it rather than writing it literally: `(B, 50, 8)` viewed as `(B, n_feat, seq_len)` with 8 and 50."""
    if len(source) != len(target) or len(arguments) != len(target):
        return None
    moved = [i for i, (a, b) in enumerate(zip(source, target)) if dim_key(a) != dim_key(b)]
    values = [source[i] for i in moved]
    if len(moved) < 2 or not all(type(source[i]) is int and type(target[i]) is int for i in moved):
        return None
    if sorted(values) != sorted(target[i] for i in moved) or len(set(values)) != len(values) or min(values) < 2:
        return None
    named = [i for i in moved if not _literal_size(arguments[i])]
    return source[named[0]] if named else None


def _moved_channels(source: tuple, target: tuple) -> Dim:
    """The channels of an image batch viewed between channels-last and channels-first: `(B, 32, 32, 3)`
    as `(B, 3, 32, 32)` or back, with literal sizes, 2 to 4 channels and larger sides."""
    if len(source) != len(target) or len(source) < 3 or [dim_key(d) for d in source[:-3]] != [dim_key(d) for d in target[:-3]]:
        return None
    image, viewed = source[-3:], target[-3:]
    if not all(isinstance(d, int) for d in (*image, *viewed)):
        return None
    if 2 <= image[2] < min(image[0], image[1]) and image[2] <= 4 and viewed == (image[2], image[0], image[1]):
        return image[2]  # channels-last viewed as channels-first
    if 2 <= image[0] < min(image[1], image[2]) and image[0] <= 4 and viewed == (image[1], image[2], image[0]):
        return image[0]
    return None


def _split(dims: list, other: list) -> list:
    """Replace a dimension the other side names in parts by those parts, in the other side's order:
    `H * D` when the other side has H and D, `C` when it has `H` and `C // H`."""
    position = {dim_key(d): i for i, d in enumerate(other)}
    result = []
    for dim in dims:
        parts = None
        if dim_key(dim) not in position and isinstance(dim, Sym):
            if dim.operator == "*" and all(dim_key(o) in position for o in dim.operands):
                parts = list(dim.operands)
            else:
                parts = next(
                    ([o.operands[1], o] for o in other
                     if isinstance(o, Sym) and o.operator == "//" and dim_key(o.operands[0]) == dim.key
                     and dim_key(o.operands[1]) in position),
                    None,
                )  # fmt: skip
        result += sorted(parts, key=lambda p: position[dim_key(p)]) if parts else [dim]
    return result
