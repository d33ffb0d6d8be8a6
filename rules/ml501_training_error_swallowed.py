import ast

from mllint.analysis.facets.loops import LOOP_NODES, TRAINING_WORDS, EventKind, TrainingLoops
from mllint.analysis.facets.parameters import is_module
from mllint.analysis.syntax.scopes import FUNCTION_NODES, own_nodes
from mllint.rule import Rule

BROAD = frozenset({"Exception", "BaseException", "RuntimeError"})
EXITS = frozenset({"sys.exit", "os._exit", "os.abort"})
BUILTIN_EXITS = frozenset({"exit", "quit"})
OUT_OF_MEMORY = "out of memory"  # in the message of torch's OOM errors ("CUDA out of memory. ...")


class TrainingErrorSwallowed(Rule):
    """
    ## What it does
    Reports an exception handler for a broad exception (bare `except:`, `Exception`, `BaseException`,
    `RuntimeError`) that does not re-raise, on a `try` whose body trains: it runs a backward pass and
    an optimizer step, directly, in a loop, or through functions of the file it calls. Also a handler
    that `continue`s the training loop from a `try` around only part of its step (the forward pass, the
    backward): every error of the model becomes a skipped batch. Handlers that re-raise (`raise`,
    `raise X from e`), exit the process, or catch only `KeyboardInterrupt` (to save a checkpoint) are
    not reported; nor are `finally` blocks. A handler that inspects an out-of-memory error
    (`if "out of memory" in str(e):`) must re-raise every other error on every path: one that raises
    them only sometimes (`else: if not distributed: raise`) is reported.

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
        loops = self.ctx.analysis(TrainingLoops)
        events = loops.events_of_statements(node.body)
        steps = [e for e in events if e.kind is EventKind.STEP]
        handlers = [h for h in node.handlers if self._broad(h.type) and not self._leaves(h)]
        if steps and any(e.kind is EventKind.BACKWARD for e in events):
            what = "loop" if any(e.loops for e in steps) else "step"
            for handler in handlers:
                message = self.message.format(handler=self._written(handler), what=what)
                if _other_than_out_of_memory(handler.body) is not None:
                    message = (
                        f"`{self._written(handler)}` handles out-of-memory errors but does not re-raise "
                        f"every other error on every path: there a crash of the training {what} becomes a finished run"
                    )
                self.report(handler, message)
        elif self._in_training_loop(node, loops) and self._runs_the_model(node.body, events):
            for handler in handlers:
                if any(isinstance(n, ast.Continue) for n in own_nodes(handler.body)):
                    message = (
                        f"`{self._written(handler)}` skips the batch on every error of the training step and does "
                        "not re-raise: a broken model trains on nothing, and the run reports success"
                    )
                    self.report(handler, message)

    visit_TryStar = visit_Try

    def _written(self, handler: ast.ExceptHandler) -> str:
        return f"except {self.ctx.text(handler.type)}" if handler.type is not None else "except"

    def _in_training_loop(self, node: ast.AST, loops: TrainingLoops) -> bool:
        """Is the innermost loop around `node` (in its function) a training loop?"""
        for ancestor in self.ctx.scopes.ancestors(node):
            if isinstance(ancestor, (*FUNCTION_NODES, ast.ClassDef)):
                return False
            if isinstance(ancestor, LOOP_NODES):
                return loops.is_training_loop(ancestor)
        return False

    def _runs_the_model(self, body: list[ast.stmt], events) -> bool:
        """Does the block call a module (the forward pass) or backpropagate?"""
        calls = [n for n in own_nodes(body) if isinstance(n, ast.Call)]
        return any(e.kind is EventKind.BACKWARD for e in events) or any(is_module(self.ctx, c.func) for c in calls)

    def _broad(self, exception: ast.AST | None) -> bool:
        if exception is None:
            return True
        if isinstance(exception, ast.Tuple):
            return any(self._broad(e) for e in exception.elts)
        if isinstance(exception, ast.Name):
            return exception.id in BROAD and self.ctx.qualified_name(exception) is None
        return self.ctx.qualified_name(exception) in {f"builtins.{name}" for name in BROAD}

    def _leaves(self, handler: ast.ExceptHandler) -> bool:
        """Does the handler re-raise or exit: anywhere in its body, or, where it singles out an
        out-of-memory error, on every path the other errors take?"""
        others = _other_than_out_of_memory(handler.body)
        if others is not None:
            return self._always_leaves(others)
        return any(self._leaving(node) for node in own_nodes(handler.body))

    def _always_leaves(self, block: list[ast.stmt]) -> bool:
        for statement in block:
            if isinstance(statement, ast.If) and self._always_leaves(statement.body) and self._always_leaves(statement.orelse):
                return True
            if self._leaving(statement.value if isinstance(statement, ast.Expr) else statement):
                return True
        return False

    def _leaving(self, node: ast.AST) -> bool:
        """A `raise`, or a call that exits the process."""
        if isinstance(node, ast.Raise):
            return True
        return isinstance(node, ast.Call) and (
            self.ctx.qualified_name(node.func) in EXITS or isinstance(node.func, ast.Name) and node.func.id in BUILTIN_EXITS
        )



def _other_than_out_of_memory(block: list[ast.stmt]) -> list[ast.stmt] | None:
    """The statements errors other than out-of-memory run, after `if "out of memory" in str(e):` (its
    `else` and what follows it), or in the body of `if "out of memory" not in str(e):`; None when the
    block tests no such thing."""
    for position, statement in enumerate(block):
        if isinstance(statement, ast.If) and isinstance(statement.test, ast.Compare):
            test = statement.test
            mentions = any(
                isinstance(n, ast.Constant) and isinstance(n.value, str) and OUT_OF_MEMORY in n.value.lower()
                for n in ast.walk(test.left)
            )
            if mentions and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)):
                return statement.body if isinstance(test.ops[0], ast.NotIn) else statement.orelse + block[position + 1 :]
    return None
