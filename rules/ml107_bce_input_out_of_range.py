from mllint.analysis.facets.losses import BCE_OUT_OF_RANGE, mismatched_inputs
from mllint.findings import Severity
from mllint.rule import Rule


class BceInputOutOfRange(Rule):
    """
    ## What it does
    Reports `log_softmax` or `logsigmoid` output (log-probabilities, at most 0) or a Linear layer's raw
    logits passed as the input of `BCELoss` or `F.binary_cross_entropy`, followed through variables,
    attributes and the project's models and helpers. An `nn.Sequential` ends in the layer added to it
    last after it is built (`seq.append(nn.Sigmoid())`, `seq.add_module("prob", nn.Sigmoid())`): its
    output is then a probability, in range. So does a model a builder or class of the project made, and
    a model changed in other ways after it is built (a layer added to a part of it,
    `model.classifier.append(...)`, or a part replaced, `model.fc = ...`) is of unknown output.

    ## Why is this bad?
    Binary cross-entropy expects probabilities in [0, 1]. Log-probabilities and raw logits fall outside:
    the first batch fails with "all elements of input should be between 0 and 1" (on a GPU, a device-side
    assert), after all the set-up before it. Pass the logits to `BCEWithLogitsLoss` instead.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    logits, targets = torch.randn(8, requires_grad=True), torch.rand(8)
    loss = F.binary_cross_entropy(F.logsigmoid(logits), targets)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    logits, targets = torch.randn(8, requires_grad=True), torch.rand(8)
    loss = F.binary_cross_entropy_with_logits(logits, targets)
    ```

    ## Fix safety
    There is no fix: the loss is usually built elsewhere, and which of the two to change is a choice.
    """

    code = "ML107"
    name = "bce-input-out-of-range"
    message = "`BCELoss` expects probabilities in [0, 1]: pass the logits to `BCEWithLogitsLoss`"
    severity = Severity.ERROR
    requires_any_text = ("binary_cross_entropy", "BCELoss", "criterion", "loss")

    def end_file(self) -> None:
        for _, found in mismatched_inputs(self.ctx, BCE_OUT_OF_RANGE):
            origin = found.origin
            message = (
                f"`{self.ctx.text(found.argument)}` is {origin.kind.value}{origin.where(found.argument)}, but "
                f"`{found.callee}`{found.note} expects probabilities in [0, 1]: pass the logits to `BCEWithLogitsLoss`"
            )
            self.report(found.argument, message, related=found.related)
