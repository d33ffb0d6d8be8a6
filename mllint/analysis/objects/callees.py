"""Which method of the project a call on an object runs, the object found by points-to.

`method_called(ctx, call, binding)`: for `criterion(pred, y)` the `forward` (or `__call__`) of the class
that made `criterion`, for `model.compute_loss(x, y)` the method `compute_loss`, looked up in the class and
its project bases, wherever the object was made (`criterion = DeepSupervisionLoss()`, a factory of
another module, a parameter its call sites fill under `binding`). All the objects the receiver may be must
run the same method; None otherwise, for a library object, or when unknown.
"""
from __future__ import annotations

import ast
import re
from itertools import islice

from mllint.analysis.objects.call_sites import built
from mllint.analysis.program.callers import constructions
from mllint.analysis.program.calls import Callee
from mllint.analysis.program.project import ProjectView
from mllint.analysis.syntax.tree import own_method

MAX_BASES = 4  # project base classes searched for a method


def method_called(ctx, call: ast.Call, binding=None, followed: re.Pattern[bytes] | None = None) -> Callee | None:
    """`followed`: what a class's module must mention to be read (None: any module is)."""
    func = call.func
    receiver, names = (func.value, (func.attr,)) if isinstance(func, ast.Attribute) else (func, ("forward", "__call__"))
    if not isinstance(receiver, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    makers = built(ctx, receiver, binding)
    if not makers and binding is None and isinstance(receiver, ast.Attribute):
        # An attribute of an object of another module's class (`metrics.losses_track`): what its methods
        # write there, until points-to follows objects across modules.
        makers = [found for found, _ in islice(constructions(ctx, receiver), 1)]
    if not makers:
        return None
    view = ctx.analysis(ProjectView)
    found = [_method(view, maker.qualified_name(made.func) or "", names, followed) for maker, made in makers]
    if None in found or len({callee.function for callee in found}) != 1:
        return None
    return found[0]


def _method(view: ProjectView, qualified: str, names: tuple[str, ...], followed, depth: int = 0) -> Callee | None:
    """The first of `names` the project class `qualified` (or a project base of it) defines."""
    found = view.class_summary(qualified) if qualified and depth <= MAX_BASES else None
    if found is None or (followed is not None and view.index is not None and not view.index.mentions(found[0].name, followed)):
        return None
    class_ctx, cls = found[1].definition()
    for name in names if cls is not None else ():
        method = own_method(cls, name)
        if method is not None:
            return Callee(method, class_ctx)
    return next((m for base in found[1].bases if (m := _method(view, base, names, followed, depth + 1)) is not None), None)
