import ast
import re

from mllint.analysis.facets.loop_events import Event, EventKind
from mllint.analysis.objects.call_sites import passed_argument, possible_constants
from mllint.analysis.facets.loops import COMPREHENSION_NODES, TRAINING_WORDS, TrainingLoops
from mllint.analysis.syntax.folding import is_modulo
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.values.optimizers import METRIC_SCHEDULER, TORCH_SCHEDULERS, Scheduler
from mllint.rule import Rule

LARGEST_EPOCH_COUNT = 1000  # a literal length above this is taken for a number of steps
LARGEST_EPOCH_DECAY = 0.99  # a smaller decay factor, applied every batch, leaves no learning rate within an epoch
BATCH_WORDS = ("loader", "batch", "data")
NO_DEFAULT = ast.Constant(None)  # a scheduler's size has no default: a splat without it passes none
# Names that count optimizer steps. A bare "step" does not: `args.lr_step_size`, `cfg.lr_steps` count the
# epochs between decays (torchvision's references) as often as iterations.
STEP_WORDS = re.compile(r"iter|batch|(^|_)(total|num|max|train|training|warmup|n)_?steps?|steps_per")


class SchedulerCadence(Rule):
    """
    ## What it does
    Reports a learning-rate scheduler stepped at the wrong cadence: a per-epoch scheduler (`StepLR`,
    `MultiStepLR`, `CosineAnnealingLR` sized in epochs: literal sizes, or names that say epochs; an `ExponentialLR` whose
    decay `gamma` is 0.99 or less) stepped
    in the batch loop, and a per-step scheduler (`OneCycleLR`, `CyclicLR`, the `transformers` warm-up
    schedules, or a scheduler sized with `len(loader)` or a number of steps: `total_steps`,
    `num_training_steps`, `max_iters`) stepped once per epoch. The step may also be in a helper the
    loop passes the scheduler to (`train_step(model, batch, optimizer, scheduler)`), or in a callback's
    hook the loop runs for each callback (`for cb in self.callbacks: cb.on_batch_end(self)`, or `cb(...)`
    running its `__call__`), the callbacks given to the trainer's constructor or appended to its list
    (`trainer.callbacks.append(LRSchedulerCallback(sched))`), in any module, or in a loop stepping each
    scheduler of a list (`for sched in self.schedulers: sched.step()`; each item of a list of several classes,
    `[warmup, decay]`, is judged, the first wrong one reported). A size read from the configuration counts by
    its value (`step_size=args.lr_step` with `add_argument("--lr-step", default=30)`, `milestones=args.decays`
    with `default=[30, 60]`, a config field's default, passed into the helper that builds the scheduler), and so
    does arithmetic on such values (`int(cfg["epochs"] * 0.3)`, `[int(epochs * f) for f in (0.5, 0.75)]`) and
    a size spread from a config's mapping (`StepLR(optimizer, **cfg["scheduler"])`). A
    `while` loop whose test counts iterations (`while it <
    cfg.max_iters:`) steps per batch. Sizes
    mllint cannot read (`T_max=cfg.t_max`) are not reported, nor an `ExponentialLR` decaying by more than 0.99 a step (`gamma=0.9995`
    is a deliberate per-step decay), nor are names that only say "step" whose
    value is unknown (`step_size=args.lr_step_size`, `milestones=args.lr_steps` count epochs between
    decays in torchvision's references), nor a scheduler stepped in both loops under conditions
    (`if step_per_batch: scheduler.step()` in the batch loop, `if not step_per_batch:` after it) unless the configuration decides the flag (an option's or a config
    field's default the project never sets otherwise: the step runs as the default says), nor one
    stepped every so many batches (`if it % len(loader) == 0:`): the cadence is a setting there. Also a `ReduceLROnPlateau` stepped with a loss the batch loop
    backpropagates: in the batch loop (`plateau.step(loss.item())`), or once per epoch with the last
    batch's loss (a name bound only in the batch loop); stepped with a validation metric or the epoch's
    mean loss, it is not reported.

    ## Why is this bad?
    A per-epoch schedule stepped every batch decays `len(loader)` times too fast: after the first epoch
    the learning rate is already at its final value and the model stops learning. A per-step schedule
    stepped once per epoch barely moves: warm-up never ends and the decay never happens. A plateau
    scheduler fed each batch's loss counts its patience in batches: a few noisy batches cut the learning
    rate, several times within the first epoch; fed the last batch's loss once per epoch, it cuts the
    rate on one batch's noise while the epoch's loss still falls. None of them raises.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
    loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(10)]
    for epoch in range(4):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
            scheduler.step()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
    loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(10)]
    for epoch in range(4):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        scheduler.step()
    ```

    ## Fix safety
    There is no fix: the step has to move to the other loop, or the scheduler be sized in the other unit.
    """

    code = "ML205"
    name = "scheduler-cadence"
    per_batch_message = (
        "`{scheduler}` ({cls}) counts epochs but steps{where} every batch: the schedule decays len(loader) times too fast"
    )
    per_epoch_message = "`{scheduler}` ({cls}) is sized in optimizer steps but steps{where} once per epoch: the schedule barely moves"
    plateau_message = (
        "`{scheduler}` ({cls}) steps{where} every batch with the batch's loss `{loss}`: its patience "
        "counts batches, and one noisy stretch of batches cuts the learning rate"
    )
    plateau_epoch_message = (
        "`{scheduler}` ({cls}) steps with `{loss}`, the loss of the epoch's last batch: one batch's noise, not the "
        "epoch's progress, decides when the learning rate is cut"
    )
    message = per_batch_message
    requires_any_text = TRAINING_WORDS

    def end_file(self) -> None:
        loops = self.ctx.analysis(TrainingLoops)
        steps = list(loops.scheduler_steps())
        for loop, events, scheduler in steps:
            known = loops.scheduler_class(scheduler, loop)
            if known is not None and known.made.name == METRIC_SCHEDULER:
                self._check_plateau(loops.is_training_loop(loop), events, scheduler, "ReduceLROnPlateau" + known.passed)
                continue
            if scheduler.node.args or scheduler.node.keywords or _cadence_chosen(scheduler, loop, steps):
                continue
            # A list of several classes (`[warmup, decay]`): each item is judged, the first wrong one reported.
            for made, constructor, passed, sites, home in [known] if known is not None else loops.scheduler_items(scheduler):
                if made.name == METRIC_SCHEDULER:
                    continue
                unit = self._unit(made, constructor, home or self.ctx)
                if loops.is_training_loop(loop):
                    wrong = unit == "epochs" and self._is_batch_loop(loop)
                    message = self.per_batch_message
                else:
                    wrong = unit == "steps" and _holds_training_loop(events)
                    message = self.per_epoch_message
                if wrong:
                    cls = made.name.rsplit(".", 1)[-1] + passed
                    self.report(scheduler.at, message.format(scheduler=scheduler.key, where=scheduler.where, cls=cls), related=sites)
                    break

    def _check_plateau(self, per_batch: bool, events: list[Event], scheduler: Event, cls: str) -> None:
        """A plateau scheduler stepped with the loss of a batch: every batch, or once per epoch with the
        last batch's."""
        metric = _metric(scheduler.node)
        if metric is None:
            return
        before = events[: events.index(scheduler)]
        backwards = [e for e in before if e.kind is EventKind.BACKWARD and e.path == scheduler.path]
        if per_batch and _is_loss_of(metric, backwards):
            message = self.plateau_message.format(scheduler=scheduler.key, cls=cls, where=scheduler.where, loss=ast.unparse(metric))
            self.report(scheduler.at, message)
        elif not per_batch and scheduler.path is None and self._last_batch_loss(metric, [b for b in backwards if b.loops]):
            message = self.plateau_epoch_message.format(scheduler=scheduler.key, cls=cls, loss=ast.unparse(metric))
            self.report(scheduler.at, message)

    def _last_batch_loss(self, metric: ast.AST, backwards: list[Event]) -> bool:
        """Is `metric` a loss the batch loop backpropagates, each of its names bound only in that loop?"""
        if not _is_loss_of(metric, backwards):
            return False
        batch_loops = {g.node for b in backwards for g in b.loops}
        for name in (n for n in ast.walk(metric) if isinstance(n, ast.Name)):
            scope = self.ctx.scopes.enclosing_scope(name) or self.ctx.tree
            stores = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name.id]
            stores = [n for n in stores if isinstance(n.ctx, ast.Store)]
            if not stores or not all(batch_loops & set(self.ctx.scopes.ancestors(n)) for n in stores):
                return False
        return True

    def _unit(self, made: Scheduler, constructor: ast.Call, home) -> str | None:
        if made.per_step:
            return "steps"
        if made.name not in EPOCH_SIZED:
            return None
        position, keyword, counts_epochs = EPOCH_SIZED[made.name]
        size = call_argument(constructor, position, keyword)
        unit = _size_unit(size, counts_epochs) if size is not None else None
        # The value decides: `step_size=args.lr_step`, `int(cfg["epochs"] * 0.3)`, `**cfg["scheduler"]`.
        passed = passed_argument(constructor, position, keyword, NO_DEFAULT) if unit is None else None
        values = possible_constants(home, passed, self.ctx) if passed is not None else None
        return "epochs" if values and all(counts_epochs(v) for v in values) else unit

    def _is_batch_loop(self, loop: ast.AST) -> bool:
        """A loop (or comprehension) over a data loader, or a loop nested in an epoch loop of the same function."""
        iterated = loop.generators[0].iter if isinstance(loop, COMPREHENSION_NODES) else getattr(loop, "iter", None)
        if iterated is not None and any(w in word for word in _identifiers(iterated) for w in BATCH_WORDS):
            return True
        if isinstance(loop, ast.While) and any(STEP_WORDS.search(word) for word in _identifiers(loop.test)):
            return True  # `while it < cfg.max_iters:` counts optimizer steps
        for ancestor in self.ctx.scopes.ancestors(loop):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(ancestor, (ast.For, ast.AsyncFor)) and any("epoch" in w for w in _identifiers(ancestor.target)):
                return True
        return False


def _cadence_chosen(scheduler: Event, loop: ast.AST, steps) -> bool:
    """Is the cadence a setting: the step is conditional, and the same scheduler steps in another loop
    too (`if step_per_batch: scheduler.step()` in the batch loop, `if not step_per_batch:` per epoch), or
    it steps every so many batches (`if step % steps_per_epoch == 0:`)?"""
    if any(_periodic(guard.node) for guard in scheduler.conditions):
        return True
    return bool(scheduler.conditions) and any(
        other.key == scheduler.key and other_loop is not loop and other.conditions for other_loop, _, other in steps
    )


def _periodic(branch: ast.AST | None) -> bool:
    """Is `branch` an `if` whose test counts batches modulo something (`(i + 1) % len(loader) == 0`)?"""
    return isinstance(branch, ast.If) and any(is_modulo(n) for n in ast.walk(branch.test))


def _metric(call: ast.Call) -> ast.AST | None:
    """What `plateau.step(metric)` is given."""
    return call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "metrics"), None)


def _is_loss_of(metric: ast.AST, backwards: list[Event]) -> bool:
    """Is `metric` (`loss`, `loss.item()`) made of the losses of those backward calls only?"""
    names = {n.id for n in ast.walk(metric) if isinstance(n, ast.Name)}
    backpropagated = {n.id for b in backwards for n in ast.walk(_backpropagated(b.node)) if isinstance(n, ast.Name)}
    return bool(names) and names <= backpropagated


def _backpropagated(call: ast.Call) -> ast.AST:
    """The loss of a backward call: `loss` of `loss.backward()`, `scaler.scale(loss).backward()`,
    `accelerator.backward(loss)`."""
    if call.args:
        return call.args[0]
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else call.func
    return receiver.args[0] if isinstance(receiver, ast.Call) and receiver.args else receiver


def _holds_training_loop(events) -> bool:
    """Does a nested loop of the iteration hold both a backward and an optimizer step?"""
    backward_loops = {g for e in events if e.kind is EventKind.BACKWARD for g in e.loops}
    return any(set(e.loops) & backward_loops for e in events if e.kind is EventKind.STEP)


def _size_unit(size: ast.AST, counts_epochs) -> str | None:
    words = _identifiers(size)
    calls = [n for n in ast.walk(size) if isinstance(n, ast.Call)]
    if any(isinstance(c.func, ast.Name) and c.func.id == "len" for c in calls) or any(
        STEP_WORDS.search(word) for word in words
    ):
        return "steps"
    if calls:
        return None
    if words:
        return "epochs" if all("epoch" in word for word in words) else None
    numbers = [n.value for n in ast.walk(size) if isinstance(n, ast.Constant)]
    return "epochs" if numbers and all(counts_epochs(v) for v in numbers) else None


def _epoch_decay(value: object) -> bool:
    """A decay factor read as one per epoch: a number in (0, `LARGEST_EPOCH_DECAY`]. Near 1
    (`gamma=0.9995`) it is a deliberate per-step decay."""
    return type(value) in (int, float) and 0 < value <= LARGEST_EPOCH_DECAY


def _epoch_count(value: object) -> bool:
    """A literal length read as a number of epochs: a positive int no larger than `LARGEST_EPOCH_COUNT`
    (each of a list of milestones)."""
    if isinstance(value, tuple):
        return bool(value) and all(_epoch_count(v) for v in value)
    return type(value) is int and 0 < value <= LARGEST_EPOCH_COUNT


def _identifiers(node: ast.AST) -> list[str]:
    """The names in an expression, lower-cased; `args.epochs` counts as `epochs`."""
    if isinstance(node, ast.Attribute):
        return [node.attr.lower()]
    if isinstance(node, ast.Name):
        return [node.id.lower()]
    return [word for child in ast.iter_child_nodes(node) for word in _identifiers(child)]


# Schedulers whose cadence one argument tells: (position, keyword, does a constant value of it count epochs).
# Sizes usually count epochs; `ExponentialLR`'s decay per step does when it is far from 1.
EPOCH_SIZED = {
    TORCH_SCHEDULERS + "StepLR": (1, "step_size", _epoch_count),
    TORCH_SCHEDULERS + "MultiStepLR": (1, "milestones", _epoch_count),
    TORCH_SCHEDULERS + "CosineAnnealingLR": (1, "T_max", _epoch_count),
    TORCH_SCHEDULERS + "ExponentialLR": (1, "gamma", _epoch_decay),
}
