from mllint.activation_fix import activation_fix_in_source
from mllint.analysis.facets.losses import SIGMOID_TWICE, drop_activation_fix, mismatched_inputs
from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class SigmoidIntoBceWithLogits(Rule):
    """
    ## What it does
    Reports sigmoid output passed as the input of `BCEWithLogitsLoss` or
    `F.binary_cross_entropy_with_logits`: from `torch.sigmoid`, `x.sigmoid()`, an `nn.Sigmoid` module or an
    `nn.Sequential` ending in one, through local variables and `self.` attributes, or returned by a
    model's `forward`, a helper function in another file of the project, or a method of the class itself or
    a base class (`self.predict(x)` returning `torch.sigmoid(self(x))`). The last layer of a list a builder
    fills is the last fill its defaults run (`if dropout: layers.append(nn.Dropout(dropout))` with
    `dropout=0.0` leaves the activation before it last; `getattr(nn, act, nn.Sigmoid)()` with `act="Sigmoid"`
    by default, also through a model class that passes its `**kwargs` on to the builder); an output layer
    whose class the configuration chooses in a builder of another module, as every call site's config says
    (`getattr(nn, cfg.out_act)()` with a dataclass field defaulting to "Sigmoid", `act =
    ACTIVATIONS[cfg.get("out_act", "sigmoid")]` with a config dict that lacks the key).

    ## Why is this bad?
    `BCEWithLogitsLoss` applies the sigmoid itself. A sigmoid before it squashes the scores into (0, 1),
    where the second sigmoid maps them to (0.5, 0.73): the loss can never push a prediction below 0.5,
    gradients shrink, and the model trains on a distorted objective. Nothing raises an error.

    ## Example
    ```python
    import torch
    from torch import nn

    criterion = nn.BCEWithLogitsLoss()
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
    The fix removes the sigmoid, passing its input instead, when the sigmoid value has no other use. It is
    unsafe: it changes what the loss computes (that is the point) and so the training run. When a model's
    `forward` or a helper in another file of the project returns the sigmoid directly, the fix removes it
    there, in that file (every caller then gets the logits).
    """

    code = "ML103"
    name = "sigmoid-into-bce-with-logits"
    message = "sigmoid output passed to `BCEWithLogitsLoss`, which applies the sigmoid itself: pass the logits"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("binary_cross_entropy_with_logits", "BCEWithLogitsLoss", "criterion", "loss")

    def end_file(self) -> None:
        for _, found in mismatched_inputs(self.ctx, SIGMOID_TWICE):
            message = (
                f"`{self.ctx.text(found.argument)}` is sigmoid output{found.origin.where(found.argument)}, but "
                f"`{found.callee}`{found.note} applies the sigmoid itself: pass the logits"
            )
            fix = drop_activation_fix(self.ctx, found.argument, found.origin, "Remove the sigmoid: pass the logits", Applicability.UNSAFE)
            fix = fix or activation_fix_in_source(self.ctx, found.origin, "Remove the sigmoid: pass the logits", Applicability.UNSAFE)
            self.report(found.argument, message, fix, related=found.related)
