"""Forward hooks that keep a layer's output: `layer.register_forward_hook(hook)` where the hook stores the
output tensor it is given, not a copy (`self.feats[i] = out`, `feats.append(output)`, `self.out =
output.detach()`, which shares its storage). A change in place of that output after the layer ran (the next
layer of an `nn.Sequential` working in place: `nn.ReLU(inplace=True)`) changes what the hook kept.

`kept_outputs(ctx)` maps the layer constructions of the linted file whose output a hook of the project
keeps to (the registering module's context, the registration): a hook registered on a layer (`model.conv1`),
or on an item of an `nn.Sequential` at the indices a loop or a default gives (`net[i]` for `i` in `(0, 2)`),
the layer's object found through the call sites that pass it (`PreActTap(student)`, `student = make_cnn()`).
"""
from __future__ import annotations

import ast

from mllint.analysis.facets.views import viewed
from mllint.analysis.objects.call_sites import possible_constants
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.program.callers import constructions
from mllint.analysis.program.hierarchy import inherited_method
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.values.values import SEQUENTIAL, ValueKinds, canonical_class

REGISTER = "register_forward_hook"
MAX_MODULES = 16  # modules registering hooks read per file


def kept_outputs(ctx) -> dict[ast.Call, tuple[object, ast.Call]]:
    found: dict[ast.Call, tuple[object, ast.Call]] = {}
    index = ctx.analysis(ProjectView).index
    modules = index.modules_calling(REGISTER) if index is not None else []
    if len(modules) > MAX_MODULES:
        return found
    others = [index.context(m) for m in modules] if index is not None else []
    for caller in [ctx, *(c for c in others if c is not None and c.real_file != ctx.real_file)]:
        if REGISTER not in caller.source.text:
            continue
        for call in caller.index.of_type(ast.Call):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == REGISTER and call.args and _keeps_output(caller, call.args[0])):
                continue
            for home, layer in _hooked_layers(caller, func.value):
                if home is ctx:
                    found.setdefault(layer, (caller, call))
    return found


def _keeps_output(ctx, hook: ast.AST) -> bool:
    """Does every function `hook` may be store the output it is given (its third argument) as it is?"""
    objects = ctx.analysis(Objects)
    found = objects.points_to(hook) or ()
    functions = [_function(objects, o) for o in found]
    return bool(functions) and None not in functions and all(_stores_output(home, f) for home, f in functions)


def _function(objects: Objects, obj) -> tuple[object, ast.AST] | None:
    """(its context, the function) an object is: a function or lambda (also a module's, by its name), or a
    method of `self` (`self.save`)."""
    if obj.kind == "made" and isinstance(obj.node, (ast.FunctionDef, ast.Lambda)):
        return obj.ctx, obj.node
    if obj.kind == "made" and isinstance(obj.node, ast.Module):  # a function of a module, by its name
        function = next((d for d in obj.node.body if isinstance(d, ast.FunctionDef) and d.name == obj.name), None)
        return (obj.ctx, function) if function is not None else None
    owner = objects.class_of(obj.base) if obj.kind == "field" and obj.base is not None and obj.base.kind == "self" else None
    return inherited_method(owner[0], owner[1], obj.name, objects.view) if owner is not None else None


def _stores_output(ctx, function: ast.AST) -> bool:
    positional = [*function.args.posonlyargs, *function.args.args]
    positional = positional[1:] if positional and positional[0].arg == "self" else positional
    if len(positional) < 3:
        return False
    output = positional[2].arg
    body = [function.body] if isinstance(function, ast.Lambda) else function.body
    for node in (n for statement in body for n in ast.walk(statement)):
        if isinstance(node, ast.Assign) and any(isinstance(t, (ast.Subscript, ast.Attribute)) for t in node.targets):
            kept = node.value  # `self.feats[i] = out`
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" and node.args:
            kept = node.args[0]  # `feats.append(out)`
        else:
            continue
        while kept is not None and not isinstance(kept, ast.Name):
            kept = viewed(ctx, kept)  # `out.detach()`, `out[:, :k]`: the same storage
        if kept is not None and kept.id == output:
            return True
    return False


def _hooked_layers(ctx, receiver: ast.AST):
    """(the context, the construction) of each layer `receiver` may be, also an item of an `nn.Sequential`."""
    if isinstance(receiver, ast.Subscript):
        indices = possible_constants(ctx, receiver.slice)
        if not indices or not all(type(i) is int for i in indices):
            return
        for (home, made), _ in constructions(ctx, receiver.value):
            if canonical_class(home.qualified_name(made.func)) == SEQUENTIAL and not any(isinstance(a, ast.Starred) for a in made.args):
                for i in indices:
                    if -len(made.args) <= i < len(made.args):
                        yield home, made.args[i]
        return
    for (home, made), _ in constructions(ctx, receiver):
        yield home, made


def output_kept(ctx, layer: ast.AST, kept: dict) -> ast.Call | None:
    """The layer construction in `kept` whose output `layer` is: itself, or the construction of the layer a
    call of it runs (`self.conv1(x)`); None for any other."""
    if isinstance(layer, ast.Call) and layer in kept:
        return layer
    constructor = ctx.analysis(ValueKinds).constructor(layer.func) if isinstance(layer, ast.Call) else None
    return constructor if constructor in kept else None
