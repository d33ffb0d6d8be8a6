"""Decorators that hand back what they decorate, and the tables they fill: `@register("resnet")` over a class
or a builder function puts it in a table (`MODELS[name] = fn` in `def register(name): def deco(fn): ...;
return fn; return deco`, or a plain `def register(fn)`), and the definition stays what it was.

`identity_decorator(ctx, view, decorator)`: does a decorator of the project return the definition as it is
(then a call of the decorated function runs its body)? `registrations(ctx, view, store)`: for a store
`TABLE[key] = fn` in such a decorator, the definitions of the project it decorates, each with the key it
files it under (None: any key) and, when the table is a parameter of the decorator (`def register(table,
name)` used as `@register(HEADS, "mlp")`), the table its call passes. The modules searched are those whose
text calls the decorator by name.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import NamedTuple

from mllint.analysis.program.hierarchy import project_class
from mllint.analysis.program.summaries import returned_expressions
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.syntax.tree import module_statements, own_method

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
MAX_MODULES = 16  # modules read for the definitions one decorator registers


def identity_decorator(ctx, view, decorator: ast.expr) -> bool:
    """Does `decorator` (of a definition of `ctx`) run a function of the project that returns what it is given?"""
    found = _decorator(ctx, view, decorator)
    return found is not None and _gives_back(found[1])


class Filing(NamedTuple):
    home: object  # the context of the definition's module
    definition: ast.AST
    key: object  # None: not known
    table: ast.expr | None  # what the decorator's call passes for a table parameter (in `home`); None: a table of its own


def registrations(ctx, view, store: ast.Subscript) -> list[Filing] | None:
    """A `Filing` for each definition of the project that the decorator around `store` (`TABLE[key] = fn`,
    `fn` its parameter) puts in the table; None when `store` is no such store."""
    assign = ctx.scopes.parent(store)
    inner = ctx.scopes.enclosing_function(store)
    if not (isinstance(assign, ast.Assign) and isinstance(assign.value, ast.Name) and inner is not None and _gives_back(inner)):
        return None
    if assign.value.id != _first(inner):
        return None
    outer = ctx.scopes.enclosing_function(inner)
    decorator = outer if outer is not None and ctx.scopes.enclosing_function(outer) is None else inner
    module = ctx.module.name if ctx.module is not None else None
    if module is None or view is None or view.index is None or ctx.scopes.enclosing_function(decorator) is not None:
        return None
    qualified = f"{module}.{decorator.name}"
    found = []
    for name in [module, *view.index.modules_calling(decorator.name)][:MAX_MODULES]:
        home = ctx if name == module else view.index.context(name)
        for used, definition in _decorated(home.tree) if home is not None else ():
            func = used.func if isinstance(used, ast.Call) else used
            if home.qualified_name(func) == qualified or (home is ctx and isinstance(func, ast.Name) and func.id == decorator.name):
                table = _passed(used, decorator, store.value.id) if isinstance(store.value, ast.Name) and decorator is outer else None
                found.append(Filing(home, definition, _key(store.slice, used, decorator, definition), table))
    return found


def filed_name(home, definition: ast.AST) -> str | None:
    """The qualified name of what a filing files: a definition of its module (`models.Net`), or the class a
    module-level call hands the decorator (`torch.nn.BCELoss` of `register_loss("bce")(nn.BCELoss)`)."""
    if isinstance(definition, ast.expr):
        return home.qualified_name(definition)
    return f"{home.module.name}.{definition.name}" if home.module is not None else None


def _decorated(tree: ast.Module) -> Iterator[tuple[ast.expr, ast.AST]]:
    """(the decorator, what it is given) for each decorated definition of a module, and each module-level
    call of a decorator's call on a name (`register_loss("bce")(nn.BCELoss)`, a library class filed as is)."""
    for statement in module_statements(tree):
        for used in getattr(statement, "decorator_list", ()):
            yield used, statement
        call = statement.value if isinstance(statement, ast.Expr | ast.Assign) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Call) and len(call.args) == 1 and not call.keywords:
            if isinstance(call.args[0], ast.Name | ast.Attribute):
                yield call.func, call.args[0]


LIBRARY_REGISTRIES = frozenset({
    "fvcore.common.registry.Registry", "detectron2.utils.registry.Registry", "mmengine.registry.Registry", "mmengine.Registry",
    "mmcv.utils.Registry", "mmcv.Registry",
})  # fmt: skip
REGISTERING_METHODS = frozenset({"register", "register_module"})


def library_registrations(view, table: str) -> list[tuple[str, object]]:
    """(qualified name, key) of each definition of the project a registry object `table` (a module-level
    `MODELS = Registry("models")`, by qualified name) files by its registering method: as a decorator
    (`@MODELS.register()`, `@MODELS.register_module(name="x")`, `@HEADS.register_module`) or called at module
    level on a class (`LOSSES.register("bce")(nn.BCELoss)`): under the name passed, else its own."""
    found = []
    for module in list(dict.fromkeys(m for method in sorted(REGISTERING_METHODS) for m in view.index.modules_calling(method)))[:MAX_MODULES]:
        home = view.index.context(module)
        for used, definition in _decorated(home.tree) if home is not None else ():
            func = used.func if isinstance(used, ast.Call) else used
            if isinstance(func, ast.Attribute) and func.attr in REGISTERING_METHODS and home.qualified_name(func.value) == table:
                named = next((k.value for k in used.keywords if k.arg == "name"), used.args[0] if used.args else None) if isinstance(used, ast.Call) else None
                key = named.value if isinstance(named, ast.Constant) else None if named is not None else _own_name(definition)
                found.append((filed_name(home, definition), key))
    return [(name, key) for name, key in found if name is not None]


def is_registry(view, name: str | None) -> bool:
    """Is `name` a registry class: a library one (`LIBRARY_REGISTRIES`), or a class of the project with a
    registering method (`def register_module(self, cls=None, name=None)`)?"""
    if name in LIBRARY_REGISTRIES:
        return True
    found = project_class(view, name)
    return found is not None and any(own_method(found[1], method) is not None for method in REGISTERING_METHODS)


def applied_stores(ctx, view) -> list[tuple[object, ast.Subscript]]:
    """(its module's context, the store) of each `table[key] = fn` in a decorator of another module of the
    project that the definitions of `ctx` are decorated with by a call (`@register(MODELS, "tagger")` with
    `register` imported): the stores that may fill a table of `ctx` passed to it."""
    found = {}
    for definition in module_statements(ctx.tree):
        for used in getattr(definition, "decorator_list", ()):
            decorator = _decorator(ctx, view, used) if isinstance(used, ast.Call) and used.args + used.keywords else None
            if decorator is not None and decorator[0] is not ctx:
                home, inner = decorator
                for node in ast.walk(inner):
                    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
                        found[node] = home
    return [(home, store) for store, home in found.items()]


def _key(key: ast.AST, used: ast.expr, decorator: ast.AST, definition: ast.AST) -> object:
    """The key a definition is filed under: a constant, the argument of the decorator's call at the outer
    function's parameter the store uses, the definition's `__name__`; None when not known."""
    if isinstance(key, ast.Constant):
        return key.value
    if isinstance(key, ast.Attribute) and key.attr == "__name__":
        return _own_name(definition)
    passed = _passed(used, decorator, key.id) if isinstance(key, ast.Name) else None
    return passed.value if isinstance(passed, ast.Constant) else None


def _own_name(definition: ast.AST) -> str:
    """A definition's `__name__`, or that of the class a name refers to (`nn.BCELoss`: "BCELoss")."""
    return definition.attr if isinstance(definition, ast.Attribute) else definition.id if isinstance(definition, ast.Name) else definition.name


def _passed(used: ast.expr, decorator: ast.AST, name: str) -> ast.expr | None:
    """What the decorator's call (`register(HEADS, "mlp")`) passes for its parameter `name`."""
    if not isinstance(used, ast.Call):
        return None
    names = [p.arg for p in parameters(decorator, variadic=False)]
    position = names.index(name) if name in names else None
    passed = used.args[position] if position is not None and position < len(used.args) else None
    return passed or next((k.value for k in used.keywords if k.arg == name), None)


def _decorator(ctx, view, decorator: ast.expr) -> tuple[object, ast.AST] | None:
    """(its module's context, the function that is given the definition) for a decorator of the project:
    the function named, or for a call (`register("resnet")`) the nested function it returns."""
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = ctx.qualified_name(func) if isinstance(func, ast.Name | ast.Attribute) else None
    found = view.function(name) if view is not None and view.index is not None and name and "." in name else None
    if found is None and isinstance(func, ast.Name):  # a decorator of the module itself
        found = next(((ctx, s) for s in module_statements(ctx.tree) if isinstance(s, FUNCTIONS) and s.name == func.id), None)
    if found is None or not isinstance(decorator, ast.Call):
        return found
    home, outer = found
    returned = returned_expressions(outer.body) or []
    if len(returned) != 1 or not isinstance(returned[0], ast.Name):
        return None
    inner = next((s for s in outer.body if isinstance(s, FUNCTIONS) and s.name == returned[0].id), None)
    return (home, inner) if inner is not None else None


def _gives_back(function: ast.AST) -> bool:
    """Does every `return` of the function return its first parameter?"""
    first = _first(function)
    returned = returned_expressions(function.body)
    return first is not None and bool(returned) and all(isinstance(r, ast.Name) and r.id == first for r in returned)


def _first(function: ast.AST) -> str | None:
    named = [*function.args.posonlyargs, *function.args.args]
    return named[0].arg if named else None
