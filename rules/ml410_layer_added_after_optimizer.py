import ast

from mllint.analysis.parameters import adds_layer, is_optimizer_constructor, optimizer_over
from mllint.findings import Severity
from mllint.rule import Rule


class LayerAddedAfterOptimizer(Rule):
    """
    ## What it does
    Reports a layer with parameters assigned to an attribute of a model (`model.fc = nn.Linear(...)`,
    `model.head = Head()`) after an optimizer was built over that model's `parameters()` in the same
    function, when the optimizer is used afterwards (stepped, or handed to a training function) and is
    not rebuilt or given the new parameters (`add_param_group`) first. An optimizer built after the
    model is complete, a layer replaced before the optimizer is built (a new head after freezing the
    backbone), and a layer that another optimizer built later takes (`critic_optimizer =
    Adam(self.critic.parameters())`) are fine and not reported.

    ## Why is this bad?
    An optimizer holds the parameter tensors it was given when it was built. The new layer's
    parameters are not among them: they receive gradients but never change, so the new head stays at
    its random initialisation while the loss still goes down a little through the rest of the model.

    ## Example
    ```python
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.head = torch.nn.Linear(8, 2)
    optimizer.step()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())
    model.head = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.step()
    ```

    ## Fix safety
    There is no fix: the optimizer's construction may hold settings that depend on the layers.
    """

    code = "ML410"
    name = "layer-added-after-optimizer"
    message = "`{layer}` is added after `{optimizer}` was built over `{model}.parameters()` (line {line}): the optimizer never updates its parameters"
    severity = Severity.ERROR
    requires_any_text = ("parameters(",)

    def visit_Call(self, node: ast.Call) -> None:
        if not is_optimizer_constructor(self.ctx, node):
            return
        holder = _holder(self.ctx, node)
        if holder is None:
            return
        scope = self.ctx.scopes.enclosing_function(node) or self.ctx.tree
        models = {self.ctx.text(o.module) for o in optimizer_over(self.ctx, node)}
        statements = [s for s in self.ctx.index.within(scope, ast.Assign, ast.Expr) if _after(s, node)]
        if any(_adds_parameter_group(self.ctx, s, holder) for s in statements):
            return  # the optimizer is told about new parameters
        rebuilt = next((s for s in statements if _assigns(self.ctx, s, holder)), None)
        for statement in statements[: statements.index(rebuilt) if rebuilt else len(statements)]:
            if not isinstance(statement, ast.Assign) or not adds_layer(self.ctx, statement.value):
                continue
            for target in statement.targets:
                model = next((m for m in models if self.ctx.text(target).startswith(m + ".")), None)
                if model is None or self._optimized_later(scope, self.ctx.text(target), statement):
                    continue
                if _used_after(self.ctx, scope, holder, statement, rebuilt):
                    self.report(target, self.message.format(
                        layer=self.ctx.text(target), optimizer=holder, model=model, line=node.lineno
                    ))  # fmt: skip


    def _optimized_later(self, scope: ast.AST, layer: str, statement: ast.AST) -> bool:
        """Does another optimizer built after `statement` take the layer's parameters (`critic_optimizer =
        Adam(self.critic.parameters())`)?"""
        return any(
            _after(call, statement) and is_optimizer_constructor(self.ctx, call)
            and any(layer == m or layer.startswith(m + ".") for m in map(self.ctx.text, (o.module for o in optimizer_over(self.ctx, call))))
            for call in self.ctx.index.within(scope, ast.Call)
        )  # fmt: skip


def _holder(ctx, constructor: ast.Call) -> str | None:
    """`optimizer` in `optimizer = torch.optim.SGD(...)`."""
    parent = ctx.scopes.parent(constructor)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], (ast.Name, ast.Attribute)):
        return ctx.text(parent.targets[0])
    return None


def _after(node: ast.AST, anchor: ast.AST) -> bool:
    return (node.lineno, node.col_offset) > (anchor.end_lineno, anchor.end_col_offset)


def _assigns(ctx, statement: ast.AST, holder: str) -> bool:
    return isinstance(statement, ast.Assign) and any(ctx.text(t) == holder for t in statement.targets)


def _adds_parameter_group(ctx, statement: ast.AST, holder: str) -> bool:
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (
        isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add_param_group"
        and ctx.text(call.func.value) == holder
    )  # fmt: skip


def _used_after(ctx, scope: ast.AST, holder: str, statement: ast.AST, rebuilt: ast.AST | None) -> bool:
    """Is the optimizer read after `statement` (stepped, handed on) and before it is rebuilt? One kept
    in `self.` is, later."""
    if "." in holder:
        return rebuilt is None
    return any(
        name.id == holder and isinstance(name.ctx, ast.Load) and _after(name, statement)
        and (rebuilt is None or _after(rebuilt, name))
        for name in ctx.index.within(scope, ast.Name)
    )  # fmt: skip
