import ast

from mllint.analysis.losses import NLL, loss_input
from mllint.analysis.values import FUNCTION_KINDS, Kind
from mllint.findings import Applicability, Severity
from mllint.rule import Rule

SOFTMAX_FUNCTIONS = {name for name, kind in FUNCTION_KINDS.items() if kind is Kind.PROBABILITIES}


class NllLossWithoutLogSoftmax(Rule):
    """
    ## What it does
    Reports softmax output (probabilities) or a Linear layer's raw logits passed as the input of
    `NLLLoss` or `F.nll_loss`: made in the same function, through local variables and `self.`
    attributes, or returned by a model's `forward` or a helper function in another file of the project.
    `log_softmax` output, the usual input, is not reported, nor is anything whose origin is unknown.

    ## Why is this bad?
    `NLLLoss` does no normalisation: it only picks `-input[target]` and averages. It expects
    log-probabilities. Fed probabilities it minimises `-p[target]`, bounded in (-1, 0), whose gradients
    vanish as soon as the model is confident; fed raw logits it is unbounded below, so the model learns to
    inflate the target logit forever. Neither raises an error.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    loss = F.nll_loss(F.softmax(logits, dim=1), labels)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    loss = F.nll_loss(F.log_softmax(logits, dim=1), labels)
    ```

    ## Fix safety
    When the softmax is a `F.softmax`/`torch.softmax`/`x.softmax` call written at the loss input, the fix
    turns it into the matching `log_softmax` call with the same arguments. It is unsafe: it changes what
    the loss computes (that is the point) and so the training run. Raw logits are reported without a fix.
    """

    code = "ML102"
    name = "nll-loss-without-log-softmax"
    message = "`NLLLoss` expects log-probabilities: apply `log_softmax` to the logits first"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("nll_loss", "NLLLoss", "criterion", "loss")

    def visit_Call(self, node: ast.Call) -> None:
        found = loss_input(self.ctx, node, (NLL,), (Kind.PROBABILITIES, Kind.LOGITS))
        if found is None:
            return
        message = (
            f"`{self.ctx.text(found.argument)}` is {found.origin.kind.value}{found.origin.where(found.argument)}, "
            f"but `{found.callee}`{found.note} expects log-probabilities: apply `log_softmax` first"
        )
        self.report(found.argument, message, self._fix(found.argument, found.origin.node))

    def _fix(self, argument: ast.AST, softmax: ast.Call):
        """`F.softmax(x, dim=1)` -> `F.log_softmax(x, dim=1)`, written at the loss input only."""
        func = softmax.func
        functional = self.ctx.qualified_name(func) in SOFTMAX_FUNCTIONS
        method = isinstance(func, ast.Attribute) and func.attr == "softmax" and self.ctx.qualified_name(func) is None
        if softmax is not argument or not (functional or method) or not isinstance(func, (ast.Attribute, ast.Name)):
            return None
        name = func.attr if isinstance(func, ast.Attribute) else func.id
        if name != "softmax":
            return None  # an alias (`from torch.nn.functional import softmax as sm`) has no matching log form
        callee = self.ctx.text(func)
        return self.ctx.fix(
            "Use `log_softmax`", Applicability.UNSAFE, self.ctx.replace(func, callee[: -len("softmax")] + "log_softmax")
        )
