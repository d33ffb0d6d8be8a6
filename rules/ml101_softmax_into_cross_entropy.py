from mllint.activation_fix import activation_fix_in_source
from mllint.analysis.facets.losses import SOFTMAX_TWICE, drop_activation_fix, mismatched_inputs
from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class SoftmaxIntoCrossEntropy(Rule):
    """
    ## What it does
    Reports softmax output passed as the input of `CrossEntropyLoss` or `F.cross_entropy`: from
    `F.softmax`, `F.softmin`, `torch.softmax`, `x.softmax(dim)`, `exp(log_softmax(x))`, an `nn.Softmax`
    (`nn.Softmax2d`, `nn.Softmin`) module or an
    `nn.Sequential` ending in one (or in a module of the project whose `forward` returns softmax output:
    `nn.Sequential(backbone, Head(...))`; layers that pass their input on, `nn.Identity` and `nn.Dropout`,
    after it), averaged or otherwise combined linearly (an ensemble's mean, a weighted
    sum, a product with one-hot rows), directly or through local variables, `self.` attributes and import
    aliases. It follows them from the project's models and functions in other files too: a model whose `forward` returns
    softmax output (in training mode; as one element of a tuple too, also when an if/else chooses between
    two such classes; of a `forward` whose flag the call passes as a constant or leaves to a default
    that returns softmax output, `def forward(self, x, normalize=True)`), a factory function that builds
    one, a helper that returns one, a method of the class itself or of a base class other than `forward`
    (`self.predict_proba(x)` of an ensemble trainer). A row of softmax output over the last dim taken by a loop (`for out
    in probs:`) is softmax output too. A dict a comprehension builds keeps each key's own value (`out["emotion"]` of
    `{name: head(h) for name, head in self.heads.items()}` is the emotion head's output), and a loss in a loop
    over a dict whose keys are known (`for name, crit in criteria.items(): crit(out[name], y[name])`) is
    judged one key at a time (the message names the key).

    A model or loss that reaches the function as a parameter (`def train(model, criterion, ...)`, or
    `self.model` set from an `__init__` parameter, also when a method passes it on:
    `self.compute_loss(self.model, batch)`) is what a call site of the function in the project passes:
    one call site at a time, whose file and line the message names. The loss may be called through a
    name, a class attribute or a `self.` attribute bound to `F.cross_entropy` or to a
    `functools.partial` of it (`bc_loss = partial(F.cross_entropy, label_smoothing=0.1)`, a parameter's
    default `loss=F.cross_entropy`), with its input as `**` a dict (`kw = {"input": probs, ...}`).

    A loss called out of view counts too: a library's training wrapper handed the model and the loss
    (`NeuralNet(module=Net, criterion=nn.CrossEntropyLoss)`, `Model(net, "adam", nn.CrossEntropyLoss())`)
    calls the loss on the model's output, and so does the code out of view for a loss built beside the one
    model of its scope and read nowhere in a file that calls no loss (a fragment). The finding is at the model.

    ## Why is this bad?
    Cross-entropy applies `log_softmax` itself and expects raw logits. A softmax first squashes the logits
    into (0, 1), so the loss sees almost uniform scores: gradients shrink, training stalls and the loss
    plateaus near ln(k) for k classes. Nothing raises an error. Softmax used only for predictions or
    metrics, `log_softmax` with `NLLLoss`, and softmax of a teacher's logits passed as the *target* (soft
    labels in distillation) are fine and not reported.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(F.softmax(logits, dim=1), labels)
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
    The fix removes the softmax, passing its input instead, when the softmax value has no other use. It
    is unsafe: it changes what the loss computes (that is the point) and so the training run. When a
    model's `forward` or a helper in another file of the project returns the softmax directly
    (`return F.softmax(h, dim=1)`, or `out = F.softmax(out, dim=1)` right before `return out`), the fix
    removes it there, in that file: every caller of the function then gets the logits, which is why it
    stays unsafe.
    """

    code = "ML101"
    name = "softmax-into-cross-entropy"
    message = "softmax output passed to cross-entropy, which applies log_softmax itself: pass the raw logits"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("cross_entropy", "CrossEntropyLoss", "criterion", "loss")

    def end_file(self) -> None:
        for _, found in mismatched_inputs(self.ctx, SOFTMAX_TWICE):
            message = (
                f"`{self.ctx.text(found.argument)}` is softmax output{found.origin.where(found.argument)}, but "
                f"`{found.callee}`{found.note} applies log_softmax itself: pass the raw logits"
            )
            fix = drop_activation_fix(self.ctx, found.argument, found.origin, "Remove the softmax: pass the logits", Applicability.UNSAFE)
            fix = fix or activation_fix_in_source(self.ctx, found.origin, "Remove the softmax: pass the logits", Applicability.UNSAFE)
            self.report(found.argument, message, fix, related=found.related)
