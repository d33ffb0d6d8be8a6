"""Accidental outer broadcasts: an element-wise operation between a `(N,)` and a `(N, 1)` tensor (one is the
other with a trailing size-1 dimension), which makes `(N, N)`, unless an operand was given its size-1
dimension on purpose (`a[:, None] - b`, `a.unsqueeze(1)`, `a.view(-1, 1)` of a flat `a`). The shape
analysis marks the values such an operation makes (`Broadcast`), so a reduction wherever they flow
(returned by a `forward`, passed to a helper) finds where they were made.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mllint.analysis.facets.dims import broadcast, format_shape, trailing_one_added
from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.facets.tensor_values import Tensor, unknown_rank_column

UNIT_GIVING = frozenset({"unsqueeze", "view", "reshape"})
RESHAPE_FUNCTIONS = frozenset({"numpy.reshape", "torch.reshape"})  # `np.reshape(c, (-1, 1))`


@dataclass(frozen=True)
class Broadcast:
    """Where a `(N, N)` was made of `(N,)` and `(N, 1)`: the module's context, the operation, the shapes."""

    ctx: object
    node: ast.AST
    left: str
    right: str
    result: str


def column_and_row(left: object, right: object, ranks_only: bool) -> tuple[str, str, str] | None:
    """The shapes of a `(N, 1)` and a `(N,)` operand (either way round) and of their broadcast, as text;
    a `(B, ..., 1)` of unknown rank against `(B,)` counts, and with `ranks_only` sizes unknown on one side
    (`(?, 1)` against `(B,)`)."""
    if not isinstance(left, Tensor) or not isinstance(right, Tensor):
        return None
    column = unknown_rank_column(left, right)
    if column is not None:
        return column[:3]
    a, b = left.shape, right.shape
    if a is None or b is None or not (trailing_one_added(a, b, ranks_only) or trailing_one_added(b, a, ranks_only)):
        return None
    return format_shape(a), format_shape(b), format_shape(broadcast(a, b))


def written_outer(operands: tuple[ast.AST, ast.AST], ctx, reaching, value_of) -> bool:
    """Is an operand given its size-1 dimension in the expression itself (`a[:, None] - b`,
    `a.unsqueeze(1) * b`, `a.view(-1, 1) - b`), or in the one assignment of the name it reads
    (`counts = np.reshape(c, (-1, 1))` then `np.arange(k) < counts`, a length mask)? A pairing written on
    purpose. `reaching(name)` gives a name's reaching definitions, `value_of(node)` a node's value."""
    spelled = [*operands]
    for operand in operands:
        definitions = reaching(operand) if isinstance(operand, ast.Name) else []
        if len(definitions) == 1 and definitions[0].value is not None:
            spelled.append(definitions[0].value)
    for operand in spelled:
        if isinstance(operand, ast.Subscript):
            items = operand.slice.elts if isinstance(operand.slice, ast.Tuple) else [operand.slice]
            if any(isinstance(i, ast.Constant) and i.value is None for i in items):
                return True
        if isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute) and _gives_unit(operand, ctx, value_of):
            return True
    return False


def with_itself(operands: tuple[ast.AST, ast.AST]) -> bool:
    """Is one operand the other given a size-1 dimension (`s.view(-1, 1) > s`, `x[:, None] - x`)? A
    matrix of pairs of one vector's entries: an element-wise reading would compare each with itself."""
    bases = [_unit_source(o) for o in operands]
    return any(b is not None and _same_reference(b, other) for b, other in zip(bases, reversed(operands)))


def _same_reference(a: ast.AST, b: ast.AST) -> bool:
    """Do `a` and `b` spell the same name or attribute chain (`s`, `self.scores`)?"""
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    return isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute) and a.attr == b.attr and _same_reference(a.value, b.value)


def _unit_source(operand: ast.AST) -> ast.AST | None:
    """`s` of `s.view(-1, 1)`, `s.unsqueeze(1)`, `s[:, None]`; None for anything else."""
    if isinstance(operand, ast.Subscript):
        items = operand.slice.elts if isinstance(operand.slice, ast.Tuple) else [operand.slice]
        return operand.value if any(isinstance(i, ast.Constant) and i.value is None for i in items) else None
    if isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute) and operand.func.attr in UNIT_GIVING:
        return operand.func.value
    return None


def _gives_unit(call: ast.Call, ctx, value_of) -> bool:
    """Does `unsqueeze`, or a `view` / `reshape` naming a size 1, give its result a size-1 dimension its
    source lacks? `a.view(-1)` does not, nor `torch.stack(values).view(-1, 1)` of `(T, N, 1)` values."""
    if call.func.attr not in UNIT_GIVING:
        return False
    if call.func.attr == "unsqueeze":
        return True
    function = ctx.qualified_name(call.func) in RESHAPE_FUNCTIONS
    source, sizes = (call.args[0] if call.args else None, call.args[1:]) if function else (call.func.value, call.args)
    if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
        sizes = sizes[0].elts
    if not any(int_literal(s) == 1 for s in sizes):
        return False
    before = value_of(source) if source is not None and int_literal(sizes[-1]) == 1 else None
    return not (isinstance(before, Tensor) and _ends_in_one(before))


def _ends_in_one(value: Tensor) -> bool:
    if value.shape is not None:
        return len(value.shape) > 0 and value.shape[-1] == 1
    return bool(value.ends and value.ends[1] and value.ends[1][-1] == 1)
