from mllint.analysis.facets.losses import APPLIES, OTHER_ACTIVATION, drop_activation_fix, mismatched_inputs
from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class ActivationIntoLogitsLoss(Rule):
    """
    ## What it does
    Reports the output of one activation passed to a loss that applies another itself: sigmoid or
    `logsigmoid` output into `CrossEntropyLoss`/`F.cross_entropy`, softmax, `log_softmax` or `logsigmoid`
    output into `BCEWithLogitsLoss`/`F.binary_cross_entropy_with_logits`. The values are followed as for
    ML101 and ML103: through variables, `self.` attributes, linear combinations, and the project's models
    and helpers in other files.

    ## Why is this bad?
    Both losses expect raw logits. Cross-entropy takes the `log_softmax` of sigmoid output squeezed into
    (0, 1): every class scores almost alike, the gradients shrink and the loss stalls near ln(k). The
    sigmoid `BCEWithLogitsLoss` applies to softmax output lands in (0.5, 0.73): a prediction can never fall
    below one half, and the targets 0 are never reached. Nothing raises an error.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(torch.sigmoid(logits), labels)
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
    The fix removes the activation, passing its input instead, when its value has no other use. It is
    unsafe: it changes what the loss computes (that is the point) and so the training run.
    """

    code = "ML105"
    name = "activation-into-logits-loss"
    message = "activation output passed to a loss that applies its own activation: pass the raw logits"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("cross_entropy", "CrossEntropyLoss", "BCEWithLogitsLoss", "criterion", "loss")

    def end_file(self) -> None:
        for _, found in mismatched_inputs(self.ctx, OTHER_ACTIVATION):
            origin = found.origin
            message = (
                f"`{self.ctx.text(found.argument)}` is {origin.kind.value}{origin.where(found.argument)}, but "
                f"`{found.callee}`{found.note} applies {APPLIES[found.loss]} itself and expects raw logits: pass the logits"
            )
            fix = drop_activation_fix(self.ctx, found.argument, origin, "Remove the activation: pass the logits", Applicability.UNSAFE)
            self.report(found.argument, message, fix, related=found.related)
