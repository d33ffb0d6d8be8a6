from mllint.activation_fix import activation_fix_in_source
from mllint.analysis.facets.losses import APPLIES, BCE_WITH_LOGITS, OTHER_ACTIVATION, drop_activation_fix, mismatched_inputs
from mllint.analysis.values.values import Kind
from mllint.findings import Applicability, Severity
from mllint.rule import Rule

# What scores that are never negative do to a loss that expects logits.
NON_NEGATIVE = {
    (Kind.RELU, BCE_WITH_LOGITS): " (scores never below 0: every predicted probability is at least 0.5)",
    (Kind.SOFTPLUS, BCE_WITH_LOGITS): " (scores never below 0: every predicted probability is above 0.5)",
    (Kind.HARDSIGMOID, BCE_WITH_LOGITS): " (scores in [0, 1]: every predicted probability is between 0.5 and 0.73)",
}


class ActivationIntoLogitsLoss(Rule):
    """
    ## What it does
    Reports the output of one activation passed to a loss that applies another itself: sigmoid or
    `logsigmoid` output into `CrossEntropyLoss`/`F.cross_entropy`, softmax, `log_softmax` or `logsigmoid`
    output into `BCEWithLogitsLoss`/`F.binary_cross_entropy_with_logits`, and the output of a ReLU,
    softplus or hardsigmoid (a model whose last layer is `nn.ReLU()`, `F.relu(self.fc(x))`) into either. The values are followed as for
    ML101 and ML103: through variables, `self.` attributes, linear combinations, and the project's models
    and helpers in other files.

    ## Why is this bad?
    Both losses expect raw logits. Cross-entropy takes the `log_softmax` of sigmoid output squeezed into
    (0, 1): every class scores almost alike, the gradients shrink and the loss stalls near ln(k). The
    sigmoid `BCEWithLogitsLoss` applies to softmax output lands in (0.5, 0.73): a prediction can never fall
    below one half, and the targets 0 are never reached. Scores from a ReLU or softplus are never negative:
    with the sigmoid every prediction is at least one half, and a ReLU unit that is off passes no gradient
    back, so the model cannot learn its way out. Nothing raises an error.

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
    unsafe: it changes what the loss computes (that is the point) and so the training run. When a model's
    `forward` or a helper in another file of the project returns the activation directly, the fix removes
    it there, in that file (every caller then gets the logits).
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
            effect = NON_NEGATIVE.get((origin.kind, found.loss), "")
            message = (
                f"`{self.ctx.text(found.argument)}` is {origin.kind.value}{origin.where(found.argument)}, but "
                f"`{found.callee}`{found.note} applies {APPLIES[found.loss]} itself and expects raw logits{effect}: pass the logits"
            )
            fix = drop_activation_fix(self.ctx, found.argument, origin, "Remove the activation: pass the logits", Applicability.UNSAFE)
            fix = fix or activation_fix_in_source(self.ctx, origin, "Remove the activation: pass the logits", Applicability.UNSAFE)
            self.report(found.argument, message, fix, related=found.related)
