import ast

from mllint.analysis.losses import BCE, loss_input
from mllint.analysis.values import Kind
from mllint.rule import Rule


class BceOnSigmoid(Rule):
    """
    ## What it does
    Reports sigmoid output passed as the input of `BCELoss` or `F.binary_cross_entropy`, also when the
    sigmoid is applied by a model's `forward` or a helper function in another file of the project.

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
    message = "sigmoid output passed to `BCELoss`: use `BCEWithLogitsLoss` on the logits, which is stable"
    requires_any_text = ("binary_cross_entropy", "BCELoss", "criterion", "loss")

    def visit_Call(self, node: ast.Call) -> None:
        found = loss_input(self.ctx, node, (BCE,), (Kind.SIGMOID,))
        if found is not None:
            where = found.origin.where(found.argument)
            message = f"`{self.ctx.text(found.argument)}` is sigmoid output{where}, passed to `{found.callee}`{found.note}: "
            self.report(found.argument, message + "use `BCEWithLogitsLoss` on the logits, which is stable")
