import ast

from mllint.analysis.facets.layers import FUNCTIONAL_DROPOUT
from mllint.analysis.facets.modes import mode_layers
from mllint.analysis.syntax.names import call_argument
from mllint.findings import Applicability
from mllint.rule import Rule


class FunctionalDropoutWithoutTraining(Rule):
    """
    ## What it does
    Reports `F.dropout` (and `F.dropout1d/2d/3d`, `F.alpha_dropout`, `F.feature_alpha_dropout`) called
    in the `forward` of an `nn.Module` (deriving from `torch.nn.Module` directly or through classes of
    the same file or of other modules of the linted project) without its `training` argument. Calls
    that pass `training` (by keyword or position), pass `**kwargs` or `*args`, have `p=0`, or sit in a
    `forward` that reads `self.training` itself (in a condition or an assignment: a read handed to
    another call, `F.dropout(h, p, training=self.training)`, excuses only that call) are not reported.

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
            return
        function = self.ctx.scopes.enclosing_function(node)
        if not isinstance(function, ast.FunctionDef) or function.name != "forward":
            return
        cls = self.ctx.scopes.parent(function)
        if not isinstance(cls, ast.ClassDef) or not self.ctx.analysis(mode_layers).is_module(cls) or not function.args.args:
            return
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg in (None, "training") for k in node.keywords):
            return
        if len(node.args) > 2 or _is_zero(call_argument(node, 1, "p")):
            return
        owner = function.args.args[0].arg
        if _reads_training(self.ctx, function, owner):
            return
        text = f", training={owner}.training"
        last = max([*node.args, *(k.value for k in node.keywords)], key=lambda n: (n.end_lineno, n.end_col_offset), default=None)
        fix = None
        if last is not None:
            fix = self.ctx.fix(f"Pass `training={owner}.training`", Applicability.SAFE, self.ctx.insert_after(last, text))
        self.report(node, self.message.format(function=self.ctx.text(node.func), owner=owner), fix)


def _is_zero(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Constant) and not isinstance(value.value, bool) and value.value == 0


def _reads_training(ctx, function: ast.FunctionDef, owner: str) -> bool:
    """Does `forward` consult the mode itself (`if self.training:`, `p if self.training else 0`)? A read
    handed to another call (`F.dropout(h, p, training=self.training)`) consults it for that call only."""
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.attr == "training" and isinstance(node.value, ast.Name) and node.value.id == owner:
            parent = ctx.scopes.parent(node)
            if not (isinstance(parent, ast.keyword) or (isinstance(parent, ast.Call) and node in parent.args)):
                return True
    return False
