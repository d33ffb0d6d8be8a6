import ast

from mllint.analysis.syntax.names import Names
from mllint.analysis.facets.coverage import passed_lists
from mllint.analysis.facets.parameters import unregistered_from_outside, unregistered_layers
from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class LayersInPlainContainer(Rule):
    """
    ## What it does
    Reports a plain Python list or dict attribute of an `nn.Module` class that layers with parameters
    are put in and that the class reads (its `forward` calls them). The layers may be appended
    (`self.blocks = []` then `self.blocks.append(nn.Linear(...))`), made in a comprehension (`self.heads =
    {k: nn.Linear(...) for k in tasks}`, `self.layers = [Block() for _ in range(n)]`), built by a project
    function (`self.towers = (tower(64, d), tower(64, d))`, a list it fills and returns: `self.layers =
    make_layers(dims)`, or an item of what it returns: `self.blocks = parts["blocks"]` of `return {"stem": ...,
    "blocks": [...]}`, `self.trunk, self.heads = build(d)`, also through a local name) or put in `OrderedDict((k, nn.Embedding(...)) for ...)`. Also reported: such a
    container a function stores on a model it is given, outside the model's class (`model.adapters =
    [Adapter(d) for _ in range(n)]` in `def add_adapters(model, d, n)`, when a call site passes a module of
    the project whose methods read `self.adapters`); a plain list or dict of parameters made where they go
    in (`self.scales = [nn.Parameter(torch.ones(c)) for c in chans]`: use `nn.ParameterList` /
    `nn.ParameterDict`); and an attribute holding an object of a plain project class (no `nn.Module`) that
    keeps layers (`self.bank = AdapterBank(tasks, d)`). Containers that register their layers
    (`nn.ModuleList`, `nn.ModuleDict`, `nn.Sequential`), a list handed on to one (`nn.Sequential(*layers)`)
    or to an optimizer, a class that registers its layers itself (`add_module`, `register_parameter`,
    `setattr`), a list of parameters already registered as attributes (`[self.weight, self.bias]`), and
    lists of tensors, outputs or modules made
    elsewhere (a frozen teacher kept out of `state_dict` on purpose) are not reported, but for one case:
    the modules `__init__` is given, kept as a plain list (`self.members = list(members)`, `[*members]`)
    that a method reads outside `torch.no_grad()`, when a call site passes modules with parameters (an
    `nn.ModuleList` a project function builds, `[mlp(d, 1) for _ in range(k)]`) and its file builds an optimizer over the parameters of
    the model alone: nothing there freezes (`requires_grad`), copies or reloads, and no optimizer gets
    the passed modules' parameters.

    ## Why is this bad?
    `nn.Module` finds its submodules through its attributes, and a list or dict is not a module: the
    layers in it are missing from `parameters()`, `state_dict()`, `.to(device)` and `.train()`/`.eval()`.
    The optimizer never updates them, so they stay at their random initialisation while the rest of
    the model trains around them; a checkpoint does not save them, and on a GPU they stay on the CPU.

    ## Example
    ```python
    import torch.nn as nn


    class MLP(nn.Module):
        def __init__(self, depth):
            super().__init__()
            self.layers = []
            for _ in range(depth):
                self.layers.append(nn.Linear(8, 8))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).relu()
            return x
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class MLP(nn.Module):
        def __init__(self, depth):
            super().__init__()
            self.layers = nn.ModuleList()
            for _ in range(depth):
                self.layers.append(nn.Linear(8, 8))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).relu()
            return x
    ```

    ## Fix safety
    The fix wraps the container in `nn.ModuleList` or `nn.ModuleDict` (`nn.ParameterList` or
    `nn.ParameterDict` for parameters; a plain object is left to the
    author: its class must become an `nn.Module`). It is unsafe: the layers'
    parameters join `state_dict()` under new keys, so checkpoints saved before no longer load strictly,
    and a dict's keys must be strings.
    """

    code = "ML414"
    name = "layers-in-plain-container"
    message = "`self.{attribute}` is a plain {kind}: `{layer}` ({line}) and the other layers in it are invisible to `parameters()`, `state_dict()` and `.to()`, so the optimizer never trains them; use `{module}`"
    object_message = "`self.{attribute}` holds a `{holder}` ({holder_at}), an object of a plain class, not an `nn.Module`: `{layer}` ({line}) and the other layers it holds are invisible to `parameters()`, `state_dict()` and `.to()`, so the optimizer never trains them; make it an `nn.Module` (and its lists `nn.ModuleList`)"
    outside_message = "`{receiver}.{attribute}` is a plain {kind} the function stores on an instance of `{holder}` ({holder_at}), whose methods read it: `{layer}` ({line}) and the other layers in it are invisible to `parameters()`, `state_dict()` and `.to()`, so the optimizer never trains them; use `{module}`"
    parameters_message = "`self.{attribute}` is a plain {kind} of parameters: `{layer}` ({line}) and the others in it are invisible to `parameters()`, `state_dict()` and `.to()`, so the optimizer never trains them; use `{module}`"
    passed_message = "`self.{attribute}` is a plain list of the modules `__init__` is given (`{layer}`, {line}): `parameters()` of the model never reaches them, so its optimizer never trains them; use `nn.ModuleList`"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("nn", "Module")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for found in unregistered_from_outside(self.ctx, node):
            module = "nn.ModuleDict" if found.kind == "dict" else "nn.ModuleList"
            message = self.outside_message.format(
                receiver=found.receiver, attribute=found.attribute, kind=found.kind, holder=found.holder,
                holder_at=found.holder_at, layer=f"{ast.unparse(found.layer.func)}(...)", line=found.where, module=module,
            )  # fmt: skip
            self.report(found.container, message, self._fix(found.container, module))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for found in unregistered_layers(self.ctx, node) + passed_lists(self.ctx, node):
            layer = f"{ast.unparse(found.layer.func)}(...)"
            if found.kind == "object":
                message = self.object_message.format(
                    attribute=found.attribute, holder=found.holder, holder_at=found.holder_at, layer=layer, line=found.where
                )
                self.report(found.container, message)
                continue
            if found.kind == "passed":
                message = self.passed_message.format(attribute=found.attribute, layer=layer, line=found.where)
                self.report(found.container, message, self._fix(found.container, "nn.ModuleList"))
                continue
            module = ("nn.ParameterDict" if found.kind == "dict" else "nn.ParameterList") if found.parameters else (
                "nn.ModuleDict" if found.kind == "dict" else "nn.ModuleList"
            )
            template = self.parameters_message if found.parameters else self.message
            message = template.format(attribute=found.attribute, kind=found.kind, layer=layer, line=found.where, module=module)
            self.report(found.container, message, self._fix(found.container, module))

    def _fix(self, container: ast.AST, module: str):
        prefix = self._torch_nn()
        if prefix is None or isinstance(getattr(container, "ctx", None), ast.Store):  # unpacked into: no place to wrap
            return None
        name = f"{prefix}.{module.split('.')[1]}"
        text = self.ctx.text(container)
        empty = isinstance(container, (ast.List, ast.Dict)) and not (container.elts if isinstance(container, ast.List) else container.keys)
        empty |= isinstance(container, ast.Call) and not container.args and not container.keywords
        replacement = f"{name}()" if empty else f"{name}({text})"
        return self.ctx.fix(f"Wrap it in `{name}`", Applicability.UNSAFE, self.ctx.replace(container, replacement))

    def _torch_nn(self) -> str | None:
        """How the module spells `torch.nn`: `nn`, `torch.nn`; None when it imports neither."""
        imports = self.ctx.analysis(Names).module_imports()
        spelled = [name for name, target in imports.items() if target == "torch.nn"]
        spelled += [f"{name}.nn" for name, target in imports.items() if target == "torch"]
        return min(spelled, key=len) if spelled else None
