"""Parents, enclosing functions and classes, and the names each function binds."""
from __future__ import annotations

import ast
from collections.abc import Iterator

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
SCOPE_NODES = (*FUNCTION_NODES, ast.ClassDef)


class Scopes:
    def __init__(self, ctx) -> None:
        self._parents = ctx.index.parents
        self._bindings: dict[ast.AST, frozenset[str]] = {}

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        node = self._parents.get(node)
        while node is not None:
            yield node
            node = self._parents.get(node)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, FUNCTION_NODES):
                return ancestor
        return None

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        """The class whose method (or class body) holds `node`."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.ClassDef):
                return ancestor
        return None

    def enclosing_scope(self, node: ast.AST) -> ast.AST | None:
        """The innermost function or class around `node` (None: module level)."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, SCOPE_NODES):
                return ancestor
        return None

    def local_bindings(self, function: ast.AST) -> frozenset[str]:
        """Names a function binds other than by import: parameters, assignment targets, loop variables."""
        if function not in self._bindings:
            names = {arg.arg for arg in _all_args(function.args)}
            body = function.body if isinstance(function.body, list) else [function.body]
            for statement in body:
                for node in ast.walk(statement):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        names.add(node.id)
                    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        names.add(node.name)
            self._bindings[function] = frozenset(names)
        return self._bindings[function]


def _all_args(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]
