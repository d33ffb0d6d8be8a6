import ast
import re

from mllint.analysis.program.callers import call_sites, per_call_site
from mllint.analysis.facets.detached import Detached, always_detached
from mllint.analysis.facets.parameters import OptimizerConstructors, optimizer_over
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.values.values import ValueKinds
from mllint.rule import Rule

# What a module whose class detaches a submodule's output must contain (a cheap test before parsing it).
DETACHING = re.compile(rb"detach|\.data\b|no_grad|inference_mode")
FROZEN = "requires_grad"


class DetachedSubmoduleOptimized(Rule):
    """
    ## What it does
    Reports a submodule with parameters whose output a module's `forward` always detaches
    (`self.encoder(x).detach()`, `.data`, or a call under `torch.no_grad()`), while the module's
    parameters are handed to an optimizer: `torch.optim.Adam(model.parameters())` where `model` is an
    instance of the class, also when a helper builds the optimizer over the model it receives
    (`build_optimizer(model, cfg)`, read per call site), through param groups (`[{"params":
    model.encoder.parameters()}, ...]`), and for a class of another module (reported at the optimizer;
    in the class's own file, at the detach). It stays silent when a file involved (the class's, the
    optimizer's, one that builds the model) mentions `requires_grad` (the submodule is frozen on
    purpose), when the optimizer leaves the submodule out or filters the parameters, and when the class
    uses the submodule anywhere else (a second loss, weight tying); a copy of its weights or gradients
    (`w = model.sub.weight.data`, `.grad`, `.detach()`) is no such use.

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
        "{owner}`self.{name}` is detached wherever it is used{where}: it can never "
        "learn; drop the detach, or freeze it with `requires_grad_(False)` and leave it out of the optimizer"
    )
    requires_any_text = ("optim", "Adam", "Adafactor")

    def visit_Call(self, node: ast.Call) -> None:
        if node not in self.ctx.analysis(OptimizerConstructors).calls or FROZEN in self.ctx.source.text:
            return  # a file that mentions `requires_grad` freezes on purpose
        reported: set[tuple[str, str]] = set()
        for optimized in optimizer_over(self.ctx, node):
            if optimized.filtered:
                continue  # `filter(lambda p: p.requires_grad, ...)`: what is frozen is left out
            for model, cls, submodule, binding in self._model_classes(optimized.module):
                for detached, path in self._always_detached(cls):
                    if submodule not in (None, detached.name) or (cls, detached.name) in reported:
                        continue
                    reported.add((cls, detached.name))
                    if path:  # the class is in another module: reported at the optimizer
                        where = f" ({path}:{detached.call.lineno}), yet its parameters go to this optimizer"
                    else:  # reported at the detach
                        where = f", yet its parameters go to the optimizer (line {node.lineno})"
                    message = self.message.format(owner=self._owner(model, cls, binding), name=detached.name, where=where)
                    self.report(optimized.module if path else detached.call, message, related=call_sites(binding))

    def _owner(self, model: ast.AST, cls: str, binding) -> str:
        """"`model` is a `Net`, passed at main.py:12, whose ", or "`Net`'s " for `self`."""
        name = cls.rpartition(".")[2]
        if isinstance(model, ast.Name) and model.id == "self":
            return f"`{name}`'s "
        passed = f", passed at {binding.place}" if binding is not None else ""
        return f"`{self.ctx.text(model)}` is a `{name}`{passed}, whose "

    def _model_classes(self, module: ast.AST):
        """(the model, its project class, the submodule attribute or None, the call site) for `model` or
        `self.model` (every submodule) and `model.encoder` (that one), under each call site of the function."""
        candidates = [(module, None)]
        if isinstance(module, ast.Attribute):
            candidates.append((module.value, module.attr))
        values, view = self.ctx.analysis(ValueKinds), self.ctx.analysis(ProjectView)
        for expr, submodule in candidates:
            if isinstance(expr, ast.Name) and expr.id == "self":  # `Adam(self.parameters())` in a method
                cls = self.ctx.scopes.enclosing_class(expr)
                if cls is not None and self.ctx.module is not None:
                    yield expr, f"{self.ctx.module.name}.{cls.name}", submodule, None
                return
            found = list(per_call_site(self.ctx, expr, lambda binding: view.instance_class(values.value(expr, binding=binding))))
            for cls, binding in found:
                yield expr, cls, submodule, binding
            if found:
                return

    def _always_detached(self, qualified: str) -> list[tuple[Detached, str]]:
        """The submodules a project class always detaches, with the path of its module ("" for the linted
        file); none when a module involved mentions `requires_grad` (frozen on purpose): the class's or
        one that builds the class (the linted file is tested in `visit_Call`)."""
        view, index = self.ctx.analysis(ProjectView), self.ctx.project
        found = view.class_summary(qualified)
        if found is None:
            return []
        summary, cls_summary = found
        if summary is not view.own and not (index.mentions(summary.name, DETACHING) and not index.mentions(summary.name, FROZEN)):
            return []
        ctx, cls = cls_summary.definition()
        if cls is None or (index is not None and any(index.mentions(m, FROZEN) for m in _builders(index, summary, cls))):
            return []
        return [(detached, view.display(summary)) for detached in always_detached(ctx, cls)]


def _builders(index, summary, cls: ast.ClassDef) -> list[str]:
    """The modules that call the class's name and name its module (`from models import Net`)."""
    module = summary.name.rpartition(".")[2]
    return [m for m in index.modules_calling(cls.name) if m == summary.name or index.mentions(m, module)]
