"""What an exception handler around training does with the errors it catches (ML501): which exceptions are
broad, what an out-of-memory error runs in a handler and what the others run, whether a handler leaves
(re-raises, exits, or recovers from an out-of-memory error without a step on the failed batch's partial
gradients), the optimizer step it falls through to, the constant zero it puts in place of a backpropagated
loss, where the `try` stands (a training loop, a step function, a helper whose callers step anyway or skip
on its None result), and the handler of a decorator that runs the function it wraps.
"""
from __future__ import annotations

import ast
import re
from functools import cached_property

from mllint.analysis.facets.loop_events import Event, EventKind
from mllint.analysis.facets.loops import LOOP_NODES, TrainingLoops, loop_or_function
from mllint.analysis.facets.parameters import is_module
from mllint.analysis.facets.skipped_results import SkippedResults, backward_reads
from mllint.analysis.objects.constants import is_zero
from mllint.analysis.program.calls import CallResolver
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.names import callee_name
from mllint.analysis.syntax.scopes import FUNCTION_NODES, own_nodes, parameters
from mllint.analysis.syntax.tree import assignment_targets
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import ValueKinds

BROAD = frozenset({"Exception", "BaseException", "RuntimeError"})
BROAD_NAMES = frozenset(f"builtins.{name}" for name in BROAD)
PROCESS_EXITS = frozenset({"sys.exit", "os._exit", "os.abort"})
BUILTIN_EXITS = frozenset({"exit", "quit"})
OUT_OF_MEMORY_ERRORS = frozenset({"torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError"})
OUT_OF_MEMORY = "out of memory"  # in the message of torch's OOM errors ("CUDA out of memory. ...")
SKIPS = (ast.Continue, ast.Break, ast.Return)
# What a handler of out-of-memory errors calls to recover before it skips the batch: it frees the failed
# step's memory or clears its partial gradients.
RECOVERING = frozenset({"empty_cache", "zero_grad", "collect", "ipc_collect", "reset_peak_memory_stats"})
RECOVERING_TEXT = re.compile(rb"empty_cache|zero_grad|collect|reset_peak_memory_stats")  # what a helper must mention to be read
EXCEPT = re.compile(rb"except")  # what a module must mention for its decorators to be read


class HandledErrors:
    def __init__(self, ctx) -> None:
        self.ctx = ctx

    @cached_property
    def loops(self) -> TrainingLoops:
        return self.ctx.analysis(TrainingLoops)

    def broad(self, exception: ast.AST | None) -> bool:
        """A broad exception (bare, `Exception`, `BaseException`, `RuntimeError`); torch's out-of-memory
        errors count (every batch too large for the device is one, and the model's own), by any alias,
        also one a module of the project re-exports (`from utils import CudaOOM`), and in a tuple of
        classes however it is bound (`caught`), unless the handler recovers (`leaves`)."""
        if exception is None:
            return True
        return any(name in OUT_OF_MEMORY_ERRORS or name in BROAD_NAMES for name in self.caught(exception))

    def caught(self, exception: ast.AST, ctx=None, depth: int = 0) -> list[str | None]:
        """The qualified names of the classes an `except` clause (or an `isinstance` test) names, a builtin
        as `builtins.RuntimeError`, None for one not known: each item of a tuple, through names bound to a
        class or a tuple of them, local, module-level or of another module of the project
        (`OOM_ERRORS = (torch.cuda.OutOfMemoryError,)` in `utils.py`, `RETRY = (*OOM_ERRORS, TimeoutError)`)."""
        ctx = ctx or self.ctx
        if depth > MAX_DEPTH:
            return [None]
        if isinstance(exception, ast.Tuple | ast.List):
            items = [e.value if isinstance(e, ast.Starred) else e for e in exception.elts]
            return [name for item in items for name in self.caught(item, ctx, depth + 1)]
        if isinstance(exception, ast.Name):
            bound = ctx.analysis(ValueKinds).reaching_values(exception)
            if bound is not None and len(bound) == 1 and isinstance(bound[0], ast.Tuple | ast.List | ast.Name | ast.Attribute):
                return self.caught(bound[0], ctx, depth + 1)
            if ctx.qualified_name(exception) is None and not bound:
                return [f"builtins.{exception.id}"]
        view = self.ctx.analysis(ProjectView)
        name = view.library_name(ctx.qualified_name(exception))
        found = view.global_value(name) if name is not None else None
        if found is not None and isinstance(found[1], ast.Tuple | ast.List | ast.Name | ast.Attribute):
            return self.caught(found[1], found[0], depth + 1)
        return [name]

    def leaves(self, handler: ast.ExceptHandler, node: ast.Try) -> bool:
        """Does the handler re-raise or exit: anywhere in its body, or, where it singles out an
        out-of-memory error, on every path the other errors take? An out-of-memory handler that recovers
        leaves too, unless the optimizer then steps on the failed batch's partial gradients."""
        others = self.others_path(handler)
        if others is not None:  # a return on the out-of-memory path must not leave the step to a caller either
            path = self.out_of_memory_path(handler)
            returns = any(isinstance(n, ast.Return) for n in own_nodes(path))
            return self._always_leaves(others) and not (returns and self.step_after(node, path) is not None)
        if self.out_of_memory_only(handler) and self._recovers(handler.body) and self.step_after(node, handler.body) is None:
            return True
        if self.reraised_only(handler) is not None:
            return False
        return any(self.leaving(n) for n in own_nodes(handler.body)) or self.fails_after(handler, node)

    def fails_after(self, handler: ast.ExceptHandler, node: ast.AST) -> bool:
        """Does the run end with a failure after a handler that falls through: the statement right after the
        `try` raises or exits with an error status, or a later one does under a test of a name the handler
        sets (`crashed = True` ... `if crashed: sys.exit(1)`)?"""
        if any(isinstance(n, SKIPS) for n in own_nodes(handler.body)):
            return False
        flags = {n.id for n in own_nodes(handler.body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        after = _following(self.ctx.scopes.parent(node), node)
        if after and self._fails(after[:1]):
            return True
        return any(
            isinstance(s, ast.If) and flags & {n.id for n in ast.walk(s.test) if isinstance(n, ast.Name)} and self._fails(s.body)
            for s in after
        )  # fmt: skip

    def _fails(self, block: list[ast.stmt]) -> bool:
        """Does the block reach a `raise`, a non-zero exit or a `return` of a non-zero status (`return 1`)?"""
        for statement in block:
            value = statement.value if isinstance(statement, ast.Expr) else statement
            if isinstance(value, ast.Call) and self.leaving(value):
                status = value.args[0] if value.args else None
                if status is not None and not (isinstance(status, ast.Constant) and status.value in (0, None, False)):
                    return True
            elif isinstance(statement, ast.Raise) or isinstance(statement, ast.Return) and _error_status(statement.value):
                return True
        return False

    def reraised_only(self, handler: ast.ExceptHandler) -> tuple[ast.If, list[ast.stmt]] | None:
        """(the test, what every other error runs) for a handler that re-raises only the errors a test of the
        caught exception singles out (`if isinstance(exc, FloatingPointError): raise`, `if "nan" in str(e):
        raise`) and lets the others go on; None for any other handler (one that tests for out-of-memory errors:
        `others_path`)."""
        if handler.name is None or self.others_path(handler) is not None:
            return None
        for position, statement in enumerate(handler.body):
            if isinstance(statement, ast.If) and _singles_out(statement.test, handler.name):
                rest = statement.orelse + handler.body[position + 1 :]
                if self._always_leaves(statement.body) and not self._always_leaves(rest):
                    return statement, rest
                return None
        return None

    def out_of_memory_only(self, handler: ast.ExceptHandler) -> bool:
        """Does the handler catch torch's out-of-memory errors only (by any alias)?"""
        return handler.type is not None and all(name in OUT_OF_MEMORY_ERRORS for name in self.caught(handler.type))

    def out_of_memory_path(self, handler: ast.ExceptHandler) -> list[ast.stmt] | None:
        """The statements an out-of-memory error runs in a handler: all of one that catches only those, the
        arm of `if "out of memory" in str(e):` in one that tests for them; None in any other handler."""
        if self.out_of_memory_only(handler):
            return handler.body
        arms = self._arms(handler.body)
        return arms[0] if arms is not None else None

    def others_path(self, handler: ast.ExceptHandler) -> list[ast.stmt] | None:
        """The statements errors other than out-of-memory run, after `if "out of memory" in str(e):` or
        `if isinstance(e, torch.cuda.OutOfMemoryError):` (its `else` and what follows it), or in the body
        of `if "out of memory" not in str(e):` or `if not isinstance(e, ...)`; None when the handler tests
        no such thing."""
        arms = self._arms(handler.body)
        return arms[1] if arms is not None else None

    def step_after(self, node: ast.Try, path: list[ast.stmt]) -> Event | None:
        """The optimizer step a handler's `path` (what an out-of-memory error runs) of a `try` around a
        backward pass falls through to, in the same iteration or function, its partial gradients neither
        cleared (`zero_grad()`, `p.grad = None`, `del p.grad`) nor skipped (`continue`); a return from a
        step function skips nothing when a training loop that calls the function steps after the call
        without looking at its result. None if there is none."""
        if _clears_gradients(path) or not any(e.kind is EventKind.BACKWARD for e in self.loops.events_of_statements(node.body)):
            return None
        leaving = {type(n) for n in own_nodes(path) if isinstance(n, (*SKIPS, ast.Raise))}
        if leaving == {ast.Return} and not self.in_training_loop(node):
            function = self.ctx.scopes.enclosing_function(node)
            return self.ctx.analysis(SkippedResults).stepped_after(function) if function is not None else None
        if leaving:
            return None
        return next((e for e in self.loops.events_after(node) if e.kind is EventKind.STEP), None)

    def zero_loss(self, node: ast.Try, handler: ast.ExceptHandler) -> ast.AST | None:
        """The constant zero a handler puts in place of the loss the `try` computes (`loss =
        logits.sum() * 0.0`, `return torch.zeros(())`), when that loss is backpropagated next in the
        function, or returned by a function whose result is (by a caller, or by a library)."""
        values = self.ctx.analysis(ValueKinds)
        function = self.ctx.scopes.enclosing_function(node)
        computed = {t.id for n in own_nodes(node.body) if isinstance(n, (ast.Assign, ast.AugAssign)) for t in assignment_targets(n) if isinstance(t, ast.Name)}
        for statement in own_nodes(handler.body):
            if isinstance(statement, ast.Return) and statement.value is not None and is_zero(values, statement.value):
                if function is not None and self.ctx.analysis(SkippedResults).backpropagated(function):
                    return statement.value
            if not (isinstance(statement, ast.Assign) and is_zero(values, statement.value)):
                continue
            names = {t.id for t in statement.targets if isinstance(t, ast.Name)} & computed
            if names and self._loss_named(node, function, names):
                return statement.value
        return None

    def _loss_named(self, node: ast.Try, function: ast.AST | None, names: set[str]) -> bool:
        """Is one of `names` backpropagated after the `try`, or returned by a function whose result is?"""
        def named(node: ast.AST) -> bool:
            return isinstance(node, ast.Name) and node.id in names

        if backward_reads(self.ctx, function, named, after=node.lineno):
            return True
        scope = function or self.ctx.tree
        returned = [r for r in self.ctx.index.within(scope, ast.Return) if r.value is not None and self.ctx.scopes.enclosing_function(r) is function]
        reads = any(named(n) for r in returned for n in ast.walk(r.value))
        return reads and function is not None and self.ctx.analysis(SkippedResults).backpropagated(function)

    # Where the `try` stands.
    def in_training_loop(self, node: ast.AST) -> bool:
        """Is the innermost loop around `node` (in its function) a training loop?"""
        around = loop_or_function(self.ctx, node)
        return isinstance(around, LOOP_NODES) and self.loops.is_training_loop(around)

    def in_step_function(self, node: ast.AST) -> bool:
        """Is `node` in a function a training step runs (`do_batch(...)` called by the loop, a method
        Lightning's `training_step` calls), outside any loop of its own?"""
        function = self._loop_free_function(node)
        return function is not None and self.loops.runs_training_step(function)

    def stepped_by_caller(self, node: ast.AST) -> bool:
        """Is `node` in a function (outside any loop of its own) a training loop calls and then steps the
        optimizer after, here or in another module (`stepper.forward_backward(batch)`, `optimizer.step()`)?"""
        function = self._loop_free_function(node)
        return function is not None and self.ctx.analysis(SkippedResults).stepped_after(function) is not None

    def in_skipped_helper(self, node: ast.AST) -> bool:
        """Is `node` in a helper (outside any loop of its own) whose None result a training loop skips on
        (`loss = safe_forward(...)`, then `if loss is None: continue`), here or in another module?"""
        function = self._loop_free_function(node)
        return function is not None and self.ctx.analysis(SkippedResults).skipped_on_none(function) is not None

    def _loop_free_function(self, node: ast.AST) -> ast.AST | None:
        """The function around `node` when no loop of it is around `node`."""
        around = loop_or_function(self.ctx, node)
        return around if isinstance(around, FUNCTION_NODES) else None

    def runs_the_model(self, body: list[ast.stmt], events: list[Event]) -> bool:
        """Does the block (whose events are `events`) call a module (the forward pass, `self(batch)` in a
        module's own step) or backpropagate?"""
        calls = [n for n in own_nodes(body) if isinstance(n, ast.Call)]
        called_self = any(isinstance(c.func, ast.Name) and c.func.id == "self" for c in calls)
        return called_self or any(e.kind is EventKind.BACKWARD for e in events) or any(is_module(self.ctx, c.func) for c in calls)

    def swallowing_decorator(self, decorator: ast.AST, function: ast.AST) -> tuple[object, ast.ExceptHandler] | None:
        """(its context, the handler) of a decorator of the file or the project (or a decorator factory,
        `decorator` the name called) that calls the function it wraps (`fn(*args, **kwargs)` in its
        wrapper) under a `try` whose broad handler neither re-raises nor exits."""
        view = self.ctx.analysis(ProjectView) if self.ctx.project is not None else None
        callee = CallResolver(self.ctx, view).resolve(ast.Call(func=decorator, args=[], keywords=[]), at=function, followed=EXCEPT)
        if callee is None:
            return None
        handled = callee.ctx.analysis(HandledErrors)
        for node in ast.walk(callee.function):
            if not isinstance(node, (ast.Try, ast.TryStar)):
                continue
            functions = [a for a in callee.ctx.scopes.ancestors(node) if isinstance(a, FUNCTION_NODES)]
            wrapped = {a.arg for f in functions[1:] for a in parameters(f)}
            calls = [n for n in own_nodes(node.body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
            if not any(c.func.id in wrapped for c in calls):
                continue
            for handler in node.handlers:
                if handled.broad(handler.type) and not any(handled.leaving(n) for n in own_nodes(handler.body)):
                    return callee.ctx, handler
        return None

    def leaving(self, node: ast.AST) -> bool:
        """A `raise`, or a call that exits the process."""
        if isinstance(node, ast.Raise):
            return True
        return isinstance(node, ast.Call) and (
            self.ctx.qualified_name(node.func) in PROCESS_EXITS or isinstance(node.func, ast.Name) and node.func.id in BUILTIN_EXITS
        )

    def _always_leaves(self, block: list[ast.stmt]) -> bool:
        for statement in block:
            if isinstance(statement, ast.If) and self._always_leaves(statement.body) and self._always_leaves(statement.orelse):
                return True
            if self.leaving(statement.value if isinstance(statement, ast.Expr) else statement):
                return True
        return False

    def _recovers(self, block: list[ast.stmt]) -> bool:
        """`_recovers`, also through a helper of the project the handler calls (`free_memory(optimizer)`)."""
        if _recovers(block):
            return True
        resolver = CallResolver(self.ctx, self.ctx.analysis(ProjectView) if self.ctx.project is not None else None)
        calls = [n for n in own_nodes(block) if isinstance(n, ast.Call)]
        return any((callee := resolver.resolve(call, followed=RECOVERING_TEXT)) is not None and _recovers(callee.function.body) for call in calls)

    def _arms(self, block: list[ast.stmt]) -> tuple[list[ast.stmt], list[ast.stmt]] | None:
        """(what out-of-memory errors run, what the others run) after a test that singles them out."""
        for position, statement in enumerate(block):
            if not isinstance(statement, ast.If):
                continue
            test, negated = statement.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)):
                mentions = any(
                    isinstance(n, ast.Constant) and isinstance(n.value, str) and OUT_OF_MEMORY in n.value.lower()
                    for n in ast.walk(test.left)
                )
                negated ^= isinstance(test.ops[0], ast.NotIn)
            else:
                mentions = self._is_out_of_memory_test(test)
            if mentions:
                rest = statement.orelse + block[position + 1 :]
                return (rest, statement.body) if negated else (block[:position] + statement.body, rest)
        return None

    def _is_out_of_memory_test(self, test: ast.AST) -> bool:
        """`isinstance(e, torch.cuda.OutOfMemoryError)` (by any alias)."""
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"):
            return False
        return len(test.args) == 2 and all(name in OUT_OF_MEMORY_ERRORS for name in self.caught(test.args[1]))


def _singles_out(test: ast.AST, name: str) -> bool:
    """Is `test` true for some errors only, by the caught exception's class or message: `isinstance(e, X)`,
    `"nan" in str(e)` (not its negation)?"""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" and test.args:
        return isinstance(test.args[0], ast.Name) and test.args[0].id == name
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In):
        return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(test.comparators[0]))
    return False


def _clears_gradients(block: list[ast.stmt]) -> bool:
    """`optimizer.zero_grad()`, `p.grad = None` or `del p.grad` in the block."""
    return any(
        isinstance(n, ast.Call) and callee_name(n) == "zero_grad"
        or isinstance(n, (ast.Assign, ast.Delete)) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets)
        for n in own_nodes(block)
    )  # fmt: skip


def _recovers(block: list[ast.stmt]) -> bool:
    """Does an out-of-memory handler free the failed step's memory or clear its gradients
    (`torch.cuda.empty_cache()`, `optimizer.zero_grad()`, `p.grad = None`, `del loss`)?"""
    for node in own_nodes(block):
        if isinstance(node, ast.Call) and callee_name(node) in RECOVERING:
            return True
        if isinstance(node, ast.Delete):
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets):
            return True
    return False


def _following(parent: ast.AST | None, node: ast.AST) -> list[ast.stmt]:
    """The statements after `node` in the block of `parent` that holds it."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and node in block:
            return block[block.index(node) + 1 :]
    return []


def _error_status(value: ast.AST | None) -> bool:
    """`1`, `-1`: a non-zero integer status a script's `main()` returns to `sys.exit`."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    return isinstance(value, ast.Constant) and type(value.value) is int and value.value != 0
