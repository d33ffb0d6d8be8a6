"""Indexing of shapes: what ints, slices, index tensors, `None` and `...` leave of a shape, and the
literal ints the shape operations read."""
from __future__ import annotations

import ast

from mllint.analysis.facets.dims import Dim, Shape


def int_literal(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = int_literal(node.operand)
        return -value if value is not None else None
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def normalise(position: int | None, rank: int) -> int | None:
    if position is None or not -rank <= position < rank:
        return None
    return position % rank


def index_shape(shape: Shape, items: list[ast.AST], integers: set[int], rows: dict[int, Dim]) -> Shape | None:
    """The shape after indexing with ints (literals, or the items whose ids are in `integers`), slices,
    one-dimensional index tensors (`rows`: how many they, and slices of a known width, select), `None`
    and `...` (anything else: unknown)."""
    consuming = [i for i in items if not (isinstance(i, ast.Constant) and i.value in (None, Ellipsis))]
    if len(consuming) > len(shape) or sum(isinstance(i, ast.Constant) and i.value is Ellipsis for i in items) > 1:
        return None
    result, position = [], 0
    for item in items:
        if isinstance(item, ast.Constant) and item.value is None:
            result.append(1)
        elif isinstance(item, ast.Constant) and item.value is Ellipsis:
            skipped = len(shape) - len(consuming)
            result += shape[position : position + skipped]
            position += skipped
        elif isinstance(item, ast.Slice):
            result.append(rows[id(item)] if id(item) in rows else slice_length(item, shape[position]))
            position += 1
        elif int_literal(item) is not None or id(item) in integers:
            position += 1
        elif id(item) in rows and position < len(shape):
            result.append(rows[id(item)])
            position += 1
        else:
            return None
    return tuple(result) + tuple(shape[position:])


def slice_length(item: ast.Slice, dim: Dim) -> Dim:
    """How many entries a slice keeps of a dimension: all for `:`, 1 for `[-1:]`, and what literal bounds
    leave of a known size (`[2:]`, `[:-1]`, `[-3:]`); None: unknown."""
    if item.step is not None:
        return None
    lower, upper = item.lower, item.upper
    if lower is None and upper is None:
        return dim
    low = 0 if lower is None else signed_literal(lower)
    high = None if upper is None else signed_literal(upper)
    if low is None or (upper is not None and high is None):
        return None
    if high is None and low == -1:
        return 1  # the last entry of any non-empty dimension
    if not isinstance(dim, int):
        return None
    start, stop = slice(low, high).indices(dim)[:2]
    return max(stop - start, 0)


def signed_literal(node: ast.AST) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = int_literal(node.operand)
        return None if value is None else -value
    return int_literal(node)
