"""The nodes of a scope grouped by keys a rule computes once per node, each group in source order, so that
"the first `optimizer = ...` after line 40" is a bisection and not a rescan of the scope per optimizer.

A rule asks `ctx.analysis(ScopeGroups).of(scope, types, keys)` with a module-level function `keys(ctx,
node)` returning the keys of a node of `types` (none to leave it out); the grouping is built on the first
request for that scope, types and function, and shared by every later one. A scope is its whole subtree,
nested functions included, as `ctx.index.within` gives it.
"""
from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Iterable, Iterator

Position = tuple[int, int]
Keys = Callable[..., Iterable[Hashable]]


def start(node: ast.AST) -> Position:
    return (node.lineno, node.col_offset)


def end(node: ast.AST) -> Position:
    return (node.end_lineno, node.end_col_offset)


class Groups:
    def __init__(self, groups: dict[Hashable, list[ast.AST]]) -> None:
        self._nodes = {key: sorted(nodes, key=start) for key, nodes in groups.items()}
        self._starts = {key: [start(n) for n in nodes] for key, nodes in self._nodes.items()}

    def between(
        self, key: Hashable, after: Position | None = None, before: Position | None = None, reverse: bool = False
    ) -> Iterator[ast.AST]:
        """The nodes of `key` starting after position `after` and before `before` (both excluded), in
        source order or, with `reverse`, the last first."""
        nodes, starts = self._nodes.get(key, []), self._starts.get(key, [])
        low = 0 if after is None else bisect_right(starts, after)
        high = len(nodes) if before is None else bisect_left(starts, before)
        return (nodes[i] for i in (reversed(range(low, high)) if reverse else range(low, high)))


class ScopeGroups:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._built: dict[tuple, Groups] = {}

    def of(self, scope: ast.AST, types: tuple[type, ...], keys: Keys) -> Groups:
        groups = self._built.get((scope, types, keys))
        if groups is None:
            found: dict[Hashable, list[ast.AST]] = {}
            for node in self.ctx.index.within(scope, *types):
                for key in dict.fromkeys(keys(self.ctx, node)):
                    found.setdefault(key, []).append(node)
            groups = self._built[(scope, types, keys)] = Groups(found)
        return groups


def dotted_prefixes(text: str) -> list[str]:
    """`model.encoder` and `model` for `model.encoder.fc`: the `m` that `text.startswith(m + ".")`."""
    return [text[:i] for i, character in enumerate(text) if character == "."]
