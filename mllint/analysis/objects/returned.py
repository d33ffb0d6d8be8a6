"""Where a builder's objects go: the names its call sites bind to what it returns.

`receivers(ctx, found)`: for objects a module-level function of `ctx` makes and returns (`return model,
opt`, `return {"model": model}`, `return model`), the names each call site of the function binds to one
of them (`net, optimizer = build(cfg)` in another module: `net` for the model), with the caller's context.
It answers the question points-to asks the other way round: which objects a name is. Call sites are the
callers layer's (`MAX_SITES`); a name bound at a site to other objects too (a branch of the builder
returning something else) is not one of them. `as_passed(objects, site, found)`: objects a builder made,
its parameters replaced by what the call `site` passes (`opt = build(model)` trains that `model`).
"""
from __future__ import annotations

import ast

from mllint.analysis.objects.points_to import FUNCTIONS, NONE, Obj, Objects
from mllint.analysis.program.callers import Callers


def receivers(ctx, found: frozenset) -> list[tuple[object, ast.Name]]:
    """(the caller's context, the name) for each name a call site of the one module-level function that
    makes `found` (objects of `ctx`) binds to exactly those objects; empty when they are not all made by one
    module-level function."""
    made = {o for o in found - {NONE} if o.kind == "made" and o.ctx is ctx and o.site is None}
    functions = {ctx.scopes.enclosing_function(o.node) for o in made}
    function = functions.pop() if len(functions) == 1 and made == found - {NONE} else None
    if not isinstance(function, FUNCTIONS) or ctx.scopes.enclosing_scope(function) is not None:
        return []
    found_here = []
    for caller, call in ctx.analysis(Callers).sites(function):
        statement = caller.scopes.parent(call)
        if not isinstance(statement, ast.Assign) or statement.value is not call:
            continue
        objects = ctx.analysis(Objects)._of(caller)
        for target in statement.targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and _holds(objects, name, made):
                    found_here.append((caller, name))
    return found_here


def as_passed(objects: Objects, site: ast.AST | None, found: frozenset | None) -> frozenset | None:
    """`found`, objects of a builder `site` (a call of `objects`' file) ran, its parameters (and their
    attributes) replaced by what the site passes: the model `build(model, cfg)`'s optimizer trains."""
    return objects._passed_back(site, found, 0) if isinstance(site, ast.Call) and found else found


def _holds(objects: Objects, name: ast.Name, made: set[Obj]) -> bool:
    """Is every object a name may be one of `made`, whatever call site made it (the caller may read the
    builder's module as a copy of its own: objects are compared by module and place)?"""
    held = objects.points_to(name)
    places = {_place(o) for o in held - {NONE}} if held else set()
    return bool(places) and None not in places and places <= {_place(o) for o in made}


def _place(obj: Obj) -> tuple | None:
    if obj.kind != "made" or obj.ctx is None or obj.ctx.module is None or not hasattr(obj.node, "lineno"):
        return None
    return obj.ctx.module.name, type(obj.node), obj.node.lineno, obj.node.col_offset
