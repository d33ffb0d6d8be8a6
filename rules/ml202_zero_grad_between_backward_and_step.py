import ast

from mllint.analysis.facets.loop_events import Event, EventKind, Iteration
from mllint.analysis.facets.loops import TRAINING_WORDS, TrainingLoops
from mllint.analysis.objects.call_sites import makers
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.program.callers import sited_throughout
from mllint.analysis.program.hierarchy import made_runner
from mllint.analysis.syntax.folding import is_modulo
from mllint.analysis.values.runners import ACCELERATORS
from mllint.findings import Severity
from mllint.rule import Rule


class ZeroGradBetweenBackwardAndStep(Rule):
    """
    ## What it does
    Reports `optimizer.zero_grad()` that runs after the iteration's `backward()` and before the
    optimizer's `step()` (also a module's `model.zero_grad()`, when the optimizer updates that module or a
    part of it: `Adam(model.parameters())`, followed through attributes, helpers and base classes), and gradient accumulation that clears every micro-batch while the optimizer
    steps only under an accumulation guard (`if (i + 1) % k == 0:`). Under accelerate, `if
    accelerator.sync_gradients:` is such a guard, and in `with accelerator.accumulate(model):` the prepared
    optimizer's `step` runs only on the micro-batches that sync: a module's `model.zero_grad()` there (or every
    micro-batch next to a `sync_gradients`-guarded step) clears what should accumulate, while the prepared
    optimizer's own `zero_grad()`, skipped alike, is fine. The accelerator may be a subclass of the project's,
    under any name, given to a trainer's constructor (read at each call site, or the class a parameter's
    annotation names); the module `accumulate(model)` names is one the stepped optimizer updates. Clearing before backward or after
    the step, clearing under the same guard as the step, and GAN steps where another model's gradients
    are cleared between a backward and a step are not reported; nor are a clear and a step in sibling
    loops (two phases of an epoch, each with its own backward and step: they are not one iteration). A
    backward seeded with a constant gradient (`errG.backward(mone)` with `mone = -one`) is a backward.
    A clear reached through a helper is placed by each call of it (`self._reset_grads()` at the top of
    the step and again before `opt_g.step()`), one over several optimizers clears each (`for o in (opt_g,
    opt_d):`, `def reset(*optimizers)`), and one that runs every so many steps (`if step % every:
    return` in a gradient-monitoring callback) still wipes those steps; one under a test of the data (`if
    not torch.isfinite(loss):`, a deliberate skip) is not reported, nor a clear every iteration of an optimizer
    that steps under a guard after clearing and backpropagating under it too (a WGAN's generator phase every
    `n_critic` iterations: nothing accumulates).

    ## Why is this bad?
    The step applies the gradients in `.grad`. Cleared between backward and step, they are zero (or
    `None`): the step does nothing and the model never learns. Cleared every micro-batch, only the last
    micro-batch's gradients reach the accumulated step: the effective batch is k times smaller than
    intended. Neither raises an error.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    for x, y in data:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    for x, y in data:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    There is no fix: where the clear belongs (before backward, after the step, under the accumulation
    guard) is for the author to decide.
    """

    code = "ML202"
    name = "zero-grad-between-backward-and-step"
    message = "`{clear}`{where} clears the gradients between `backward()` and `{optimizer}` stepping: the step applies zero gradients"
    accumulation_message = (
        "`{clear}`{where} clears the gradients every iteration, but `{optimizer}` steps only {guard}: "
        "only the last micro-batch's gradients reach the step"
    )
    severity = Severity.ERROR
    requires_any_text = TRAINING_WORDS

    def end_file(self) -> None:
        reported: set[ast.AST] = set()
        for iteration in self.ctx.analysis(TrainingLoops).loops:
            for optimizer in iteration.optimizers:
                if iteration.unknown(optimizer):
                    continue
                for clear, message in self._misplaced_clears(iteration, optimizer):
                    if clear.at not in reported:
                        reported.add(clear.at)
                        self.report(clear.at, message)

    def _misplaced_clears(self, iteration: Iteration, optimizer: str):
        loops = self.ctx.analysis(TrainingLoops)
        clears = iteration.clears(optimizer, strict=not iteration.single_optimizer)
        events = iteration.events
        for step in iteration.steps(optimizer):
            before = events[: events.index(step)]
            for clear in clears:
                text, where = clear.text(self.ctx), clear.where
                guard = _accumulation_guard(step)
                context = _accumulating(self.ctx, step) if clear.key != step.key else None
                declared = context is not None and _accumulated(self.ctx, context, clear)  # `accumulate(model)`, `model.zero_grad()`
                module = clear.key != step.key and (declared or loops.clears_stepped(step, clear))
                synced = guard is not None and _syncs(guard.node.test) is not None  # a prepared optimizer clears in sync
                context = context if module else None
                if guard is not None and (module or not synced) and _accumulation_broken(clear, step, guard, events):
                    guard_text = _guard_text(guard)
                    yield clear, self.accumulation_message.format(clear=text, where=where, optimizer=optimizer, guard=guard_text)
                elif context is not None and _accumulating(self.ctx, clear) is context and not _synced(clear):
                    guard_text = f"under `with {self.ctx.text(context.items[0].context_expr)}:` on the micro-batches that sync"
                    yield clear, self.accumulation_message.format(clear=text, where=where, optimizer=optimizer, guard=guard_text)
                elif clear in before and _between(clear, step, before, loops.clears_stepped(step, clear)):
                    yield clear, self.message.format(clear=text, where=where, optimizer=optimizer)


def _between(clear: Event, step: Event, before: list[Event], stepped: bool) -> bool:
    """Does `clear` surely run after a backward and before `step`, with no backward in between? `stepped`:
    it clears a module the step's optimizer updates, under another name (`model.zero_grad()`)."""
    if (clear.key != step.key and not stepped) or not clear.runs_periodically_whenever(step):
        return False
    position = before.index(clear)
    if not clear.runs_whenever(step) and not _periodic_alone(clear, step, before[:position]):
        return False
    earlier = [e for e in before[:position] if e.kind is EventKind.BACKWARD]
    later = [e for e in before[position:] if e.kind is EventKind.BACKWARD]
    return any(b.runs_whenever(clear) for b in earlier) and all(b.excludes(step) for b in later)


def _periodic_alone(clear: Event, step: Event, before: list[Event]) -> bool:
    """Is a clear that runs every so many iterations (`if step % every: return` in a callback) in the
    step's loops, with no step of that optimizer under its periodic guards before it (the clear of an
    accumulation boundary's `opt.step(); opt.zero_grad()`, before a tail step, is not a misplaced one)?"""
    extra = [g for g in clear.conditions if g not in step.conditions]
    return clear.loops == step.loops and not any(
        e.kind is EventKind.STEP and e.key == step.key and all(g in e.conditions for g in extra) for e in before
    )  # fmt: skip


def _accumulation_guard(step: Event):
    """The `if ... % k == 0` (or accelerate's `if accelerator.sync_gradients:`) around a step, if any."""
    for guard in step.conditions:
        if guard.kind == "if" and isinstance(guard.node, ast.If) and is_modulo(guard.node.test):
            equal = isinstance(guard.node.test.ops[0], ast.Eq)
            if guard.arm is equal:  # `if i % k == 0:` or the code after `if i % k != 0: continue`
                return guard
        if guard.kind == "if" and isinstance(guard.node, ast.If) and _syncs(guard.node.test) is not None:
            if guard.arm is _syncs(guard.node.test):  # `if accelerator.sync_gradients:`, or after `if not ...: continue`
                return guard
    return None


def _accumulating(ctx, event: Event) -> ast.With | None:
    """The `with accelerator.accumulate(model):` around an event of the linted file: in it, the prepared
    optimizer's `step` and `zero_grad` do nothing on micro-batches that do not sync; a module's do."""
    if event.entry is not None or event.path is not None:
        return None
    for ancestor in ctx.scopes.ancestors(event.node):
        if isinstance(ancestor, ast.With) and any(_accumulates(ctx, i.context_expr) for i in ancestor.items):
            return ancestor
    return None


def _accumulates(ctx, expr: ast.AST) -> bool:
    """Is `expr` the `accumulate(...)` of an `accelerate.Accelerator` (by points-to; or a subclass of the
    project's, also given to a trainer's constructor: read at each call site, or the class its annotation
    names) whose gradient accumulation steps may be more than one (`gradient_accumulation_steps` not a
    literal 1, or a plugin)?"""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "accumulate"):
        return False
    view = ctx.analysis(Objects).view
    return any(  # a class a parameter's annotation names (`accelerator: MyAccelerator`) is built elsewhere: any steps
        made and all(made_runner(c, m, view) in ACCELERATORS and (_may_accumulate(m) or not sited_throughout(binding)) for c, m in made)
        for made, binding in makers(ctx, expr.func.value)
    )


def _accumulated(ctx, context: ast.With, clear: Event) -> bool:
    """Is the module `clear` clears one the `with accelerator.accumulate(model):` around the step names? Its
    gradients are the ones meant to accumulate, whichever way the optimizer got its parameters."""
    return any(clear.key == ctx.text(a) for item in context.items if isinstance(item.context_expr, ast.Call) for a in item.context_expr.args)


def _may_accumulate(accelerator: ast.Call) -> bool:
    given = {k.arg: k.value for k in accelerator.keywords}
    steps = given.get("gradient_accumulation_steps")
    if steps is None:
        return None in given or "gradient_accumulation_plugin" in given
    return not (isinstance(steps, ast.Constant) and type(steps.value) is int and steps.value <= 1)


def _synced(event: Event) -> bool:
    """Does the event run only on micro-batches that sync (`if accelerator.sync_gradients:`)?"""
    return any(g.kind == "if" and isinstance(g.node, ast.If) and _syncs(g.node.test) is g.arm for g in event.conditions)


def _syncs(test: ast.AST) -> bool | None:
    """True for `x.sync_gradients`, False for `not x.sync_gradients`, None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _syncs(test.operand)
        return None if inner is None else not inner
    return True if isinstance(test, ast.Attribute) and test.attr == "sync_gradients" else None


def _accumulation_broken(clear: Event, step: Event, guard, events: list[Event]) -> bool:
    """Does `clear` run on the micro-batches where `step` does not, after or before their backward?"""
    outside = step.conditions[: step.conditions.index(guard)]
    if clear.conditions != outside[: len(clear.conditions)]:
        return False  # the clear is under the guard, or under a condition the step is not under
    if _fresh_under_guard(step, guard, events):
        return False  # WGAN's `if it % n_critic == 0:` clears, backpropagates and steps: nothing accumulates
    return any(
        e.kind is EventKind.BACKWARD and e.conditions == outside[: len(e.conditions)] for e in events
    )


def _fresh_under_guard(step: Event, guard, events: list[Event]) -> bool:
    """Does the step's optimizer clear under the guard, then backpropagate there, before the step (the
    generator's phase every `n_critic` iterations)? Then the step applies that backward's gradients alone."""
    before = events[: events.index(step)]
    clears = [i for i, e in enumerate(before) if e.kind is EventKind.CLEAR and e.key == step.key and guard in e.conditions]
    return bool(clears) and any(e.kind is EventKind.BACKWARD and guard in e.conditions for e in before[clears[-1] :])


def _guard_text(guard) -> str:
    return f"under `if {guard.text}:`" if guard.arm else f"after `if {guard.text}: continue`"
