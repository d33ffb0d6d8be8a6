import ast

from mllint.analysis.facets.layers import NO_LAYER
from mllint.analysis.facets.mode_facts import Mode, Use
from mllint.analysis.facets.modes import Modes
from mllint.analysis.syntax.tree import position
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line


class TrainingResumedInEvalMode(Rule):
    """
    ## What it does
    Reports a training step (a loop iteration or function that calls `backward()`) whose model may still
    be in eval mode from an evaluation earlier in the same epoch loop: `model.eval()` (or a helper of the
    same file or of another module of the project that calls it, such as `evaluate(model, loader)`) runs
    in the loop body, after training or
    before it (a validation at the top of the iteration), and no `model.train()` (or `model.train(True)`,
    `model.to(device).train()`, `getattr(model, "module", model).train()`,
    `for net in (generator, discriminator): net.train()`) runs before the training. When the only `model.train()`
    runs once, before the loop, the finding is at it (the line to move into the loop) and names the training
    step by file and line (one that trains the model rather than one calling it under `no_grad()`); otherwise it is at the training step, and names the `train()` the training function
    calls on another module instead (`self.augment.train()`, a part's `self.model.head.train()`). A model whose class is known
    (`torch.nn`, this file, or another module of the linted project) and has no Dropout/BatchNorm-like
    layer is not reported; a model put in eval mode before the loop on purpose
    (frozen batch-norm statistics) is not either, nor a model that none of the optimizers at hand (the
    file's; for a model passed in, those the training function builds, or those each of its call sites
    passes with the model, `Distiller(student, teacher, Adam(student.parameters()))`) updates while they
    update others (a distillation teacher, a frozen U-Net, an EMA copy). The
    model is followed as an object (`model = self.model`, `model = model.to(device)`, `DataParallel(model)`
    are the same model), and a loop over literal phases (`for phase in ["train", "val"]`) runs once per
    phase, its `if phase == "train":` branches taken as they are. Also reported: fine-tuning a model loaded with
    transformers' `from_pretrained`, which returns it in eval mode, or by a helper of the project that calls
    `model.eval()` before returning it (alone or in a tuple: `model, tok = load(name)`), without any
    `model.train()`; also when
    the training function is passed the model by a call site in another module of the project (that call
    site is named).

    ## Why is this bad?
    From the second epoch on the model trains in eval mode: Dropout is off, so the regularisation the
    model was designed with is gone, and BatchNorm normalises with frozen running statistics that never
    update. Training still runs and the loss still falls, usually to a worse model.

    ## Example
    ```python
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    for epoch in range(2):
        loss = model(torch.ones(16, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            validation = model(torch.ones(16, 4)).mean()
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        model.train()
        loss = model(torch.ones(16, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            validation = model(torch.ones(16, 4)).mean()
    ```

    ## Fix safety
    There is no fix: the `model.train()` belongs at the start of the training part of the loop, which
    is for the author to place.
    """

    code = "ML303"
    name = "training-resumed-in-eval-mode"
    message = "training resumes with the model in eval mode: call `.train()` first"
    severity = Severity.ERROR
    requires_any_text = ("eval", "train", "backward")  # `backward`: a model another module loads in eval mode

    def end_file(self) -> None:
        modes = self.ctx.analysis(Modes)
        if not (modes.may_switch_to_eval() or modes.may_train_passed_models()):
            return
        reported: set[ast.AST] = set()
        # A step that trains the model first: the one a finding at a `train()` before the loop names (not its
        # forward under `no_grad()` in another model's step, which makes that model's inputs).
        for use in sorted(modes.training_uses(), key=lambda use: modes.home(use.call).grad_disabled(use.call)):
            if use.call in reported or not any(f.mode is Mode.EVAL for f in use.facts):
                continue
            loops = modes.loops_around(use.site, use.scope)
            evaluations = [
                f for f in use.facts
                if f.mode is Mode.EVAL and f.site is not None
                and (loops & modes.loops_around(f.site, use.scope) or modes.set_by_its_builder(f) and _optimized_use(modes, use))
            ]  # fmt: skip
            training = modes.training_step(use.call) or (use.site is not use.call and modes.training_step(use.site))
            if not evaluations or not training or modes.frozen(use) or modes.layer(use) is NO_LAYER:
                continue
            reported.add(use.call)
            fact = min(evaluations, key=lambda f: (position(f.site), position(f.origin)))  # the first the loop reaches
            via = f", through {modes.describe(fact.site)}" if fact.site is not fact.origin else ""
            when = "later in the loop" if _after(fact.site, use.site) else "earlier in the iteration"
            if fact.origin is fact.built:
                when = "as it loads it (transformers calls `eval()` after loading the weights),"
            elif modes.set_by_its_builder(fact) and not loops & modes.loops_around(fact.site, use.scope):
                when = "before handing it back,"
            caller = f"`{use.scope.name}`" if hasattr(use.scope, "name") else "the module"
            passed = f"; {caller} passes it at {modes.where(use.site)}{use.through}" if use.own_key else ""
            once = _train_once_before(modes, use, loops & modes.loops_around(fact.site, use.scope))
            if once is not None:  # the line to change: the `train()` before the loop
                if once[0] in reported:
                    continue
                reported.add(once[0])
                message = (
                    f"`{one_line(self.ctx.text(once[0]), 40)}` runs once, before the loop on line {once[1].lineno}: {modes.describe(fact.origin)}{via} "
                    f"puts `{use.name}` in eval mode {when}, so from the second iteration on the training step at "
                    f"{_place(self.ctx, modes, use.call)} runs in eval mode{passed}; call `.train()` at the top of each iteration"
                )
                self.report(once[0], message, related=use.sites)
                continue
            other = _other_train(self.ctx, modes, use)
            aimed = f" (`{self.ctx.text(other)}` on line {other.lineno} puts only `{self.ctx.text(other.func.value)}` in training mode)" if other else ""
            message = (
                f"`{use.name}` may train in eval mode: {modes.describe(fact.origin)}{via} puts it in eval mode "
                f"{when} and nothing calls `{use.name}.train()` before this training step runs{aimed}{passed}"
            )
            self.report(use.call, message, related=use.sites)


def _train_once_before(modes: Modes, use: Use, loops: set[ast.AST]) -> tuple[ast.AST, ast.AST] | None:
    """(the `model.train()` of the linted file that reaches the training step from before `loops`, the
    innermost of them) when one does: it puts the model in training mode once, for the first iteration only."""
    if not loops:
        return None
    before = [
        f.site for f in use.facts
        if f.mode is Mode.TRAIN and f.site is not None and f.origin is not f.built  # a `train()`, not the construction
        and modes.context_of(f.site) is modes.ctx and not loops & modes.loops_around(f.site, use.scope)
    ]  # fmt: skip
    return (max(before, key=position), max(loops, key=position)) if before else None


def _other_train(ctx, modes: Modes, use: Use) -> ast.Call | None:
    """The last `x.train()` of another module before the training step in its function (`self.augment.train()`
    where `self.model.train()` was meant, or a submodule's `self.model.head.train()`)."""
    function = ctx.scopes.enclosing_function(use.call) if modes.context_of(use.call) is ctx else None
    calls = [
        c for c in (ctx.index.within(function, ast.Call) if function is not None else ())
        if isinstance(c.func, ast.Attribute) and c.func.attr == "train" and not c.args and not c.keywords
        and ctx.text(c.func.value) != use.name and position(c) < position(use.call)
    ]  # fmt: skip
    return max(calls, key=position) if calls else None


def _place(ctx, modes: Modes, node: ast.AST) -> str:
    """Where a node is, by file name (`trainer.py:31`), in this file or another module."""
    return ctx.place(node) if modes.context_of(node) is ctx else modes.where(node)


def _optimized_use(modes: Modes, use: Use) -> bool:
    """Does an optimizer take the model's parameters, here or, when a call site in another module passes
    it, there? A loaded model no optimizer updates is a frozen encoder or a teacher: eval mode is meant."""
    places = [(modes, use.key)] + ([(modes.home(use.site), use.key)] if use.own_key else [])
    return any(key in home.optimized for home, key in places)


def _after(node: ast.AST, other: ast.AST) -> bool:
    return (node.lineno, node.col_offset) > (other.lineno, other.col_offset)
