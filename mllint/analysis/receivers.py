"""Receivers: which object a call like `model.eval()`, `self.model(x)` or `evaluate(model, loader)` is
about, so that mode changes and forward calls are matched on the same object.

`call_receiver(call)` is the object a call is about. A receiver is a local name of a function (`model`, through plain aliases such as `net = model`) or an
attribute path of `self` in a class (`self.model`, `self.model.backbone`): the same in every method of
the class, which is how a Trainer's `__init__`, `train_epoch` and `evaluate` share one model. A model
passed to a function is matched through `parameter_receivers`, which binds the callee's parameters to the
caller's receivers. `model_class` and `mode_dependent` say, through the project index, which project
class an object was built from and whether it holds Dropout/BatchNorm-like layers (None: unknown).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mllint.analysis.project import ProjectView
from mllint.analysis.values import MAX_DEPTH, ValueKinds


@dataclass(frozen=True)
class Receiver:
    scope: ast.AST  # the function (or module) of a local name; the class of a `self.` attribute
    name: str  # `model`, `self.model`


class Receivers:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.values = ctx.analysis(ValueKinds)

    def receiver(self, expr: ast.AST, depth: int = 0) -> Receiver | None:
        """The object `expr` denotes: a local name (through plain aliases) or a `self.` attribute path."""
        if depth > MAX_DEPTH:
            return None
        path = _self_path(expr)
        if path is not None:
            cls = self.ctx.scopes.enclosing_class(expr)
            return Receiver(cls, path) if cls is not None else None
        if isinstance(expr, ast.Name) and expr.id != "self":
            values = self.values.reaching_values(expr)
            if values and len(values) == 1 and (isinstance(values[0], ast.Name) or _self_path(values[0])):
                return self.receiver(values[0], depth + 1)  # `net = model`, `model = self.model`
            return Receiver(self.ctx.scopes.enclosing_function(expr) or self.ctx.tree, expr.id)
        return None

    def call_receiver(self, call: ast.Call) -> Receiver | None:
        """The object a call is about: `model.eval()` and `self.model.train()` call a method of it,
        `model(x)` and `self.model(x)` call it (`self.evaluate()` is a method of the class: None)."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = self.ctx.scopes.enclosing_class(call)
            methods = {s.name for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))} if cls else set()
            return None if func.attr in methods else self.receiver(func)
        if isinstance(func, ast.Attribute):
            return self.receiver(func.value)
        return self.receiver(func)

    def parameter_receivers(self, call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Receiver]:
        """The caller's receivers bound to `function`'s parameters by `call` (`self` skipped for a
        method called as `self.method(...)`)."""
        parameters = [*function.args.posonlyargs, *function.args.args]
        if isinstance(call.func, ast.Attribute) and parameters and parameters[0].arg in ("self", "cls"):
            parameters = parameters[1:]
        bound: dict[str, ast.AST] = {}
        for parameter, argument in zip(parameters, call.args):
            if isinstance(argument, ast.Starred):
                break
            bound[parameter.arg] = argument
        names = {p.arg for p in (*parameters, *function.args.kwonlyargs)}
        bound.update({k.arg: k.value for k in call.keywords if k.arg in names})
        receivers = {name: self.receiver(argument) for name, argument in bound.items()}
        return {name: receiver for name, receiver in receivers.items() if receiver is not None}

    def model_class(self, expr: ast.AST) -> str | None:
        """The project class (qualified name) the object was built from, directly or by a factory."""
        value = self.values.value(expr)
        return None if value is None else self.ctx.analysis(ProjectView).instance_class(value)

    def mode_dependent(self, expr: ast.AST) -> bool | None:
        """Does the object's project class hold layers that act differently in train and eval mode?"""
        cls = self.model_class(expr)
        return None if cls is None else self.ctx.analysis(ProjectView).mode_dependent(cls)


def _self_path(expr: ast.AST) -> str | None:
    """`self.model.backbone` for that expression; None when it does not start at `self`."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name) and expr.id == "self" and parts:
        return ".".join(["self", *reversed(parts)])
    return None
