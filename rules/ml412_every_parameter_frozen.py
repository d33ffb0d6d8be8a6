import ast

from mllint.analysis.facets.parameters import HARMLESS_MODULE_METHODS, OptimizerConstructors, layer_owners, optimizer_over
from mllint.analysis.syntax.scope_groups import ScopeGroups, start
from mllint.analysis.values.values import ValueKinds
from mllint.findings import Severity
from mllint.rule import Rule

PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters"})


class EveryParameterFrozen(Rule):
    """
    ## What it does
    Reports an optimizer built over `model.parameters()` after every parameter of that model was frozen
    in the same function (`model.requires_grad_(False)`, or `p.requires_grad = False` for every `p` in
    `model.parameters()`), with no layer added to the model, no parameter unfrozen and no call handed
    the model in between. Freezing a backbone and then replacing its head before the optimizer, a
    freeze that skips some parameters (`if "fc" not in name`), and an optimizer over
    `filter(lambda p: p.requires_grad, ...)` are fine and not reported.

    ## Why is this bad?
    Nothing the optimizer holds can change: `backward()` raises "element 0 of tensors does not require
    grad", or, when another trainable tensor is in the loss, the run goes on and trains nothing of the
    model. A head meant to be trained was usually forgotten, or frozen with the rest.

    ## Example
    ```python
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    for param in model.parameters():
        param.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    for param in model[0].parameters():
        param.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ```

    ## Fix safety
    There is no fix: which part should train is for the author to decide.
    """

    code = "ML412"
    name = "every-parameter-frozen"
    message = "every parameter of `{model}` is frozen (line {line}) before this optimizer is built over them: nothing of `{model}` can train"
    severity = Severity.ERROR
    requires_any_text = ("requires_grad",)

    def visit_Call(self, node: ast.Call) -> None:
        if node not in self.ctx.analysis(OptimizerConstructors).calls:
            return
        scope = self.ctx.scopes.enclosing_function(node) or self.ctx.tree
        for optimized in optimizer_over(self.ctx, node):
            model = self.ctx.text(optimized.module)
            if optimized.filtered:
                continue
            freeze = self._last_freeze(scope, model, node)
            if freeze is not None and not self._changed_between(scope, model, freeze, node):
                self.report(node, self.message.format(model=model, line=freeze.lineno))

    def _last_freeze(self, scope: ast.AST, model: str, optimizer: ast.Call) -> ast.AST | None:
        values = self.ctx.analysis(ValueKinds)
        freezes = self.ctx.analysis(ScopeGroups).of(scope, (ast.Expr, ast.For), _frozen)
        return next((s for s in freezes.between(model, before=start(optimizer), reverse=True) if values.same_path(s, optimizer)), None)

    def _changed_between(self, scope: ast.AST, model: str, freeze: ast.AST, optimizer: ast.Call) -> bool:
        """Is a parameter unfrozen anywhere after the freeze, or a layer added, a call handed the model or
        a method of it called before the optimizer?"""
        groups = self.ctx.analysis(ScopeGroups)
        unfreezes = groups.of(scope, (ast.Assign, ast.Call), _unfreezing)
        after_freeze = unfreezes.between(True, after=start(freeze))
        if any(not (isinstance(n, ast.Call) and _inside(self.ctx, n, freeze)) for n in after_freeze):
            return True
        layers = groups.of(scope, (ast.Assign,), layer_owners)
        if any(layers.between(model, after=start(freeze), before=start(optimizer))):
            return True
        root = model.split(".")[0].split("[")[0]
        calls = groups.of(scope, (ast.Call,), _handed_names)
        return any(not _inside(self.ctx, c, freeze) for c in calls.between(root, after=start(freeze), before=start(optimizer)))


# What `ScopeGroups` groups a scope's nodes by.
def _frozen(ctx, statement: ast.Expr | ast.For) -> list[str]:
    """`model` for `model.requires_grad_(False)`, or for a loop setting `requires_grad = False` on every
    parameter of `model`."""
    if isinstance(statement, ast.Expr):
        call = statement.value
        return [ctx.text(call.func.value)] if _flag_call(call) is False else []
    iterated = statement.iter
    if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)):
        return []
    if iterated.func.attr not in PARAMETER_ITERATORS or statement.orelse:
        return []
    target = statement.target.elts[-1] if isinstance(statement.target, ast.Tuple) else statement.target
    if not isinstance(target, ast.Name):
        return []
    for inner in statement.body:
        if not isinstance(inner, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
            return []  # a branch may spare some parameters
    return [ctx.text(iterated.func.value)] if any(_sets_flag(s, target.id) is False for s in statement.body) else []


def _unfreezing(ctx, node: ast.Assign | ast.Call) -> list[bool]:
    return [True] if _unfreezes(ctx, node) else []


def _handed_names(ctx, call: ast.Call) -> list[str]:
    """The names a call is handed (`train(model)`, `f(key=model.fc)`) or calls a method of, unless the
    method neither unfreezes nor adds parameters (`model.to(device)`)."""
    handed = [*call.args, *(k.value for k in call.keywords)]
    if isinstance(call.func, ast.Attribute) and call.func.attr not in HARMLESS_MODULE_METHODS:
        handed.append(call.func.value)
    return [name.id for expr in handed for name in ctx.index.within(expr, ast.Name)]


def _flag_call(call: ast.AST) -> bool | None:
    """`x.requires_grad_(False)` -> False, `x.requires_grad_()` -> True, None for anything else or unknown."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_"):
        return None
    if not call.args and not call.keywords:
        return True
    value = call.args[0] if call.args else call.keywords[0].value
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else None


def _sets_flag(statement: ast.AST, name: str) -> bool | None:
    """The value `p.requires_grad = False` / `p.requires_grad_(False)` gives parameter `name`."""
    if isinstance(statement, ast.Expr):
        call = statement.value
        flag = _flag_call(call)
        return flag if flag is not None and isinstance(call.func.value, ast.Name) and call.func.value.id == name else None
    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant):
        for target in statement.targets:
            if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
                if isinstance(target.value, ast.Name) and target.value.id == name:
                    return statement.value.value is True
    return None


def _unfreezes(ctx, node: ast.AST) -> bool:
    """`x.requires_grad = <not False>` or `x.requires_grad_(<not False>)`."""
    if isinstance(node, ast.Call):
        is_flag = isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_"
        return is_flag and _flag_call(node) is not False
    return any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets) and not (
        isinstance(node.value, ast.Constant) and node.value.value is False
    )


def _inside(ctx, node: ast.AST, statement: ast.AST) -> bool:
    return statement in set(ctx.scopes.ancestors(node))
