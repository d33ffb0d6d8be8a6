import ast

from mllint.analysis.facets.handled_errors import HandledErrors
from mllint.analysis.facets.loop_events import EventKind
from mllint.analysis.facets.loops import TrainingLoops
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.names import callee_name
from mllint.analysis.syntax.scopes import own_nodes
from mllint.analysis.values.handlers import Handlers
from mllint.rule import Rule
from mllint.source import one_line


class TrainingErrorSwallowed(Rule):
    """
    ## What it does
    Reports an exception handler for a broad exception (bare `except:`, `Exception`, `BaseException`,
    `RuntimeError`) that does not re-raise, on a `try` whose body trains: it runs a backward pass and
    an optimizer step (or a manual update of the parameters by their gradients: `p.add_(p.grad, alpha=-lr)`,
    `w -= lr * w.grad` of a parameter, not of an input an attack updates), directly, in a loop, or through functions of the file it calls
    or methods of the project's objects (`runner.train()` whose loop calls the update of the learner it was handed). Also, in a
    training loop or in a function a training step runs (a `do_batch` helper the loop calls, a method a
    `training_step` calls), a handler on a `try` around the forward and backward pass (`loss.backward()`,
    an optimizer wrapper's `optim.backward(loss)`), whatever it does next, and one on a `try` around
    the forward pass alone that skips the batch (`continue`, or `return` from the step): every error of
    the model becomes a skipped batch. So does such a handler in a helper that returns None (or falls
    through to it) when a training loop, here or in another module, skips on its None result (`loss =
    safe_forward(model, batch)`, then `if loss is None: continue`); a caller that does not check would
    fail on the None, and is not reported. Handlers that re-raise (`raise`,
    `raise X from e`), exit the process, or catch only `KeyboardInterrupt` (to save a checkpoint) are
    not reported, nor are handlers that fall through to a failure: the statement right after the `try`
    raises or exits with an error status, or a later one does under a test of a name the handler sets
    (`crashed = True` ... `if crashed: sys.exit(1)`, `return 2` from `main()`); nor are `finally` blocks. `except RuntimeError` around training under
    `ddp_model.join(throw_on_early_termination=True)`, which raises one on purpose when another rank
    runs out of data, is reported for the other RuntimeErrors it hides. `with contextlib.suppress(E):` (by
    any import of `suppress`) is a handler `except E: pass` around its body, reported at the `with`. A handler that inspects an out-of-memory error
    (`if "out of memory" in str(e):`, `if isinstance(e, torch.cuda.OutOfMemoryError):`) must re-raise every other error on every path: one that raises
    them only sometimes (`else: if not distributed: raise`) is reported, at the first statement of the arm the
    other errors run (the line to change), and so is a handler that re-raises only the errors one test of the
    caught exception singles out (`if isinstance(exc, FloatingPointError): raise`, `if "nan" in str(e): raise`)
    while the others continue or are logged, and so is its out-of-memory arm
    when it returns from a step whose caller steps anyway, as below. A handler of torch's out-of-memory
    errors (`torch.OutOfMemoryError`, `torch.cuda.OutOfMemoryError`, by any alias, also one a module of the project re-exports: `from utils import CudaOOM`,
    or in a tuple of classes bound to a name here or in another module: `except OOM_ERRORS` with `OOM_ERRORS = (torch.cuda.OutOfMemoryError,)`) counts as broad: it is
    reported when it neither re-raises nor recovers (frees the step's memory with `torch.cuda.empty_cache()`,
    `gc.collect()` or `del`, or clears its gradients with `zero_grad()`, `p.grad = None` or `del p.grad`), and when it
    falls through to the optimizer's step with the failed batch's partial gradients (no `continue` or
    `return`, no clear), however it frees memory; a `return` from a step function skips nothing when
    the loop that calls it (here or in another module) steps the optimizer after the call without
    looking at its result or clearing the gradients (`tr_loss += self.training_step(batch).item()`, then
    `optimizer.step()` every few batches). One that catches only out-of-memory errors, recovers and skips the
    batch (`return None`, `continue`) is recovery and is not reported, whether or not the skipped batches are
    counted. A handler that puts a constant zero in place of the loss
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
        handled = self.ctx.analysis(HandledErrors)
        events = self.ctx.analysis(TrainingLoops).events_of_statements(node.body)
        steps = [e for e in events if e.kind is EventKind.STEP]
        backward = any(e.kind is EventKind.BACKWARD for e in events)
        paced = steps or [e for e in events if e.kind is EventKind.BACKWARD]  # manual SGD: its parameter loop is the step
        steps = steps or [e for e in events if e.kind is EventKind.UPDATE]
        handlers = [h for h in written if handled.broad(h.type) and not handled.leaves(h, node)]
        zeros = {h: zero for h in handlers if (zero := handled.zero_loss(node, h)) is not None}
        for handler, zero in zeros.items():
            message = (
                f"`{self._written(handler)}` replaces the loss by a constant (`{self.ctx.text(zero)}`) on every "
                "error of its computation and does not re-raise: the step goes on, a broken model trains on "
                "nothing, and the run reports success"
            )
            self.report(handler, message)
        handlers = [h for h in handlers if h not in zeros]
        in_loop = handled.in_training_loop(node)
        in_step = not in_loop and handled.in_step_function(node)
        if steps and backward:
            what = "loop" if any(e.loops for e in paced) else "step"
            for handler in handlers:
                self._report(node, handler, self.message.format(handler=self._written(handler), what=what), what)
        elif backward and (in_loop or in_step or handled.stepped_by_caller(node)):
            for handler in handlers:
                message = (
                    f"`{self._written(handler)}` drops the batch on every error of the forward and backward pass of "
                    "the training step and does not re-raise: a broken model trains on nothing, and the run reports success"
                )
                self._report(node, handler, message, "step")
        elif handlers and handled.runs_the_model(node.body, events) and (in_loop or in_step or handled.in_skipped_helper(node)):
            skips = (ast.Continue,) if in_loop else (ast.Continue, ast.Return)
            for handler in handlers:
                partial = handled.others_path(handler) is not None
                returns_none = not (in_loop or in_step) and _returns_none(handler)  # the caller skips on None
                if partial or returns_none or any(isinstance(n, skips) for n in own_nodes(handler.body)):
                    message = (
                        f"`{self._written(handler)}` skips the batch on every error of the training step and does "
                        "not re-raise: a broken model trains on nothing, and the run reports success"
                    )
                    self._report(node, handler, message, "step")

    def _report(self, node: ast.Try, handler: ast.ExceptHandler, message: str, what: str) -> None:
        """Report the handler; one that singles out out-of-memory errors is told which path lets the others
        pass, and an `except RuntimeError` meant for a DDP join's early termination what else it hides."""
        handled = self.ctx.analysis(HandledErrors)
        path = handled.out_of_memory_path(handler)
        step = handled.step_after(node, path) if path is not None else None
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
        elif handled.out_of_memory_only(handler):
            message = (
                f"`{self._written(handler)}` drops the batch without freeing its memory or clearing its partial "
                "gradients, and does not re-raise: the failed step's tensors stay allocated, its gradients "
                "leak into the next step, and the run reports success on skipped batches"
            )
        elif (others := handled.others_path(handler)) is not None:
            message = (
                f"`{self._written(handler)}` handles out-of-memory errors but does not re-raise "
                f"every other error on every path: there a crash of the training {what} becomes a finished run"
            )
            if others:  # the line to change: the arm every other error runs
                message = (
                    f"every error other than out-of-memory that `{self._written(handler)}` ({self.ctx.place(handler)}) "
                    f"catches runs this arm, which does not re-raise: a crash of the training {what} becomes a finished run"
                )
                self.report(others[0], message)
                return
        elif (only := handled.reraised_only(handler)) is not None:
            message = (
                f"`{self._written(handler)}` ({self.ctx.place(handler)}) re-raises only the errors "
                f"`{one_line(self.ctx.text(only[0].test), 40)}` singles out; every other error of the training {what} "
                "runs this arm, which does not re-raise: a crash becomes a finished run"
            )
            if only[1]:  # the line to change: the arm every other error runs
                self.report(only[1][0], message)
                return
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
        handled = self.ctx.analysis(HandledErrors)
        swallowing = [(d, found) for d in decorators if (found := handled.swallowing_decorator(_called(d), node))]
        if not swallowing:
            return  # (first: most decorators swallow nothing, and the function's events cost more)
        events = self.ctx.analysis(TrainingLoops).events_of_statements(node.body)
        if not ({EventKind.BACKWARD, EventKind.STEP} <= {e.kind for e in events}):
            return
        for decorator, (ctx, handler) in swallowing:
            written = f"except {ctx.text(handler.type)}" if handler.type is not None else "except"
            where = f"line {handler.lineno}" if ctx is self.ctx else f"{self.ctx.analysis(ProjectView).display_path(ctx.real_path or ctx.path)}:{handler.lineno}"
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


def _returns_none(handler: ast.ExceptHandler) -> bool:
    """Does the handler return None (`return`, `return None`), or fall out of the `try` without returning?"""
    returns = [n for n in own_nodes(handler.body) if isinstance(n, ast.Return)]
    return all(r.value is None or isinstance(r.value, ast.Constant) and r.value.value is None for r in returns)


def _called(decorator: ast.AST) -> ast.AST:
    """`guard` of `@guard` and of the factory call `@guard(retries=3)`."""
    return decorator.func if isinstance(decorator, ast.Call) else decorator


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
