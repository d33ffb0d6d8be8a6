import ast

from mllint.analysis.facets.parameters import REQUIRES_GRAD_TYPOS, is_module, own_setting
from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class RequiresGradOnModule(Rule):
    """
    ## What it does
    Reports `module.requires_grad = False` (or `True`, or a misspelling such as `require_grad`) on an
    `nn.Module`: a torch.nn layer, a module class of the project, a model from `torchvision.models`,
    `timm.create_model`, `torch.hub.load` or `from_pretrained`, or a submodule of such a model. The module
    is found as a submodule (`model.layer4`, `model.fc`, `vit.blocks`, also when a project factory builds
    it: `self.model = build_backbone(cfg)`; through a local alias, `enc = model.encoder` (also of a model whose class nothing tells: `enc =
    self.net.encoder`, or unpacked: `stem, body = net.stem, net.body`), or a helper
    returning the model it is given, `model = prepare(model)`), a `self.` attribute assigned one, what a helper is given at its call sites (`def freeze(model): for
    block in (model.stem, model.stage1): block.requires_grad = False` called with a project model, also
    one a registry builds: a class `@register("convnet")` puts in the table `create_model` reads), an item of
    a dict or tuple a builder returns (`parts["model"].embed`), `getattr(model, name)` for each name the
    configuration or a literal list gives (`for name in cfg.frozen`, `frozen=["layer1", "layer2"]`), a
    loop variable over `model.modules()` / `model.children()`, or, when nothing says what it holds, a
    parameter or attribute named like a module (`model`, `self.network`, `text_encoder`), and a module
    class's own `self.requires_grad = False`. The same assignment on a parameter or another tensor
    (`param.requires_grad = False`) is right and not reported, nor is a module's own setting: an
    argument it stores (`self.requires_grad = requires_grad`) or a flag its methods read back.

    ## Why is this bad?
    `requires_grad` is a tensor flag. On a module it is a plain new attribute: no parameter is frozen,
    the "frozen" backbone keeps training (and the optimizer keeps updating it), and no error says so.

    ## Example
    ```python
    import torch

    backbone = torch.nn.Linear(4, 4)
    backbone.requires_grad = False
    ```

    ## Use instead
    ```python
    import torch

    backbone = torch.nn.Linear(4, 4)
    backbone.requires_grad_(False)
    ```

    ## Fix safety
    The fix calls `requires_grad_(value)`, which sets the flag on every parameter of the module. It is
    safe: the assignment had no effect, and the fix makes it do what it says.
    """

    code = "ML411"
    name = "requires-grad-on-module"
    message = "`{module}` is a module: `{attribute}` set on it freezes nothing; use `{module}.requires_grad_({value})`"
    severity = Severity.ERROR
    fix_applicability = Applicability.SAFE
    requires_any_text = ("require",)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if not (isinstance(target, ast.Attribute) and target.attr in {"requires_grad", *REQUIRES_GRAD_TYPOS}):
                continue
            if not is_module(self.ctx, target.value) or own_setting(self.ctx, target, node.value):
                continue
            module, value = self.ctx.text(target.value), self.ctx.text(node.value)
            fix = None
            if len(node.targets) == 1 and "\n" not in module:
                replacement = f"{module}.requires_grad_({value})"
                fix = self.ctx.fix(f"Call `{module}.requires_grad_({value})`", Applicability.SAFE, self.ctx.replace(node, replacement))
            self.report(target, self.message.format(module=module, attribute=target.attr, value=value), fix)
