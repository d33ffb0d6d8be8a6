import ast
from functools import cached_property

from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.values.values import ValueKinds, canonical_class
from mllint.findings import Applicability
from mllint.rule import Rule

LOAD = "torch.load"
SAVE = "torch.save"
MODEL_WORDS = ("model", "net", "network", "module")


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
    Where the file also saves a whole module (`torch.save(model, path)`), the finding says so: such a
    checkpoint is a pickled module, which `weights_only=True` refuses to load (save `model.state_dict()`
    instead).
    """

    code = "ML801"
    name = "torch-load-without-weights-only"
    message = "`torch.load` without `weights_only=True` can run code from the checkpoint (the default before torch 2.6)"
    pickled_module = (
        "; this file saves a whole module (`{saved}`, line {line}), which `weights_only=True` (the fix) refuses"
        " to load: save its `state_dict()` instead"
    )
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
        saved = self._module_saved
        message = self.message
        if saved is not None:
            message += self.pickled_module.format(saved=self.ctx.text(saved.args[0]), line=saved.lineno)
        self.report(node, message, fix)

    @cached_property
    def _module_saved(self) -> ast.Call | None:
        """The first `torch.save(module, ...)` of the file: a module object, not its state_dict (looked for
        once, whatever the number of loads)."""
        for call in self.ctx.index.of_type(ast.Call):
            if self.ctx.qualified_name(call.func) == SAVE and call.args and self._is_module(call.args[0]):
                return call
        return None

    def _is_module(self, expr: ast.AST) -> bool:
        """Built by a module class, or named like a model (`model`, `self.net`, `best_model`) and not
        assigned a state dict."""
        values = self.ctx.analysis(ValueKinds)
        if any(_is_state(value) for value in values.assigned_values(expr) or ()):
            return False
        constructor = values.constructor(expr)
        if constructor is not None:
            name = canonical_class(self.ctx.qualified_name(constructor.func)) or ""
            return name.startswith("torch.nn.") or self.ctx.analysis(ProjectView).is_module_class(name)
        word = expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""
        return word.lower().endswith(MODEL_WORDS)


def _is_state(value: ast.AST) -> bool:
    """`{...}` or `model.state_dict()`."""
    call = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "state_dict"
    return call or isinstance(value, ast.Dict)
