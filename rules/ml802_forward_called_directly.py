import ast

from mllint.findings import Applicability
from mllint.rule import Rule


class ForwardCalledDirectly(Rule):
    """
    ## What it does
    Opt-in (enable it by its code). Reports `model.forward(x)` called on a module object from outside that module's own methods.
    `super().forward(x)`, `self.forward(x)` and explicit base calls (`Base.forward(self, x)`) are fine.

    ## Why is this bad?
    Calling a module (`model(x)`) runs its forward and pre-forward hooks around `forward`; calling
    `forward` directly skips them. Hooks are how feature extractors, pruning, quantization observers,
    `torch.utils.checkpoint` wrappers, FSDP and many profilers work, so they silently stop working.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 2)
    outputs = model.forward(torch.randn(3, 4))
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(4, 2)
    outputs = model(torch.randn(3, 4))
    ```

    ## Fix safety
    The fix calls the module itself (`model(x)`). It is safe for modules; for an object whose class
    defines `forward` but is not a module, calling it may not be defined, which is why only names and
    attributes of objects, never classes or `self`, are reported.
    """

    code = "ML802"
    name = "forward-called-directly"
    message = "`{call}` skips the module's hooks: call `{receiver}(...)`"
    fix_applicability = Applicability.SAFE
    requires_any_text = ("torch",)
    # Framework code calls `forward` on purpose (graph modules, RPC and C++ modules, DDP internals): on the
    # torch sources most findings were deliberate. For training scripts, enable it with its code.
    opt_in = True
    opt_in_reason = "framework code calls `forward` on purpose (graph modules, DDP internals, autograd Functions)"

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "forward"):
            return
        receiver = func.value
        if not isinstance(receiver, (ast.Name, ast.Attribute)) or _is_self(receiver) or _is_class_like(receiver):
            return
        if self.ctx.qualified_name(receiver) is not None:
            return  # an imported class or module: `nn.Linear.forward(self, x)`
        text = self.ctx.text(receiver)
        fix = self.ctx.fix(f"Call `{text}(...)`", Applicability.SAFE, self.ctx.replace(func, text))
        self.report(node, self.message.format(call=f"{text}.forward(...)", receiver=text), fix)


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _is_class_like(node: ast.AST) -> bool:
    """`Base.forward(self, x)` names a class: by convention, a capitalised name."""
    name = node.id if isinstance(node, ast.Name) else node.attr
    return name[:1].isupper()
