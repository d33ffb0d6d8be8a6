import ast

from mllint.analysis.names import call_argument
from mllint.analysis.values import FUNCTION_KINDS, Kind, ValueKinds
from mllint.findings import Applicability, Fix, Severity
from mllint.rule import Rule

CROSS_ENTROPY_FUNCTION = "torch.nn.functional.cross_entropy"
CROSS_ENTROPY_CLASS = "torch.nn.CrossEntropyLoss"
SOFTMAX_FUNCTIONS = {name for name, kind in FUNCTION_KINDS.items() if kind is Kind.PROBABILITIES}
SOFTMAX_MODULE = "torch.nn.Softmax"


class SoftmaxIntoCrossEntropy(Rule):
    """
    ## What it does
    Reports softmax output passed as the input of `CrossEntropyLoss` or `F.cross_entropy`: from
    `F.softmax`, `torch.softmax`, `x.softmax(dim)`, an `nn.Softmax` module or an `nn.Sequential` ending in
    one, directly or through local variables and import aliases.

    ## Why is this bad?
    Cross-entropy applies `log_softmax` itself and expects raw logits. A softmax first squashes the logits
    into (0, 1), so the loss sees almost uniform scores: gradients shrink, training stalls and the loss
    plateaus near ln(k) for k classes. Nothing raises an error. Softmax used only for predictions or
    metrics, `log_softmax` with `NLLLoss`, and softmax of a teacher's logits passed as the *target* (soft
    labels in distillation) are fine and not reported.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(F.softmax(logits, dim=1), labels)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 3, requires_grad=True)
    labels = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(logits, labels)
    ```

    ## Fix safety
    The fix removes the softmax, passing its input instead, when the softmax value has no other use. It
    is unsafe: it changes what the loss computes (that is the point) and so the training run.
    """

    code = "ML101"
    name = "softmax-into-cross-entropy"
    message = "softmax output passed to cross-entropy, which applies log_softmax itself: pass the raw logits"
    severity = Severity.ERROR
    fix_applicability = Applicability.UNSAFE
    requires_any_text = ("cross_entropy", "CrossEntropyLoss")

    def visit_Call(self, node: ast.Call) -> None:
        loss = self._cross_entropy_name(node)
        if loss is None:
            return
        argument = call_argument(node, 0, "input")
        if argument is None:
            return
        values = self.ctx.analysis(ValueKinds)
        origin = values.origin(argument)
        if origin is None or origin.kind is not Kind.PROBABILITIES:
            return
        where = "" if origin.node is argument else f" (line {origin.node.lineno})"
        message = (
            f"`{self.ctx.text(argument)}` is softmax output{where}, but `{loss}` applies log_softmax "
            "itself: pass the raw logits"
        )
        self.report(argument, message, self._fix(argument, origin.node, values))

    def _cross_entropy_name(self, call: ast.Call) -> str | None:
        if self.ctx.qualified_name(call.func) == CROSS_ENTROPY_FUNCTION:
            return self.ctx.text(call.func)
        if self.ctx.analysis(ValueKinds).constructed_class(call.func) == CROSS_ENTROPY_CLASS:
            return self.ctx.text(call.func)
        return None

    def _fix(self, argument: ast.AST, softmax: ast.Call, values: ValueKinds) -> Fix | None:
        """Replace the softmax by its input, when nothing else reads the softmax value."""
        if softmax is not argument and not self._only_use(argument, softmax, values):
            return None
        logits = self._softmax_input(softmax)
        if logits is None:
            return None
        return self.ctx.fix(
            "Remove the softmax: pass the logits", Applicability.UNSAFE, self.ctx.replace(softmax, self.ctx.text(logits))
        )

    def _softmax_input(self, softmax: ast.Call) -> ast.AST | None:
        """The logits a softmax is applied to: `F.softmax(x, 1)`, `x.softmax(1)`, `self.softmax(x)`; None
        for a model whose last layer is the softmax (an `nn.Sequential`): that layer is not ours to drop."""
        functional = self.ctx.qualified_name(softmax.func) in SOFTMAX_FUNCTIONS
        module = self.ctx.analysis(ValueKinds).constructed_class(softmax.func) == SOFTMAX_MODULE
        if not functional and not module:
            method = isinstance(softmax.func, ast.Attribute) and softmax.func.attr == "softmax"
            return softmax.func.value if method and self.ctx.qualified_name(softmax.func) is None else None
        return call_argument(softmax, 0, "input")

    def _only_use(self, argument: ast.AST, softmax: ast.Call, values: ValueKinds) -> bool:
        """Is `argument` a name assigned only `softmax`, and read nowhere else?"""
        if not isinstance(argument, ast.Name) or values.reaching_values(argument) != [softmax]:
            return False
        scope = self.ctx.scopes.enclosing_function(argument)
        reads = [
            name
            for name in self.ctx.index.by_type.get(ast.Name, ())
            if name.id == argument.id and isinstance(name.ctx, ast.Load)
            and self.ctx.scopes.enclosing_function(name) is scope
        ]
        return reads == [argument]
