"""`ModuleClasses`: the linted file's classes that derive from `torch.nn.Module`, directly, through an import
alias, through another class of the same file, or through a class of another project module."""
from __future__ import annotations

import ast

from mllint.analysis.syntax.names import is_self_attribute, training_test
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.library_models import is_module_base
from mllint.analysis.program.project_view import ProjectView


class ModuleClasses:
    def __init__(self, ctx) -> None:
        classes = ctx.index.of_type(ast.ClassDef)
        self.by_name: dict[str, ast.ClassDef] = {cls.name: cls for cls in classes}  # the last one of a name
        by_name = self.by_name
        outside = {b for cls in classes for b in cls.bases if not (isinstance(b, ast.Name) and b.id in by_name)}
        module_bases = {b for b in outside if _is_module_base(b, ctx)}
        self.modules: set[ast.ClassDef] = set()
        changed = True
        while changed:  # a class may derive from one defined further down
            changed = False
            for cls in classes:
                if cls not in self.modules and any(
                    b in module_bases or (isinstance(b, ast.Name) and by_name.get(b.id) in self.modules)
                    for b in cls.bases
                ):
                    self.modules.add(cls)
                    changed = True

    def method_of_module(self, function: ast.AST, ctx) -> ast.ClassDef | None:
        """The Module subclass whose method `function` is, if any."""
        parent = ctx.scopes.parent(function)
        return parent if isinstance(parent, ast.ClassDef) and parent in self.modules else None


def _is_module_base(base: ast.AST, ctx) -> bool:
    """Is a base class that is not one of the file's own classes a Module: torch's or Lightning's, or a
    class of another module of the project that derives from one (`class Net(BaseModel)`)?"""
    qualified = ctx.qualified_name(base)
    if qualified is None:
        return False
    if is_module_base(qualified):
        return True
    return ctx.project is not None and ctx.analysis(ProjectView).is_module_class(qualified)


def training_forward(ctx, node: ast.AST) -> bool:
    """Does `node` run in the `forward` of a module class of the file (or a method `forward` calls on
    `self`, such as torchvision's `_forward_impl`) outside an evaluation-only branch (`if not
    self.training:`, the `else` of `if self.training:`)?"""
    function = ctx.scopes.enclosing_function(node)
    cls = ctx.analysis(ModuleClasses).method_of_module(function, ctx) if function else None
    if cls is None or not isinstance(function, ast.FunctionDef) or function.name not in _run_by_forward(cls):
        return False
    child = node
    for ancestor in ctx.scopes.ancestors(node):
        if ancestor is function:
            return True
        training = training_test(ancestor.test) if isinstance(ancestor, ast.If) else None
        if training is not None and (child in ancestor.body) is not training:
            return False  # in the branch that runs only in evaluation
        child = ancestor
    return False


def _run_by_forward(cls: ast.ClassDef) -> set[str]:
    """`forward` and the methods it calls on `self`."""
    forward = own_method(cls, "forward")
    if forward is None:
        return set()
    return {"forward"} | {node.func.attr for node in ast.walk(forward) if isinstance(node, ast.Call) and is_self_attribute(node.func)}
