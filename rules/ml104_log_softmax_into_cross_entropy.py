import ast

from mllint.analysis.facets.losses import REDUNDANT_LOG_SOFTMAX, drop_activation_fix, mismatched_inputs
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.values.values import FUNCTION_KINDS, Kind
from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class LogSoftmaxIntoCrossEntropy(Rule):
    """
    ## What it does
    Reports `log_softmax` output passed as the input of `CrossEntropyLoss` or `F.cross_entropy`, made in
    the same function or returned by a model's `forward` or a helper in another file of the project.

    ## Why is this bad?
    It is not wrong: `log_softmax` is idempotent, so cross-entropy, which applies `log_softmax` itself,
    computes the same loss. It is redundant work, and it often means the author meant `NLLLoss`, or that
    the model's output is used elsewhere under the belief that it is raw logits.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(F.log_softmax(logits, dim=1), labels)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(logits, labels)
    ```

    ## Fix safety
    When the `log_softmax` is taken over dim 1 (the class dimension cross-entropy uses) and its value has
    no other use, the fix removes it. It is safe: the loss and its gradients are the same.
    """

    code = "ML104"
    name = "log-softmax-into-cross-entropy"
    message = "`log_softmax` output passed to cross-entropy, which applies log_softmax itself: it is redundant"
    severity = Severity.INFO
    fix_applicability = Applicability.SAFE
    requires_any_text = ("cross_entropy", "CrossEntropyLoss", "criterion", "loss")

    def end_file(self) -> None:
        for _, found in mismatched_inputs(self.ctx, REDUNDANT_LOG_SOFTMAX):
            if found.origin.normalised:
                continue  # `dist.logits` of a Categorical: normalised by the distribution, not written out
            message = (
                f"`{self.ctx.text(found.argument)}` is log_softmax output{found.origin.where(found.argument)}, and "
                f"`{found.callee}`{found.note} applies log_softmax itself: it is redundant, pass the logits"
            )
            fix = None
            if _over_class_dimension(self.ctx, found.origin.node):
                fix = drop_activation_fix(self.ctx, found.argument, found.origin, "Remove the redundant `log_softmax`", Applicability.SAFE)
            self.report(found.argument, message, fix, related=found.related)


def _over_class_dimension(ctx, log_softmax: ast.Call) -> bool:
    """`dim=1` written literally: `F.log_softmax(x, 1)`, `x.log_softmax(dim=1)`."""
    functional = FUNCTION_KINDS.get(ctx.qualified_name(log_softmax.func)) is Kind.LOG_PROBABILITIES
    method = isinstance(log_softmax.func, ast.Attribute) and log_softmax.func.attr == "log_softmax"
    if not functional and not method:
        return False
    dim = call_argument(log_softmax, 1 if functional else 0, "dim")
    return isinstance(dim, ast.Constant) and type(dim.value) is int and dim.value == 1
