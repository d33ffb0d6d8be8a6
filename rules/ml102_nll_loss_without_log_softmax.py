from mllint.activation_fix import log_softmax_in_source
from mllint.analysis.facets.losses import NOT_LOG_PROBABILITIES, log_softmax_fix, mismatched_inputs
from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class NllLossWithoutLogSoftmax(Rule):
    """
    ## What it does
    Reports softmax or sigmoid output (probabilities), `logsigmoid` output or a Linear layer's raw logits
    passed as the input of `NLLLoss` or `F.nll_loss`: made in the same function, through local variables and `self.`
    attributes, averaged or otherwise combined linearly, or returned by a model's `forward` or a helper
    function in another file of the project. An `nn.Sequential` ending in a Linear layer and an
    `nn.Identity` or `nn.Dropout` outputs raw logits. `log_softmax` output, the usual input, is not reported, nor is anything whose origin is unknown.

    ## Why is this bad?
    `NLLLoss` does no normalisation: it only picks `-input[target]` and averages. It expects
    log-probabilities. Fed probabilities it minimises `-p[target]`, bounded in (-1, 0), whose gradients
    vanish as soon as the model is confident; fed raw logits it is unbounded below, so the model learns to
    inflate the target logit forever. `logsigmoid` output is no distribution over the classes: raising
    every score lowers the loss. None of these raises an error.

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
    the loss computes (that is the point) and so the training run. When a model's `forward` or a helper in
    another file of the project returns such a call directly, the fix changes it there, in that file
    (every caller then gets log-probabilities). Raw logits are reported without a fix.
    """

    code = "ML102"
    name = "nll-loss-without-log-softmax"
    message = "`NLLLoss` expects log-probabilities: apply `log_softmax` to the logits first"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("nll_loss", "NLLLoss", "criterion", "loss")

    def end_file(self) -> None:
        for _, found in mismatched_inputs(self.ctx, NOT_LOG_PROBABILITIES):
            message = (
                f"`{self.ctx.text(found.argument)}` is {found.origin.kind.value}{found.origin.where(found.argument)}, "
                f"but `{found.callee}`{found.note} expects log-probabilities: apply `log_softmax` first"
            )
            fix = log_softmax_fix(self.ctx, found.argument, found.origin.node) or log_softmax_in_source(self.ctx, found.origin, "Use `log_softmax`")
            self.report(found.argument, message, fix, related=found.related)
