"""Which modules a loss reaches, for the optimizer stepped after its `backward()`.

`unreached_step(ctx, backward)`: for `loss.backward()` followed, in the same function, by an optimizer's step
(`opt.step()`, `scaler.step(opt)`, as `objects.steps` tells; the only backward since the previous step),
whether the loss reaches none of the modules that optimizer updates (`Objects.trained_objects`). `SteppedFlow` is the gradient flow where only a call of one of those
modules makes a graph; a call of another module carries what it is given (a GAN generator step scoring
`D(G(z).detach())` with the generator's optimizer: `D` makes no graph for `G`). Unknown optimizer objects,
and modules it cannot tell (a wrapper, a callee of the project calling a model), leave the answer unknown.
"""
from __future__ import annotations

import ast

from mllint.analysis.facets.gradients import GRAPH, UNKNOWN, Flow, GradientFlow, State, backward_loss
from mllint.analysis.facets.parameters import is_module
from mllint.analysis.objects.points_to import NONE, Objects
from mllint.analysis.objects.steps import StepKind, step_of
from mllint.analysis.syntax.tree import position


class SteppedFlow(GradientFlow):
    """The gradient flow that counts as a graph only the calls of the modules in `stepped`."""

    def __init__(self, ctx, stepped: frozenset) -> None:
        super().__init__(ctx)
        self.stepped = stepped

    def _call(self, call: ast.Call, depth: int) -> Flow:
        found = self.ctx.analysis(Objects).points_to(call.func)
        found = found - {NONE} if found else found
        if found and found & self.stepped:
            return GRAPH
        if found and all(obj.kind == "made" for obj in found) and is_module(self.ctx, call.func):
            arguments = [*call.args, *(k.value for k in call.keywords)]
            flows = [self._flow(a, depth + 1) for a in arguments]
            if not flows:
                return UNKNOWN
            if any(f is None or f.state is not State.NONE for f in flows):
                return UNKNOWN
            return Flow(State.NONE, tuple(c for f in flows for c in f.cuts))
        return super()._call(call, depth)


class StepOrder:
    """The steps and backward calls of each function (or the module) of a file, in order, found once."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._scopes: dict[ast.AST | None, list[tuple[ast.Call, bool]]] = {}  # scope -> (call, is a step)

    def of(self, scope: ast.AST | None) -> list[tuple[ast.Call, bool]]:
        if scope not in self._scopes:
            enclosing = self.ctx.scopes.enclosing_function
            calls = [n for n in ast.walk(scope or self.ctx.tree) if isinstance(n, ast.Call) and enclosing(n) is scope]
            found = [(c, _steps(self.ctx, c)) for c in calls if _steps(self.ctx, c) or backward_loss(self.ctx, c) is not None]
            self._scopes[scope] = sorted(found, key=lambda pair: position(pair[0]))
        return self._scopes[scope]


def stepped_after(ctx, backward: ast.Call) -> ast.Call | None:
    """The optimizer step (`opt.step()`, `scaler.step(opt)`) of the function (or module) around `backward`
    that follows it, with no other backward between the previous step and it; a scheduler's step between
    them does not count, a step of an object it cannot tell (`engine.step()`) leaves it unknown."""
    backwards = 0
    for call, is_step in ctx.analysis(StepOrder).of(ctx.scopes.enclosing_function(backward)):
        if not is_step:
            backwards += 1
        elif position(call) > position(backward):
            optimizer = step_of(ctx, call).kind is StepKind.OPTIMIZER
            return call if backwards == 1 and optimizer else None
        else:
            backwards = 0
    return None


def _steps(ctx, call: ast.Call) -> bool:
    """Does `call` step an optimizer, or an object that may be one (a scheduler's step is not)?"""
    step = step_of(ctx, call)
    return step is not None and step.kind in (StepKind.OPTIMIZER, StepKind.OTHER)


def stepped_modules(ctx, step: ast.Call) -> frozenset | None:
    """The module objects the optimizer stepped by `step` updates; None when unknown."""
    objects = ctx.analysis(Objects)
    optimizers = objects.points_to(step_of(ctx, step).stepped)
    if not optimizers or NONE in optimizers:
        return None
    modules = set()
    for optimizer in optimizers:
        trained = objects.trained_objects(optimizer)
        if not trained or NONE in trained:
            return None
        modules |= trained
    return frozenset(modules)


def unreached_step(ctx, backward: ast.Call) -> tuple[ast.Call, Flow] | None:
    """The step after `backward` and the loss's flow, when the loss reaches none of its modules (cut)."""
    loss = backward_loss(ctx, backward)
    step = stepped_after(ctx, backward) if loss is not None else None
    stepped = stepped_modules(ctx, step) if step is not None else None
    if not stepped:
        return None
    flow = SteppedFlow(ctx, stepped).flow(loss)
    if flow.state is not State.NONE or not flow.cuts:
        return None
    return step, flow
