import ast

from mllint.analysis.facets.losses import BCE_AFTER_SIGMOID, mismatched_inputs
from mllint.analysis.syntax.names import callee_name
from mllint.analysis.values.values import MAX_DEPTH, ValueKinds
from mllint.rule import Rule

# Where a loss value stops being one that trains: compared, printed, made a Python number.
COMPARISONS = {"allclose", "isclose", "assert_close", "assert_allclose", "assert_almost_equal", "approx", "print"}
SCALAR_METHODS = {"item", "tolist", "numpy", "detach"}
# Container methods that keep the loss for later (`losses.append(loss)`, summed and backpropagated).
STORES = {"append", "extend", "insert", "add", "update", "put", "setdefault"}


class BceOnSigmoid(Rule):
    """
    ## What it does
    Reports sigmoid output passed as the input of `BCELoss` or `F.binary_cross_entropy`, also when the
    sigmoid is applied by a model's `forward` or a helper function in another file of the project, where
    the loss may be backpropagated: it reaches a `backward()`, or leaves the function (returned,
    stored in an attribute or a container), directly or through variables. A loss that is only
    compared, printed or turned into a number (`torch.allclose(reference, fused)`, `loss.item()`) is
    not reported: that is a numeric check of the fused loss, not training.

    ## Why is this bad?
    It works, but it is the numerically weak way to write it: the sigmoid saturates to exactly 0 or 1
    for large logits, where `BCELoss` clamps its log to -100 and the gradient vanishes, so confidently
    wrong examples stop teaching the model. `BCEWithLogitsLoss` takes the logits and fuses the sigmoid
    into a stable log-sum-exp. (It also accepts `pos_weight` for imbalanced data.)

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
    message = "sigmoid output passed to `BCELoss`: use `BCEWithLogitsLoss` on the logits, which is stable"
    requires_any_text = ("binary_cross_entropy", "BCELoss", "criterion", "loss")

    def end_file(self) -> None:
        for call, found in mismatched_inputs(self.ctx, BCE_AFTER_SIGMOID):
            if self._may_train(call):
                where = found.origin.where(found.argument)
                message = f"`{self.ctx.text(found.argument)}` is sigmoid output{where}, passed to `{found.callee}`{found.note}: "
                self.report(found.argument, message + "use `BCEWithLogitsLoss` on the logits, which is stable", related=found.related)

    def _may_train(self, value: ast.AST, depth: int = 0) -> bool:
        """May the loss be backpropagated: does it reach a `backward`, leave the function (returned,
        yielded, stored in an attribute, item or container), directly or through the variables assigned
        it? Not when it is only compared, printed or turned into a number (a numeric check)."""
        if depth > MAX_DEPTH:
            return True
        parent = self.ctx.scopes.parent(value)
        while isinstance(parent, (ast.expr, ast.keyword)):
            if isinstance(parent, (ast.Compare, ast.JoinedStr)) or callee_name(parent) in COMPARISONS:
                return False
            if isinstance(parent, ast.Attribute) and parent.attr in SCALAR_METHODS:
                return False
            if isinstance(parent, (ast.Lambda, ast.NamedExpr)) or callee_name(parent) in {"backward", *STORES}:
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

