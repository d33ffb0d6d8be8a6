"""A loop over a dict taken one key at a time: `for name, crit in criteria.items(): crit(out[name],
batch[name])` runs once per key of `criteria`, and in the turn of each key `crit` is the item of
`criteria` at it and `out[name]` the item of `out` at it. When the keys are known (`Objects.dict_keys`:
a literal, an `nn.ModuleDict` of one, a comprehension over either, also returned by a builder of another
module) and the loop's variables are bound nowhere else in their function, a facet may read an
expression in each turn: its objects here (`in_turn`), its value by `values.at_key(value, loop, key)`.
A dict filled by `d[k] = ...` or a key not constant: no turns (the loop is read as one, as before).
"""
from __future__ import annotations

import ast

from mllint.analysis.objects.points_to import Objects
from mllint.analysis.syntax.scopes import SCOPE_NODES
from mllint.analysis.values.values import key_variable, keyed_loop

MAX_TURNS = 16  # keys a loop is taken at; a longer dict is read as one


def turns(ctx, node: ast.AST) -> tuple[ast.For, tuple] | None:
    """(the innermost `for` over a dict's keys or items whose body holds `node`, the dict's keys) when the
    keys are known and the loop's variables are bound only by it in their scope; None else."""
    child = node
    for ancestor in ctx.scopes.ancestors(node):
        if isinstance(ancestor, SCOPE_NODES):
            return None
        if isinstance(ancestor, ast.For) and any(child is s for s in ancestor.body) and keyed_loop(ancestor):
            keys = turn_keys(ctx, ancestor)
            return None if keys is None else (ancestor, keys)
        child = ancestor
    return None


def turn_keys(ctx, loop: ast.AST) -> tuple | None:
    """The keys a `for` over a dict's keys or items (`values.keyed_loop`) is taken at, when they are known
    and its variables are bound only by it in their scope; None else. Worked out once per loop."""
    if not isinstance(loop, ast.For) or not keyed_loop(loop):
        return None
    known = ctx.analysis(TurnKeys)
    if loop not in known:
        keys = ctx.analysis(Objects).dict_keys(_iterated(loop))
        known[loop] = keys if keys and len(keys) <= MAX_TURNS and _bound_once(ctx, loop) else None
    return known[loop]


class TurnKeys(dict):
    """`turn_keys`' answers for the loops of a file (`ctx.analysis(TurnKeys)`)."""

    def __init__(self, ctx) -> None:
        super().__init__()


def variables(loop: ast.For) -> tuple[str, str | None]:
    """The key variable of a `keyed_loop` `for`, and its value variable (None over the keys alone)."""
    return key_variable(loop), loop.target.elts[1].id if isinstance(loop.target, ast.Tuple) else None


def in_turn(objects: Objects, expr: ast.AST, loop: ast.For, key) -> frozenset | None:
    """The objects `expr` (of `objects`' file) may be in the turn of `loop` (`turns`) at `key`: the loop's
    value variable, and an item read at its key variable (`crits[name]`), at that key; else as anywhere."""
    key_name, value_name = variables(loop)
    if isinstance(expr, ast.Name) and expr.id == value_name:
        return objects.item_at(_iterated(loop), key)
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Name) and expr.slice.id == key_name:
        return objects.item_at(expr.value, key)
    return objects.points_to(expr)


def _iterated(loop: ast.For) -> ast.AST:
    """The dict a `keyed_loop` goes over: `d` of `d.items()`, `d.keys()` or `d`."""
    return loop.iter.func.value if isinstance(loop.iter, ast.Call) else loop.iter


def _bound_once(ctx, loop: ast.For) -> bool:
    """Are the loop's variables bound by nothing else of its scope (so a read of them in its body is its turn's)?"""
    names = {t.id for t in ast.walk(loop.target) if isinstance(t, ast.Name)}
    scope = ctx.scopes.enclosing_scope(loop)
    nodes = ctx.index.within(scope, ast.Name) if scope is not None else ctx.index.of_type(ast.Name)
    stores = [n for n in nodes if n.id in names and not isinstance(n.ctx, ast.Load) and ctx.scopes.enclosing_scope(n) is scope]
    return len(stores) == len(names)
