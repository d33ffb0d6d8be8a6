import ast

from mllint.analysis.facets.layers import NO_LAYER
from mllint.analysis.facets.modes import mode_layers
from mllint.analysis.objects.points_to import Objects
from mllint.findings import Severity
from mllint.rule import Rule


class ModeLayerBuiltInForward(Rule):
    """
    ## What it does
    Reports a call, in the `forward` of an `nn.Module`, of a dropout module that the same `forward`
    builds: `nn.Dropout(p)(x)`, or `drop = nn.Dropout(p)` then `drop(x)`; also a module of the project
    that holds a Dropout or BatchNorm-like layer (`Block()(x)`). A module built in `__init__` and called in
    `forward` is not reported, nor a layer without a mode (`nn.ReLU()(x)`); torch layers with parameters
    built in `forward` (`nn.BatchNorm1d(n)(x)`, `nn.Linear(4, 4)(x)`) are ML407's.

    ## Why is this bad?
    A module starts in training mode, and one built during the forward pass is never registered on the
    model: `model.eval()` cannot reach it. A fresh `nn.Dropout` keeps dropping activations at evaluation
    and inference, so scores come out random and too low, and nothing raises an error.

    ## Example
    ```python
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(nn.Dropout(p=0.5)(x))
    ```

    ## Use instead
    ```python
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)
            self.dropout = nn.Dropout(p=0.5)

        def forward(self, x):
            return self.fc(self.dropout(x))
    ```

    ## Fix safety
    There is no fix: the layer belongs in `__init__`, under a name the author chooses.
    """

    code = "ML305"
    name = "mode-layer-built-in-forward"
    message = (
        "`{built}` is built inside `forward`, so `eval()` never reaches it: {effect}; build it in `__init__` "
        "and call the registered module"
    )
    severity = Severity.ERROR
    requires_any_text = ("forward",)

    def visit_Call(self, node: ast.Call) -> None:
        if not isinstance(node.func, (ast.Call, ast.Name)):
            return
        function = self.ctx.scopes.enclosing_function(node)
        if not isinstance(function, ast.FunctionDef) or function.name != "forward":
            return
        layers = self.ctx.analysis(mode_layers)
        cls = self.ctx.scopes.parent(function)
        if not isinstance(cls, ast.ClassDef) or not layers.is_module(cls):
            return
        made = self.ctx.analysis(Objects).made(node.func)
        if not made or any(ctx is not self.ctx or self.ctx.scopes.enclosing_function(call) is not function for ctx, call in made):
            return
        found = [(call, layers.of_constructor(call)) for _, call in made]
        if any(layer is None or layer is NO_LAYER for _, layer in found):
            return
        if any(_torch_layer(self.ctx, call) and "Dropout" not in layer.what for call, layer in found):
            return  # a torch layer with parameters built in `forward`: ML407's
        built, layer = found[0]
        effect = "it drops activations in eval mode too" if "Dropout" in layer.what else f"its {layer.what} keeps its training behaviour in eval mode"
        self.report(node, self.message.format(built=self.ctx.text(built), effect=effect))


def _torch_layer(ctx, call: ast.Call) -> bool:
    return (ctx.qualified_name(call.func) or "").startswith("torch.nn.")
