import ast

from mllint.analysis.facets.loop_events import Event, EventKind, Guard, Iteration, source_text
from mllint.analysis.facets.loops import LOOP_NODES, TRAINING_WORDS, TrainingLoops, item_construction
from mllint.analysis.objects.call_sites import built
from mllint.analysis.program.callers import per_call_site
from mllint.analysis.values.values import ValueKinds
from mllint.findings import Applicability, Edit, Fix, Position, Severity
from mllint.rule import Rule
from mllint.source import one_line


class MissingZeroGrad(Rule):
    """
    ## What it does
    Reports an optimizer step in a training loop whose iteration backpropagates and steps without clearing
    the gradients on the step's path: no `optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None` or
    function clearing what it is given (`pyro.infer.util.zero_grads(params)`) anywhere in the iteration
    (including the functions and methods of the file it calls, and the functions of the project's other
    modules: then the finding is at the call, and names the file and line of the step), or a clear only in
    the other arm of an `if` the step or a backward before it sits in (`zero_grad` only in the non-AMP
    branch). When the iteration clears another optimizer a second time with no step of it after (the
    critic's `opt_d.zero_grad()` copied into the generator phase), the finding is at that clear, the line
    to change, and its fix clears the stepping optimizer there. It also reports a clear of only some of the modules the optimizer updates (`encoder.zero_grad()` with
    `Adam(list(encoder.parameters()) + list(head.parameters()))`, param groups, `itertools.chain`, or a
    submodule of the whole model it updates: `model.backbone.zero_grad()` with `SGD(model.parameters())`; also
    built by a project helper that returns it, or passed in by a call site that builds it; also where the
    clear and the step are in a method or function of another file the loop calls: `self.encoder.zero_grad()`
    with `self.optimizer` over `self.parameters()`, `step(net, opt, x)`; the message names where the
    clear is), or of another
    model only (`critic.zero_grad()` with an optimizer over `actor`, both built in the file, neither from
    the other, or handed to a trainer's constructor built apart at every call site that tells: `GANTrainer(G(),
    D())` storing `self.G, self.D = G, D`). Also a step after a phase of micro-batches (a nested loop that only backpropagates) that
    lands on the gradients an earlier phase of the iteration left: that phase clears before its backward
    (the same optimizer, or another over the same modules), never after, and nothing clears in between.
    Loops include comprehensions, generators and `map(step, loader)` over the loader; an optimizer is
    recognised by its name, or by what built it (a helper returning it, or the call sites passing it in).
    Gradients zeroed by hand over the parameters clear too: `p.grad = torch.zeros_like(p)`,
    `p.grad.data.zero_()`, `p.grad.fill_(0)`, `p.grad *= 0`; so do the optimizer's methods called through
    an alias (`clear = optimizer.zero_grad`, then `clear()`). `scaler.unscale_(optimizer)`,
    `clip_grad_norm_` and `scaler.update()` do not clear gradients. Clearing
    anywhere in the iteration counts, before backward or after the step, unless it sits under an `if` of
    its own (not a check that something exists: `if p.grad is not None:`) while the step runs with every
    backward (the clear guarded by the accumulation test, the step outside it: each micro-batch then steps
    on the growing sum); gradient accumulation that clears
    under the same guard as the step, a phase cleared before it starts, a module that holds every module the
    optimizer updates (`self.zero_grad()`, a `DataParallel` wrapper), `optimizer.step(closure)` (LBFGS) and
    optimizers handed to calls mllint does not follow are not reported.

    ## Why is this bad?
    `backward()` adds to `.grad`. Without clearing, the step at iteration k applies the sum of the
    gradients of all earlier iterations: the effective learning rate grows every step and training
    diverges or stalls, with no error.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    for x, y in data:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
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
    The fix inserts `optimizer.zero_grad()` at the top of the loop body (above the comment lines that
    describe its first statement; at a misdirected clear it names the stepping optimizer instead), or for a stale phase, before the phase's loop. It is unsafe: it changes the
    training (that is the point), and code that meant to accumulate over the whole loop would need the
    clear elsewhere.
    """

    code = "ML201"
    name = "missing-zero-grad"
    message = (
        "`{optimizer}` steps{where} without its gradients being cleared in the iteration of the loop on line {line}: "
        "gradients accumulate across steps"
    )
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = TRAINING_WORDS

    sometimes_message = (
        "`{optimizer}` steps{where} on every backward, but its gradients are cleared only when `{test}` "
        "({place}): the steps in between apply the growing sum"
    )

    partly_message = (
        "`{optimizer}`{passed} also updates the parameters of {missed}, which the iteration of the loop on line {line} "
        "never clears (only {cleared}): their gradients accumulate across steps"
    )

    other_model_message = (
        "`{optimizer}`{passed} updates the parameters of {owners}, but the iteration of the loop on line {line} clears only "
        "{cleared}, another model: their gradients accumulate across steps"
    )
    misdirected_message = (
        "`{clear}` clears `{other}` a second time, after its step, while `{optimizer}`, which steps at "
        "{step}, is never cleared in the iteration of the loop on line {line}: its gradients accumulate across steps; "
        "clear `{optimizer}` here"
    )
    stale_message = (
        "`{optimizer}` steps{where} the micro-batches of the loop on {phase} on top of the gradients the loop on "
        "{earlier} left (it clears before its backward, not after): the step applies both phases' gradients"
    )

    def end_file(self) -> None:
        loops = self.ctx.analysis(TrainingLoops)
        reported: set[ast.AST] = set()
        for iteration in loops.loops:
            for optimizer in iteration.optimizers:
                if iteration.unknown(optimizer) or loops.fresh_parameters(iteration, optimizer):
                    continue
                step, message, fix, related = self._finding(loops, iteration, optimizer)
                if step is not None and step.at not in reported:
                    reported.add(step.at)
                    self.report(step.at, message, fix, related)

    def _finding(self, loops: TrainingLoops, iteration: Iteration, optimizer: str):
        """(the step, its message, a fix, its related call sites) for the first way the iteration leaves the
        gradients `optimizer` applies uncleared: no clear on the step's path, a clear of other modules only,
        a stale phase."""
        clears = iteration.clears(optimizer, strict=False)
        step = _uncleared_step(iteration, optimizer, clears)
        if step is not None:
            guard = next((g for c in clears for b in iteration.of(EventKind.BACKWARD) for g in _own_guards(c, b, step)), None)
            if guard is not None:  # cleared under a test of its own only (the accumulation boundary)
                clear = next(c for c in clears if guard in c.guards)
                message = self.sometimes_message.format(
                    optimizer=optimizer, where=step.where, test=source_text(guard.node.test), place=clear.place
                )
                return step, message, None, ()
            misdirected = iteration.misdirected_clear(optimizer, step)
            if misdirected is not None:
                message = self._misdirected(misdirected, optimizer, step, iteration)
                return misdirected, message, self._redirect_fix(misdirected, optimizer) or self._fix(iteration, optimizer), ()
            message = self.message.format(optimizer=optimizer, where=step.where, line=iteration.loop.lineno)
            return step, message, self._fix(iteration, optimizer), ()
        step, message, sites = self._partly_cleared_step(loops, iteration, optimizer)
        if step is not None:
            return step, message, self._fix(iteration, optimizer), sites
        return *self._stale_phase_step(loops, iteration, optimizer, clears), ()

    def _partly_cleared_step(self, loops: TrainingLoops, iteration: Iteration, optimizer: str):
        """A step of an optimizer over several modules (`Adam([*enc.parameters(), *head.parameters()])`)
        whose iteration clears some of them (`enc.zero_grad()`), or only another model, and never calls its
        own `zero_grad()`: (the step, its message, the call sites that pass the optimizer), or Nones."""
        own = iteration.clears(optimizer, strict=True)
        modules = [c for c in iteration.clears(optimizer, strict=False) if c not in own]
        keys = sorted({c.key for c in modules if c.key is not None})
        if not modules or any(c.key is None for c in modules):
            return None, None, ()
        for step in iteration.steps(optimizer):
            owned = loops.parameter_owners(step)
            if _uncleared(step, iteration, own) and (not owned or not owned.modules):
                parts = {loops.cleared_part(step, c) for c in modules}  # `model.backbone` of the whole `model`
                if None not in parts:
                    missed = ", ".join(f"the rest of `{part}`" for part in sorted(parts))
                    named = {"optimizer": optimizer, "passed": "", "cleared": _cleared(modules), "line": iteration.loop.lineno}
                    return step, self.partly_message.format(missed=missed, **named), ()
            if not owned or not owned.modules or not _uncleared(step, iteration, own):
                continue
            owners = owned.modules
            covered = {k: [o for o in owners if o == k or o.startswith(k + ".")] for k in keys}
            whole = {k: next((o for o in owners if k.startswith(o + ".") and k[len(o) + 1 :].replace(".", "_").isidentifier()), None) for k in keys}  # `model` of `model.backbone`
            missed = sorted(o for o in owners if not any(o in found for found in covered.values()))
            named = {"optimizer": optimizer, "passed": owned.passed, "cleared": _cleared(modules), "line": iteration.loop.lineno}
            if all(covered[k] or whole[k] for k in keys) and missed:  # each clear is of a module the optimizer updates, or a part of one
                parts = set(whole.values())
                missed_text = ", ".join(f"the rest of `{o}`" if o in parts else f"`{o}`" for o in missed)
                return step, self.partly_message.format(missed=missed_text, **named), owned.sites
            if all(_distinct_models(self.ctx, c, owners) for c in modules):
                misdirected = iteration.misdirected_clear(optimizer, step)
                if misdirected is not None:  # `netD.zero_grad()` copied into the generator phase: the line to change
                    return misdirected, self._misdirected(misdirected, optimizer, step, iteration), owned.sites
                return step, self.other_model_message.format(owners=_names(sorted(owners)), **named), owned.sites
        for step in iteration.steps(optimizer):  # an optimizer whose modules the objects layer follows
            found = loops.uncleared_owners(step, modules) if _uncleared(step, iteration, own) else None
            if found is not None and found[0]:
                named = {"optimizer": optimizer, "passed": f" (built at {found[1]})", "cleared": _cleared(modules), "line": iteration.loop.lineno}
                return step, self.partly_message.format(missed=_names(found[0]), **named), ()
        return None, None, ()

    def _stale_phase_step(self, loops: TrainingLoops, iteration: Iteration, optimizer: str, clears: list[Event]):
        """A step after a phase of micro-batches (a nested loop that only backpropagates) whose gradients
        land on those an earlier phase left: that phase clears before its own backward (the optimizer's
        gradients, or another optimizer's over the same modules), never after, and nothing clears in
        between. (the step, its message, a fix), or Nones."""
        events = iteration.events
        for step in iteration.steps(optimizer):
            before = events[: events.index(step)]
            last = next((e for e in reversed(before) if e.kind is EventKind.BACKWARD), None)
            phase = _nested_loop(last, step) if last is not None else None
            if phase is None or any(_in_loop(c, step, phase) for c in clears):
                continue  # a clear per micro-batch is ML202's
            start = next(i for i, e in enumerate(before) if _in_loop(e, step, phase))
            previous = next((e for e in reversed(before[:start]) if e.kind is EventKind.BACKWARD or e in clears), None)
            earlier = _nested_loop(previous, step) if previous is not None and previous not in clears else None
            if earlier is None or previous.excludes(step):
                continue
            cleared = [c for c in iteration.of(EventKind.CLEAR) if _in_loop(c, step, earlier)]
            if any(c in clears or _shared(loops, iteration, c.key, step) for c in cleared):
                phases = {"phase": _loop_place(phase, last), "earlier": _loop_place(earlier, previous)}
                message = self.stale_message.format(optimizer=optimizer, where=step.where, **phases)
                return step, message, self._phase_fix(phase, last, optimizer)
        return None, None, None

    def _misdirected(self, clear: Event, optimizer: str, step: Event, iteration: Iteration) -> str:
        text = one_line(clear.text(self.ctx), 40) + (f"` ({clear.place}) in `{one_line(self.ctx.text(clear.at), 40)}" if clear.path else "")
        return self.misdirected_message.format(
            clear=text, other=clear.key, optimizer=optimizer,
            step=step.place if step.path else self.ctx.place(step.node), line=iteration.loop.lineno,
        )

    def _redirect_fix(self, clear: Event, optimizer: str) -> Fix | None:
        """`opt_d.zero_grad()` -> `opt_g.zero_grad()`, for a clear written in the linted file."""
        func = getattr(clear.node, "func", None)
        if clear.path is not None or "<" in optimizer or not isinstance(func, ast.Attribute) or self.ctx.text(func.value) != clear.key:
            return None
        return self.ctx.fix(f"Clear `{optimizer}` here", Applicability.UNSAFE, self.ctx.replace(func.value, optimizer))

    def _fix(self, iteration: Iteration, optimizer: str) -> Fix | None:
        loop = iteration.loop
        if not isinstance(loop, LOOP_NODES):
            return None  # a comprehension or `map` has no statement to clear in
        header_end = (loop.iter if isinstance(loop, (ast.For, ast.AsyncFor)) else loop.test).end_lineno
        return self._clear_above(loop.body[0], header_end, optimizer, "at the top of the iteration")

    def _phase_fix(self, phase: Guard, backward: Event, optimizer: str) -> Fix | None:
        """Clear before the loop of the phase that accumulates (a loop statement of the linted file)."""
        loop = phase.node
        body = getattr(self.ctx.scopes.parent(loop), "body", None)
        if backward.path is not None or not isinstance(loop, LOOP_NODES) or not isinstance(body, list) or loop not in body:
            return None
        position = body.index(loop)
        floor = body[position - 1].end_lineno if position else loop.lineno - 1
        return self._clear_above(loop, floor, optimizer, f"before the loop on line {loop.lineno}")

    def _clear_above(self, statement: ast.stmt, floor: int, optimizer: str, where: str) -> Fix | None:
        """Insert `optimizer.zero_grad()` above `statement`, its decorators and the comment lines that
        describe it (not above line `floor`)."""
        indent = self.ctx.source.line(statement.lineno)[: statement.col_offset]
        if "<" in optimizer or statement.lineno == floor or indent.strip():
            return None
        top = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])
        if top <= floor:
            return None
        while top - 1 > floor and self.ctx.source.line(top - 1).startswith(indent + "#"):
            top -= 1
        edit = Edit(Position(top, len(indent) + 1), Position(top, len(indent) + 1), f"{optimizer}.zero_grad()\n{indent}")
        return self.ctx.fix(f"Call `{optimizer}.zero_grad()` {where}", Applicability.UNSAFE, edit)


def _uncleared_step(iteration: Iteration, optimizer: str, clears: list[Event]) -> Event | None:
    return next((step for step in iteration.steps(optimizer) if _uncleared(step, iteration, clears)), None)


def _uncleared(step: Event, iteration: Iteration, clears: list[Event]) -> bool:
    """Is there a path through a backward and the step that none of `clears` is on? (each clear sits in
    the other arm of an `if` from the backward's or the step's, or under an `if` of its own while the step
    runs whenever the backward does)"""
    return any(
        not b.excludes(step) and all(c.excludes(b) or c.excludes(step) or _skipped(c, b, step) for c in clears)
        for b in iteration.of(EventKind.BACKWARD)
    )  # fmt: skip


def _skipped(clear: Event, backward: Event, step: Event) -> bool:
    return bool(_own_guards(clear, backward, step))


def _own_guards(clear: Event, backward: Event, step: Event) -> list[Guard]:
    """The `if`s `clear` sits under that neither the step nor the backward is under, when the step runs
    whenever the backward does (`if (i + 1) % accum == 0: optimizer.zero_grad()` with the step outside the
    test: every micro-batch steps on the growing sum); a check that something exists, or of its type, does not count."""
    if clear.excludes(step) or clear.excludes(backward) or not step.runs_whenever(backward):
        return []
    return [
        g for g in clear.conditions
        if g.kind == "if" and not g.checks_existence and not g.checks_type and g not in step.conditions and g not in backward.conditions
    ]  # fmt: skip


def _distinct_models(ctx, clear: Event, owners: dict[str, ast.AST | None]) -> bool:
    """Is the module `clear` clears (`critic.zero_grad()`) a model of its own: built apart from each module
    the optimizer updates, and neither built from the other (a wrapper, a copy) nor a part of it?"""
    if clear.path is not None or not isinstance(clear.node, ast.Call) or not isinstance(clear.node.func, ast.Attribute):
        return False
    if any(o.startswith(clear.key + ".") or clear.key.startswith(o + ".") for o in owners):
        return False
    modules = [clear.node.func.value, *owners.values()]
    names = [_module_name(m) for m in modules]
    if None in names:
        return False
    built = [_construction(ctx, m) for m in modules]
    if None not in built:
        return _built_apart(names, built)
    if clear.node.func.attr != "zero_grad":
        return False
    # Models handed in (`GANTrainer(G, D)` storing `self.G, self.D = G, D`): apart under every call site that tells.
    answers = list(per_call_site(ctx, clear.node, lambda b: _built_apart(names, _constructions(ctx, modules, b))))
    return bool(answers) and all(apart and binding is not None for apart, binding in answers)


def _constructions(ctx, modules: list[ast.AST], binding) -> list[tuple[object, ast.Call]] | None:
    """The one call that built each module under the call site `binding` (`makers`); None when one is unknown."""
    found = [built(ctx, m, binding) for m in modules]
    return None if any(f is None or len(f) != 1 for f in found) else [f[0] for f in found]


def _built_apart(names: list[str], built: list[tuple[object, ast.Call]] | None) -> bool | None:
    """Were the modules (held under `names`) built by calls of their own, none from another? None: unknown."""
    if built is None:
        return None
    if len({id(b[1]) for b in built}) != len(built):
        return False
    return not any(names[j] in _mentioned(built[i][1]) for i in range(len(built)) for j in range(len(built)) if i != j)


def _module_name(module: ast.AST) -> str | None:
    """The name a module is held under: `netD`, `self.D`, the constant key of `self.nets["D"]`."""
    if isinstance(module, ast.Subscript):
        key = module.slice
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    return module.attr if isinstance(module, ast.Attribute) else module.id if isinstance(module, ast.Name) else None


def _construction(ctx, module: ast.AST) -> tuple[object, ast.Call] | None:
    """(context, call) that built a module: as the values tell, or the item of a container at a constant key
    (`self.nets["D"]` of `nn.ModuleDict({"G": ..., "D": ...})`)."""
    return item_construction(ctx, module) if isinstance(module, ast.Subscript) else ctx.analysis(ValueKinds).construction(module)


def _mentioned(constructor: ast.Call) -> set[str]:
    """The names and attribute names a constructor's arguments mention."""
    return {
        n.id if isinstance(n, ast.Name) else n.attr
        for a in (*constructor.args, *(k.value for k in constructor.keywords))
        for n in ast.walk(a) if isinstance(n, (ast.Name, ast.Attribute))
    }  # fmt: skip


def _shared(loops: TrainingLoops, iteration: Iteration, other: str | None, step: Event) -> bool:
    """Does the optimizer `other` update modules the optimizer of `step` updates (the same, or one inside
    the other)?"""
    mine = loops.parameter_owners(step)
    theirs = [loops.parameter_owners(s) for s in iteration.steps(other)] if other is not None else []
    if not mine or not theirs or not theirs[0]:
        return False
    return any(a == b or a.startswith(b + ".") or b.startswith(a + ".") for a in mine.modules for b in theirs[0].modules)


def _nested_loop(event: Event, step: Event) -> Guard | None:
    """The loop, nested at the step's level, that `event` runs in (None: at the step's level, or elsewhere)."""
    depth = len(step.loops)
    if len(event.loops) <= depth or event.loops[:depth] != step.loops:
        return None
    return event.loops[depth]


def _in_loop(event: Event, step: Event, loop: Guard) -> bool:
    """Does `event` run in the nested loop `loop` of the step's level?"""
    return _nested_loop(event, step) == loop


def _loop_place(loop: Guard, event: Event) -> str:
    """`line 12`, or `steps.py:12` for a loop in another file (where `event` is)."""
    return f"{event.path}:{loop.node.lineno}" if event.path else f"line {loop.node.lineno}"


def _cleared(clears: list[Event]) -> str:
    """`model.encoder` at line 16: each cleared module with where it is cleared first."""
    first: dict[str, Event] = {}
    for clear in clears:
        first.setdefault(clear.key, clear)
    return ", ".join(f"`{key}` at {first[key].place}" for key in sorted(first))


def _names(texts) -> str:
    return ", ".join(f"`{t}`" for t in texts)
