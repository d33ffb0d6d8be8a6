import ast
from functools import cached_property

from mllint.analysis.facets.parameters import (
    OptimizerConstructors, built_by_helper, layer_owners, layers_added_through_methods, optimizer_over,
)
from mllint.analysis.syntax.scope_groups import ScopeGroups, dotted_prefixes, end, start
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line


class LayerAddedAfterOptimizer(Rule):
    """
    ## What it does
    Reports a layer with parameters assigned to an attribute of a model (`model.fc = nn.Linear(...)`,
    `model.head = Head()`) after an optimizer was built over that model's `parameters()` in the same
    function (directly, through a name bound to the optimizer class or a `functools.partial` of it:
    `make_opt = partial(torch.optim.AdamW, lr=5e-4)`, or by a project helper that returns it: `optimizer =
    build_optimizer(model, cfg)` whose `return` builds it over `model.parameters()`), when the optimizer is used afterwards (stepped, or handed to a training function) and is
    not rebuilt or given the new parameters (`add_param_group`) first. An optimizer built after the
    model is complete, a layer replaced before the optimizer is built (a new head after freezing the
    backbone), and a layer that another optimizer built later takes (`critic_optimizer =
    Adam(self.critic.parameters())`) are fine and not reported. A call of a method of the model's class
    that adds such a layer to the model (`model.add_head(name, n)` putting `nn.Linear(...)` in
    `self.heads`, `model.grow()` appending a block) counts too, after an optimizer over the model earlier
    in the same function, or in a method of a trainer whose `__init__` built that optimizer
    (`self.model.add_head(...)`), unless the function calls `add_param_group` or builds an optimizer
    after it.

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

    method_message = (
        "`{call}` adds {layer} to the model after `{optimizer}` (line {line}) took its parameters: the "
        "optimizer never updates the new layer; add it with `add_param_group` or build the optimizer after"
    )

    def end_file(self) -> None:
        for found in layers_added_through_methods(self.ctx):
            message = self.method_message.format(
                call=one_line(self.ctx.text(found.call), 50), layer=found.layer,
                optimizer=one_line(self.ctx.text(found.optimizer), 50), line=found.optimizer.lineno,
            )  # fmt: skip
            self.report(found.call, message)

    def visit_Call(self, node: ast.Call) -> None:
        if node in self.ctx.analysis(OptimizerConstructors).calls:
            models = {self.ctx.text(o.module) for o in optimizer_over(self.ctx, node)}
        elif self._says_optim(node.func):  # `build_optimizer(model, cfg)`: a helper, perhaps
            models = set(built_by_helper(self.ctx, node) or ())
        else:
            return
        holder = _holder(self.ctx, node)
        if not models or holder is None:
            return
        scope = self.ctx.scopes.enclosing_function(node) or self.ctx.tree
        groups = self.ctx.analysis(ScopeGroups)
        if any(groups.of(scope, (ast.Expr,), _parameter_groups_added).between(holder, after=end(node))):
            return  # the optimizer is told about new parameters
        rebuilt = next(groups.of(scope, (ast.Assign,), _assigned).between(holder, after=end(node)), None)
        layers = groups.of(scope, (ast.Assign,), layer_owners)
        statements = {s for m in models for s in layers.between(m, after=end(node), before=rebuilt and start(rebuilt))}
        for statement in sorted(statements, key=start):
            for target in statement.targets:
                owners = [m for m in models if self.ctx.text(target).startswith(m + ".")]
                model = max(owners, key=lambda m: (len(m), m), default=None)  # the closest owner, whatever the set order
                if model is None or self._optimized_later(scope, self.ctx.text(target), statement):
                    continue
                if self._used_after(scope, holder, statement, rebuilt):
                    self.report(target, self.message.format(
                        layer=self.ctx.text(target), optimizer=holder, model=model, line=node.lineno
                    ))  # fmt: skip

    @cached_property
    def _optim_lines(self) -> frozenset[int]:
        """The lines that say `optim` (in any case): an expression can say it only if one of its lines does."""
        return frozenset(number for number, line in enumerate(self.ctx.source.lines, 1) if "optim" in line.lower())

    def _says_optim(self, node: ast.AST) -> bool:
        lines = range(node.lineno, node.end_lineno + 1)
        return not self._optim_lines.isdisjoint(lines) and "optim" in self.ctx.text(node).lower()

    def _optimized_later(self, scope: ast.AST, layer: str, statement: ast.AST) -> bool:
        """Does another optimizer built after `statement` take the layer's parameters (`critic_optimizer =
        Adam(self.critic.parameters())`)?"""
        optimizers = self.ctx.analysis(ScopeGroups).of(scope, (ast.Call,), _optimized_modules)
        return any(any(optimizers.between(m, after=end(statement))) for m in [layer, *dotted_prefixes(layer)])

    def _used_after(self, scope: ast.AST, holder: str, statement: ast.AST, rebuilt: ast.AST | None) -> bool:
        """Is the optimizer read after `statement` (stepped, handed on) and before it is rebuilt? One kept
        in `self.` is, later."""
        if "." in holder:
            return rebuilt is None
        loads = self.ctx.analysis(ScopeGroups).of(scope, (ast.Name,), _loaded)
        return any(loads.between(holder, after=end(statement), before=rebuilt and start(rebuilt)))


def _holder(ctx, constructor: ast.Call) -> str | None:
    """`optimizer` in `optimizer = torch.optim.SGD(...)`."""
    parent = ctx.scopes.parent(constructor)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], (ast.Name, ast.Attribute)):
        return ctx.text(parent.targets[0])
    return None


# What `ScopeGroups` groups a scope's nodes by.
def _parameter_groups_added(ctx, statement: ast.Expr) -> list[str]:
    """`optimizer` for `optimizer.add_param_group(...)`."""
    call = statement.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add_param_group":
        return [ctx.text(call.func.value)]
    return []


def _assigned(ctx, statement: ast.Assign) -> list[str]:
    return [ctx.text(target) for target in statement.targets]


def _loaded(ctx, name: ast.Name) -> list[str]:
    return [name.id] if isinstance(name.ctx, ast.Load) else []


def _optimized_modules(ctx, call: ast.Call) -> list[str]:
    """`model` and `critic` for `Adam([*model.parameters(), *critic.parameters()])`."""
    return [ctx.text(o.module) for o in optimizer_over(ctx, call)] if call in ctx.analysis(OptimizerConstructors).calls else []
