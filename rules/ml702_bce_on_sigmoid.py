import ast

from mllint.analysis.facets.gradients import backward_loss
from mllint.analysis.facets.losses import BCE_AFTER_SIGMOID, mismatched_inputs
from mllint.analysis.objects.call_sites import built, loads_of
from mllint.analysis.syntax.names import callee_name
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import ValueKinds
from mllint.findings import Severity
from mllint.rule import Rule

# Where a loss value stops being one that trains: compared, printed, made a Python number.
COMPARISONS = {"allclose", "isclose", "assert_close", "assert_allclose", "assert_almost_equal", "approx", "print"}
SCALAR_METHODS = {"item", "tolist", "numpy", "detach"}
# Container methods that keep the loss for later (`losses.append(loss)`, summed and backpropagated).
STORES = {"append", "extend", "insert", "add", "update", "put", "setdefault"}


class BceOnSigmoid(Rule):
    """
    ## What it does
    Opt-in (enable it by its code). Reports sigmoid output passed as the input of `BCELoss` or
    `F.binary_cross_entropy`, also when the sigmoid is applied by a model's `forward` or a helper
    function in another file of the project, and when the `BCELoss` is one of the criteria a loop or a
    comprehension calls each in turn (`sum(w * fn(prob, y) for fn, w in losses.values())`, the dict built
    by a helper), where the loss may be backpropagated: it reaches a
    `backward()`, or leaves the function (returned, stored in an attribute or a container), directly or
    through variables. A loss that is only compared, printed or turned into a number
    (`torch.allclose(reference, fused)`, `loss.item()`) is not reported: that is a numeric check of the
    fused loss, not training. A `BCELoss` module of the file whose every use is given sigmoid output is
    reported once, at its first use, naming its construction, where the fix is; otherwise each use is.

    The rule is a suggestion, off by default, because the code it finds is correct: a sigmoid followed
    by `BCELoss` is how the DCGAN discriminator and the VAE decoder are written in their papers and in
    PyTorch's own examples, and it trains like the fused loss as long as the logits stay within about
    ±16. Whether a model ever gets that confident depends on its data and its training, which mllint
    does not see; a test script or a toy network never does. On public research repositories, 3 of 7
    findings were worth changing. Enable it for models that can become very confident (discriminators,
    long training on separable data).

    ## Why is this bad?
    It works, but it is the numerically weak way to write it: in float32 the sigmoid rounds to exactly
    1 for logits above about 16.6 (and to 0 far below), where `BCELoss` clamps its log to -100 and the
    gradient is 0, so a confidently wrong example stops teaching the model. `BCEWithLogitsLoss` takes
    the logits and fuses the sigmoid into a stable log-sum-exp, which keeps that gradient. (It also
    accepts `pos_weight` for imbalanced data.)

    ## Example
    ```python
    import torch
    from torch import nn

    criterion = nn.BCELoss()
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
    There is no fix: the loss is constructed elsewhere and the sigmoid output may have other uses.
    """

    code = "ML702"
    name = "bce-on-sigmoid"
    message = "sigmoid output passed to `BCELoss`: `BCEWithLogitsLoss` on the logits keeps the gradient where the sigmoid saturates"
    severity = Severity.INFO
    requires_any_text = ("binary_cross_entropy", "BCELoss", "criterion", "loss")
    opt_in = True
    opt_in_reason = (
        "the code is correct (the DCGAN and VAE papers and PyTorch's examples write it so) unless the logits "
        "pass about ±16; 3 of 7 findings on research repositories were worth changing"
    )

    def end_file(self) -> None:
        flagged = [(call, found) for call, found in mismatched_inputs(self.ctx, BCE_AFTER_SIGMOID) if self._may_train(call)]
        by_loss: dict[ast.Call, list] = {}
        for call, found in flagged:
            construction = self._construction(call, flagged)
            if construction is None:
                where = found.origin.where(found.argument)
                message = f"`{self.ctx.text(found.argument)}` is sigmoid output{where}, passed to `{found.callee}`{found.note}: "
                self.report(found.argument, message + self.advice, related=found.related)
            else:
                by_loss.setdefault(construction, []).append((call, found))
        for construction, uses in by_loss.items():  # one finding, at the first use, naming where the fix is
            call, found = min(uses, key=lambda use: (use[0].lineno, use[0].col_offset))
            others = sorted({c.lineno for c, _ in uses} - {call.lineno})
            also = f" (also at line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})" if others else ""
            message = (
                f"`{self.ctx.text(found.argument)}` is sigmoid output{found.origin.where(found.argument)}, passed to "
                f"`{found.callee}` (`{self.ctx.text(construction)}`, line {construction.lineno}){also}: change it there; "
            )
            self.report(found.argument, message + self.advice, related=found.related)

    advice = "`BCEWithLogitsLoss` on the logits keeps the gradient where the sigmoid saturates"

    def _construction(self, call: ast.Call, flagged: list) -> ast.Call | None:
        """The one `BCELoss()` of this file a flagged call's loss object is, when every read of that object
        (as points-to tells) is a flagged call: the place to change. A read that is another call, or hands
        the object on (`evaluate(model, criterion)`), keeps the findings at the uses."""
        made = built(self.ctx, call.func) if isinstance(call.func, ast.Name | ast.Attribute) else None
        if not made or len(made) != 1 or made[0][0] is not self.ctx:
            return None
        flagged_funcs = {c.func for c, _ in flagged}
        return made[0][1] if all(read in flagged_funcs for read in loads_of(self.ctx, made[0][1])) else None

    def _may_train(self, value: ast.AST, depth: int = 0) -> bool:
        """May the loss be backpropagated: does it reach a `backward`, leave the function (returned,
        yielded, stored in an attribute, item or container), directly or through the variables assigned
        it? Not when it is only compared, printed or turned into a number (a numeric check)."""
        if depth > MAX_DEPTH:
            return True
        parent = self.ctx.scopes.parent(value)
        while isinstance(parent, (ast.expr, ast.keyword, ast.comprehension)):  # `sum(w * v for v in parts.values())` too
            if isinstance(parent, (ast.Compare, ast.JoinedStr)) or callee_name(parent) in COMPARISONS:
                return False
            if isinstance(parent, ast.Attribute) and parent.attr in SCALAR_METHODS:
                return False
            if isinstance(parent, (ast.Lambda, ast.NamedExpr)) or callee_name(parent) in STORES:
                return True
            if isinstance(parent, ast.Call) and backward_loss(self.ctx, parent) is not None:  # also `self.manual_backward(loss)`
                return True
            parent = self.ctx.scopes.parent(parent)
        if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(parent, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            names = [t for t in targets if isinstance(t, ast.Name)]
            return len(names) < len(targets) or any(self._name_may_train(t, depth) for t in names)
        return False  # a bare expression statement (`print(...)`-like), an `assert`, a condition

    def _name_may_train(self, target: ast.Name, depth: int) -> bool:
        """May the value assigned to `target` train? Unknown (True) when no read of it is found."""
        scope = self.ctx.scopes.enclosing_function(target)
        values = self.ctx.analysis(ValueKinds)
        uses = [
            name for name in ast.walk(scope if scope is not None else self.ctx.tree)
            if isinstance(name, ast.Name) and name.id == target.id and name is not target
            and (isinstance(name.ctx, ast.Load) or isinstance(self.ctx.scopes.parent(name), ast.AugAssign))
            and any(d.node is target for d in values.reaching_definitions(name))
        ]  # fmt: skip
        return not uses or any(self._may_train(use, depth + 1) for use in uses)

