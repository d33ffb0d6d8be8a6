import ast

from mllint.rule import Rule

STD_FUNCTIONS = {"torch.std"}


class DivisionByStdWithoutEpsilon(Rule):
    """
    ## What it does
    Reports a division whose denominator is a standard deviation computed on the spot, with nothing
    keeping it away from zero: `(x - x.mean()) / x.std()`, `x / torch.std(x, dim=0)`,
    `adv / adv.std(unbiased=False)`. A denominator with an epsilon (`x.std() + 1e-8`) or a clamp
    (`x.std().clamp(min=eps)`) is not reported.

    ## Why is this bad?
    A constant input (a batch of identical rewards, a padded feature, a batch of one, where the
    unbiased std is `nan`) has a standard deviation of 0: the division gives `inf`/`nan`, which spreads
    through the loss into every weight at the next step. Nothing raises.

    ## Example
    ```python
    import torch

    advantages = torch.ones(4)
    normalized = (advantages - advantages.mean()) / advantages.std()
    ```

    ## Use instead
    ```python
    import torch

    advantages = torch.ones(4)
    normalized = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    ```

    ## Fix safety
    There is no fix: the right epsilon depends on the data's scale.
    """

    code = "ML703"
    name = "division-by-std-without-epsilon"
    message = "division by `{denominator}` with no epsilon: a constant input gives inf/nan"
    requires_any_text = ("std",)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Div) and self._is_std(node.right):
            self.report(node, self.message.format(denominator=self.ctx.text(node.right)))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.Div) and self._is_std(node.value):
            self.report(node, self.message.format(denominator=self.ctx.text(node.value)))

    def _is_std(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        if self.ctx.qualified_name(node.func) in STD_FUNCTIONS:
            return True
        method = isinstance(node.func, ast.Attribute) and node.func.attr == "std"
        # `x.std()` on a tensor, not `np.std`-like module functions (their receiver resolves to an import).
        return method and self.ctx.qualified_name(node.func) is None
