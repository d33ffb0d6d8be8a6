import ast

from mllint.analysis.facets.helper_effects import (
    DROPOUT, forward_callers, forward_of_module, leaves_training, reads_mode, taken_somewhere,
)
from mllint.analysis.facets.layers import FUNCTIONAL_DROPOUT
from mllint.analysis.program.effects import ParameterEffects, Reach
from mllint.analysis.program.project_view import place_in
from mllint.analysis.facets.modes import mode_layers
from mllint.findings import Applicability
from mllint.rule import Rule
from mllint.source import one_line


class FunctionalDropoutWithoutTraining(Rule):
    """
    ## What it does
    Reports `F.dropout` (and `F.dropout1d/2d/3d`, `F.alpha_dropout`, `F.feature_alpha_dropout`) called
    in the `forward` of an `nn.Module` (deriving from `torch.nn.Module` directly or through classes of
    the same file or of other modules of the linted project) without its `training` argument. Calls
    that pass `training` (by keyword or position), pass `**kwargs` or `*args`, have `p=0`, or sit in a
    `forward` that reads `self.training` itself (in a condition or an assignment: a read handed to
    another call, `F.dropout(h, p, training=self.training)`, excuses only that call) are not reported.

    The same dropout in a method or function of the project that `forward` runs (`self._pool(h)`, a block
    helper of another module) is reported there, when every call of it comes from a `forward` (or at the call
    in `forward`, when other callers run it too); a call that hands it the mode (`training=self.training`)
    or a helper, `forward` or function on the way that reads the mode (`if self.training: h = noisy(h)`) is
    left alone, and so is a dropout under the helper's own switch (`if drop:`) that its calls leave false.

    ## Why is this bad?
    The functional form does not know the module's mode: `training` defaults to `True`, so the dropout
    stays active after `model.eval()`. Evaluation and inference come out random and too low, and nothing
    raises an error. `nn.Dropout` modules follow `eval()`; the functional form needs
    `training=self.training`.

    ## Example
    ```python
    import torch.nn.functional as F
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return F.dropout(self.fc(x), p=0.5)
    ```

    ## Use instead
    ```python
    import torch.nn.functional as F
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return F.dropout(self.fc(x), p=0.5, training=self.training)
    ```

    ## Fix safety
    The fix adds `training=self.training`. It is safe: training behaves as before, and eval mode gets
    the behaviour `eval()` promises.
    """

    code = "ML304"
    name = "functional-dropout-without-training"
    message = "`{function}` in `forward` stays active in eval mode: pass `training={owner}.training`"
    fix_applicability = Applicability.SAFE
    requires_any_text = ("dropout",)

    def visit_Call(self, node: ast.Call) -> None:
        named = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if "dropout" not in named or self.ctx.qualified_name(node.func) not in FUNCTIONAL_DROPOUT:
            self._check_forward_call(node)
            return
        function = self.ctx.scopes.enclosing_function(node)
        if not isinstance(function, ast.FunctionDef) or function.name != "forward":
            self._check_helper(node, function)
            return
        cls = self.ctx.scopes.parent(function)
        if not isinstance(cls, ast.ClassDef) or not self.ctx.analysis(mode_layers).is_module(cls) or not function.args.args:
            return
        if not leaves_training(self.ctx, node) or reads_mode(self.ctx, function):
            return
        owner = function.args.args[0].arg
        text = f", training={owner}.training"
        last = max([*node.args, *(k.value for k in node.keywords)], key=lambda n: (n.end_lineno, n.end_col_offset), default=None)
        fix = None
        if last is not None:
            fix = self.ctx.fix(f"Pass `training={owner}.training`", Applicability.SAFE, self.ctx.insert_after(last, text))
        self.report(node, self.message.format(function=self.ctx.text(node.func), owner=owner), fix)

    def _check_helper(self, node: ast.Call, function: ast.AST | None) -> None:
        """The dropout sits in a function that every call runs from a module's `forward` (`self._pool(h)`,
        `head(h, self.p)`), none handing it the mode: the dropout is what to change."""
        if function is None or DROPOUT.sink(self.ctx, node) is None:
            return
        sites, other = forward_callers(self.ctx, self.ctx, function, DROPOUT)
        if not sites or other or not taken_somewhere(self.ctx, self.ctx, function, Reach(self.ctx, node)):
            return
        caller, call = sites[0]
        owner = function.args.args[0].arg if isinstance(self.ctx.scopes.parent(function), ast.ClassDef) and function.args.args else None
        advice = f"pass `training={owner}.training`" if owner else "give it a `training` argument that `forward` fills with `self.training`"
        self.report(node, HELPER_MESSAGE.format(
            function=self.ctx.text(node.func), helper=function.name, place=place_in(self.ctx, caller, call), advice=advice,
        ))  # fmt: skip

    def _check_forward_call(self, node: ast.Call) -> None:
        """`forward` runs a project function with such a dropout that other calls run rightly (or whose calls
        are not known): the call in `forward` is reported."""
        forward = self.ctx.scopes.enclosing_function(node)
        if not isinstance(node.func, (ast.Name, ast.Attribute)) or not forward_of_module(self.ctx, forward) or not forward.args.args:
            return
        owner = forward.args.args[0].arg
        callee = self.ctx.analysis(ParameterEffects).callee(node) if DROPOUT.passes(self.ctx, node) else None
        reaches = callee.ctx.analysis(ParameterEffects).anywhere(callee.function, DROPOUT) if callee is not None else ()
        reaches = [r for r in reaches if r.taken_under(node, callee.function, strict=False)]
        if not reaches or reads_mode(self.ctx, forward):
            return
        reach = reaches[0]
        sites, other = forward_callers(self.ctx, reach.ctx, reach.ctx.scopes.enclosing_function(reach.node), DROPOUT)
        if other or not sites:
            self.report(node, CALL_MESSAGE.format(
                call=one_line(self.ctx.text(node), 40), function=reach.ctx.text(reach.node.func),
                place=place_in(self.ctx, reach.ctx, reach.node), owner=owner,
            ))  # fmt: skip


CALL_MESSAGE = (
    "`{call}` runs `{function}` ({place}) with its default `training=True`: it stays active in eval mode; "
    "hand it `{owner}.training`"
)
HELPER_MESSAGE = "`{function}` in `{helper}`, which `forward` runs ({place}), stays active in eval mode: {advice}"
