"""Which classes of the file are `torch.nn.Module` subclasses: directly, through an import alias, or
through another class of the same file."""
from __future__ import annotations

import ast

from mllint.analysis.values import canonical_class

MODULE_BASE = "torch.nn.Module"


class ModuleClasses:
    def __init__(self, ctx) -> None:
        classes = ctx.index.of_type(ast.ClassDef)
        by_name = {cls.name: cls for cls in classes}
        self.modules: set[ast.ClassDef] = set()
        changed = True
        while changed:  # a class may derive from one defined further down
            changed = False
            for cls in classes:
                if cls not in self.modules and any(self._is_module_base(b, ctx, by_name) for b in cls.bases):
                    self.modules.add(cls)
                    changed = True

    def _is_module_base(self, base: ast.AST, ctx, by_name: dict[str, ast.ClassDef]) -> bool:
        if canonical_class(ctx.qualified_name(base)) == MODULE_BASE:
            return True
        return isinstance(base, ast.Name) and by_name.get(base.id) in self.modules

    def method_of_module(self, function: ast.AST, ctx) -> ast.ClassDef | None:
        """The Module subclass whose method `function` is, if any."""
        parent = ctx.scopes.parent(function)
        return parent if isinstance(parent, ast.ClassDef) and parent in self.modules else None
