"""The constants an expression may hold, through the parameters of its function and their call sites.

`constant_values(ctx, expr)`: `{True}` for `nn.ReLU(inplace=inplace)` in `__init__(self, dim, inplace=True)`
when every call site leaves `inplace` out (or passes `True`); `{True, False}` when the call sites differ; a
literal's value; what every assignment of a local name gives. None when any of them is unknown (not a
constant, no call site found, past `MAX_DEPTH` callers up).
"""
from __future__ import annotations

import ast

from mllint.analysis.program.callers import Callers
from mllint.analysis.values.values import ValueKinds, is_parameter

MAX_DEPTH = 2  # callers followed up, for a parameter passed on as another function's parameter


def constant_values(ctx, expr: ast.AST, depth: int = 0) -> frozenset | None:
    if isinstance(expr, ast.Constant):
        return frozenset({expr.value})
    if not isinstance(expr, ast.Name) or depth > MAX_DEPTH:
        return None
    definitions = ctx.analysis(ValueKinds).reaching_definitions(expr)
    if not definitions:
        return None
    found: set = set()
    for definition in definitions:
        if is_parameter(definition):
            values = _passed(ctx, definition, depth)
        elif definition.value is not None:
            values = constant_values(ctx, definition.value, depth)
        else:
            values = None
        if values is None:
            return None
        found |= values
    return frozenset(found)


def _passed(ctx, definition, depth: int) -> frozenset | None:
    """What the call sites of the parameter's function pass for it (its default where they leave it out)."""
    bindings = ctx.analysis(Callers).bindings(definition.node)
    sites = [b for b in bindings if b.site is not None] or bindings  # no call site: the signature's defaults
    found: set = set()
    for binding in sites:
        passed = binding.argument(definition.name)
        values = constant_values(passed[0], passed[1], depth + 1) if passed is not None else None
        if values is None:
            return None
        found |= values
    return frozenset(found) if sites else None
