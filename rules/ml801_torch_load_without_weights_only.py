import ast

from mllint.findings import Applicability
from mllint.rule import Rule

LOAD = "torch.load"


class TorchLoadWithoutWeightsOnly(Rule):
    """
    ## What it does
    Opt-in (enable it by its code). Reports `torch.load(...)` without a `weights_only` argument (and without a custom `pickle_module`
    or `**kwargs` that could carry one).

    ## Why is this bad?
    Before torch 2.6, `torch.load` unpickles arbitrary Python objects by default: loading a downloaded
    or shared checkpoint can run any code its author wanted. Code that says `weights_only=True` is safe
    under every torch version, and states that the file holds only tensors and plain containers.

    ## Example
    ```python
    import torch

    state = torch.load("checkpoint.pt", map_location="cpu")
    ```

    ## Use instead
    ```python
    import torch

    state = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
    ```

    Since torch 2.6 `weights_only=True` is the default, so the rule is opt-in: enable it for code that
    must also run on older versions.

    ## Fix safety
    The fix adds `weights_only=True`. It is unsafe: on torch before 2.6, a checkpoint that holds other
    Python objects (an optimizer's custom state, a NumPy random state) now fails to load, with an error
    instead of running whatever it contains. Pass `weights_only=False` explicitly for a file you trust.
    """

    code = "ML801"
    name = "torch-load-without-weights-only"
    message = "`torch.load` without `weights_only=True` can run code from the checkpoint (the default before torch 2.6)"
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("torch",)
    opt_in = True  # the default is safe since torch 2.6: on real code, every finding was noise there
    opt_in_reason = "since torch 2.6 `weights_only=True` is the default: it matters only for code that must run on older torch"

    def visit_Call(self, node: ast.Call) -> None:
        if self.ctx.qualified_name(node.func) != LOAD or not (node.args or node.keywords):
            return
        if any(k.arg in (None, "weights_only", "pickle_module") for k in node.keywords):
            return  # given, or possibly given through **kwargs
        last = max((*node.args, *(k.value for k in node.keywords)), key=lambda n: (n.end_lineno, n.end_col_offset))
        fix = self.ctx.fix("Add `weights_only=True`", Applicability.UNSAFE, self.ctx.insert_after(last, ", weights_only=True"))
        self.report(node, self.message, fix)
