"""Name resolution: the qualified name an expression refers to through imports and their aliases.

`import torch.nn.functional as F` makes `F.softmax` resolve to `torch.nn.functional.softmax`. Imports inside
functions are honoured, and a name that a function binds otherwise (a parameter, an assignment) shadows
the module's import of the same name, so it resolves to nothing: unknown stays unknown.
"""
from __future__ import annotations

import ast

from mllint.analysis.scopes import Scopes


class Names:
    def __init__(self, ctx) -> None:
        self.scopes: Scopes = ctx.analysis(Scopes)
        self._imports: dict[ast.AST, dict[str, str]] = {}
        for node in ctx.index.of_type(ast.Import, ast.ImportFrom):
            scope = self.scopes.enclosing_function(node) or ctx.tree
            self._imports.setdefault(scope, {}).update(_bindings(node))
        self._module = ctx.tree

    def qualified_name(self, expr: ast.AST) -> str | None:
        """`torch.nn.functional.softmax` for `F.softmax` under `import torch.nn.functional as F`."""
        parts: list[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        base = self.resolve(expr)
        if base is None:
            return None
        return ".".join([base, *reversed(parts)])

    def resolve(self, name: ast.Name) -> str | None:
        function = self.scopes.enclosing_function(name)
        while function is not None:
            imported = self._imports.get(function, {}).get(name.id)
            if imported is not None:
                return imported
            if name.id in self.scopes.local_bindings(function):
                return None
            function = self.scopes.enclosing_function(function)
        return self._imports.get(self._module, {}).get(name.id)

    def imports(self, prefix: str) -> bool:
        """Does the module import anything from `prefix` (e.g. "torch")?"""
        return any(
            target == prefix or target.startswith(prefix + ".")
            for bindings in self._imports.values()
            for target in bindings.values()
        )


def _bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    bound: dict[str, str] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                bound[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                bound[top] = top
        return bound
    if node.level or not node.module:
        return bound  # relative imports resolve within the project, not here
    for alias in node.names:
        if alias.name != "*":
            bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def call_argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    """The argument passed at `position` or as `keyword=`: `F.cross_entropy(logits, ...)` or `(input=...)`."""
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)
