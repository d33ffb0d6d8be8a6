"""The class hierarchy of the project: which method a call on an instance runs (`inherited_method`, over
the bases of the project in order), or on `self` in a method of a class (`dispatched_method`: a base's
template method calling `self.compute_loss(...)` that only a subclass defines, a mixin's method calling
`self.forward`), and the classes `self` may be an instance of there (`self_classes`: the class and the
project's classes derived from it, found by `ProjectView.subclasses`).

`view` is the linted file's `project_view.ProjectView` (None: the module alone); this module only calls it, so
that the program layer's call resolver (`calls.py`, which the project view imports) may ask it.
"""
from __future__ import annotations

import ast

from mllint.analysis.syntax.tree import module_statements, own_method
from mllint.analysis.values.runners import is_runner


MAX_BASES = 16  # classes searched for an inherited method


def inherited_method(ctx, cls: ast.ClassDef, name: str, view: object = None) -> tuple[object, ast.AST] | None:
    """The method `name` of a class or of its base classes (with the context of its module): of the same
    module (`ctx`'s), and with the project's `view` of another module too (`class SegTrainer(AmpStepMixin)`
    with `from mixins import AmpStepMixin`); every base is searched in order, depth first."""
    for home, found in lineage(ctx, cls, view):
        function = own_method(found, name)
        if function is not None:
            return home, function
    return None


def lineage(ctx, cls: ast.ClassDef, view: object = None) -> tuple[tuple[object, ast.ClassDef], ...]:
    """The class, then its bases of the project in order, depth first (with the context of each one's module).
    Worked out once per class with the project's `view` (asked for every method looked up on an instance)."""
    if view is None:
        return tuple(_lineage(ctx, cls, view))
    key = (ctx, cls)
    if key not in view.lineages:
        view.lineages[key] = tuple(_lineage(ctx, cls, view))
    return view.lineages[key]


def _lineage(ctx, cls: ast.ClassDef, view: object):
    seen: set[ast.AST] = set()
    stack = [(ctx, cls)]
    while stack and len(seen) < MAX_BASES:
        ctx, cls = stack.pop()
        if not isinstance(cls, ast.ClassDef) or cls in seen:
            continue
        seen.add(cls)
        yield ctx, cls
        stack += reversed([found for base in cls.bases if (found := _base_class(ctx, base, view)) is not None])


def _base_class(ctx, base: ast.AST, view: object) -> tuple[object, ast.ClassDef] | None:
    """The class a base names: of the module, or with the project's `view`, of another of its modules."""
    if isinstance(base, ast.Name):
        local = ctx.analysis(TopClasses).first.get(base.id)
        if local is not None:
            return ctx, local
    return project_class(view, ctx.qualified_name(base)) if view is not None else None


def made_runner(ctx, call: ast.Call, view: object = None) -> str | None:
    """The runner class (`runners.RUNNERS`) a call makes: the class it calls, or the one a class of the
    project it calls derives from (`class MyAccelerator(accelerate.Accelerator)`); None for anything else."""
    name = ctx.qualified_name(call.func)
    if is_runner(name):
        return name
    cls = _base_class(ctx, call.func, view) if isinstance(call.func, ast.Name | ast.Attribute) else None
    bases = (home.qualified_name(b) for home, found in (lineage(*cls, view) if cls else ()) for b in found.bases)
    return next((b for b in bases if is_runner(b)), None)


def project_class(view: object, name: str | None) -> tuple[object, ast.ClassDef] | None:
    """The class of the project a qualified name names (`models.Net`), with the context of its module."""
    found = view.find(name) if name and view is not None else None
    if found is None or found[1] not in found[0].classes or view.index is None:
        return None
    home = view.index.context(found[0].name)
    cls = home.analysis(TopClasses).first.get(found[1]) if home else None
    return (home, cls) if cls is not None else None


def dispatched_method(ctx, cls: ast.ClassDef, name: str, view: object = None) -> tuple[object, ast.AST] | None:
    """The method `self.name(...)` runs in a method of `cls`: the class's own or inherited one, unless that
    is missing or abstract (its body only raises `NotImplementedError`, or passes); then the one override
    the project's subclasses of `cls` agree on (None when they differ, or none has one)."""
    found = inherited_method(ctx, cls, name, view)
    if found is not None and not _abstract(found[1]):
        return found
    overrides = dispatched_methods(ctx, cls, name, view)
    return overrides[0] if len(overrides) == 1 else None


def dispatched_methods(ctx, cls: ast.ClassDef, name: str, view: object = None, caller: ast.AST | None = None) -> list[tuple[object, ast.AST]]:
    """Every method `self.name(...)` may run in a method of `cls` (`caller`, when known): for `cls` and each
    of the project's subclasses of it (that run `caller` as `cls` defines it: one overriding it runs its own),
    the method it has or inherits, unless missing or abstract; one per distinct method. Worked out once
    per question with the project's `view` (asked for each `self.` call of every module searched for callers)."""
    caller = caller if isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)) else None  # (not a lambda)
    if view is None:
        return _dispatched_methods(ctx, cls, name, view, caller)
    key = (ctx, cls, name, caller)
    if key not in view.dispatched:
        view.dispatched[key] = _dispatched_methods(ctx, cls, name, view, caller)
    return list(view.dispatched[key])


def _dispatched_methods(ctx, cls: ast.ClassDef, name: str, view: object, caller: ast.AST | None) -> list[tuple[object, ast.AST]]:
    methods = {}
    for home, derived in self_classes(ctx, cls, view):
        if caller is not None and derived is not cls and _place(inherited_method(home, derived, caller.name, view)) != _place((ctx, caller)):
            continue  # the subclass overrides the template method itself
        method = inherited_method(home, derived, name, view)
        if method is not None and not _abstract(method[1]):
            methods.setdefault(_place(method), method)
    return list(methods.values())


def _place(method: tuple[object, ast.AST] | None) -> tuple[str | None, int] | None:
    """A method told by its module and line, whichever tree of the module holds it."""
    return (_module_name(method[0]), method[1].lineno) if method is not None else None


def self_classes(ctx, cls: ast.ClassDef, view: object = None) -> list[tuple[object, ast.ClassDef]]:
    """The classes `self` may be an instance of in a method of `cls`: `cls` itself, then the project's
    classes derived from it (a mixin's are the classes that mix it in), with the context of their module.
    Worked out once per class with the project's `view` (asked for each method of it searched for callers)."""
    if view is None:
        return _self_classes(ctx, cls, view)
    key = (ctx, cls)
    if key not in view.self_classes:
        view.self_classes[key] = tuple(_self_classes(ctx, cls, view))
    return list(view.self_classes[key])


def _self_classes(ctx, cls: ast.ClassDef, view: object) -> list[tuple[object, ast.ClassDef]]:
    found = [(ctx, cls)]
    module = _module_name(ctx)
    top = ctx.analysis(TopClasses)
    if cls not in top:
        return found
    if view is None or module is None:  # the module alone: its classes that name `cls` as a base
        return found + [(ctx, node) for node in top.deriving(cls.name)]
    for qualified in view.subclasses(f"{module}.{cls.name}"):
        home, _, name = qualified.rpartition(".")
        local = top.first.get(name) if home == module else None
        derived = (ctx, local) if local is not None else project_class(view, qualified)
        if derived is not None:
            found.append(derived)
    return found


class TopClasses:
    """A module's top-level classes, looked up by name in one index (a module-level script repeating its
    classes made every lookup a scan of the whole module)."""

    def __init__(self, ctx) -> None:
        self.classes = {id(n): n for n in module_statements(ctx.tree) if isinstance(n, ast.ClassDef)}
        self.first: dict[str, ast.ClassDef] = {}
        for node in self.classes.values():
            self.first.setdefault(node.name, node)
        self._deriving: dict[str, list[ast.ClassDef]] = {}

    def __contains__(self, cls) -> bool:
        return id(cls) in self.classes

    def deriving(self, name: str) -> list[ast.ClassDef]:
        """The classes that name `name` as a base, or a class found so far, in the module's order."""
        if name not in self._deriving:
            names, found = {name}, []
            for node in self.classes.values():
                if any(isinstance(b, ast.Name) and b.id in names for b in node.bases):
                    names.add(node.name)
                    found.append(node)
            self._deriving[name] = found
        return self._deriving[name]


def _abstract(function: ast.AST) -> bool:
    """A method that only states an interface: `raise NotImplementedError`, `pass` or `...` (after a
    docstring), or decorated `@abstractmethod`."""
    if any((d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")) == "abstractmethod" for d in function.decorator_list):
        return True
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not body:
        return True
    if len(body) != 1:
        return False
    only = body[0]
    raised = only.exc.func if isinstance(only, ast.Raise) and isinstance(only.exc, ast.Call) else getattr(only, "exc", None)
    return isinstance(only, ast.Pass) or (isinstance(raised, ast.Name) and raised.id == "NotImplementedError")


def _module_name(ctx) -> str | None:
    return ctx.module.name if ctx is not None and ctx.module is not None else None
