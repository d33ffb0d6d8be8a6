"""Unfrozen parts no optimizer gets: an optimizer built over the parameters that are trainable at the time
(`AdamW([p for p in model.parameters() if p.requires_grad])`, `filter(lambda p: p.requires_grad, ...)`),
while part of the model is frozen, and that part unfrozen later in the same run (`requires_grad = True` in a
loop over its parameters, `part.requires_grad_(True)`, or a helper of the project doing either to the model
it is given: `unfreeze_backbone(model)`). The optimizer's parameter groups were fixed when it was built, so
the unfrozen parameters get gradients that nothing applies.

`unfrozen_missed(ctx)` lists, for the linted file, the unfreezes of a model in a function (or at module
level) that builds such an optimizer over it before, itself or through a helper of the project
(`build_optimizer(model, lr)`), when the function builds no other optimizer (a rebuild after the unfreeze),
nothing involved calls `add_param_group`, and a file involved freezes something (`requires_grad = False`,
`requires_grad_(False)`). Optimizers over all parameters (a frozen parameter's `grad` stays None, so the
unfreeze just works) and freezes never undone are none of these.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mllint.analysis.facets.coverage import _flagged_owner
from mllint.analysis.facets.parameters import OptimizerConstructors, optimizer_helper
from mllint.analysis.program.calls import CallResolver, bind_arguments
from mllint.analysis.program.project_view import ProjectView, place_in
from mllint.analysis.values.values import ValueKinds

FREEZES = re.compile(r"requires_grad\s*=\s*False|requires_grad_\(\s*False")
MAX_ROOT = 4  # loop variables followed back to what they iterate (`for stage in model.features[4:]`)


@dataclass(frozen=True)
class UnfrozenMissed:
    unfreeze: ast.AST  # the statement or call that unfreezes, in the linted file
    model: str  # `model`
    optimizer: str  # where the optimizer over the then-trainable parameters is built: `setup.py:16`


def unfrozen_missed(ctx) -> list[UnfrozenMissed]:
    if "optim" not in ctx.source.text or "add_param_group" in ctx.source.text:
        return []
    view = ctx.analysis(ProjectView)
    resolver = CallResolver(ctx, view)
    found = []
    for unfreeze, model, helper in _unfreezes(ctx, resolver):
        scope = ctx.scopes.enclosing_function(unfreeze) or ctx.tree
        built = list(_optimizers(ctx, view, scope))
        if len(built) != 1 or built[0][0].lineno >= unfreeze.lineno:
            continue  # another optimizer of the run (a rebuild), or none before the unfreeze
        if _frozen_between(ctx, scope, built[0][0], unfreeze):
            continue  # frozen after the optimizer took every parameter: the unfreeze gives them back
        _, home, constructor, over = built[0]
        if over != model or not _filtered_over_trainable(home, constructor):
            continue
        homes = {ctx, home} | ({helper} if helper is not None else set())
        if any("add_param_group" in h.source.text for h in homes) or not any(FREEZES.search(h.source.text) for h in homes):
            continue
        found.append(UnfrozenMissed(unfreeze, model, place_in(ctx, home, constructor)))
    return found


def _unfreezes(ctx, resolver: CallResolver):
    """(the unfreeze, the name of the model it unfreezes a part of, the helper's module or None)."""
    for node in ctx.index.of_type(ast.Assign, ast.Call):
        if isinstance(node, ast.Assign):
            target = node.targets[0] if len(node.targets) == 1 else None
            if isinstance(target, ast.Attribute) and target.attr == "requires_grad" and _true(node.value):
                owner = _flagged_owner(ctx, target)
                root = _root(ctx, owner) if owner is not None else None
                if root is not None:
                    yield node, root, None
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and (not node.args or _true(node.args[0])):
            owner = _flagged_owner(ctx, func) if isinstance(func.value, ast.Name) else func.value
            root = _root(ctx, owner) if owner is not None else None
            if root is not None:
                yield node, root, None
        elif node.args and isinstance(node.args[0], ast.Name):
            home = _unfreezes_argument(ctx, resolver, node)
            if home is not None:
                yield node, node.args[0].id, home


def _frozen_between(ctx, scope: ast.AST, built: ast.AST, unfreeze: ast.AST) -> bool:
    nodes = ctx.index.within(scope, ast.Assign, ast.Call) if scope is not ctx.tree else ctx.index.of_type(ast.Assign, ast.Call)
    return any(built.lineno < node.lineno < unfreeze.lineno and _freezes(node) for node in nodes)


def _freezes(node: ast.AST) -> bool:
    """`x.requires_grad = False` or `x.requires_grad_(False)`."""
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets) and _false(node.value)
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and bool(node.args) and _false(node.args[0])


def _unfreezes_argument(ctx, resolver: CallResolver, call: ast.Call):
    """The module of a helper of the project that unfreezes (a part of) the module it gets first, else None."""
    callee = resolver.resolve(call)
    if callee is None:
        return None
    bound = bind_arguments(call, callee.function, skips_first=False)
    names = {name for name, argument in bound.items() if argument is call.args[0]}
    home = callee.ctx
    for node in home.index.within(callee.function, ast.Assign, ast.Call):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "requires_grad":
            owner = _flagged_owner(home, node.targets[0]) if _true(node.value) else None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_":
            on = not node.args or _true(node.args[0])
            owner = (_flagged_owner(home, node.func) if isinstance(node.func.value, ast.Name) else node.func.value) if on else None
        else:
            continue
        if owner is not None and _root(home, owner) in names:
            return home
    return None


def _optimizers(ctx, view: ProjectView, scope: ast.AST):
    """(the call in `scope`, the module its constructor is in, the constructor, the name of the model whose
    parameters it takes) for the optimizers `scope` builds, itself or through a helper of the project."""
    constructors = ctx.analysis(OptimizerConstructors).calls
    for call in ctx.index.within(scope, ast.Call) if scope is not ctx.tree else ctx.index.of_type(ast.Call):
        if call in constructors:
            yield call, ctx, call, _over(ctx, call)
            continue
        helper = optimizer_helper(view, ctx, call)
        if helper is None:
            continue
        home, function, built = helper
        bound = bind_arguments(call, function, skips_first=False)
        for constructor in built:
            over = _over(home, constructor)
            argument = bound.get(over) if over is not None else None
            yield call, home, constructor, argument.id if isinstance(argument, ast.Name) else None


def _params(ctx, constructor: ast.Call) -> ast.AST | None:
    """The parameters an optimizer constructor is given, through a name bound once (`params = [...]`)."""
    given = constructor.args[0] if constructor.args else next((k.value for k in constructor.keywords if k.arg == "params"), None)
    if isinstance(given, ast.Name):
        values = ctx.analysis(ValueKinds).reaching_values(given) or []
        return values[0] if len(values) == 1 else None
    return given


def _filtered_over_trainable(ctx, constructor: ast.Call) -> bool:
    """Are the parameters those trainable when it is built: a comprehension or `filter` on `requires_grad`?"""
    params = _params(ctx, constructor)
    if isinstance(params, (ast.ListComp, ast.GeneratorExp)):
        return any(_reads_flag(test) for g in params.generators for test in g.ifs)
    if isinstance(params, ast.Call) and isinstance(params.func, ast.Name) and params.func.id == "filter" and params.args:
        return _reads_flag(params.args[0])
    return False


def _over(ctx, constructor: ast.Call) -> str | None:
    """The name of the model whose `parameters()` a filtered optimizer takes (`model` of `[p for p in
    model.parameters() if p.requires_grad]`)."""
    params = _params(ctx, constructor)
    if isinstance(params, (ast.ListComp, ast.GeneratorExp)):
        iterated = params.generators[0].iter
    elif isinstance(params, ast.Call) and isinstance(params.func, ast.Name) and params.func.id == "filter" and len(params.args) == 2:
        iterated = params.args[1]
    else:
        return None
    listed = isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr in ("parameters", "named_parameters")
    return _root(ctx, iterated.func.value) if listed else None


def _root(ctx, expr: ast.AST, depth: int = 0) -> str | None:
    """The name a part is reached from: `model` of `model.features[4:]`, of `stage` in `for stage in
    model.features[4:]`, of `model.module.backbone`."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    if not isinstance(expr, ast.Name) or depth > MAX_ROOT:
        return None
    for loop in ctx.scopes.ancestors(expr):
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id == expr.id:
            return _root(ctx, loop.iter.func.value if _is_method_call(loop.iter) else loop.iter, depth + 1)
    return expr.id


def _is_method_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("children", "modules", "parameters")


def _reads_flag(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "requires_grad" for n in ast.walk(node))


def _true(value: ast.AST) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


def _false(value: ast.AST) -> bool:
    return isinstance(value, ast.Constant) and value.value is False
