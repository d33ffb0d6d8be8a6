import ast

from mllint.analysis.facets.mode_facts import GRAD_OFF
from mllint.analysis.syntax.scopes import SCOPE_NODES
from mllint.analysis.values.values import ValueKinds
from mllint.findings import Severity
from mllint.rule import Rule

ENABLE_GRAD = {"torch.enable_grad", "torch.set_grad_enabled", "torch.autograd.enable_grad"}


class BackwardUnderNoGrad(Rule):
    """
    ## What it does
    Reports `loss.backward()` inside a `with torch.no_grad():` or `torch.inference_mode()` block (or a
    function decorated with either) when the loss itself is computed in that block or function (every
    binding that reaches the call, `loss += penalty` included, is made there).
    Backward on a loss computed before the block, and code that expects the error
    (`pytest.raises`, `assertRaises`), are not reported.

    ## Why is this bad?
    Under `no_grad` no graph is recorded: the loss has no `grad_fn`, and `backward()` raises
    `element 0 of tensors does not require grad` once the run reaches it, often after a long data
    loading or warm-up phase, or the step silently trains nothing when the error is caught.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        loss = model(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    ```

    ## Fix safety
    There is no fix: which statements belong outside the `no_grad` block is for the author to decide.
    """

    code = "ML206"
    name = "backward-under-no-grad"
    message = "`{loss}` is computed and backpropagated under `{context}`: it has no graph and `backward()` raises"
    severity = Severity.ERROR
    requires_any_text = ("no_grad", "inference_mode")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "backward" and isinstance(func.value, ast.Name)):
            return
        block = self._no_grad_block(node)
        if block is None:
            return
        definitions = self.ctx.analysis(ValueKinds).making_definitions(func.value)
        inside = [d for d in definitions if d is not None and self._only_under(d.node, block)]
        if definitions and len(inside) == len(definitions):
            context = self._context_text(block)
            self.report(node, self.message.format(loss=func.value.id, context=context))

    def _only_under(self, node: ast.AST, block: ast.AST) -> bool:
        """Is `node` inside `block` with no grad-enabling `with` in between?"""
        for ancestor in self.ctx.scopes.ancestors(node):
            if ancestor is block:
                return True
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and any(
                self._qualified(item.context_expr) in ENABLE_GRAD for item in ancestor.items
            ):
                return False
        return False

    def _no_grad_block(self, node: ast.AST) -> ast.AST | None:
        """The innermost `with no_grad` (or no_grad-decorated function) around `node`; None when an
        error is expected there."""
        found = None
        for ancestor in self.ctx.scopes.ancestors(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                expressions = [item.context_expr for item in ancestor.items]
                if any(_expects_error(e) for e in expressions):
                    return None
                if found is None and any(self._qualified(e) in ENABLE_GRAD for e in expressions):
                    return None
                if found is None and any(self._is_no_grad(e) for e in expressions):
                    found = ancestor
            elif isinstance(ancestor, SCOPE_NODES):
                if found is None and any(self._is_no_grad(d) for d in getattr(ancestor, "decorator_list", ())):
                    found = ancestor
                return found
        return found

    def _is_no_grad(self, expr: ast.AST) -> bool:
        return self._qualified(expr) in GRAD_OFF

    def _qualified(self, expr: ast.AST) -> str | None:
        return self.ctx.qualified_name(expr.func if isinstance(expr, ast.Call) else expr)

    def _context_text(self, block: ast.AST) -> str:
        if isinstance(block, (ast.With, ast.AsyncWith)):
            return next(self.ctx.text(i.context_expr) for i in block.items if self._is_no_grad(i.context_expr))
        return "@" + next(self.ctx.text(d) for d in block.decorator_list if self._is_no_grad(d))


def _expects_error(expr: ast.AST) -> bool:
    func = expr.func if isinstance(expr, ast.Call) else expr
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("raises", "assertRaises", "assertRaisesRegex")
