import ast

from mllint.analysis.facets.layers import NO_LAYER
from mllint.analysis.facets.mode_facts import Mode, Use
from mllint.analysis.facets.modes import Modes
from mllint.analysis.objects.constants import call_constants
from mllint.analysis.syntax.folding import arms, fold, runs
from mllint.analysis.syntax.names import reference_key
from mllint.analysis.syntax.tree import own_method, position
from mllint.analysis.values.values import ValueKinds
from mllint.findings import Severity
from mllint.rule import Rule

SHAPE_ATTRIBUTES = {"shape", "ndim", "dtype", "device"}  # what the mode never changes


class EvaluationInTrainingMode(Rule):
    """
    ## What it does
    Reports a model called in an evaluation pass (under `torch.no_grad()` or `torch.inference_mode()`,
    or in a loop of a function named like `validate`, `evaluate`, `test` or `predict`) while it is
    certainly in training mode on every way there: built there (modules start in training mode) or put
    there by `model.train()`, with no `model.eval()` or `model.train(False)` in between, directly or in a
    helper of the same file. The model is tracked through `self.model` across the methods of a class
    and into the functions it is passed to, in this file or another module of the project; an evaluation
    function whose model comes from its callers is reported when every caller that tells (in the file, or
    at a call site in another module of the project, whose model's class is known) passes a model in
    training mode (a caller passing it in train mode beside one in eval mode may mean it: samples logged, pseudo-labels,
    Monte Carlo dropout), and the message names that call site. A `copy.deepcopy` of a model has the mode its
    source has at the copy (an EMA or snapshot copied from a model in training mode). A model whose class is
    known (`torch.nn`, this file, or another module of the linted project; for a model passed in, from
    what the call sites pass) and has no Dropout/BatchNorm-like layer is not reported. A model of a project class is
    judged by what its `forward` runs for the outputs the pass keeps (`_, recon, mu, var = vae(x)` with only
    `mu` read after, `vae(x)[2]`): the `self.training` reads and modules that reach them, a module handed to
    its constructor known from the call sites of the function that builds it (`MVAE(encoders, ...)` in
    `train(encoders, ...)`, each item of a list of encoders); a BatchNorm-like layer anywhere in `forward`
    counts whatever is kept. A pass whose kept outputs no known mode-dependent part reaches, while the part
    known to read the mode reaches only what it throws away, is not reported; nor is a model whose mode is unknown (a parameter, a
    model handed to another library), a `no_grad` block inside a training loop (logging, EMA), a model
    put in training mode on purpose with no training between that and the pass (recomputing batch-norm
    statistics, Monte Carlo dropout; not when `model.eval()` came first in the same block or a block around it, nor the
    `model.train()` of a helper that builds or restores the model and hands it back: `model, opt, epoch = resume(path)`),
    a model put in training mode by `model.train()` with no training after it (in the statements from it to
    the pass) whose call in the pass is a statement of its own (`model(x)`: run for its effect on the
    batch-norm statistics alone, as in a BatchNorm recalibration or AdaBN pass), a dummy forward pass in `__init__` or a module's own methods, a
    forward pass whose output is only checked for its shape (unless the model has BatchNorm-like layers,
    whose running statistics it changes), test functions, and Lightning's `validation_step`/`test_step`/`predict_step` (Lightning sets the mode).
    When the evaluation calls a mode helper of its class whose argument selects none of its switches
    (`self._set_mode("val")` of a helper that knows "train" and "eval"), the finding is at that call.

    ## Why is this bad?
    `torch.no_grad()` only stops gradient tracking; Dropout keeps dropping activations and BatchNorm
    keeps normalising with the batch's statistics (and updating its running averages with validation
    data). Validation scores come out noisy and too low, checkpoints are chosen on them, and nothing
    raises an error.

    ## Example
    ```python
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    with torch.no_grad():
        scores = model(torch.ones(3, 4))
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    model.eval()
    with torch.no_grad():
        scores = model(torch.ones(3, 4))
    ```

    ## Fix safety
    There is no fix: where the evaluation starts and where training resumes is for the author to say.
    """

    code = "ML302"
    name = "evaluation-in-training-mode"
    message = "model evaluated in training mode: call `.eval()` first"
    severity = Severity.ERROR
    requires_any_text = ("torch",)

    def end_file(self) -> None:
        modes = self.ctx.analysis(Modes)
        if not modes.may_evaluate():
            return
        uses_of: dict[ast.Call, list[Use]] = {}
        for use in modes.evaluation_uses():
            if modes.evaluation_pass(use.call, dict(use.constants)):  # under the flags its call site passes
                uses_of.setdefault(use.call, []).append(use)
        reported: set[tuple[ast.AST, str]] = set()
        for call, uses in uses_of.items():
            resolved = [u for u in uses if all(f.mode is not Mode.ENTRY for f in u.facts)]
            if not resolved or not all(f.mode is Mode.TRAIN for u in resolved for f in u.facts):
                continue
            if any(_in_a_test(self.ctx, u) for u in uses):
                continue
            if _output_discarded(self.ctx, call) and all(
                f.origin is not f.built and not modes.trained_since(f.site, u.site) for u in resolved for f in u.facts
            ):
                continue  # `model.train()`, then `model(x)` for its effect alone: batch-norm statistics recomputed
            if not all(
                modes.trained_between(f.site, u.site) or modes.set_by_its_builder(f) or _restores_after_eval(modes.context_of(f.origin), f.origin)
                for u in resolved for f in u.facts if f.origin is not f.built
            ):  # fmt: skip
                continue  # `model.train()` then evaluation with no training between: on purpose (not a loader's `train()`)
            layers = [modes.layer(u) for u in resolved]
            if any(layer is NO_LAYER or (layer is None and u.own_key) for u, layer in zip(resolved, layers)):
                continue  # a model passed from another module is reported only when its class is known
            if _only_shape_checked(self.ctx, call) and not any(layer and "Norm" in layer.what for layer in layers):
                continue  # a smoke test of the forward pass: dropout changes values, not shapes
            function = self.ctx.scopes.enclosing_function(call)
            own_key = reference_key(_called_model(call, resolved[0].key)) or resolved[0].key
            if (function, own_key) in reported:
                continue
            reported.add((function, own_key))
            anchor = _unswitched_mode_call(self.ctx, function, call) or call  # where the user changes the code
            self.report(anchor, self._message(modes, call, function, own_key, resolved[0], layers[0]), related=resolved[0].sites)

    def _message(self, modes: Modes, call: ast.Call, function, key: str, use: Use, layer) -> str:
        where = f"`{_qualified(self.ctx, function)}` evaluates" if function is not None else "evaluation of"
        known = [f for f in use.facts if f.origin is not None]
        # The last the function sets: `model.train()` rather than the construction it follows.
        fact = max(known, key=lambda f: (position(f.site), position(f.origin)))
        if use.site is call and fact.origin is fact.built:
            why = f"built in training mode by {modes.describe(fact.origin)}"
        elif use.site is call:
            why = f"set by {modes.describe(fact.origin)}"
        else:
            caller = use.scope if isinstance(use.scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            by = f"`{_qualified(modes.context_of(caller), caller)}`" if caller is not None else "the module"
            why = f"{by} calls it at {modes.where(use.site)}{use.through} after {modes.describe(fact.origin)}"
        if layer is None:
            has = ""
        elif layer.where:
            has = f"; `{layer.owner}` has {layer.what} ({layer.where})"
        elif layer.node is fact.origin:  # the constructor says it (`torchvision.models.resnet50()`)
            has = f"; it has {layer.what}"
        else:
            has = f"; it has {layer.what}, {modes.describe(layer.node)}"
        return f"{where} `{key}` in training mode, {why}{has}: call `{key}.eval()` first"


def _unswitched_mode_call(ctx, function, call: ast.Call) -> ast.Call | None:
    """A call before `call` in `function` of a mode helper of its class whose constants select none of its
    mode switches (`self._set_mode("val")` of a helper that knows "train" and "eval"): the line to change."""
    cls = ctx.scopes.enclosing_class(function) if function is not None else None
    if cls is None:
        return None
    for helper_call in ctx.index.within(function, ast.Call):
        func = helper_call.func
        if position(helper_call) >= position(call) or not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            continue
        helper = own_method(cls, func.attr)
        constants = call_constants(helper_call, helper) if helper is not None else {}
        switches = [n for n in ast.walk(helper) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("train", "eval")] if constants else []
        decide = lambda branch: fold(branch.test, constants)  # noqa: E731
        if switches and not any(runs(arms(ctx.scopes.ancestors(s), s, helper), decide) for s in switches):
            return helper_call
    return None


def _restores_after_eval(ctx, train: ast.AST) -> bool:
    """Does an `eval()` of the same model come first in the block of `model.train()`, or in a block around
    it in the same function? Then the author wanted eval mode there (the pass is an evaluation), and
    `train()` restores the mode or undoes it by mistake: not training behaviour on purpose."""
    if not (isinstance(train, ast.Call) and isinstance(train.func, ast.Attribute)):
        return False
    key = reference_key(train.func.value)
    statement = train
    while statement is not None and not isinstance(statement, ast.stmt):
        statement = ctx.scopes.parent(statement)
    while key is not None and statement is not None and not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = ctx.scopes.parent(statement)
        blocks = [getattr(parent, field, None) for field in ("body", "orelse", "finalbody")] if parent is not None else []
        block = next((b for b in blocks if isinstance(b, list) and statement in b), [])
        earlier = block[: block.index(statement)] if statement in block else []
        if any(
            isinstance(call.func, ast.Attribute) and call.func.attr == "eval" and reference_key(call.func.value) == key
            for node in earlier for call in ast.walk(node) if isinstance(call, ast.Call)
        ):  # fmt: skip
            return True
        statement = parent
    return False


def _in_a_test(ctx, use: Use) -> bool:
    """Tests (`test_dropout`, `testDropout`) exercise training-mode behaviour on purpose; a function
    named just `test` is an evaluation."""
    names = [getattr(f, "name", "") for f in (ctx.scopes.enclosing_function(use.call), use.scope)]
    return any(name.startswith("test_") or (name.startswith("test") and name[4:5].isupper()) for name in names)


def _output_discarded(ctx, call: ast.Call) -> bool:
    """Is the model call a statement of its own (`model(x)`, `_ = model(x)`): run for its effect on the
    model alone, not for its output?"""
    parent = ctx.index.parents.get(call)
    if isinstance(parent, ast.Assign):
        return all(isinstance(t, ast.Name) and t.id == "_" for t in parent.targets)
    return isinstance(parent, ast.Expr)


def _only_shape_checked(ctx, call: ast.Call) -> bool:
    """Is the model's output looked at for its shape only (`out = model(x).logits` then `out.shape`)?"""
    node, parent = call, ctx.index.parents.get(call)
    while isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
        if _is_shape_read(ctx, node):
            return True
        node, parent = parent, ctx.index.parents.get(parent)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    target, values = parent.targets[0], ctx.analysis(ValueKinds)
    reads = [
        read for read in ctx.scopes.loads(target.id) if any(d.node is target for d in values.reaching_definitions(read))
    ]  # fmt: skip
    return bool(reads) and all(_is_shape_read(ctx, read) for read in reads)


def _is_shape_read(ctx, value: ast.AST) -> bool:
    """`value.shape`, `value.ndim`, `value.dtype`, `value.device`, `value.size(...)` or `len(value)`."""
    parent = ctx.index.parents.get(value)
    if isinstance(parent, ast.Attribute) and parent.value is value:
        if parent.attr in SHAPE_ATTRIBUTES:
            return True
        call = ctx.index.parents.get(parent)
        return parent.attr == "size" and isinstance(call, ast.Call) and call.func is parent
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len"


def _called_model(call: ast.Call, key: str) -> ast.AST:
    """What names the model a call runs: the receiver of `model.forward(x)` or of a method of the model
    that runs it (`module.validation_step(batch)`, its use keyed by the receiver); else the callee."""
    func = call.func
    runs_receiver = isinstance(func, ast.Attribute) and (func.attr == "forward" or reference_key(func.value) == key)
    return func.value if runs_receiver else func


def _qualified(ctx, function) -> str:
    cls = ctx.scopes.parent(function)
    return f"{cls.name}.{function.name}" if isinstance(cls, ast.ClassDef) else getattr(function, "name", "lambda")
