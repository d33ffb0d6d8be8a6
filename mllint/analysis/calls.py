"""Which function of the linted code a call runs.

The loop model follows calls through `CallResolver.resolve` only: today it knows the functions of the
file being linted; a project-wide index can answer there for functions defined in other files.
"""
from __future__ import annotations

import ast


class CallResolver:
    """Which function of the linted code a call runs: a module-level function, a function defined in an
    enclosing function, or `self.method(...)` of the enclosing class. The one place calls are resolved:
    a project-wide index can answer here for functions in other files."""

    def __init__(self, ctx) -> None:
        self.scopes = ctx.scopes
        self.module_functions = _functions_in(ctx.tree.body)
        self._stored: dict[ast.ClassDef, set[str]] = {}
        self._nested: dict[ast.AST, dict[str, ast.AST]] = {}

    def resolve(self, call: ast.Call) -> ast.AST | None:
        func = call.func
        if isinstance(func, ast.Name):
            for scope in self.scopes.ancestors(call):
                if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    local = self._nested_functions(scope).get(func.id)
                    if local is not None:
                        return local
                    if func.id in self.scopes.local_bindings(scope):
                        return None
            return self.module_functions.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = self.scopes.enclosing_class(call)
            return _functions_in(cls.body).get(func.attr) if cls is not None else None
        return None

    def _nested_functions(self, function: ast.AST) -> dict[str, ast.AST]:
        """The functions a function defines, also inside its loops and branches (the last one wins)."""
        if function not in self._nested:
            found: dict[str, ast.AST] = {}
            stack = list(reversed(function.body))
            while stack:
                node = stack.pop()
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[node.name] = node
                elif isinstance(node, ast.stmt) and not isinstance(node, ast.ClassDef):
                    blocks = (ast.stmt, ast.excepthandler, ast.match_case)
                    stack += reversed([c for c in ast.iter_child_nodes(node) if isinstance(c, blocks)])
                elif isinstance(node, (ast.excepthandler, ast.match_case)):
                    stack += reversed(node.body)
            self._nested[function] = found
        return self._nested[function]

    def is_attribute_call(self, call: ast.Call) -> bool:
        """`self.model(x)`: a call of an object the class stores (not a method acting on `self`)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return False
        cls = self.scopes.enclosing_class(call)
        if cls is None:
            return False
        if cls not in self._stored:
            self._stored[cls] = {
                target.attr
                for node in ast.walk(cls) if isinstance(node, (ast.Assign, ast.AnnAssign))
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
            }  # fmt: skip
        return func.attr in self._stored[cls]


def _functions_in(body: list[ast.stmt]) -> dict[str, ast.AST]:
    return {s.name: s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
