import ast

from mllint.analysis.names import call_argument
from mllint.analysis.values import Kind, ValueKinds
from mllint.rule import Rule

BCE_FUNCTION = "torch.nn.functional.binary_cross_entropy"
BCE_CLASS = "torch.nn.BCELoss"


class BceOnSigmoid(Rule):
    """
    ## What it does
    Reports sigmoid output passed as the input of `BCELoss` or `F.binary_cross_entropy`.

    ## Why is this bad?
    It works, but it is the numerically weak way to write it: the sigmoid saturates to exactly 0 or 1
    for large logits, where `BCELoss` clamps its log to -100 and the gradient vanishes, so confidently
    wrong examples stop teaching the model. `BCEWithLogitsLoss` takes the logits and fuses the sigmoid
    into a stable log-sum-exp. (It also accepts `pos_weight` for imbalanced data.)

    ## Example
    ```python
    import torch
    from torch import nn

    criterion = nn.BCELoss()
    logits, targets = torch.randn(8), torch.rand(8)
    loss = criterion(torch.sigmoid(logits), targets)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    criterion = nn.BCEWithLogitsLoss()
    logits, targets = torch.randn(8), torch.rand(8)
    loss = criterion(logits, targets)
    ```

    ## Fix safety
    There is no fix: the loss is constructed elsewhere and the sigmoid output may have other uses.
    """

    code = "ML702"
    name = "bce-on-sigmoid"
    message = "sigmoid output passed to `{loss}`: use `BCEWithLogitsLoss` on the logits, which is stable"
    requires_any_text = ("binary_cross_entropy", "BCELoss")

    def visit_Call(self, node: ast.Call) -> None:
        values = self.ctx.analysis(ValueKinds)
        is_bce = self.ctx.qualified_name(node.func) == BCE_FUNCTION or values.constructed_class(node.func) == BCE_CLASS
        argument = call_argument(node, 0, "input")
        if not is_bce or argument is None:
            return
        origin = values.origin(argument)
        if origin is not None and origin.kind is Kind.SIGMOID:
            self.report(argument, self.message.format(loss=self.ctx.text(node.func)))
