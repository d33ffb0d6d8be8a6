import ast

from mllint.analysis.facets.dims import broadcast, expanded, format_shape, is_known, trailing_one_added
from mllint.analysis.objects.callees import names_called
from mllint.analysis.program.callers import call_sites
from mllint.analysis.program.project_view import place_in
from mllint.analysis.syntax.names import called_name
from mllint.analysis.facets.shapes import Shapes
from mllint.analysis.facets.tensor_values import Tensor, unknown_rank_column
from mllint.analysis.facets.losses import LossCalls
from mllint.findings import Applicability, Severity
from mllint.rule import Rule

REGRESSION_FUNCTIONS = {
    "torch.nn.functional." + name for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
}
REGRESSION_CLASSES = {"torch.nn." + name for name in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss")}
FUNCTION_NAMES = {name.rsplit(".", 1)[1] for name in REGRESSION_FUNCTIONS}
ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


class RegressionLossBroadcast(Rule):
    """
    ## What it does
    Reports a regression loss (`MSELoss`, `L1Loss`, `SmoothL1Loss`, `HuberLoss`, `F.mse_loss`, ...)
    whose input and target have known shapes that broadcast to a shape larger than both: typically
    `(N, 1)` predictions from a `Linear(h, 1)` head against `(N,)` targets. Shapes come from the shape
    analysis (literal sizes, NumPy arrays, datasets and the batches a `DataLoader` makes of them, layers
    of the project's modules, shape operations). A batch whose rank is unknown counts when its ends are
    known: a `Linear(h, 1)` output `(B, ..., 1)` against `(B,)` targets of the same batch; and a size
    unknown on one side when the ranks decide (`(?, 1)` against `(B,)`). Where a shape is unknown
    otherwise, nothing is reported.

    The loss, the model and the data may come from elsewhere: a loss object returned by a builder or
    passed in (`def train_epoch(model, loader, criterion)`), called through `**inputs`; a loss function
    bound to a name, a `functools.partial` or a `self.` attribute (`self.loss = loss` with
    `loss=F.mse_loss`); a loader, tensors
    or a batch that the first call site of another module (or of another function of the file) passes
    (the message names it), also into a loss module's `forward` through the calls of its instances; a
    model's output given as a dict or tuple (`model(**inputs)["logits"]`); datasets and
    helpers of other modules, `__getitem__` returning a dict (`batch["y"]`), `torch.tensor([value])`
    targets, a `squeeze()` of a `(B, 1)` output (a batch is taken for more than one; the message names
    the dim-less `squeeze()`, in whichever module it is), rows chosen by an index tensor (`X[idx]`,
    `y[idx]`, with `idx` from `torch.randperm(n).split(bs)`), column slices (`y[:, -1:]`,
    `targets[i:i + 1]`), NumPy tables (`np.concatenate(..., axis=1)`, `sum(1, keepdims=True)`, a table
    `np.loadtxt` reads), pandas columns (`df["y"].values` is `(N,)`, `df[["y"]].values` is `(N, 1)`),
    Python lists of numbers (`torch.tensor([row[-1]])`, a list appended to in a loop). Also a
    plain list of samples given to a `DataLoader` (with a `collate_fn` that pads with `pad_sequence`),
    a batch dict whose target is `pop`ped before `model(**batch)`, a trainer's `self.loader` built in
    its `__init__`, loaders passed as `fit(model, *make_loaders())`, windows sliced as `s[i:i + k]`,
    and a pool replaced on a submodule (`self.backbone.pool = nn.AdaptiveAvgPool2d(1)`). Also a module
    calling itself (`self(batch["x"])` in a `training_step` a script loop calls), a `collate_fn`'s nested
    lists (`torch.tensor([[b["y"]] for b in batch])`), `torch.cat` of a list expression, a truncated
    torchvision ResNet (`nn.Sequential(*list(base.children())[:-2])`), an MLP built in a loop into
    `nn.Sequential(*layers)`, sizes left to a parameter's default (`out_dim=1`), and the batches a
    `transformers.Trainer` subclass's `compute_loss` gets from its `train_dataset`. NumPy and torch
    functions that make arrays are read from one table (`np.linspace`, `np.random.normal(0, 1, n)`, `np.sin`,
    `np.mean(a, axis=1)`, `einsum`, `np.column_stack`, `torch.FloatTensor(a)`, ...), and library image
    models by their factory (`timm.create_model(..., num_classes=1)`, `features_only=True`, a torchvision
    model whose `fc` is replaced by `nn.Linear(in_features, 1)`), a `forward` looping over an
    `nn.ModuleList` of listed layers or of layers one comprehension builds (`h = h + block(h)`), a module
    class a builder function defines and returns, an activation the configuration names (`getattr(nn,
    cfg.act)()`), arrays flattened whatever their rank (`a.ravel()`), a dict of loaders read at a key the code does not
    fix (`dataloaders[phase]`), and a LightningModule's `training_step` given the batches of the
    loader `trainer.fit(model, loader)` passes. Also tables whose rows an index array or a named mask picks
    (`df.iloc[perm[:n]]`, `df.loc[keep, FEATURES + ["y"]]`), resampled or rolled (`df.resample("1h").mean()`)
    or standardised by their column statistics (`(df - df.mean()) / df.std()`), offsets from a config
    imported from another module (`self.y[i + self.window]`), residual blocks that widen then narrow back
    or mix tokens through a transpose, and convolution stacks built in a loop. Per-task heads too: an
    `nn.ModuleDict` of heads a `forward` maps to their outputs (`{name: head(h) for name, head in
    self.heads.items()}`), and a loop over a dict whose keys are known (`for name, crit in
    criteria.items(): crit(out[name], y[name])`, `criteria` a literal a builder may return), judged one
    key at a time where that key's loss is a regression loss (the message names the key). A size of the
    result that two different symbols decide (`(B, H)` against `(B, 1, H')`) is shown as `?`: the
    `(B, B)` stretch is there whatever it is. Targets made the legacy way count too
    (`Variable(torch.FloatTensor(opt.batch_size).fill_(1))`, resized by `t.data.resize_(n)`), a batch
    field read at a key set once (`batch[self.target_key]`), and a head sized by a parameter that every
    construction passes 1 as (`Net(8, 32, 1)`, built in one module and kept by a trainer of another).

    ## Why is this bad?
    The loss broadcasts `(N, 1)` against `(N,)` to `(N, N)`: it compares every prediction with every
    target, so its minimum is reached by predicting the mean target for every sample. Training runs,
    the loss goes down a little and the model learns nothing about its inputs. PyTorch only warns.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F
    from torch import nn

    inputs = torch.randn(64, 3)
    targets = inputs @ torch.tensor([1.0, -2.0, 0.5])
    model = nn.Linear(3, 1)
    loss = F.mse_loss(model(inputs), targets)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F
    from torch import nn

    inputs = torch.randn(64, 3)
    targets = inputs @ torch.tensor([1.0, -2.0, 0.5])
    model = nn.Linear(3, 1)
    loss = F.mse_loss(model(inputs).squeeze(-1), targets)
    ```

    ## Fix safety
    When one side is the other with a trailing size-1 dimension, the fix squeezes that dimension away
    (`.squeeze(-1)`). It is unsafe: it changes what the loss computes (that is the point).
    """

    code = "ML601"
    name = "regression-loss-broadcast"
    message = "`{loss}`: input {input} and target {target} broadcast to {result}: every prediction is compared with every target"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("loss", "Loss", "criterion")  # the loss object may be built in another file

    def visit_Call(self, node: ast.Call) -> None:
        if not _two_arguments(node):
            return
        if self._is_regression_loss(node):
            self._check(node)
            return
        for key, classes in self.ctx.analysis(LossCalls).turned_classes(node):  # `crit(out[name], y[name])` per key
            if classes <= REGRESSION_CLASSES and self._check(node, key):
                return

    def _check(self, node: ast.Call, key=None) -> bool:
        """Report the call when its input and target broadcast (in the turn of `key` of a loop over a dict)."""
        shapes = self.ctx.analysis(Shapes)
        (prediction, input_value), (target, target_value) = shapes.argument(node, 0, "input"), shapes.argument(node, 1, "target")
        if key is not None:
            input_value, target_value = (shapes.value_in_turn(side, key) if side is not None else None for side in (prediction, target))
        found = _broadcast(input_value, target_value)
        if found is None:
            return False
        a, b, result, side = found
        message = self.message.format(loss=self.ctx.text(node.func), input=a, target=b, result=result)
        message += f" (at key {key!r})" if key is not None else ""
        squeezed = [v.squeezed_at for v in (input_value, target_value) if isinstance(v, Tensor) and v.squeezed_at]
        if squeezed:
            message += f"; the `squeeze()` at {place_in(self.ctx, *squeezed[0])} drops the size-1 dimension on one side only"
        passed = [n for side_node in (prediction, target) if side_node is not None for n in ast.walk(side_node) if n in shapes.passed]
        site = shapes.call_site(node)
        if passed:
            message += f" ({shapes.passed[passed[0]]})"
        elif site is not None:
            message += f" (with what the call at {site.place} passes)"
        extra = {"input": prediction, "target": target}.get(side)
        fix = None
        if extra is not None:
            text = self.ctx.text(extra)
            squeezed = f"{text}.squeeze(-1)" if isinstance(extra, ATOMIC) else f"({text}).squeeze(-1)"
            fix = self.ctx.fix(f"Squeeze the trailing dimension: `{squeezed}`", Applicability.UNSAFE, self.ctx.replace(extra, squeezed))
        self.report(node, message, fix if key is None else None, related=shapes.sites[passed[0]] if passed else call_sites(site))
        return True

    def _is_regression_loss(self, call: ast.Call) -> bool:
        if called_name(call.func) in FUNCTION_NAMES and self.ctx.qualified_name(call.func) is not None:
            return self.ctx.qualified_name(call.func) in REGRESSION_FUNCTIONS
        if any(classes <= REGRESSION_CLASSES for classes, _ in self.ctx.analysis(LossCalls).called_classes(call)):
            return True
        return any(names <= REGRESSION_FUNCTIONS for names, _ in names_called(self.ctx, call))


def _two_arguments(call: ast.Call) -> bool:
    """Can the call be given an input and a target (two arguments, or a spread of unknown length)?"""
    spread = any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)
    return spread or len(call.args) + len(call.keywords) >= 2


def _broadcast(prediction: object, target: object) -> tuple[str, str, str, str | None] | None:
    """The two shapes and what they broadcast to, as text, when both stretch; and which side has the
    extra trailing size-1 dimension ("input", "target" or None). A side of unknown rank counts when it
    is `(B, ..., 1)` against `(B,)`. A size of the result that two different symbols decide stays
    unknown (`?`): the stretch elsewhere is there whatever it is."""
    if not isinstance(prediction, Tensor) or not isinstance(target, Tensor):
        return None
    column = unknown_rank_column(prediction, target)
    if column is not None:
        *shapes, side = column
        trailing = (prediction, target)[side].ends[1][-1:] == (1,)  # `(B, ..., 1)`; `(B, 1, ...)` has no fix
        return (*shapes, ("input", "target")[side] if trailing else None)
    a, b = prediction.shape, target.shape
    result = broadcast(a, b)
    if a is None or b is None or result is None:
        return None
    extra = "input" if trailing_one_added(a, b, ranks_only=True) else "target" if trailing_one_added(b, a, ranks_only=True) else None
    if extra is None and not (is_known(a) and is_known(b) and expanded(a, result) and expanded(b, result)):
        return None
    return format_shape(a), format_shape(b), format_shape(result), extra
