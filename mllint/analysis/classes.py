"""Which classes are `torch.nn.Module` subclasses. `is_module_base` is the one answer for a base class named
by its qualified name (`torch.nn.Module`, a torch layer, Lightning's `LightningModule`), which
`project.ProjectView.is_module_class` uses across modules; `ModuleClasses`: the file's own classes that
derive from one, directly, through an import alias, or through another class of the same file."""
from __future__ import annotations

import ast

from mllint.analysis.values import canonical_class

MODULE_BASES = {"torch.nn.Module", "lightning.LightningModule", "lightning.pytorch.LightningModule",
                "pytorch_lightning.LightningModule"}  # fmt: skip
NOT_MODULES = {"torch.nn.Parameter", "torch.nn.Buffer"}


def is_module_base(qualified: str | None) -> bool:
    """Is a class of this name a `torch.nn.Module`: the base itself, Lightning's, or a torch layer
    (`torch.nn.Sequential`, not `torch.nn.Parameter`)?"""
    name = canonical_class(qualified) or ""
    if name in MODULE_BASES:
        return True
    last = name.rsplit(".", 1)[-1]
    return name == f"torch.nn.{last}" and last[:1].isupper() and name not in NOT_MODULES


class ModuleClasses:
    def __init__(self, ctx) -> None:
        classes = ctx.index.of_type(ast.ClassDef)
        self.by_name: dict[str, ast.ClassDef] = {cls.name: cls for cls in classes}  # the last one of a name
        self.modules: set[ast.ClassDef] = set()
        changed = True
        while changed:  # a class may derive from one defined further down
            changed = False
            for cls in classes:
                if cls not in self.modules and any(self._is_module_base(b, ctx) for b in cls.bases):
                    self.modules.add(cls)
                    changed = True

    def _is_module_base(self, base: ast.AST, ctx) -> bool:
        if is_module_base(ctx.qualified_name(base)):
            return True
        return isinstance(base, ast.Name) and self.by_name.get(base.id) in self.modules

    def method_of_module(self, function: ast.AST, ctx) -> ast.ClassDef | None:
        """The Module subclass whose method `function` is, if any."""
        parent = ctx.scopes.parent(function)
        return parent if isinstance(parent, ast.ClassDef) and parent in self.modules else None
