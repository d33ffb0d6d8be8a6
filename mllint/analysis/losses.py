"""Loss calls and the activations fed to them: which torch loss a call computes (`F.nll_loss(...)`,
`criterion(...)` with `criterion = nn.NLLLoss()`), its input, and the fix that drops an activation
(`F.softmax(x, 1)` -> `x`) where nothing else reads its value. Shared by the ML1 rules."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mllint.analysis.names import call_argument
from mllint.analysis.values import FUNCTION_KINDS, METHOD_KINDS, MODULE_KINDS, Kind, Origin, ValueKinds
from mllint.findings import Applicability, Fix

CROSS_ENTROPY = "cross-entropy"
NLL = "nll"
BCE = "bce"
BCE_WITH_LOGITS = "bce-with-logits"
LOSSES = {
    "torch.nn.functional.cross_entropy": CROSS_ENTROPY,
    "torch.nn.CrossEntropyLoss": CROSS_ENTROPY,
    "torch.nn.functional.nll_loss": NLL,
    "torch.nn.NLLLoss": NLL,
    "torch.nn.functional.binary_cross_entropy": BCE,
    "torch.nn.BCELoss": BCE,
    "torch.nn.functional.binary_cross_entropy_with_logits": BCE_WITH_LOGITS,
    "torch.nn.BCEWithLogitsLoss": BCE_WITH_LOGITS,
}


@dataclass(frozen=True)
class LossInput:
    loss: str  # CROSS_ENTROPY, NLL, ...
    callee: str  # the loss as written: `F.nll_loss`, `self.criterion`
    argument: ast.AST  # the input (prediction) argument
    origin: Origin | None  # what the input is, when known


def loss_input(ctx, call: ast.Call, *losses: str) -> LossInput | None:
    """The input of a call of one of `losses`, with its origin; None for any other call."""
    found = ctx.analysis(LossCalls).input_of(call)
    return found if found is not None and found.loss in losses else None


class LossCalls:
    """The loss calls of a file, each worked out once for all the ML1 rules."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._inputs: dict[ast.Call, LossInput | None] = {}

    def input_of(self, call: ast.Call) -> LossInput | None:
        if call not in self._inputs:
            self._inputs[call] = self._input(call)
        return self._inputs[call]

    def _input(self, call: ast.Call) -> LossInput | None:
        ctx = self.ctx
        values = ctx.analysis(ValueKinds)
        name = ctx.qualified_name(call.func)
        loss = LOSSES.get(name) if name in LOSSES else LOSSES.get(values.constructed_class(call.func))
        argument = call_argument(call, 0, "input") if loss else None
        if argument is None:
            return None
        return LossInput(loss, ctx.text(call.func), argument, values.origin(argument))


def activation_input(ctx, activation: ast.Call, kind: Kind) -> ast.AST | None:
    """What an activation of `kind` is applied to: `F.softmax(x, 1)`, `x.softmax(1)`, `self.softmax(x)`;
    None for a model whose last layer is the activation (an `nn.Sequential`): not ours to drop."""
    values = ctx.analysis(ValueKinds)
    functional = FUNCTION_KINDS.get(ctx.qualified_name(activation.func)) is kind
    module = MODULE_KINDS.get(values.constructed_class(activation.func)) is kind
    if functional or module:
        return call_argument(activation, 0, "input")
    func = activation.func
    method = isinstance(func, ast.Attribute) and METHOD_KINDS.get(func.attr) is kind
    return func.value if method and ctx.qualified_name(func) is None else None


def drop_activation_fix(ctx, argument: ast.AST, origin: Origin, message: str, applicability: Applicability) -> Fix | None:
    """Replace the activation by its input, when the loss is the only reader of its value."""
    activation = origin.node
    if origin.source is not None or (activation is not argument and not _only_use(ctx, argument, activation)):
        return None
    inner = activation_input(ctx, activation, origin.kind)
    if inner is None:
        return None
    return ctx.fix(message, applicability, ctx.replace(activation, ctx.text(inner)))


def _only_use(ctx, argument: ast.AST, activation: ast.Call) -> bool:
    """Is `argument` a name assigned only `activation`, and read nowhere else?"""
    values = ctx.analysis(ValueKinds)
    if not isinstance(argument, ast.Name) or values.reaching_values(argument) != [activation]:
        return False
    scope = ctx.scopes.enclosing_function(argument)
    reads = [
        name
        for name in ctx.index.by_type.get(ast.Name, ())
        if name.id == argument.id and isinstance(name.ctx, ast.Load) and ctx.scopes.enclosing_function(name) is scope
    ]
    return reads == [argument]
