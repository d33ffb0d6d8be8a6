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

from mllint.analysis.facets.gradients import GRAPH, UNKNOWN, Flow, GradientFlow, Given, State, backward_loss, no_grad_region
from mllint.analysis.facets.gradients import NONE as NONE_FLOW
from mllint.analysis.facets.parameters import is_module, made_module
from mllint.analysis.objects.call_sites import substituted, under
from mllint.analysis.objects.points_to import NONE, Objects
from mllint.analysis.objects.steps import StepKind, step_of
from mllint.analysis.program.callers import Binding, per_call_site
from mllint.analysis.syntax.tree import position
from mllint.analysis.values.values import is_parameter


MAX_UNPACKING = 3  # bindings followed back to a parameter (`o, a = batch` of `batch = pair`)


class SteppedFlow(GradientFlow):
    """The gradient flow that counts as a graph only the calls of the modules in `stepped`."""

    def __init__(self, ctx, stepped: frozenset) -> None:
        super().__init__(ctx)
        self.stepped = stepped
        self.callee_cuts = ctx.analysis(GradientFlow).callee_cuts  # where callees cut, as messages name them
        self._enabled: SteppedFlow | None = None  # as if no `no_grad` region cut anything

    def _call(self, call: ast.Call, depth: int) -> Flow:
        return self._module_call(call, depth) or super()._call(call, depth)

    def _element(self, value: ast.AST, index: int, depth: int) -> Flow | None:
        """An element of what a module returns (`q1, q2 = critic(obs, act)`) carries what the call carries."""
        return (self._module_call(value, depth) if isinstance(value, ast.Call) else None) or super()._element(value, index, depth)

    def _module_call(self, call: ast.Call, depth: int) -> Flow | None:
        """The flow of a call of a module object: a graph for a stepped one; for another, what it is given (None:
        no module object known)."""
        found = under(self.ctx, call.func, None if isinstance(self._binding, Given) else self._binding)
        found = found - {NONE} if found else found
        if found and found & self.stepped:
            return GRAPH
        if not (found and all(obj.kind == "made" for obj in found) and self._calls_module(call.func, found)):
            return None
        arguments = [*call.args, *(k.value for k in call.keywords)]
        flows = [self._flow(a, depth + 1) for a in arguments]
        if not flows or any(f is None for f in flows):
            return UNKNOWN
        cut = any(f.state is State.NONE and f.cuts for f in flows)
        if any(f.state is not State.NONE and not (cut and self._passed_in(a)) for a, f in zip(arguments, flows)):
            return UNKNOWN  # (beside a cut, what the function is given is data: `critic(obs, actor(obs).detach())`)
        return Flow(State.NONE, tuple(c for f in flows if f.state is State.NONE for c in f.cuts))

    def _passed_in(self, expr: ast.AST, depth: int = 0) -> bool:
        """Is `expr` a parameter of its function, an item or field of one, or unpacked from one (`obs, act, rew =
        batch`, `obs = batch[0]`)?"""
        while isinstance(expr, ast.Subscript | ast.Attribute):
            expr = expr.value
        if not isinstance(expr, ast.Name) or expr.id == "self" or depth > MAX_UNPACKING:
            return False
        definitions = self.values.reaching_definitions(expr)
        unpacked = [d.value or self._unpacked_from(d.node) for d in definitions if not is_parameter(d)]
        return bool(definitions) and all(u is not None and self._passed_in(u, depth + 1) for u in unpacked)

    def _under_no_grad(self, expr: ast.AST) -> Flow:
        """Cut at its `no_grad` region when, with grad enabled, the value would reach a stepped module."""
        region = no_grad_region(self.ctx, expr)
        if region is None:
            return NONE_FLOW
        if self._enabled is None:
            self._enabled = _GradEnabledSteppedFlow(self.ctx, self.stepped)
        reached = self._enabled.flow(expr, self._binding).state is State.GRAPH
        return Flow(State.NONE, (region,)) if reached else NONE_FLOW

    def _calls_module(self, func: ast.AST, found: frozenset) -> bool:
        """Is `func` a module: as the expression tells, or, for what a call site hands over (the modules
        given to a trainer's constructor, not a `lambda` calling one), as the calls that made it tell?"""
        if found == self.ctx.analysis(Objects).points_to(func):
            return is_module(self.ctx, func)
        return all(isinstance(obj.node, ast.Call) and obj.ctx is not None and made_module(self.ctx, obj.ctx, obj.node) for obj in found)


class _GradEnabledSteppedFlow(SteppedFlow):
    grad_everywhere = True


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


def stepped_modules(ctx, step: ast.Call, binding: Binding | None = None) -> frozenset | None:
    """The module objects the optimizer stepped by `step` updates (under the call site `binding`: an
    optimizer handed to a trainer's constructor); None when unknown."""
    objects = ctx.analysis(Objects)
    optimizers = under(ctx, step_of(ctx, step).stepped, binding)
    if not optimizers or NONE in optimizers:
        return None
    modules = set()
    for optimizer in optimizers:
        trained = substituted(objects, objects.trained_objects(optimizer), binding)
        if not trained or NONE in trained:
            return None
        modules |= trained
    return frozenset(modules)


def unreached_step(ctx, backward: ast.Call) -> tuple[ast.Call, Flow, Binding | None] | None:
    """The step after `backward`, the loss's flow and the call site it holds under (None: any), when the
    loss reaches none of its modules (cut). Modules (and optimizers) handed to the function or to its
    class's constructor (`GANTrainer(Generator(), Critic())`) are what each call site passes, one at a time:
    a call site passing one module twice has no cut."""
    loss = backward_loss(ctx, backward)
    step = stepped_after(ctx, backward) if loss is not None else None
    if step is None:
        return None

    def cut(binding: Binding | None) -> Flow | None:
        stepped = stepped_modules(ctx, step, binding)
        flow = SteppedFlow(ctx, stepped).flow(loss, binding) if stepped else None
        return flow if flow is not None and flow.state is State.NONE and flow.cuts else None

    return next(((step, flow, binding) for flow, binding in per_call_site(ctx, backward, cut)), None)
