"""What the training loops that call a step helper do after it fails (ML501), in this module or another:
skip on its result (`loss = safe_forward(model, x, y)`, then `if loss is None: continue`: a handler in
the helper that returns None makes every error of its body a skipped batch), or step the optimizer anyway
without looking at it (`tr_loss += self.training_step(batch).item()`, then `optimizer.step()`: a handler
that returns early from a failed backward leaves its partial gradients to that step).
"""
from __future__ import annotations

import ast
from dataclasses import replace

from mllint.analysis.facets.gradients import backward_loss, managed_losses
from mllint.analysis.facets.loop_events import Event, EventKind
from mllint.analysis.facets.loops import EXITS, LOOP_NODES, TrainingLoops, loop_or_function
from mllint.analysis.program.callers import Callers
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.folding import existence_test
from mllint.analysis.syntax.names import callee_name
from mllint.analysis.syntax.tree import assignment_targets


class SkippedResults:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._skipped: dict[ast.AST, tuple[object, ast.AST] | None] = {}
        self._stepped: dict[ast.AST, Event | None] = {}

    def skipped_on_none(self, function: ast.AST) -> tuple[object, ast.AST] | None:
        """(the caller's context, its skip) for a call of `function` in a training loop whose result, when
        None (or false), skips the rest of the iteration (`continue`); None when no call site does."""
        if function not in self._skipped:
            sites = self.ctx.analysis(Callers).sites(function)
            self._skipped[function] = next((s for caller, call in sites if (s := _skip_after(caller, call)) is not None), None)
        return self._skipped[function]

    def stepped_after(self, function: ast.AST) -> Event | None:
        """The optimizer step a loop that calls `function` runs after the call in the same iteration (a
        training loop, since `function` backpropagates), with no clear of the gradients before it and no
        test of the call's result (an event of another file names that file)."""
        if function not in self._stepped:
            sites = self.ctx.analysis(Callers).sites(function)
            self._stepped[function] = next((s for caller, call in sites if (s := self._step_after(caller, call)) is not None), None)
        return self._stepped[function]

    def _step_after(self, caller, call: ast.Call) -> Event | None:
        statement = next(a for a in (call, *caller.scopes.ancestors(call)) if isinstance(a, ast.stmt))
        loop = loop_or_function(caller, statement)
        if not isinstance(loop, LOOP_NODES):
            return None
        results = {t.id for t in assignment_targets(statement) if isinstance(t, ast.Name)} if isinstance(statement, ast.Assign) else set()
        tests = [  # `if out is None:` after `out = f(...)`, or `if f(...) is None:`
            t for t in caller.index.within(loop, ast.If)
            if any(n is call or isinstance(n, ast.Name) and n.id in results for n in ast.walk(t.test))
        ]  # fmt: skip
        if any(isinstance(n, EXITS) or isinstance(n, ast.Call) and callee_name(n) == "zero_grad" for t in tests for n in ast.walk(t)):
            return None  # the loop skips the failed batch, or clears its gradients
        for event in caller.analysis(TrainingLoops).events_after(statement):
            if event.kind is EventKind.CLEAR:
                return None
            if event.kind is EventKind.STEP:
                if any(g.node in tests for g in event.guards):
                    return None  # `if loss is not None: optimizer.step()`
                return event if caller is self.ctx else replace(event, path=self._display(caller))
        return None

    def backpropagated(self, function: ast.AST) -> bool:
        """Is what `function` returns a loss that is backpropagated: by a library (`compute_loss`,
        `training_step`), or by a caller (`trainer.compute_loss(model, batch).backward()`, `loss = f(...)`
        then `loss.backward()`)?"""
        if any(self.ctx.scopes.enclosing_function(r) is function for r, _ in managed_losses(self.ctx)):
            return True
        return any(_backward_reads_result(caller, call) for caller, call in self.ctx.analysis(Callers).sites(function))

    def _display(self, caller) -> str:
        return self.ctx.analysis(ProjectView).display_path(caller.real_path or caller.path)


def _skip_after(caller, call: ast.Call) -> tuple[object, ast.AST] | None:
    statement = caller.scopes.parent(call)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return None
    loop = loop_or_function(caller, statement)
    if not isinstance(loop, LOOP_NODES) or not caller.analysis(TrainingLoops).is_training_loop(loop):
        return None
    name = statement.targets[0].id
    for test in caller.index.within(loop, ast.If):
        if test.lineno > statement.lineno and _is_failed(test.test, name) and any(isinstance(s, ast.Continue) for s in test.body):
            return caller, test
    return None


def _backward_reads_result(caller, call: ast.Call) -> bool:
    """Is the call's result (or the name it is assigned to) what a backward of its function starts from?"""
    statement = caller.scopes.parent(call)
    names = {t.id for t in assignment_targets(statement) if isinstance(t, ast.Name)} if isinstance(statement, ast.Assign) else set()

    def read(node: ast.AST) -> bool:
        return node is call or isinstance(node, ast.Name) and node.id in names

    return backward_reads(caller, caller.scopes.enclosing_function(call), read)


def backward_reads(ctx, function: ast.AST | None, read, after: int = 0) -> bool:
    """Does a backward pass of `function` (None: the module level and every function) on a line after
    `after` start from a loss with a node `read` accepts?"""
    for backward in ctx.index.within(function or ctx.tree, ast.Call):
        loss = backward_loss(ctx, backward) if backward.lineno > after else None
        if loss is not None and any(read(n) for n in ast.walk(loss)):
            return True
    return False


def _is_failed(test: ast.AST, name: str) -> bool:
    """`name is None`, `not name`."""
    tested = existence_test(test)
    return tested is not None and not tested[1] and isinstance(tested[0], ast.Name) and tested[0].id == name
