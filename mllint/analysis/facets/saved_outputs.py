"""Operations whose backward uses their own output (`sigmoid`, `tanh`, `exp`, `softmax`, `log_softmax`,
`relu`): a change of that output in place, seen by autograd or hidden from it, breaks their gradient.

`saves_output(ctx, call)` answers whether a call is one of them, not working in place: a torch function
(`torch.sigmoid(x)`, `F.softmax(x, -1)`), a tensor method (`x.softmax(-1)`, `x.tanh()`), or a layer of torch
built as one (`self.act(x)` with `self.act = nn.Sigmoid()`, or a `nn.Sequential` ending in one).
"""
from __future__ import annotations

import ast

from mllint.analysis.values.values import ValueKinds, canonical_class

SAVING_FUNCTIONS = frozenset({
    "torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit", "torch.tanh",
    "torch.nn.functional.tanh", "torch.exp", "torch.special.exp", "torch.softmax", "torch.nn.functional.softmax",
    "torch.special.softmax", "torch.log_softmax", "torch.nn.functional.log_softmax", "torch.relu",
    "torch.nn.functional.relu",
})  # fmt: skip
SAVING_METHODS = frozenset({"sigmoid", "tanh", "exp", "softmax", "log_softmax", "relu"})
SAVING_MODULES = frozenset("torch.nn." + name for name in ("Sigmoid", "Tanh", "Softmax", "LogSoftmax", "ReLU"))


def saves_output(ctx, call: ast.Call) -> bool:
    """Is `call` an operation (not in place) whose backward uses its output?"""
    func = call.func
    name = ctx.qualified_name(func)
    if name in SAVING_FUNCTIONS:
        return not maybe_in_place(call)
    if name is not None:
        return False
    constructor = ctx.analysis(ValueKinds).constructor(func)
    if constructor is None:
        return isinstance(func, ast.Attribute) and func.attr in SAVING_METHODS
    return saving_layer(ctx, constructor)


def saving_layer(ctx, constructor: ast.Call) -> bool:
    """A torch layer built to save its output, or an `nn.Sequential` whose last layer is one."""
    name = canonical_class(ctx.qualified_name(constructor.func))
    if name == "torch.nn.Sequential" and constructor.args and not constructor.keywords:
        last = constructor.args[-1]
        return isinstance(last, ast.Call) and saving_layer(ctx, last)
    return name in SAVING_MODULES and not maybe_in_place(constructor)


def maybe_in_place(call: ast.Call) -> bool:
    """Does an `inplace=` keyword of the call (`F.relu(x, inplace=...)`, `nn.ReLU(inplace=...)`) not say False?"""
    return any(k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and k.value.value is False) for k in call.keywords)
