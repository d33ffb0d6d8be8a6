from mllint.analysis.facets.losses import KL_DIV_NOT_LOG_PROBABILITIES, log_softmax_fix, mismatched_inputs
from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class KlDivWithoutLogProbabilities(Rule):
    """
    ## What it does
    Reports softmax or sigmoid output (probabilities), or a Linear layer's raw logits, passed as the
    *input* (first argument) of `F.kl_div` or `KLDivLoss`, followed through variables, attributes,
    linear combinations and the project's models and helpers. The *target* is not checked: probabilities
    there are what the loss expects (soft labels in distillation).

    ## Why is this bad?
    `kl_div(input, target)` computes `target * (log(target) - input)`: it expects `input` to be
    log-probabilities. Fed probabilities, it only pushes `input` up along the target, a bounded objective
    that is no divergence at all: its minimum is not at `input == target`, the reported value is wrong, and
    a distilled student learns the teacher's ranking at best. Nothing raises an error.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    student, teacher = torch.randn(8, 3, requires_grad=True), torch.randn(8, 3)
    loss = F.kl_div(F.softmax(student, dim=1), F.softmax(teacher, dim=1), reduction="batchmean")
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    student, teacher = torch.randn(8, 3, requires_grad=True), torch.randn(8, 3)
    loss = F.kl_div(F.log_softmax(student, dim=1), F.softmax(teacher, dim=1), reduction="batchmean")
    ```

    ## Fix safety
    When the softmax is a `F.softmax`/`torch.softmax`/`x.softmax` call written at the loss input, the fix
    turns it into the matching `log_softmax` call. It is unsafe: it changes what the loss computes (that is
    the point). Other inputs are reported without a fix.
    """

    code = "ML106"
    name = "kl-div-without-log-probabilities"
    message = "`kl_div` expects log-probabilities as its input: apply `log_softmax` first"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("kl_div", "KLDivLoss", "criterion", "loss")

    def end_file(self) -> None:
        for _, found in mismatched_inputs(self.ctx, KL_DIV_NOT_LOG_PROBABILITIES):
            origin = found.origin
            message = (
                f"`{self.ctx.text(found.argument)}` is {origin.kind.value}{origin.where(found.argument)}, but "
                f"`{found.callee}`{found.note} expects log-probabilities as its input: apply `log_softmax` first"
            )
            self.report(found.argument, message, log_softmax_fix(self.ctx, found.argument, origin.node), related=found.related)
