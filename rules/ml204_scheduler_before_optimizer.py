import ast
from dataclasses import replace

from mllint.analysis.facets.loop_events import Event, EventKind, Guard
from mllint.analysis.facets.loops import TRAINING_WORDS, TrainingLoops
from mllint.rule import Rule


class SchedulerBeforeOptimizer(Rule):
    """
    ## What it does
    Reports `scheduler.step()` of a torch scheduler (`torch.optim.lr_scheduler`, `SWALR`, the
    `transformers` warm-up schedules) that runs before the first `optimizer.step()` of the loop it sits
    in: at the top of the epoch loop before the batch loop, before the step in the batch loop, or first
    in a `train_one_epoch(..., scheduler)` the epoch loop calls (the scheduler passed in by the loop; in
    another module of the project, the finding is at the call); a step in the other arm of an `if` the
    scheduler step sits in (a warm-up phase with its own optimizer) is not on its way. A check
    that the scheduler exists (`if scheduler is not None:`) around the step does not excuse it; a step
    under `warnings.catch_warnings()` (PyTorch's order warning silenced on purpose) is not reported.

    ## Why is this bad?
    Since PyTorch 1.1 the scheduler must step after the optimizer. Stepped first, it moves to its second
    value before the first update: the first learning rate of the schedule is never used (for StepLR the
    whole first period is shortened), and PyTorch only prints a warning.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    for epoch in range(2):
        scheduler.step()
        for x, y in data:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    for epoch in range(2):
        for x, y in data:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        scheduler.step()
    ```

    ## Fix safety
    There is no fix: the scheduler step has to move past the optimizer steps, often out of a nested loop.
    """

    code = "ML204"
    name = "scheduler-before-optimizer"
    message = "`{scheduler}` steps{where} before `{optimizer}` ({place}): the schedule's first learning rate is skipped"
    requires_any_text = TRAINING_WORDS

    def end_file(self) -> None:
        loops = self.ctx.analysis(TrainingLoops)
        for loop, events, scheduler in loops.scheduler_steps():
            known = loops.scheduler_class(scheduler, loop)
            if known is None or not known[0].torch_order:
                continue
            if scheduler.node.args or scheduler.node.keywords:
                continue  # `step(epoch)`: the schedule is positioned explicitly
            if self._warning_silenced(scheduler):
                continue  # under `warnings.catch_warnings()`: PyTorch's order warning silenced on purpose
            steps = [e for e in events if e.kind is EventKind.STEP and not e.excludes(scheduler)]  # on its path
            if not steps:
                continue
            first = steps[0]
            if events.index(first) > events.index(scheduler) and _unless_absent(scheduler).runs_whenever(first):
                where = scheduler.where
                message = self.message.format(scheduler=scheduler.key, where=where, optimizer=first.key, place=first.place)
                if known.passed:
                    message += f" (`{scheduler.key}` is {known.made.name.rsplit('.', 1)[-1]}{known.passed})"
                self.report(scheduler.at, message, related=known.sites)

    def _warning_silenced(self, scheduler: Event) -> bool:
        return scheduler.path is None and _silences_warnings(self.ctx, scheduler.node)


def _silences_warnings(ctx, node: ast.AST) -> bool:
    """Is `node` inside `with warnings.catch_warnings():`?"""
    contexts = [
        item.context_expr
        for ancestor in ctx.scopes.ancestors(node) if isinstance(ancestor, (ast.With, ast.AsyncWith))
        for item in ancestor.items
    ]  # fmt: skip
    return any(isinstance(c, ast.Call) and ctx.qualified_name(c.func) == "warnings.catch_warnings" for c in contexts)


def _unless_absent(scheduler: Event) -> Event:
    """The scheduler step without the guards that only check that the scheduler exists (`if scheduler:`,
    `if self.scheduler is not None:`): whenever it exists, it steps first."""
    guards = tuple(g for g in scheduler.guards if not _checks_existence(g, scheduler.key))
    return replace(scheduler, guards=guards)


def _checks_existence(guard: Guard, key: str | None) -> bool:
    return guard.existing is not None and ast.unparse(guard.existing) == key
