from mllint.analysis.loops import TRAINING_WORDS, LR_SCHEDULER_MODULE, EventKind, TrainingLoops
from mllint.rule import Rule

# Stepped with a metric, and exempt from PyTorch's order check.
METRIC_SCHEDULER = LR_SCHEDULER_MODULE + "ReduceLROnPlateau"


class SchedulerBeforeOptimizer(Rule):
    """
    ## What it does
    Reports `scheduler.step()` of a `torch.optim.lr_scheduler` scheduler that runs before the first
    `optimizer.step()` of the loop it sits in: at the top of the epoch loop before the batch loop, or
    before the step in the batch loop.

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
    message = "`{scheduler}` steps before `{optimizer}` ({place}): the schedule's first learning rate is skipped"
    requires_any_text = TRAINING_WORDS

    def end_file(self) -> None:
        loops = self.ctx.analysis(TrainingLoops)
        for loop, events, scheduler in loops.scheduler_steps():
            known = loops.scheduler_class(scheduler)
            if known is None or not known[0].startswith(LR_SCHEDULER_MODULE) or known[0] == METRIC_SCHEDULER:
                continue
            if scheduler.node.args or scheduler.node.keywords:
                continue  # `step(epoch)`: the schedule is positioned explicitly
            steps = [e for e in events if e.kind is EventKind.STEP]
            first = steps[0]
            if events.index(first) > events.index(scheduler) and scheduler.runs_whenever(first):
                message = self.message.format(scheduler=scheduler.key, optimizer=first.key, place=first.place)
                if known.passed:
                    message += f" (`{scheduler.key}` is {known.name.rsplit('.', 1)[-1]}{known.passed})"
                self.report(scheduler.node, message)
