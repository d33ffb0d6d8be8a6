"""Instances built at a known site: what the attributes an instance's methods read hold, for that instance.

Points-to names `self.model`, written in `__init__` from its parameter `model`, by that parameter: one
object for every instance of the class. Inside the methods of an instance built once at a known site
(`Runner(model, opt).fit()`, `r = Runner(model, opt); r.fit()`), that parameter is what the construction
passes; a setter called once on the same instance (`r.set_model(model)`) binds its parameters the same
way. `Instances(ctx).built(receiver)` is the one instance a method's receiver is; `passed(instance)`
maps each such parameter (by its object key) to the argument passed for it, per instance, never mixing
two instances' (a construction elsewhere, or two calls of one setter, leave the parameter as it is).
"""
from __future__ import annotations

import ast

from mllint.analysis.objects.points_to import FUNCTIONS, NONE, Obj, Objects
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.hierarchy import inherited_method
from mllint.analysis.syntax.scopes import parameter_defaults


class Instances:
    """The instances of a file's code, with what was passed for them (`ctx.analysis(Instances)`)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.objects = ctx.analysis(Objects)
        self._built: dict[ast.AST, Obj | None] = {}
        self._passed: dict[Obj, dict[str, ast.AST]] = {}
        self._method_calls: dict[str, list[ast.Call]] | None = None
        self._all_passed: dict[str, list[ast.AST]] | None = None

    def built(self, receiver: ast.AST) -> Obj | None:
        """The one object `receiver` is, when a call of this file made it as an instance of a class of the
        project that is no nn.Module (a trainer, a runner); None for anything else."""
        if receiver not in self._built:
            self._built[receiver] = self._instance(receiver)
        return self._built[receiver]

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

    def passed(self, instance: Obj) -> dict[str, ast.AST]:
        """The object key of each parameter of `__init__` (or of a method called once on the instance: a
        setter) -> the argument this file passes for it to `instance` (a `built` one), or the default a
        method of this file has where none is passed; also by `method:parameter`, for a module that reads
        the class in a tree of its own."""
        if instance not in self._passed:
            self._passed[instance] = self._arguments(instance)
        return self._passed[instance]

    def _arguments(self, instance: Obj) -> dict[str, ast.AST]:
        home, cls = self.objects.class_of(instance)
        found: dict[str, ast.AST] = {}
        init = inherited_method(home, cls, "__init__", self.objects.view)
        calls = [(init, instance.node)] if init is not None else []
        for method in cls.body:
            named = self._calls_of_methods().get(method.name, ()) if isinstance(method, FUNCTIONS) and method.name != "__init__" else ()
            on_it = [call for call in named if self.built(call.func.value) == instance]
            calls += [((home, method), on_it[0])] if len(on_it) == 1 else []
        for (ctx, function), call in calls:
            defaults = parameter_defaults(function) if ctx is self.ctx else {}  # where a call passes none (of this file)
            bound = {**defaults, **bind_arguments(call, function, skips_first=True)}
            for parameter, argument in bound.items():
                if argument is not None and not isinstance(argument, ast.Starred):
                    found[Obj("parameter", function, parameter, ctx=ctx).key()] = argument
                    found[f"{function.name}:{parameter}"] = argument
        return found

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
