"""Instances built at a known site: which instance a receiver is, and what its attributes hold there.

Points-to names `self.model`, written in `__init__` from its parameter `model`, by that parameter: one
object for every instance of the class. Inside the methods of an instance built once at a known site
(`Runner(model, opt).fit()`, `r = Runner(model, opt); r.fit()`), that parameter is what the construction
passes, and a setter's (`r.set_model(model)` before `r.fit()`) what the setter's call passes. Which
instance a receiver is is the objects layer's (`built`); what the instance's construction and setters
bind is `callers.Callers.instance_binding`'s, the one answer every reader shares (`binding`, `passed`).
"""
from __future__ import annotations

import ast

from mllint.analysis.objects.points_to import FUNCTIONS, NONE, Obj, Objects
from mllint.analysis.program.callers import Binding, Callers
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.hierarchy import inherited_method, lineage
from mllint.analysis.syntax.names import is_self_attribute


class Instances:
    """The instances of a file's code, with what was passed for them (`ctx.analysis(Instances)`)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.objects = ctx.analysis(Objects)
        self._built: dict[ast.AST, Obj | None] = {}
        self._passed: dict[tuple[Obj, ast.AST | None], dict[str, ast.AST]] = {}
        self._method_calls: dict[str, list[ast.Call]] | None = None
        self._all_passed: dict[str, list[ast.AST]] | None = None

    def built(self, receiver: ast.AST) -> Obj | None:
        """The one object `receiver` is, when a call of this file made it as an instance of a class of the
        project that is no nn.Module (a trainer, a runner); None for anything else."""
        if receiver not in self._built:
            self._built[receiver] = self._instance(receiver)
        return self._built[receiver]

    def passed_class(self, receiver: ast.AST) -> tuple[object, ast.ClassDef] | None:
        """The one class of the project (no nn.Module; with its module's context) of the objects a parameter
        (or an attribute of one) `receiver` names are instances of, as the call sites of its function pass them
        (`buffer` of `update(self, buffer)` called `agent.update(RolloutBuffer(...))`); None for anything else."""
        found = self.objects.points_to(receiver)
        found = found - {NONE} if found else found
        if not found or any(obj.root().kind != "parameter" for obj in found):
            return None
        classes = self.objects.classes_of(found)
        if len(classes) != 1 or classes[0][1] in classes[0][0].analysis(ModuleClasses).modules:
            return None
        return classes[0]

    def _instance(self, receiver: ast.AST) -> Obj | None:
        found = self.objects.points_to(receiver)
        found = found - {NONE} if found else found
        obj = next(iter(found)) if found and len(found) == 1 else None
        if obj is None or obj.kind != "made" or obj.ctx is not self.ctx or obj.site is not None or not isinstance(obj.node, ast.Call):
            return None
        cls = self.objects.class_of(obj)
        if cls is None or cls[1] in cls[0].analysis(ModuleClasses).modules:
            return None
        return obj

    def binding(self, instance: Obj, use: ast.AST | None = None) -> Binding | None:
        """The binding of `__init__` at the construction of `instance` (a `built` one), holding those of the
        setters called on it before `use` (any call of this file; None: those called once, outside loops)."""
        home, cls = self.objects.class_of(instance)
        init = inherited_method(home, cls, "__init__", self.objects.view)
        setters = []
        for method in cls.body:
            named = self._calls_of_methods().get(method.name, ()) if isinstance(method, FUNCTIONS) and method.name != "__init__" else ()
            setters += [(home, method, call) for call in named if self.built(call.func.value) == instance]
        return self.ctx.analysis(Callers).instance_binding(self.ctx, instance.node, init, setters, use) if init is not None else None

    def passed(self, instance: Obj, use: ast.AST | None = None) -> dict[str, ast.AST]:
        """The object key of each parameter `binding` binds -> the argument this file passes for it to
        `instance` (or the default of a method of this file where none is passed)."""
        if (instance, use) not in self._passed:
            found, binding = {}, self.binding(instance, use)
            while binding is not None:
                for parameter, (caller, argument, passage) in binding.arguments.items():
                    if caller is self.ctx and not passage.annotated and not isinstance(argument, ast.Starred):
                        found.setdefault(Obj("parameter", binding.function, parameter, ctx=binding.ctx).key(), argument)
                binding = binding.also
            self._passed[(instance, use)] = found
        return self._passed[(instance, use)]

    def held(self, instance: Obj) -> dict[str, ast.AST]:
        """The `self.` attributes of `instance` (a `built` one) its `__init__` sets from a parameter alone
        (`self.rewards = rewards`) and no other method of its class sets -> the argument this file passes
        for that parameter at the construction (`passed`): what every method of that instance reads there."""
        home, cls = self.objects.class_of(instance)
        init = inherited_method(home, cls, "__init__", self.objects.view)
        if init is None:
            return {}
        passed = self.passed(instance)
        stores: dict[str, list] = {}
        for node in ast.walk(cls):
            for target in node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    stores.setdefault(target.attr, []).append(node)
        found = {}
        for attribute, nodes in stores.items():
            node = nodes[0]
            plain = len(nodes) == 1 and isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Name)
            if plain and home.scopes.enclosing_function(node) is init[1]:
                argument = passed.get(Obj("parameter", init[1], node.value.id, ctx=init[0]).key())
                found.update({attribute: argument} if argument is not None else {})
        return found

    def rebound(self, home, cls: ast.ClassDef) -> frozenset[str]:
        """The `self.` attributes a method other than `__init__` of a class (of `home`'s module) or of its bases
        stores: what `__init__` left there may not be what a later call of a method of an instance reads."""
        names = set()
        for _, found in lineage(home, cls, self.objects.view):
            for method in found.body:
                if isinstance(method, FUNCTIONS) and method.name != "__init__":
                    names.update(n.attr for n in ast.walk(method) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and is_self_attribute(n))
        return frozenset(names)

    def arguments(self, parameter: str) -> list[ast.AST]:
        """What the instances this file builds were passed for a parameter (by its object key: `passed`)."""
        if self._all_passed is None:
            self._all_passed = {}
            for call in self.ctx.index.of_type(ast.Call):
                instance = self.built(call)
                for key, argument in self.passed(instance).items() if instance is not None and instance.node is call else ():
                    self._all_passed.setdefault(key, []).append(argument)
        return self._all_passed.get(parameter, [])

    def _calls_of_methods(self) -> dict[str, list[ast.Call]]:
        """Method name -> the calls `x.name(...)` of the file that pass arguments (once)."""
        if self._method_calls is None:
            self._method_calls = {}
            for call in self.ctx.index.of_type(ast.Call):
                if isinstance(call.func, ast.Attribute) and (call.args or call.keywords):
                    self._method_calls.setdefault(call.func.attr, []).append(call)
        return self._method_calls
