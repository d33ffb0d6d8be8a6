"""The dimension algebra of the shape analysis.

A dimension is an `int`, a `Sym` (a size known only by what it stands for: `x.size(0)`, a parameter
`batch_size`, `C // self.n_head`) or `None` (unknown). Two symbols are the same dimension exactly when
they stand for the same thing (equal `key`); two different symbols are not known to be equal or
different, so nothing here decides between them: their broadcast is unknown.

A shape is a tuple of dimensions (its rank is known); `None` stands for a shape of unknown rank.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Sym:
    key: tuple  # the identity of what the symbol stands for
    label: str = field(compare=False)  # how messages show it
    # `a * b` and `a // b` keep their operands, so a view's target can be matched against its source.
    operator: str | None = field(default=None, compare=False)
    operands: tuple = field(default=(), compare=False)


Dim = Union[int, Sym, None]
Shape = tuple  # tuple[Dim, ...]


def dim_key(dim: Dim) -> tuple | None:
    if isinstance(dim, Sym):
        return dim.key
    return ("int", dim) if isinstance(dim, int) else None


def multiply(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 1 or b == 1:
        return b if a == 1 else a
    if a is None or b is None:
        return None
    return Sym(("*", dim_key(a), dim_key(b)), f"{_operand(a)} * {_operand(b)}", "*", (a, b))


def floor_divide(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a // b if b else None
    if a is None or b is None:
        return None
    return Sym(("//", dim_key(a), dim_key(b)), f"{_operand(a)} // {_operand(b)}", "//", (a, b))


def product(dims) -> Dim:
    result: Dim = 1
    for dim in dims:
        result = multiply(result, dim)
    return result


def quotient(dividend: Shape, divisor: Shape) -> Dim:
    """The product of `dividend`'s dimensions divided by that of `divisor`'s (what a view's `-1`
    stands for): the dividend's factors less the divisor's, `//` what does not cancel. None when a
    dimension is unknown or the integers do not divide."""
    numerator, denominator = _factors(dividend), _factors(divisor)
    if numerator is None or denominator is None:
        return None
    whole = product(f for f in numerator if isinstance(f, int))
    part = product(f for f in denominator if isinstance(f, int))
    if not part or whole % part:
        return None
    remaining = [f for f in numerator if isinstance(f, Sym)]
    leftover = []
    for factor in (f for f in denominator if isinstance(f, Sym)):
        match = next((i for i, f in enumerate(remaining) if f.key == factor.key), None)
        if match is None:
            leftover.append(factor)
        else:
            del remaining[match]
    for i, factor in enumerate(remaining):  # `H * (C // H)` is `C`: a view only runs when it divides
        if factor is not None and factor.operator == "//":
            divisor = dim_key(factor.operands[1])
            match = next((j for j, f in enumerate(remaining) if f is not None and f.key == divisor), None)
            if match is not None and isinstance(factor.operands[0], Sym):
                remaining[i], remaining[match] = factor.operands[0], None
    result = product([whole // part, *(f for f in remaining if f is not None)])
    return floor_divide(result, product(leftover)) if leftover else result


def counted_alike(source: Shape, target: Shape) -> Shape:
    """A view's target with its one dimension the source does not have put as the source's one it lacks
    (`(B, D, h * w)` viewed as `(B, N, D)`: a view keeps the count of elements, so N is `h * w`); the
    target as it is unless exactly one dimension differs on each side, not two ints."""
    if len(source) != len(target):
        return target
    left, right = [dim_key(d) for d in source], [dim_key(d) for d in target]
    for key in list(left):
        if key in right:
            right.remove(key)
            left.remove(key)
    if len(left) != 1 or len(right) != 1 or None in (left[0], right[0]) or left[0][0] == right[0][0] == "int":
        return target
    lone = next(d for d in source if dim_key(d) == left[0])
    return tuple(lone if dim_key(d) == right[0] else d for d in target)


def _factors(dims) -> list | None:
    """The factors of a product of dimensions (`a * b` counts as `a` and `b`); None if one is unknown."""
    found: list = []
    for dim in dims:
        if dim is None:
            return None
        if isinstance(dim, Sym) and dim.operator == "*":
            inner = _factors(dim.operands)
            if inner is None:
                return None
            found += inner
        else:
            found.append(dim)
    return found


def label(dim: Dim) -> str:
    if isinstance(dim, Sym):
        return dim.label
    return "?" if dim is None else str(dim)


def _operand(dim: Dim) -> str:
    return f"({dim.label})" if isinstance(dim, Sym) and dim.operator else label(dim)


def format_shape(shape: Shape) -> str:
    inner = ", ".join(label(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def format_ends(ends: tuple[Shape, Shape]) -> str:
    """A shape of unknown rank by its known ends: `(B, ..., 1)`."""
    return "(" + ", ".join([*(label(d) for d in ends[0]), "...", *(label(d) for d in ends[1])]) + ")"


def column_against_batch(ends: tuple[Shape, Shape], shape: Shape) -> bool:
    """Is a tensor of unknown rank `(B, ..., 1)` (known ends) set against `(B,)`: the same batch
    dimension B (not 1; or a size unknown on one side), which the trailing 1 broadcasts against? Both
    stretch: to `(B, ..., B)`. So does `(B, 1, ...)` against the same `(B,)` (a batch of `(1, ...)`
    samples): B meets its last size, never its first."""
    head, tail = ends
    if len(shape) == 1 and len(head) > 1 and head[1] == 1 and head[0] is not None and head[0] == shape[0] != 1:
        return True  # `(B, 1, ...)`: B meets the last size, `(B, B)` or `(B, 1, ..., B)` (or an error)
    if not (len(shape) == 1 and head and tail and tail[-1] == 1 and 1 not in (shape[0], head[0])):
        return False
    return head[0] is None or shape[0] is None or head[0] == shape[0]  # a size unknown on one side: the ranks decide


def broadcast(a: Shape | None, b: Shape | None) -> Shape | None:
    """The broadcast of two shapes; None when a rank is unknown or the shapes cannot broadcast.
    A dimension whose outcome depends on two different symbols (or a symbol and an int) is unknown."""
    if a is None or b is None:
        return None
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    result = []
    for x, y in zip(a, b):
        if x == 1 or y == 1:
            result.append(y if x == 1 else x)
        elif x is not None and x == y:
            result.append(x)
        elif isinstance(x, int) and isinstance(y, int):
            return None  # a run-time error, not a silent broadcast
        else:
            result.append(None)
    return tuple(result)


def is_known(shape: Shape | None) -> bool:
    return shape is not None and all(d is not None for d in shape)


def expanded(operand: Shape, result: Shape) -> bool:
    """Does broadcasting stretch `operand` to `result`: a dimension `result` adds, or a size-1
    dimension of `operand` where `result` has a size other than 1? (A symbol counts as more than 1.)"""
    padded = (1,) * (len(result) - len(operand)) + tuple(operand)
    return any(x == 1 and y != 1 for x, y in zip(padded, result))


def trailing_one_added(longer: Shape, shorter: Shape, ranks_only: bool = False) -> bool:
    """`longer` is `shorter` with a trailing size-1 dimension, and `shorter` ends with a size other
    than 1: `(B, 1)` and `(B,)`. With `ranks_only`, a size unknown on either side counts as the same
    (`(?, 1)` and `(B,)`, `(B, 1)` and `(?,)`): the ranks decide; two different known sizes still do not,
    nor a lone 1 before the trailing one (`(1, 1)` against `(?,)` stretches one side only); the rows an index of
    `B` entries selects count as `B`."""
    if not ranks_only:
        return len(shorter) >= 1 and same_shape(longer, tuple(shorter) + (1,)) and shorter[-1] != 1
    return (
        len(shorter) >= 1 and len(longer) == len(shorter) + 1 and longer[-1] == 1 and 1 not in (shorter[-1], longer[-2])
        and all(x is None or y is None or x == y or selects(x, y) or selects(y, x) for x, y in zip(longer, shorter))
    )  # fmt: skip


def selects(dim: Dim, size: Dim) -> bool:
    """Is `dim` the rows a one-dimensional index of `size` entries selects (`w[idx]` of a `(B,)` `idx`)?"""
    return isinstance(dim, Sym) and dim.operator == "selected" and size is not None and dim.operands == (size,)


def same_shape(a: Shape | None, b: Shape | None) -> bool:
    """Known to be the same shape: same rank, every dimension known and equal."""
    return a is not None and b is not None and len(a) == len(b) and all(x is not None and x == y for x, y in zip(a, b))
