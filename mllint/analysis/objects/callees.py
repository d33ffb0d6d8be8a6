"""Which method of the project a call on an object runs, the object found by points-to.

`methods_called(ctx, call, binding)`: the same for a value that may be of several classes.
`function_called(ctx, call, binding)`: the closure or function a called value is. `called_names(ctx, func,
binding)`: the library functions or classes a called value is by name (`bc_loss = F.cross_entropy`,
`partial(torch.optim.AdamW, lr=...)`, `self.loss = loss` with `loss=F.mse_loss` passed or defaulted). `method_called(ctx, call, binding)`: for `criterion(pred, y)` the `forward` (or `__call__`) of the class
that made `criterion`, for `model.compute_loss(x, y)` the method `compute_loss` (of the class or a base of
its module), wherever the object was made (`criterion = DeepSupervisionLoss()`, a factory of another
module, a parameter its call sites fill under `binding`). All the objects the receiver may be must be
instances of one class (`Objects.class_of`); None otherwise, for a library object, or when unknown.

`forward_calls(ctx, cls)`: the other way, the calls in the project's `forward`s that run a module class's
`forward` (`unit(x)` of `for unit in self.units`).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from itertools import islice

from mllint.analysis.objects.call_sites import under
from mllint.analysis.objects.constants import got_attribute, method_getter
from mllint.analysis.objects.points_to import NONE, Obj, Objects
from mllint.analysis.program.hierarchy import dispatched_method, inherited_method
from mllint.analysis.program.callers import constructions, per_call_site
from mllint.analysis.program.calls import Callee
from mllint.analysis.program.project_view import ProjectView

CALLED = ("forward", "__call__")  # what calling a module or a callable object runs


RECEIVERS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call)  # `criterion(...)`, `MultiTaskLoss()(...)`


def method_called(ctx, call: ast.Call, binding=None, followed: re.Pattern[bytes] | None = None) -> Callee | None:
    """`followed`: what the class's module must mention for the method to be read (None: any module)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        found = _method_of(ctx, func.value, (func.attr,), binding, followed)
        if found is not None or not (isinstance(func.value, ast.Name) and func.value.id == "self"):
            return found
    return _method_of(ctx, func, CALLED, binding, followed)  # `criterion(...)`, a submodule `self.vq(z)`


def methods_called(ctx, call: ast.Call, binding=None) -> list[Callee]:
    """`method_called` of a called value whose objects may be of several project classes (`step(x)` over a
    list of transforms of different classes): the `forward` or `__call__` of each; empty when one of them
    is of no project class, or unknown."""
    objects = ctx.analysis(Objects)
    found = under(ctx, call.func, binding) if isinstance(call.func, (ast.Name, ast.Attribute, ast.Subscript)) else None
    classes = {objects.class_of(obj) for obj in found - {NONE}} if found else {None}
    if None in classes:
        return []
    methods = [_named_method(home, cls, CALLED, objects.view) for home, cls in classes]
    return [Callee(m[1], m[0]) for m in methods if m is not None]


def hooks_called(ctx, call: ast.Call, binding=None, hook: str | None = None, linted: Objects | None = None) -> list[Callee]:
    """`method_called` of `item.hook(...)` whose objects may be of several project classes (`cb.on_batch_end(state,
    loss)` of `for cb in self.callbacks` over a list of callbacks), or of `getattr(item, name)(...)` (also
    through a local name bound to it, see `method_getter`) given the `hook` name `name` holds: the `hook` of each class, as it has or inherits it; empty when one of them
    is of no project class, or unknown. `linted`: the points-to of the linted file, when `ctx` is another module."""
    func = call.func
    getter = method_getter(ctx, func) if hook is not None else None
    item = got_attribute(getter) if getter is not None else func.value if isinstance(func, ast.Attribute) else None
    hook = hook or getattr(func, "attr", None)
    if not isinstance(item, RECEIVERS):
        return []
    objects = linted._of(ctx) if linted is not None else ctx.analysis(Objects)
    found = under(ctx, item, binding, linted)
    classes = {objects.class_of(obj) for obj in found - {NONE}} if found else {None}
    if None in classes:
        return []
    methods = {(home, cls): inherited_method(home, cls, hook, objects.view) for home, cls in classes}
    if getter is not None and len(getter.args) == 3:  # `getattr(cb, name, None)`: a class without the hook runs none
        methods = {owner: m for owner, m in methods.items() if m is not None}
    if not methods or any(m is None for m in methods.values()):
        return []
    return [Callee(m[1], m[0], owner) for owner, m in methods.items()]


def function_called(ctx, call: ast.Call, binding=None) -> Callee | None:
    """The function of the project a call of a value runs (`step_fn(batch)` with `step_fn` a closure that
    `make_step(model, optimizer)` returns, passed in by a call site under `binding`); None when it may be
    another, or is unknown."""
    found = functions_called(ctx, call, binding)
    return found[0] if found is not None and len(found) == 1 else None


def functions_called(ctx, call: ast.Call, binding=None) -> list[Callee] | None:
    """Every function of the project a call of a value may run (`TASK_LOSSES[name](pred, y)` of a table a
    decorator fills, as `function_called`); None when one of them is not a project function, or unknown."""
    found = under(ctx, call.func, binding)
    objects = ctx.analysis(Objects)
    functions = {objects.function_of(obj) for obj in found - {NONE}} if found else set()
    if not functions or None in functions or not all(isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for _, f in functions):
        return None
    return [Callee(function, home) for home, function in functions]


def called_names(ctx, func: ast.AST, binding=None) -> frozenset[str] | None:
    """The qualified names of what a called value is: what the call spells (`F.cross_entropy`), or what a
    name, attribute or item bound to a function or class holds, wherever it is bound (a module global, a
    class attribute, `self.loss` from a parameter's argument or default under `binding`, a table of them),
    `functools.partial(f, ...)` naming `f`; None when one of the values is anything else, or unknown."""
    return ctx.analysis(Objects).called_names(func, lambda: under(ctx, func, binding))


def loss_function_name(ctx, func: ast.AST) -> str | None:
    """The one torch function a name or attribute bound to a function is (`mse = F.mse_loss`, `bc_loss =
    partial(F.cross_entropy, ...)`), as the file tells; None for a class (calling it builds a module)."""
    names = called_names(ctx, func) if isinstance(func, ast.Name | ast.Attribute) else None
    name = next(iter(names)) if names is not None and len(names) == 1 else None
    return name if name is not None and name.startswith("torch.") and name.rsplit(".", 1)[-1].islower() else None


def names_called(ctx, call: ast.Call) -> Iterator[tuple[frozenset[str], object]]:
    """`called_names` of a call's function as the file tells, or else under each call site of the function
    (or the class) around it that the value needs: (the names, the binding or None)."""
    return per_call_site(ctx, call, lambda binding: called_names(ctx, call.func, binding))


def _method_of(ctx, receiver: ast.AST, names: tuple[str, ...], binding, followed) -> Callee | None:
    """The first method named `names` of the one class `receiver` is an instance of."""
    found = under(ctx, receiver, binding) if isinstance(receiver, RECEIVERS) else None
    classes = _receiver_class(ctx, receiver, found, binding)
    if classes is None:
        return None
    home, cls = classes
    objects = ctx.analysis(Objects)
    index = ctx.analysis(ProjectView).index
    if followed is not None and index is not None and home.module is not None and not index.mentions(home.module.name, followed):
        return None
    lookup = dispatched_method if found and all(o.kind == "self" for o in found - {NONE}) else inherited_method
    method = _named_method(home, cls, names, objects.view, lookup)
    instance = classes if lookup is inherited_method else None  # (`self`'s own class may be a base of the object's)
    return Callee(method[1], method[0], instance) if method is not None else None


def _receiver_class(ctx, receiver: ast.AST, found: frozenset | None, binding) -> tuple[object, ast.ClassDef] | None:
    if not isinstance(receiver, RECEIVERS):
        return None
    objects = ctx.analysis(Objects)
    classes = _classes(objects, found)
    if classes is None and found and all(o.kind == "field" for o in found):  # a submodule (`self.vq(z)`): what is written there
        held = [objects._of(o.ctx).held(o) for o in found]
        classes = _classes(objects, frozenset().union(*held)) if all(held) else None
    if classes is None and binding is None and isinstance(receiver, ast.Attribute):
        # An attribute of an object of another module's class (`metrics.losses_track`): what its methods
        # write there, until points-to follows objects across modules.
        classes = _classes(objects, frozenset(Obj("made", made, ctx=maker) for (maker, made), _ in islice(constructions(ctx, receiver), 1)))
    return classes


def _named_method(home, cls: ast.ClassDef, names: tuple[str, ...], view, lookup=inherited_method) -> tuple[object, ast.AST] | None:
    """(its context, the method) of the first of `names` the class has or inherits (`lookup`)."""
    return next((m for name in names if (m := lookup(home, cls, name, view)) is not None), None)


def _classes(objects: Objects, found: frozenset | None) -> tuple[object, ast.ClassDef] | None:
    """The one project class every object of `found` is an instance of."""
    classes = {objects.class_of(obj) for obj in found - {NONE}} if found else {None}
    return classes.pop() if len(classes) == 1 and None not in classes else None


MAX_FORWARD_CALLS = 40  # calls of a module class found in the project's `forward`s, past which unknown
MAX_CALLER_MODULES = 16  # modules that construct the class, past which its calls are not searched


def forward_calls(ctx, cls: ast.ClassDef, anywhere: bool = False) -> list[tuple[object, ast.Call]] | None:
    """The calls that run the `forward` of a module class of `ctx` from the `forward` of a module of the
    project (`self.block(x)`, `unit(x)` of `for unit in self.units` over an `nn.ModuleList` of them), the
    object found by points-to, searched in the file and the modules that construct the class; `anywhere`:
    from any code of those modules (a training script's `student(x, feats)`, a model its call sites pass in:
    `model(x)` in `def train(model, data)` called as `train(DAE(), data)`). None when there are more
    than `MAX_FORWARD_CALLS`, or more than `MAX_CALLER_MODULES` such modules."""
    found = inherited_method(ctx, cls, "forward")
    if found is None:
        return []
    owner, forward = found
    index = ctx.analysis(ProjectView).index
    modules = index.modules_calling(cls.name) if index is not None else []
    if len(modules) > MAX_CALLER_MODULES:
        return None
    callers = [ctx, *(index.context(m) for m in modules)]
    home = (owner.real_file, forward.lineno)  # by file: a namespace package's module has two names
    calls: list[tuple[object, ast.Call]] = []
    for caller in dict.fromkeys(c for c in callers if c is not None):
        for function in [caller.tree] if anywhere else caller.index.of_type(ast.FunctionDef):
            if not anywhere and (function.name != "forward" or function is forward):
                continue
            for call in caller.index.within(function, ast.Call):
                if anywhere and caller.scopes.enclosing_function(call) is forward:
                    continue
                func = call.func
                if not (isinstance(func, ast.Name | ast.Subscript) or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self")):
                    continue  # a module is called by its name, an item, or an attribute of `self`
                ask = lambda binding, caller=caller, call=call: method_called(caller, call, binding)  # noqa: E731
                # from any code, also a model its callers pass in (`def train(model, data)`, `train(DAE(), data)`)
                callees = [c for c, _ in per_call_site(caller, call, ask, ctx)] if anywhere else [ask(None)]
                if not any(c is not None and c.function.name == "forward" and (c.ctx.real_file, c.function.lineno) == home for c in callees):
                    continue
                calls.append((caller, call))
                if len(calls) > MAX_FORWARD_CALLS:
                    return None
    return calls
