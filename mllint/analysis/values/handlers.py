"""The exception handlers of a block, written (`try: ... except E: ...`) or implied: `with
contextlib.suppress(E1, E2):` (by any import of `suppress`) is a handler `except (E1, E2): pass` around
the `with`'s body. An implied handler is located at the `suppress(...)` call and is the same object at
every question."""
from __future__ import annotations

import ast

SUPPRESS = "contextlib.suppress"


class Handlers:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._implied: dict[ast.AST, list[ast.ExceptHandler]] = {}
        self._suppressors: dict[ast.ExceptHandler, ast.Call] = {}

    def of(self, node: ast.AST) -> list[ast.ExceptHandler]:
        """The handlers around `node`'s body (a `try`, or a `with` that suppresses errors)."""
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            return node.handlers
        if not isinstance(node, (ast.With, ast.AsyncWith)):
            return []
        if node not in self._implied:
            self._implied[node] = []
            for call in self._suppressing(node):
                handler = _implied(call)
                self._implied[node].append(handler)
                self._suppressors[handler] = call
        return self._implied[node]

    def suppressor(self, handler: ast.ExceptHandler) -> ast.Call | None:
        """The `suppress(...)` call an implied handler stands for (None for a written one)."""
        return self._suppressors.get(handler)

    def _suppressing(self, node: ast.With | ast.AsyncWith) -> list[ast.Call]:
        return [
            item.context_expr for item in node.items
            if isinstance(item.context_expr, ast.Call) and item.context_expr.args
            and self.ctx.qualified_name(item.context_expr.func) == SUPPRESS
        ]  # fmt: skip


def _implied(call: ast.Call) -> ast.ExceptHandler:
    caught = call.args[0] if len(call.args) == 1 else ast.copy_location(ast.Tuple(elts=list(call.args), ctx=ast.Load()), call)
    handler = ast.copy_location(ast.ExceptHandler(type=caught, name=None, body=[ast.copy_location(ast.Pass(), call)]), call)
    handler.end_lineno, handler.end_col_offset = call.end_lineno, call.end_col_offset
    return handler
