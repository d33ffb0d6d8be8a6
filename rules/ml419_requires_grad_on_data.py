import ast

from mllint.findings import Applicability, Severity
from mllint.rule import Rule


class RequiresGradOnData(Rule):
    """
    ## What it does
    Reports `requires_grad` set through the `.data` of a tensor: `model.embed.weight.data.requires_grad =
    False`, `p.data.requires_grad = True`, `layer.weight.data.requires_grad_(False)`. Setting the flag on
    the tensor itself (`p.requires_grad = False`), `requires_grad_` on a module (ML411 reports the
    attribute on one), and reading `p.data.requires_grad` are not reported.

    ## Why is this bad?
    Each read of `.data` makes a new tensor that shares the parameter's storage but not its autograd
    state. The flag lands on that temporary and is lost with it: the parameter meant to be frozen (a
    pretrained embedding, a backbone) keeps its gradient and the optimizer keeps updating it, and one
    meant to train stays frozen. No error says so.

    ## Example
    ```python
    import torch

    embed = torch.nn.Embedding(10, 4)
    embed.weight.data.requires_grad = False
    ```

    ## Use instead
    ```python
    import torch

    embed = torch.nn.Embedding(10, 4)
    embed.weight.requires_grad = False
    ```

    ## Fix safety
    The fix drops `.data` and sets the flag on the tensor itself. It is unsafe: it changes which
    parameters train (that is the point), and on a tensor computed from others (not a leaf) setting
    `requires_grad = False` raises.
    """

    code = "ML419"
    name = "requires-grad-on-data"
    message = (
        "`{tensor}.data` is a new tensor each time it is read: `requires_grad` set on it leaves `{tensor}` as it was; "
        "use `{tensor}.{attribute}`"
    )
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = (".data.requires_grad",)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
                self._check(target, "requires_grad", f"requires_grad = {self.ctx.text(node.value)}")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "requires_grad_":
            self._check(func, "requires_grad_", f"requires_grad_({', '.join(self.ctx.text(a) for a in node.args)})")

    def _check(self, flag: ast.Attribute, attribute: str, written: str) -> None:
        """Report `flag` (`X.data.requires_grad`, `X.data.requires_grad_`) when it is set on `.data`."""
        data = flag.value
        if not (isinstance(data, ast.Attribute) and data.attr == "data"):
            return
        tensor = self.ctx.text(data.value)
        fix = None
        if "\n" not in tensor:
            edit = self.ctx.replace(flag, f"{tensor}.{attribute}")
            fix = self.ctx.fix(f"Set `{attribute}` on `{tensor}` itself", Applicability.UNSAFE, edit)
        self.report(flag, self.message.format(tensor=tensor, attribute=written), fix)
