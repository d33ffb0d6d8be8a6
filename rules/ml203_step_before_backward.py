from mllint.analysis.facets.loop_events import EventKind
from mllint.analysis.facets.loops import TRAINING_WORDS, TrainingLoops
from mllint.findings import Severity
from mllint.rule import Rule


class StepBeforeBackward(Rule):
    """
    ## What it does
    Reports an optimizer step that comes before every `backward()` of its training iteration: the
    iteration steps first and computes its gradients afterwards.

    ## Why is this bad?
    The step applies what `.grad` holds when it runs: the previous iteration's gradients, or nothing at
    all when they were cleared in between (the usual `zero_grad(); step(); backward()` reordering).
    The last batch's gradients are never applied, and with a clear before the step the model never
    learns. No error is raised.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    for x, y in data:
        optimizer.zero_grad()
        optimizer.step()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
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
    There is no fix: moving the step changes which statements see the updated parameters.
    """

    code = "ML203"
    name = "step-before-backward"
    message = "`{optimizer}` steps{where} before the iteration's `backward()` ({place}): the step applies stale or no gradients"
    severity = Severity.ERROR
    requires_any_text = TRAINING_WORDS

    def end_file(self) -> None:
        reported = set()
        for iteration in self.ctx.analysis(TrainingLoops).loops:
            events = iteration.events
            for optimizer in iteration.optimizers:
                steps = iteration.steps(optimizer)
                if iteration.unknown(optimizer) or steps[0].at in reported:
                    continue
                first = steps[0]
                before = events[: events.index(first)]
                after = events[events.index(first) + 1 :]
                if any(e.kind is EventKind.BACKWARD for e in before):
                    continue
                backward = next(
                    (b for b in after if b.kind is EventKind.BACKWARD and b.runs_whenever(first) and first.runs_whenever(b)),
                    None,
                )
                if backward is not None:
                    reported.add(first.at)
                    message = self.message.format(optimizer=optimizer, where=first.where, place=backward.place)
                    self.report(first.at, message)
