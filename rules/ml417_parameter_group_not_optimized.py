from mllint.analysis.facets.coverage import uncovered_parts
from mllint.analysis.facets.frozen_parts import frozen_fresh_parts
from mllint.analysis.facets.parameters import missed_parts, unoptimized_loss_modules, unused_parameter_groups
from mllint.analysis.facets.unfrozen_parts import unfrozen_missed
from mllint.source import one_line
from mllint.findings import Severity
from mllint.rule import Rule


class ParameterGroupNotOptimized(Rule):
    """
    ## What it does
    Reports a parameter group (`{"params": model.head.parameters(), "lr": lr}`) that is built and then
    never read: a name bound to it that its scope never reads again (the group itself, or one unpacked
    from what a function of the project returns: `decay, no_decay = split_decay(model)`), or a group kept
    in a dict attribute (`self.groups = {"encoder": {...}, "projector": {...}}`) at a key the class never
    reads while it reads the others (`Adam([self.groups["encoder"]])`), or in a list or dict of groups
    (written out, or returned by a helper of the project) that its function reads only at constant places
    and keys, none of which takes it (`AdamW(groups[:1])` of `[decay_group, no_decay_group]`,
    `SGD([groups["backbone"], groups["head"]])` of a helper's `{"backbone": ..., "neck": ..., "head":
    ...}`; an item that is a list of groups too: `"emb": [{"params": ...}]` beside `AdamW(groups["body"])`). It also reports a list or dict of groups bound to a name that is never read, when no optimizer of its
    function gets those parameters otherwise (`groups = [{"params": model.backbone.parameters()}, {"params":
    model.head.parameters()}]` beside `AdamW(model.backbone.parameters())`). Groups handed on (to an
    optimizer, to `add_param_group`, in a list, or read whole) are not reported. Also reports an optimizer
    that misses a loss module the same function calls while it backpropagates (or, for a trainer's
    method, one the class keeps on `self`: `self.criterion = ClipLoss()`, or what a call site passes,
    `Trainer(model, ClipLoss())`, with the optimizer built over `self.model.parameters()` in `__init__`;
    or an optimizer the function or class only steps, which every call site passes in the same, built by a
    builder of the project: `model, loss_fn, opt = build(cfg)`, reported where it is stepped and naming where
    it is built; left alone when the builder gives the loss module's parameters to `add_param_group` or to a
    second optimizer),
    when that module (a class
    of the project) makes a learnable `nn.Parameter` of its own (uncertainty weights `self.log_vars`, a
    learnable temperature, ArcFace's class centres) and nothing else gets its parameters: it is neither
    optimized, handed to another call (a trainer that builds its own optimizer), nor read through
    `.parameters()`; loss modules that freeze what they hold (`requires_grad=False`), keep buffers, or fit
    their own parameters with an optimizer they build (a temperature scaler's `fit`) are not reported. And it reports optimizers that get the parameters of some items of a dict of parts a
    builder returns (`parts["encoder"]`, `parts["decoder"]`, also taken out into names first: `m, g =
    nets["mapping"], nets["synthesis"]`, `(_, m), (_, g) = nets.items()`) and not of another one that the training step runs
    (`parts["bottleneck"]`, `m(z)`, called or with the whole dict handed to `autoencode(parts, x)`), at the
    optimizer of the part that takes the missed one's output (`g(m(z))`); a
    dict read any other way, a builder or a callee that may freeze (`requires_grad`, `no_grad`, `eval()`,
    `detach`), and parts that another optimizer gets (a GAN's two) are left alone. The same for the parts
    of a model of the project: an optimizer over some of its parts (`itertools.chain(model.encoder.parameters(),
    model.decoder.parameters())`, a list or groups of them, `filter(...)`, a comprehension over a list of
    parts: `[p for m in (model.embed, model.decoder) for p in m.parameters()]`, in a helper given the model,
    also in another module and through a table of optimizer factories, or `self.stem.parameters()` in a module's own `configure_optimizers`) that no optimizer of the file
    completes with another part the class builds in `__init__` with parameters and runs in `forward`
    (called, looped over as a `ModuleList`, indexed as a `ModuleDict`, also in a method `forward` calls),
    or an item of a `ModuleDict` whose other items it takes by key (`model.heads["cls"]` without
    `model.heads["box"]` while `forward` runs every head), when the optimizer's class or function runs
    the model whole (`model(x)`, `self.model(x)` of a trainer given the model; for a helper given the
    model, any call in the file or where a call site passes it). The same for a plain learner class (no
    `nn.Module`) whose optimizer gets some of the networks it keeps on `self` while a method of it that
    backpropagates runs another one it builds (`self.projector` of a BYOL learner), or that every call site
    builds and passes (`Learner(mlp(d, k), mlp(k, k))`, in a file that loads no checkpoint); a deep copy it
    freezes (a target network) is not the part, and a learner that trains one network alone is reported
    for a trunk it builds fresh when nothing there loads weights (copying them into a target loads none). An optimizer over a single part is reported only for
    a part `forward` runs after it (the fresh head on top of a trained trunk), and never when a file
    involved loads a checkpoint: training the head alone is a linear probe. Left alone: parts run under
    `torch.no_grad()` or detached (a teacher), layers the model is given, a file that sets a
    `requires_grad` flag, freezes, reloads or reads the parameters of the part (an EMA copy), or calls
    `add_param_group`, a stage that runs the parts one by one, and a call of the whole model only in a helper
    that builds an optimizer of its own (`pretrain(ae, loader)` before a stage over `ae.encoder`: a stage of its own). A part frozen for good counts as one no
    optimizer gets: it reports the freeze (a loop setting `requires_grad = False` on the part's parameters,
    `requires_grad_(False)` on the part or on its parameters, or a helper of the project doing so to the
    module it is given: `freeze(model.decoder)`) of a part holding freshly initialised weights (built by
    the model's class or its builder, after any loading there: `model.fc = nn.Linear(...)`; or
    re-initialised by the file with `reset_parameters()`, also of the layers of a loop over the part or
    its `modules()`), into which the file loads nothing, that runs after a part the file leaves
    trainable (`self.head(self.encoder(x))` in `forward`, or `net.head(net.encoder(x))`), when the model's
    parameters go to an optimizer: the new head of a linear probe frozen instead of the encoder. Frozen
    trunks under a trained head (a linear probe, also of random features), loaded or pretrained parts, a
    freeze in a loop or undone later (`requires_grad = True`), and a freeze that keeps some parameters
    (`if "fc" not in name`) are left alone there. A freeze undone later is reported when the optimizer took
    only the parameters trainable at the time (`AdamW([p for p in model.parameters() if p.requires_grad])`,
    `filter(lambda p: p.requires_grad, ...)`, built here or by a helper of the project) while part of the
    model was frozen, and the run then unfreezes that part (`requires_grad = True` over its parameters,
    `requires_grad_(True)`, or a helper of the project doing so to the model it is given:
    `unfreeze_backbone(model)`) with no `add_param_group` and no other optimizer built: reported at the
    unfreeze. An optimizer over all the parameters (a frozen one's `grad` stays None, so unfreezing it just
    works), a rebuild after the unfreeze, and a freeze never undone are left alone.

    ## Why is this bad?
    An optimizer updates only the parameters it is given. A group written out with its own learning rate
    or weight decay and then left out of the optimizer's list means those parameters never train: the
    new classifier, the biases and norm weights of a `no_decay` group, the projection head stay at their
    initial values while the loss still goes down through the rest of the model. A part that `forward`
    runs and no optimizer gets shapes every prediction and stays at its random initialisation.

    ## Example
    ```python
    import torch


    def build_optimizer(model, lr=1e-3):
        backbone = {"params": model.backbone.parameters(), "lr": lr * 0.1}
        head = {"params": model.head.parameters(), "lr": lr}
        return torch.optim.SGD([backbone], lr=lr)
    ```

    ## Use instead
    ```python
    import torch


    def build_optimizer(model, lr=1e-3):
        backbone = {"params": model.backbone.parameters(), "lr": lr * 0.1}
        head = {"params": model.head.parameters(), "lr": lr}
        return torch.optim.SGD([backbone, head], lr=lr)
    ```

    ## Fix safety
    There is no fix: whether the group was meant to train (add it to the optimizer) or is left over
    (delete it) is for the author to decide.
    """

    code = "ML417"
    name = "parameter-group-not-optimized"
    message = (
        "the parameter group `{name}` (`{params}`) is built but never given to an optimizer: "
        "those parameters never train"
    )
    severity = Severity.ERROR
    requires_any_text = ("params", "optim", "backward(")

    loss_message = (
        "`{optimizer}`{built} does not get the parameters of the loss module `{loss}` (`{holder}`): its learnable "
        "`{parameter}` ({where}) shapes the loss but never trains; add `{loss}.parameters()` to the optimizer"
    )

    part_message = (
        "`{optimizer}` gets the parameters of {taken} but not of `{missed}`, which the training step runs "
        "(`{used}`, line {line}): its parameters never train; give them to the optimizer too"
    )

    forward_message = (
        "`{optimizer}` gets the parameters of {taken} but not of `{model}.{missed}`, which `{runner}` runs "
        "({used}): its parameters never train; give them to the optimizer too"
    )

    frozen_message = (
        "`{part}` is frozen here, but its weights are fresh ({fresh}) and it runs after `{after}`, which trains "
        "({runs}): the randomly initialised `{part}` never trains; freeze the part that was meant to stay fixed"
    )

    unfrozen_message = (
        "this unfreezes part of `{model}`, but its optimizer ({optimizer}) was built over the parameters trainable "
        "then: the unfrozen ones get gradients no optimizer applies; `add_param_group` them or rebuild the optimizer"
    )

    def end_file(self) -> None:
        for group in unused_parameter_groups(self.ctx):
            self.report(group.node, self.message.format(name=group.name, params=group.params))
        for found in unoptimized_loss_modules(self.ctx):
            optimizer = one_line(self.ctx.text(found.optimizer.func.value if found.built else found.optimizer), 60)
            built = f" (built at {found.built})" if found.built else ""
            message = self.loss_message.format(
                optimizer=optimizer, built=built, loss=self.ctx.text(found.loss), holder=found.holder, parameter=found.parameter, where=found.where
            )
            self.report(found.optimizer, message)
        for part in missed_parts(self.ctx):
            optimizer = one_line(self.ctx.text(part.optimizer), 60)
            used = one_line(self.ctx.text(part.used), 40)
            message = self.part_message.format(optimizer=optimizer, taken=part.taken, missed=part.missed, used=used, line=part.used.lineno)
            self.report(part.optimizer, message)
        for part in uncovered_parts(self.ctx):
            taken = ", ".join(f"`{t}`" for t in part.taken)
            optimizer = one_line(self.ctx.text(part.optimizer), 60)
            message = self.forward_message.format(optimizer=optimizer, taken=taken, model=part.model, missed=part.missed, used=part.used, runner=part.runner)
            self.report(part.optimizer, message)
        for part in frozen_fresh_parts(self.ctx):
            self.report(part.freeze, self.frozen_message.format(part=part.part, fresh=part.fresh, after=part.after, runs=part.runs))
        for missed in unfrozen_missed(self.ctx):
            self.report(missed.unfreeze, self.unfrozen_message.format(model=missed.model, optimizer=missed.optimizer))
