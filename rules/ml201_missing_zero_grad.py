import ast

from mllint.analysis.loops import LOOP_NODES, TRAINING_WORDS, EventKind, Iteration, TrainingLoops
from mllint.findings import Applicability, Edit, Fix, Position, Severity
from mllint.rule import Rule


class MissingZeroGrad(Rule):
    """
    ## What it does
    Reports an optimizer step in a training loop whose iteration backpropagates and steps without
    clearing the gradients on the step's path: no `optimizer.zero_grad()`, `model.zero_grad()`,
    `p.grad = None` or function clearing what it is given (`pyro.infer.util.zero_grads(params)`)
    anywhere in the iteration (including the functions and methods of the file it calls,
    and the functions of the project's other modules: then the finding is at the call, and names the file
    and line of the step),
    or a clear only in the other arm of an `if` the step or a backward before it sits in (`zero_grad`
    only in the non-AMP branch). `scaler.unscale_(optimizer)`, `clip_grad_norm_` and `scaler.update()`
    do not clear gradients. Clearing anywhere in the iteration counts, before backward or after the step; gradient
    accumulation that clears under the same guard as the step, `optimizer.step(closure)` (LBFGS) and
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
    describe its first statement). It is unsafe: it changes the
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

    def end_file(self) -> None:
        reported: set[ast.AST] = set()
        for iteration in self.ctx.analysis(TrainingLoops).loops:
            for optimizer in iteration.optimizers:
                step = self._uncleared_step(iteration, optimizer)
                if step is not None and step.at not in reported:
                    reported.add(step.at)
                    message = self.message.format(optimizer=optimizer, where=step.where, line=iteration.loop.lineno)
                    self.report(step.at, message, self._fix(iteration, optimizer))

    def _uncleared_step(self, iteration: Iteration, optimizer: str):
        if iteration.unknown(optimizer):
            return None
        clears = iteration.clears(optimizer, strict=False)
        backwards = iteration.of(EventKind.BACKWARD)
        for step in iteration.steps(optimizer):
            # A path through a backward and the step that no clear is on: each clear sits in the other
            # arm of an `if` from the backward's or the step's.
            if any(not b.excludes(step) and all(c.excludes(b) or c.excludes(step) for c in clears) for b in backwards):
                return step
        return None

    def _fix(self, iteration: Iteration, optimizer: str) -> Fix | None:
        if not isinstance(iteration.loop, LOOP_NODES):
            return None  # a comprehension has no statement to clear in
        first = iteration.loop.body[0]
        line = self.ctx.source.line(first.lineno)
        indent = line[: first.col_offset]
        if "<" in optimizer or first.lineno == iteration.loop.lineno or indent.strip():
            return None
        # Above the comment lines that describe the first statement, not between them and it.
        loop = iteration.loop
        header_end = (loop.iter if isinstance(loop, (ast.For, ast.AsyncFor)) else loop.test).end_lineno
        top = first.lineno
        while top - 1 > header_end and self.ctx.source.line(top - 1).startswith(indent + "#"):
            top -= 1
        edit = Edit(Position(top, len(indent) + 1), Position(top, len(indent) + 1), f"{optimizer}.zero_grad()\n{indent}")
        return self.ctx.fix(f"Call `{optimizer}.zero_grad()` at the top of the iteration", Applicability.UNSAFE, edit)
