import ast

from mllint.analysis.classes import ModuleClasses
from mllint.analysis.gradients import GradientFlow, State, under_no_grad
from mllint.analysis.optimizers import is_optimizer
from mllint.analysis.values import ValueKinds
from mllint.rule import Rule


class DetachedSubmoduleOptimized(Rule):
    """
    ## What it does
    Reports a submodule with parameters whose output a module's `forward` always detaches
    (`self.encoder(x).detach()`, `.data`, or a call under `torch.no_grad()`), while the module's
    parameters are handed to an optimizer in the same file (`torch.optim.Adam(model.parameters())`).
    It stays silent when the file mentions `requires_grad` (the submodule is frozen on purpose) or uses
    the submodule anywhere else (a second loss, weight tying).

    ## Why is this bad?
    No gradient ever reaches the submodule: the optimizer carries its parameters (and their weight decay
    and state) but they never learn, while the run looks healthy. Either the detach is a mistake, or the
    submodule was meant to be frozen and should be excluded from the optimizer.

    ## Example
    ```python
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(4, 8)
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            features = self.encoder(x).detach()
            return self.head(features)


    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(4, 8)
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            features = self.encoder(x)
            return self.head(features)


    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ```

    ## Fix safety
    There is no fix: whether to train the submodule or to freeze it is for the author to decide.
    """

    code = "ML405"
    name = "detached-submodule-optimized"
    message = (
        "`self.{name}` is detached wherever it is used, yet its parameters go to the optimizer (line {line}): "
        "it can never learn; drop the detach, or freeze it with `requires_grad_(False)`"
    )
    requires_any_text = ("optim", "Adam", "Adafactor")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node not in self.ctx.analysis(ModuleClasses).modules or "requires_grad" in self.ctx.source.text:
            return
        optimizer = self._optimizer_of(node)
        if optimizer is None:
            return
        for name, assignment in self._parametrised_submodules(node):
            uses = [
                a for a in self.ctx.index.of_type(ast.Attribute)
                if a.attr == name and a is not assignment
            ]  # fmt: skip
            calls = [self._detached_call(use) for use in uses]
            if calls and all(calls):
                self.report(calls[0], self.message.format(name=name, line=optimizer.lineno))

    def _parametrised_submodules(self, cls: ast.ClassDef):
        flows = self.ctx.analysis(GradientFlow)
        for statement in self.ctx.index.within(cls, ast.Assign):
            if len(statement.targets) == 1:
                target = statement.targets[0]
                if _is_self_attribute(target) and isinstance(statement.value, ast.Call):
                    if flows.flow(statement.value).state is State.GRAPH:
                        yield target.attr, target

    def _detached_call(self, use: ast.Attribute) -> ast.Call | None:
        """The call `self.sub(...)` that `use` makes, when its result is only ever used detached."""
        call = self.ctx.scopes.parent(use)
        if not (_is_self_attribute(use) and isinstance(call, ast.Call) and call.func is use):
            return None
        holder = self.ctx.scopes.parent(call)
        if under_no_grad(self.ctx, call) or _cuts(holder, self.ctx):
            return call
        single = isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)
        return call if single and self._only_read_detached(holder.targets[0]) else None

    def _only_read_detached(self, target: ast.Name) -> bool:
        """Is every read of the value bound to `target` a `.detach()` or `.data`?"""
        values = self.ctx.analysis(ValueKinds)
        function = self.ctx.scopes.enclosing_function(target)
        reads = [
            n for n in self.ctx.index.of_type(ast.Name)
            if n.id == target.id and isinstance(n.ctx, ast.Load) and self.ctx.scopes.enclosing_function(n) is function
            and target in [d.node for d in values.reaching_definitions(n)]
        ]  # fmt: skip
        return bool(reads) and all(_cuts(self.ctx.scopes.parent(read), self.ctx) for read in reads)

    def _optimizer_of(self, cls: ast.ClassDef) -> ast.Call | None:
        """An optimizer constructed over all the parameters of `cls`'s instances."""
        values = self.ctx.analysis(ValueKinds)
        for call in self.ctx.index.of_type(ast.Call):
            name = self.ctx.qualified_name(call.func)
            if not (is_optimizer(name) and call.args):
                continue
            argument = call.args[0]
            over_parameters = isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute)
            if not (over_parameters and argument.func.attr == "parameters"):
                continue
            owner = argument.func.value
            if isinstance(owner, ast.Name) and owner.id == "self":
                if self.ctx.scopes.enclosing_class(call) is cls:
                    return call
            elif isinstance(owner, ast.Name):
                built = values.reaching_values(owner)
                if built and all(_constructs(v, cls) for v in built):
                    return call
        return None


def _constructs(value: ast.AST, cls: ast.ClassDef) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == cls.name


def _cuts(node: ast.AST | None, ctx) -> bool:
    """Is `node` (the parent of a value) `.data` or the `.detach` of a `.detach()` call?"""
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr == "data":
        return True
    call = ctx.scopes.parent(node)
    return node.attr == "detach" and isinstance(call, ast.Call) and call.func is node


def _is_self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
