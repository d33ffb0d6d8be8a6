import ast

from mllint.analysis.loops import LOOP_NODES, TRAINING_WORDS, Event, EventKind, Iteration, TrainingLoops
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
    only in the non-AMP branch), or a clear of only some of the modules the optimizer updates
    (`encoder.zero_grad()` with `Adam(list(encoder.parameters()) + list(head.parameters()))`, param
    groups, `itertools.chain`). `scaler.unscale_(optimizer)`, `clip_grad_norm_` and `scaler.update()`
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

    partly_message = (
        "`{optimizer}` also updates the parameters of {missed}, which the iteration of the loop on line {line} "
        "never clears (only {cleared}): their gradients accumulate across steps"
    )

    def end_file(self) -> None:
        loops = self.ctx.analysis(TrainingLoops)
        reported: set[ast.AST] = set()
        for iteration in loops.loops:
            for optimizer in iteration.optimizers:
                if iteration.unknown(optimizer):
                    continue
                line = iteration.loop.lineno
                step = _uncleared_step(iteration, optimizer, iteration.clears(optimizer, strict=False))
                if step is not None:
                    message = self.message.format(optimizer=optimizer, where=step.where, line=line)
                else:
                    step, missed, cleared = self._partly_cleared_step(loops, iteration, optimizer)
                    message = self.partly_message.format(optimizer=optimizer, missed=missed, cleared=cleared, line=line)
                if step is not None and step.at not in reported:
                    reported.add(step.at)
                    self.report(step.at, message, self._fix(iteration, optimizer))

    def _partly_cleared_step(self, loops: TrainingLoops, iteration: Iteration, optimizer: str):
        """A step of an optimizer over several modules (`Adam([*enc.parameters(), *head.parameters()])`)
        whose iteration clears some of them (`enc.zero_grad()`) and never calls its own `zero_grad()`:
        (the step, the modules not cleared, the clears), or Nones."""
        own = iteration.clears(optimizer, strict=True)
        modules = [c for c in iteration.clears(optimizer, strict=False) if c not in own]
        keys = sorted({c.key for c in modules if c.key is not None})
        if not modules or any(c.key is None for c in modules):
            return None, None, None
        for step in iteration.steps(optimizer):
            owners = loops.parameter_owners(step)
            if not owners or not _uncleared(step, iteration, own):
                continue
            covered = {k: [o for o in owners if o == k or o.startswith(k + ".")] for k in keys}
            missed = sorted(o for o in owners if not any(o in found for found in covered.values()))
            if all(covered.values()) and missed:  # each clear is of a module the optimizer updates
                return step, _names(missed), _names(keys)
        return None, None, None

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


def _uncleared_step(iteration: Iteration, optimizer: str, clears: list[Event]) -> Event | None:
    return next((step for step in iteration.steps(optimizer) if _uncleared(step, iteration, clears)), None)


def _uncleared(step: Event, iteration: Iteration, clears: list[Event]) -> bool:
    """Is there a path through a backward and the step that none of `clears` is on? (each clear sits in
    the other arm of an `if` from the backward's or the step's)"""
    return any(
        not b.excludes(step) and all(c.excludes(b) or c.excludes(step) for c in clears)
        for b in iteration.of(EventKind.BACKWARD)
    )  # fmt: skip


def _names(texts) -> str:
    return ", ".join(f"`{t}`" for t in texts)
