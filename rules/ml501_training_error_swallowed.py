import ast

from mllint.analysis.loops import TRAINING_WORDS, EventKind, TrainingLoops
from mllint.analysis.scopes import FUNCTION_NODES
from mllint.rule import Rule

BROAD = frozenset({"Exception", "BaseException", "RuntimeError"})
EXITS = frozenset({"sys.exit", "os._exit", "os.abort"})
BUILTIN_EXITS = frozenset({"exit", "quit"})


class TrainingErrorSwallowed(Rule):
    """
    ## What it does
    Reports an exception handler for a broad exception (bare `except:`, `Exception`, `BaseException`,
    `RuntimeError`) that does not re-raise, on a `try` whose body trains: it runs a backward pass and
    an optimizer step, directly, in a loop, or through functions of the file it calls. Handlers that
    re-raise (`raise`, `raise X from e`, also after inspecting an out-of-memory error), exit the
    process, or catch only `KeyboardInterrupt` (to save a checkpoint) are not reported; nor are
    `finally` blocks.

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
    requires_any_text = TRAINING_WORDS

    def visit_Try(self, node: ast.Try) -> None:
        if not node.handlers:
            return
        events = self.ctx.analysis(TrainingLoops).events_of_statements(node.body)
        steps = [e for e in events if e.kind is EventKind.STEP]
        if not steps or not any(e.kind is EventKind.BACKWARD for e in events):
            return
        handlers = [h for h in node.handlers if self._broad(h.type) and not self._leaves(h)]
        what = "loop" if any(e.loops for e in steps) else "step"
        for handler in handlers:
            text = f"except {self.ctx.text(handler.type)}" if handler.type is not None else "except"
            self.report(handler, self.message.format(handler=text, what=what))

    visit_TryStar = visit_Try

    def _broad(self, exception: ast.AST | None) -> bool:
        if exception is None:
            return True
        if isinstance(exception, ast.Tuple):
            return any(self._broad(e) for e in exception.elts)
        if isinstance(exception, ast.Name):
            return exception.id in BROAD and self.ctx.qualified_name(exception) is None
        return self.ctx.qualified_name(exception) in {f"builtins.{name}" for name in BROAD}

    def _leaves(self, handler: ast.ExceptHandler) -> bool:
        """Does the handler re-raise or exit (anywhere in its body)?"""
        stack = list(handler.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Raise):
                return True
            if isinstance(node, ast.Call) and (
                self.ctx.qualified_name(node.func) in EXITS
                or isinstance(node.func, ast.Name) and node.func.id in BUILTIN_EXITS
            ):
                return True
            if not isinstance(node, (*FUNCTION_NODES, ast.ClassDef)):
                stack.extend(ast.iter_child_nodes(node))
        return False
