import ast
import re

from mllint.analysis.syntax.names import callee_name
from mllint.analysis.facets.gradients import backward_loss
from mllint.analysis.facets.loop_events import EventKind
from mllint.analysis.facets.loops import LOOP_NODES, TrainingLoops
from mllint.analysis.facets.parameters import is_module
from mllint.analysis.facets.skipped_results import SkippedResults
from mllint.analysis.program.calls import CallResolver
from mllint.analysis.program.project import ProjectView
from mllint.analysis.syntax.scopes import FUNCTION_NODES, own_nodes, parameters
from mllint.analysis.objects.constants import is_zero
from mllint.analysis.syntax.tree import assignment_targets
from mllint.analysis.values.handlers import Handlers
from mllint.analysis.values.values import ValueKinds
from mllint.rule import Rule

BROAD = frozenset({"Exception", "BaseException", "RuntimeError"})
EXITS = frozenset({"sys.exit", "os._exit", "os.abort"})
BUILTIN_EXITS = frozenset({"exit", "quit"})
OUT_OF_MEMORY_ERRORS = frozenset({"torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError"})
EXCEPT = re.compile(rb"except")  # what a module must mention for its decorators to be read
SKIPS = (ast.Continue, ast.Break, ast.Return)
OUT_OF_MEMORY = "out of memory"  # in the message of torch's OOM errors ("CUDA out of memory. ...")
# What a handler of out-of-memory errors calls to recover before it skips the batch: it frees the failed
# step's memory or clears its partial gradients.
RECOVERING = frozenset({"empty_cache", "zero_grad", "collect", "ipc_collect", "reset_peak_memory_stats"})
RECOVERING_TEXT = re.compile(rb"empty_cache|zero_grad|collect|reset_peak_memory_stats")  # what a helper must mention to be read


class TrainingErrorSwallowed(Rule):
    """
    ## What it does
    Reports an exception handler for a broad exception (bare `except:`, `Exception`, `BaseException`,
    `RuntimeError`) that does not re-raise, on a `try` whose body trains: it runs a backward pass and
    an optimizer step, directly, in a loop, or through functions of the file it calls. Also, in a
    training loop or in a function a training step runs (a `do_batch` helper the loop calls, a method a
    `training_step` calls), a handler on a `try` around the forward and backward pass (`loss.backward()`,
    an optimizer wrapper's `optim.backward(loss)`), whatever it does next, and one on a `try` around
    the forward pass alone that skips the batch (`continue`, or `return` from the step): every error of
    the model becomes a skipped batch. So does such a handler in a helper that returns None (or falls
    through to it) when a training loop, here or in another module, skips on its None result (`loss =
    safe_forward(model, batch)`, then `if loss is None: continue`); a caller that does not check would
    fail on the None, and is not reported. Handlers that re-raise (`raise`,
    `raise X from e`), exit the process, or catch only `KeyboardInterrupt` (to save a checkpoint) are
    not reported; nor are `finally` blocks. `except RuntimeError` around training under
    `ddp_model.join(throw_on_early_termination=True)`, which raises one on purpose when another rank
    runs out of data, is reported for the other RuntimeErrors it hides. `with contextlib.suppress(E):` (by
    any import of `suppress`) is a handler `except E: pass` around its body, reported at the `with`. A handler that inspects an out-of-memory error
    (`if "out of memory" in str(e):`, `if isinstance(e, torch.cuda.OutOfMemoryError):`) must re-raise every other error on every path: one that raises
    them only sometimes (`else: if not distributed: raise`) is reported, and so is its out-of-memory arm
    when it lets the optimizer step on the failed batch's partial gradients, as below. A handler of torch's out-of-memory
    errors (`torch.OutOfMemoryError`, `torch.cuda.OutOfMemoryError`, by any alias, also one a module of the project re-exports: `from utils import CudaOOM`) counts as broad: it is
    reported when it neither re-raises nor recovers (frees the step's memory with `torch.cuda.empty_cache()`,
    `gc.collect()` or `del`, or clears its gradients with `zero_grad()`, `p.grad = None` or `del p.grad`), and when it
    falls through to the optimizer's step with the failed batch's partial gradients (no `continue` or
    `return`, no clear), however it frees memory; a `return` from a step function skips nothing when
    the loop that calls it (here or in another module) steps the optimizer after the call without
    looking at its result or clearing the gradients (`tr_loss += self.training_step(batch).item()`, then
    `optimizer.step()` every few batches). A handler that puts a constant zero in place of the loss
    its `try` computes (`loss = torch.zeros(())`, `loss = logits.sum() * 0.0`, `return
    torch.tensor(0.0)`), when that loss is then backpropagated (in the function, by the caller of a
    helper returning it, or by the library for `compute_loss`), is reported too: the step goes on. A function that backpropagates and then steps is a
    training step wherever it is called from (`map(trainer.train_step, loader)` in another module). A
    training function wrapped by a decorator of the file or the project (`@safe`, `@retry(times=3)`) whose
    wrapper calls it under a broad handler that does not re-raise is reported at the decorator.

    ## Why is this bad?
    A NaN assertion, a shape error, an out-of-memory error or a bug in the loop is caught and printed
    (or passed over), and the script goes on as if training had finished: it saves and reports a model
    trained for a fraction of the run, or not at all, with exit status 0.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    try:
        for step in range(3):
            optimizer.zero_grad()
            loss = model(torch.randn(4, 3)).pow(2).mean() * float("nan")
            assert not torch.isnan(loss), "loss is NaN"
            loss.backward()
            optimizer.step()
    except Exception as error:
        print(f"training stopped: {error}")
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    try:
        for step in range(3):
            optimizer.zero_grad()
            loss = model(torch.randn(4, 3)).pow(2).mean() * float("nan")
            assert not torch.isnan(loss), "loss is NaN"
            loss.backward()
            optimizer.step()
    except Exception as error:
        print(f"training stopped: {error}")
        raise
    ```

    ## Fix safety
    There is no fix: whether to re-raise, exit with an error status or handle a specific exception is
    for the author to decide.
    """

    code = "ML501"
    name = "training-error-swallowed"
    message = "`{handler}` catches every error of the training {what} and does not re-raise: a crash becomes a finished run"
    requires_any_text = ("except", "@", "suppress")  # the training may be in another module (`trainer.fit()`), the handler in a decorator

    def visit_Try(self, node: ast.Try | ast.With) -> None:
        """A `try`, or a `with contextlib.suppress(E):` (a handler `except E: pass` around its body)."""
        written = self.ctx.analysis(Handlers).of(node)
        if not written:
            return
        loops = self.ctx.analysis(TrainingLoops)
        events = loops.events_of_statements(node.body)
        steps = [e for e in events if e.kind is EventKind.STEP]
        backward = any(e.kind is EventKind.BACKWARD for e in events)
        handlers = [h for h in written if _broad(self.ctx, h.type) and not self._leaves(h, node)]
        zeros = {h: zero for h in handlers if (zero := self._zero_loss(node, h)) is not None}
        for handler, zero in zeros.items():
            message = (
                f"`{self._written(handler)}` replaces the loss by a constant (`{self.ctx.text(zero)}`) on every "
                "error of its computation and does not re-raise: the step goes on, a broken model trains on "
                "nothing, and the run reports success"
            )
            self.report(handler, message)
        handlers = [h for h in handlers if h not in zeros]
        in_loop = self._in_training_loop(node, loops)
        in_step = not in_loop and self._in_step_function(node, loops)
        if steps and backward:
            what = "loop" if any(e.loops for e in steps) else "step"
            for handler in handlers:
                self._report(node, handler, self.message.format(handler=self._written(handler), what=what), what)
        elif backward and (in_loop or in_step or self._stepped_by_caller(node)):
            for handler in handlers:
                message = (
                    f"`{self._written(handler)}` drops the batch on every error of the forward and backward pass of "
                    "the training step and does not re-raise: a broken model trains on nothing, and the run reports success"
                )
                self._report(node, handler, message, "step")
        elif handlers and self._runs_the_model(node.body, events) and (in_loop or in_step or self._in_skipped_helper(node)):
            skips = (ast.Continue,) if in_loop else (ast.Continue, ast.Return)
            for handler in handlers:
                partial = _other_than_out_of_memory(self.ctx, handler.body) is not None
                returns_none = not (in_loop or in_step) and _returns_none(handler)  # the caller skips on None
                if partial or returns_none or any(isinstance(n, skips) for n in own_nodes(handler.body)):
                    message = (
                        f"`{self._written(handler)}` skips the batch on every error of the training step and does "
                        "not re-raise: a broken model trains on nothing, and the run reports success"
                    )
                    self._report(node, handler, message, "step")

    def _zero_loss(self, node: ast.Try, handler: ast.ExceptHandler) -> ast.AST | None:
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
        scope = function or self.ctx.tree
        for call in self.ctx.index.within(scope, ast.Call):
            loss = backward_loss(self.ctx, call) if call.lineno > node.lineno else None
            if loss is not None and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(loss)):
                return True
        returned = [r for r in self.ctx.index.within(scope, ast.Return) if r.value is not None and self.ctx.scopes.enclosing_function(r) is function]
        reads = any(isinstance(n, ast.Name) and n.id in names for r in returned for n in ast.walk(r.value))
        return reads and function is not None and self.ctx.analysis(SkippedResults).backpropagated(function)

    def _report(self, node: ast.Try, handler: ast.ExceptHandler, message: str, what: str) -> None:
        """Report the handler; one that singles out out-of-memory errors is told which path lets the others
        pass, and an `except RuntimeError` meant for a DDP join's early termination what else it hides."""
        path = _out_of_memory_path(self.ctx, handler)
        step = self._step_after(node, path) if path is not None else None
        if step is not None and any(isinstance(n, ast.Return) for n in own_nodes(path)):
            message = (
                f"`{self._written(handler)}` returns from the step, but the training loop that calls it goes on to "
                f"`{step.text(self.ctx)}` ({step.place}) with the failed batch's partial gradients, and does not "
                "re-raise: the step applies them, and the run reports success on failed batches"
            )
        elif step is not None:
            message = (
                f"`{self._written(handler)}` lets the step go on to `{step.text(self.ctx)}`{step.where} "
                f"({step.place}) with the failed batch's partial gradients, and does not re-raise: the "
                "step applies them, and the run reports success on failed batches"
            )
        elif _out_of_memory_only(self.ctx, handler):
            message = (
                f"`{self._written(handler)}` drops the batch without freeing its memory or clearing its partial "
                "gradients, and does not re-raise: the failed step's tensors stay allocated, its gradients "
                "leak into the next step, and the run reports success on skipped batches"
            )
        elif _other_than_out_of_memory(self.ctx, handler.body) is not None:
            message = (
                f"`{self._written(handler)}` handles out-of-memory errors but does not re-raise "
                f"every other error on every path: there a crash of the training {what} becomes a finished run"
            )
        elif _only_runtime_error(handler) and _joins_uneven_inputs(node.body):
            message = (
                "`except RuntimeError` is meant for the early termination `join(throw_on_early_termination=True)` "
                f"raises, but it also catches every other RuntimeError of the training {what} (out of memory, "
                "shapes, CUDA) and does not re-raise: a crash ends the epoch early, silently"
            )
        self.report(handler, message)

    visit_TryStar = visit_With = visit_AsyncWith = visit_Try

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        """A training function decorated by a wrapper that swallows its errors (`@safe` of utils.py)."""
        decorators = [d for d in node.decorator_list if isinstance(_called(d), (ast.Name, ast.Attribute))]
        if not decorators:
            return
        events = self.ctx.analysis(TrainingLoops).events_of_statements(node.body)
        if not ({EventKind.BACKWARD, EventKind.STEP} <= {e.kind for e in events}):
            return
        view = self.ctx.analysis(ProjectView) if self.ctx.project is not None else None
        resolver = CallResolver(self.ctx, view)
        for decorator in decorators:
            callee = resolver.resolve(ast.Call(func=_called(decorator), args=[], keywords=[]), at=node, followed=EXCEPT)
            handler = _swallowing_wrapper(callee.ctx, callee.function) if callee is not None else None
            if handler is None:
                continue
            written = f"except {callee.ctx.text(handler.type)}" if handler.type is not None else "except"
            where = f"line {handler.lineno}" if callee.ctx is self.ctx else f"{view.display_path(callee.ctx.real_path or callee.ctx.path)}:{handler.lineno}"
            self.report(
                decorator,
                f"`@{self.ctx.text(_called(decorator))}` runs `{node.name}` under `{written}` ({where}), which does not "
                "re-raise: a crash of the training becomes a skipped call and a finished run",
            )

    visit_AsyncFunctionDef = visit_FunctionDef

    def _written(self, handler: ast.ExceptHandler) -> str:
        suppressor = self.ctx.analysis(Handlers).suppressor(handler)
        if suppressor is not None:
            return f"with {self.ctx.text(suppressor)}"
        return f"except {self.ctx.text(handler.type)}" if handler.type is not None else "except"

    def _in_training_loop(self, node: ast.AST, loops: TrainingLoops) -> bool:
        """Is the innermost loop around `node` (in its function) a training loop?"""
        for ancestor in self.ctx.scopes.ancestors(node):
            if isinstance(ancestor, (*FUNCTION_NODES, ast.ClassDef)):
                return False
            if isinstance(ancestor, LOOP_NODES):
                return loops.is_training_loop(ancestor)
        return False

    def _in_step_function(self, node: ast.AST, loops: TrainingLoops) -> bool:
        """Is `node` in a function a training step runs (`do_batch(...)` called by the loop, a method
        Lightning's `training_step` calls), outside any loop of its own?"""
        function = self._loop_free_function(node)
        return function is not None and loops.runs_training_step(function)

    def _stepped_by_caller(self, node: ast.AST) -> bool:
        """Is `node` in a function (outside any loop of its own) a training loop calls and then steps the
        optimizer after, here or in another module (`stepper.forward_backward(batch)`, `optimizer.step()`)?"""
        function = self._loop_free_function(node)
        return function is not None and self.ctx.analysis(SkippedResults).stepped_after(function) is not None

    def _in_skipped_helper(self, node: ast.AST) -> bool:
        """Is `node` in a helper (outside any loop of its own) whose None result a training loop skips on
        (`loss = safe_forward(...)`, then `if loss is None: continue`), here or in another module?"""
        function = self._loop_free_function(node)
        return function is not None and self.ctx.analysis(SkippedResults).skipped_on_none(function) is not None

    def _loop_free_function(self, node: ast.AST) -> ast.AST | None:
        """The function around `node` when no loop of it is around `node`."""
        for ancestor in self.ctx.scopes.ancestors(node):
            if isinstance(ancestor, LOOP_NODES):
                return None
            if isinstance(ancestor, FUNCTION_NODES):
                return ancestor
        return None

    def _runs_the_model(self, body: list[ast.stmt], events) -> bool:
        """Does the block call a module (the forward pass, `self(batch)` in a module's own step) or
        backpropagate?"""
        calls = [n for n in own_nodes(body) if isinstance(n, ast.Call)]
        called_self = any(isinstance(c.func, ast.Name) and c.func.id == "self" for c in calls)
        return called_self or any(e.kind is EventKind.BACKWARD for e in events) or any(is_module(self.ctx, c.func) for c in calls)

    def _leaves(self, handler: ast.ExceptHandler, node: ast.Try) -> bool:
        """Does the handler re-raise or exit: anywhere in its body, or, where it singles out an
        out-of-memory error, on every path the other errors take? An out-of-memory handler that recovers
        leaves too, unless the optimizer then steps on the failed batch's partial gradients."""
        others = _other_than_out_of_memory(self.ctx, handler.body)
        if others is not None:  # the out-of-memory path must not let the step go on either
            return self._always_leaves(others) and self._step_after(node, _out_of_memory_path(self.ctx, handler)) is None
        if _out_of_memory_only(self.ctx, handler) and self._recovers(handler.body) and self._step_after(node, handler.body) is None:
            return True
        return any(_leaving(self.ctx, node) for node in own_nodes(handler.body))

    def _recovers(self, block: list[ast.stmt]) -> bool:
        """`_recovers`, also through a helper of the project the handler calls (`free_memory(optimizer)`)."""
        if _recovers(block):
            return True
        resolver = CallResolver(self.ctx, self.ctx.analysis(ProjectView) if self.ctx.project is not None else None)
        calls = [n for n in own_nodes(block) if isinstance(n, ast.Call)]
        return any((callee := resolver.resolve(call, followed=RECOVERING_TEXT)) is not None and _recovers(callee.function.body) for call in calls)

    def _step_after(self, node: ast.Try, path: list[ast.stmt]):
        """The optimizer step a handler's `path` (its statements an out-of-memory error runs) of a `try`
        around a backward pass falls through to, in the same iteration or function, its partial gradients
        neither cleared (`zero_grad()`, `p.grad = None`, `del p.grad`) nor skipped (`continue`); a return
        from a step function skips nothing when a training loop that calls the function steps after the
        call without looking at its result. None if there is none."""
        loops = self.ctx.analysis(TrainingLoops)
        if _clears_gradients(path) or not any(e.kind is EventKind.BACKWARD for e in loops.events_of_statements(node.body)):
            return None
        leaving = {type(n) for n in own_nodes(path) if isinstance(n, (*SKIPS, ast.Raise))}
        if leaving == {ast.Return} and not self._in_training_loop(node, loops):
            function = self.ctx.scopes.enclosing_function(node)
            return self.ctx.analysis(SkippedResults).stepped_after(function) if function is not None else None
        if leaving:
            return None
        return next((e for e in loops.events_after(node) if e.kind is EventKind.STEP), None)

    def _always_leaves(self, block: list[ast.stmt]) -> bool:
        for statement in block:
            if isinstance(statement, ast.If) and self._always_leaves(statement.body) and self._always_leaves(statement.orelse):
                return True
            if _leaving(self.ctx, statement.value if isinstance(statement, ast.Expr) else statement):
                return True
        return False

def _returns_none(handler: ast.ExceptHandler) -> bool:
    """Does the handler return None (`return`, `return None`), or fall out of the `try` without returning?"""
    returns = [n for n in own_nodes(handler.body) if isinstance(n, ast.Return)]
    return all(r.value is None or isinstance(r.value, ast.Constant) and r.value.value is None for r in returns)


def _broad(ctx, exception: ast.AST | None) -> bool:
    """A broad exception; torch's out-of-memory errors count (every batch too large for the device is
    one, and the model's own), unless the handler recovers (`_leaves`)."""
    if exception is None:
        return True
    if isinstance(exception, ast.Tuple):
        return any(_broad(ctx, e) for e in exception.elts)
    if _library_name(ctx, exception) in OUT_OF_MEMORY_ERRORS:
        return True
    if isinstance(exception, ast.Name):
        return exception.id in BROAD and ctx.qualified_name(exception) is None
    return _library_name(ctx, exception) in {f"builtins.{name}" for name in BROAD}


def _library_name(ctx, node: ast.AST) -> str | None:
    """The qualified name of an exception class, through the project's re-exports (`from utils import CudaOOM`)."""
    return ctx.analysis(ProjectView).library_name(ctx.qualified_name(node))


def _leaving(ctx, node: ast.AST) -> bool:
    """A `raise`, or a call that exits the process."""
    if isinstance(node, ast.Raise):
        return True
    return isinstance(node, ast.Call) and (
        ctx.qualified_name(node.func) in EXITS or isinstance(node.func, ast.Name) and node.func.id in BUILTIN_EXITS
    )


def _called(decorator: ast.AST) -> ast.AST:
    """`guard` of `@guard` and of the factory call `@guard(retries=3)`."""
    return decorator.func if isinstance(decorator, ast.Call) else decorator


def _swallowing_wrapper(ctx, decorator: ast.AST) -> ast.ExceptHandler | None:
    """The handler of a decorator (or decorator factory) that calls the function it wraps (`fn(*args,
    **kwargs)` in its wrapper) under a `try` whose broad handler neither re-raises nor exits."""
    for node in ast.walk(decorator):
        if not isinstance(node, (ast.Try, ast.TryStar)):
            continue
        functions = [a for a in ctx.scopes.ancestors(node) if isinstance(a, FUNCTION_NODES)]
        wrapped = {a.arg for f in functions[1:] for a in parameters(f)}
        calls = [n for n in own_nodes(node.body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        if not any(c.func.id in wrapped for c in calls):
            continue
        for handler in node.handlers:
            if _broad(ctx, handler.type) and not any(_leaving(ctx, n) for n in own_nodes(handler.body)):
                return handler
    return None


def _other_than_out_of_memory(ctx, block: list[ast.stmt]) -> list[ast.stmt] | None:
    """The statements errors other than out-of-memory run, after `if "out of memory" in str(e):` or
    `if isinstance(e, torch.cuda.OutOfMemoryError):` (its `else` and what follows it), or in the body of
    `if "out of memory" not in str(e):` or `if not isinstance(e, ...)`; None when the block tests no such thing."""
    arms = _arms(ctx, block)
    return arms[1] if arms is not None else None


def _out_of_memory_path(ctx, handler: ast.ExceptHandler) -> list[ast.stmt] | None:
    """The statements an out-of-memory error runs in a handler: all of one that catches only those, the
    arm of `if "out of memory" in str(e):` in one that tests for them; None in any other handler."""
    if _out_of_memory_only(ctx, handler):
        return handler.body
    arms = _arms(ctx, handler.body)
    return arms[0] if arms is not None else None


def _arms(ctx, block: list[ast.stmt]) -> tuple[list[ast.stmt], list[ast.stmt]] | None:
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
            mentions = _is_out_of_memory_test(ctx, test)
        if mentions:
            rest = statement.orelse + block[position + 1 :]
            return (rest, statement.body) if negated else (block[:position] + statement.body, rest)
    return None


def _is_out_of_memory_test(ctx, test: ast.AST) -> bool:
    """`isinstance(e, torch.cuda.OutOfMemoryError)` (by any alias)."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"):
        return False
    classes = test.args[1:2]
    classes = classes[0].elts if classes and isinstance(classes[0], ast.Tuple) else classes
    return bool(classes) and all(_library_name(ctx, c) in OUT_OF_MEMORY_ERRORS for c in classes)


def _out_of_memory_only(ctx, handler: ast.ExceptHandler) -> bool:
    """Does the handler catch torch's out-of-memory errors only (by any alias)?"""
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return all(c is not None and _library_name(ctx, c) in OUT_OF_MEMORY_ERRORS for c in caught)


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


def _joins_uneven_inputs(block: list[ast.stmt]) -> bool:
    """Does the block train under `with ddp_model.join(throw_on_early_termination=True):`, which raises a
    `RuntimeError` on purpose when another rank runs out of data?"""
    return any(
        isinstance(item.context_expr, ast.Call) and callee_name(item.context_expr) == "join"
        and any(k.arg == "throw_on_early_termination" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in item.context_expr.keywords)
        for statement in block if isinstance(statement, (ast.With, ast.AsyncWith)) for item in statement.items
    )  # fmt: skip


def _only_runtime_error(handler: ast.ExceptHandler) -> bool:
    return isinstance(handler.type, ast.Name) and handler.type.id == "RuntimeError"
