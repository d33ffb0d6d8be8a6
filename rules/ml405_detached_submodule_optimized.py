import ast
import re

from mllint.analysis.callers import per_call_site
from mllint.analysis.classes import ModuleClasses
from mllint.analysis.detached import always_detached
from mllint.analysis.optimizers import is_optimizer
from mllint.analysis.parameters import is_optimizer_constructor, optimizer_over
from mllint.analysis.project import ProjectView
from mllint.analysis.values import ValueKinds
from mllint.rule import Rule

# What a module whose class detaches a submodule's output must contain (a cheap test before parsing it).
DETACHING = re.compile(rb"detach|\.data\b|no_grad|inference_mode")
FROZEN = "requires_grad"


class DetachedSubmoduleOptimized(Rule):
    """
    ## What it does
    Reports a submodule with parameters whose output a module's `forward` always detaches
    (`self.encoder(x).detach()`, `.data`, or a call under `torch.no_grad()`), while the module's
    parameters are handed to an optimizer: in the same file (`torch.optim.Adam(model.parameters())`), or,
    for a model class of another module, wherever the optimizer is built over an instance of it, also by
    a helper that receives the model (`build_optimizer(model, cfg)`, per call site) and through param
    groups (`[{"params": model.encoder.parameters()}, ...]`). It stays silent when a file involved (the
    class's, the optimizer's, one that builds the model) mentions `requires_grad` (the submodule is frozen
    on purpose), when the optimizer leaves the submodule out or filters the parameters, and when the class
    uses the submodule anywhere else (a second loss, weight tying).

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
        if node not in self.ctx.analysis(ModuleClasses).modules or FROZEN in self.ctx.source.text:
            return
        optimizer = self._optimizer_of(node)
        if optimizer is None:
            return
        for detached in always_detached(self.ctx, node):
            self.report(detached.call, self.message.format(name=detached.name, line=optimizer.lineno))

    def visit_Call(self, node: ast.Call) -> None:
        """An optimizer over a model whose class, in another module, always detaches a submodule."""
        if self.ctx.project is None or not is_optimizer_constructor(self.ctx, node):
            return
        reported: set[tuple[str, str]] = set()
        for optimized in optimizer_over(self.ctx, node):
            if optimized.filtered:
                continue  # `filter(lambda p: p.requires_grad, ...)`: what is frozen is left out
            for owner, cls, submodule, binding in self._model_classes(optimized.module):
                for detached, place in self._detached_elsewhere(cls):
                    if submodule not in (None, detached.name) or (cls, detached.name) in reported:
                        continue
                    reported.add((cls, detached.name))
                    passed = f", passed at {binding.place}" if binding is not None else ""
                    message = (
                        f"`{self.ctx.text(owner)}` is a `{cls.rpartition('.')[2]}`{passed}, whose "
                        f"`self.{detached.name}` is detached wherever it is used ({place}:{detached.call.lineno}), "
                        "yet its parameters go to this optimizer: it can never learn; drop the detach, or freeze it "
                        "with `requires_grad_(False)` and leave it out of the optimizer"
                    )
                    self.report(optimized.module, message)

    def _model_classes(self, module: ast.AST):
        """(the model, its project class, the submodule attribute or None, the call site) for `model` or
        `self.model` (every submodule) and `model.encoder` (that one), under each call site of the function."""
        candidates = [(module, None)]
        if isinstance(module, ast.Attribute):
            candidates.append((module.value, module.attr))
        values, view = self.ctx.analysis(ValueKinds), self.ctx.analysis(ProjectView)
        for expr, submodule in candidates:
            found = list(per_call_site(self.ctx, expr, lambda binding: view.instance_class(values.value(expr, binding=binding))))
            for cls, binding in found:
                yield expr, cls, submodule, binding
            if found:
                return

    def _detached_elsewhere(self, qualified: str):
        """The submodules a project class of another module always detaches, with that module's path; none
        when a module involved mentions `requires_grad` (frozen on purpose)."""
        view, index = self.ctx.analysis(ProjectView), self.ctx.project
        found = view.class_summary(qualified)
        if found is None or found[0] is view.own or not index.mentions(found[0].name, DETACHING):
            return []
        summary, cls_summary = found
        ctx, cls = cls_summary.definition()
        if cls is None or FROZEN in self.ctx.source.text or index.mentions(summary.name, FROZEN):
            return []
        if any(index.mentions(m, FROZEN) for m in index.modules_calling(cls.name)):
            return []
        place = view.display(summary)
        return [(detached, place) for detached in always_detached(ctx, cls)]

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
