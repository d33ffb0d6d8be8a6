"""Changes autograd does not see: in-place changes, in a module's training `forward`, made through `.data`
or `.detach()` of a tensor the forward computed with a graph.

`hidden_changes(ctx)` lists them: `q.data.mul_(scale)` of a chunk of a layer's output, `h.narrow(-1, 0,
n).data.mul_(keep)` of a `tanh` output, `att.data *= s`, `out.detach().add_(bias)`, when the function reads
the tensor again afterwards (the forward goes on with the changed values, while the backward treats the
change as if it were not there: a wrong gradient, and no error). `.data` and `.detach()` share the
tensor's storage but not its history. Parameters and buffers (`self.weight.data.clamp_(...)`, an EMA of a
codebook), the forward's own arguments (ML401's), changes under `torch.no_grad()` or in evaluation-only
branches, what a straight-through estimator writes through `.data` on purpose (rounding, signs, copies
of quantized values), and fills at masked places (`alignment.data.masked_fill_(mask, -inf)`
before a softmax: its output there is 0 either way) are not among them. A fill or a store into the output of
an operation whose backward uses that output (`probs.data[:, 0] = 0` or `probs.data.masked_fill_(m, 0)`
after a softmax, `h.detach()[pad] = 0` after a `tanh`) is: the gradient is computed from the altered values.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mllint.analysis.facets.gradients import GradientFlow, State, under_no_grad
from mllint.analysis.facets.saved_outputs import saves_output
from mllint.analysis.facets.views import MAX_ROOT_STEPS, read_after_change, storage_root, viewed
from mllint.analysis.program.classes import training_forward

# Changes in place whose gradient autograd would have to apply: arithmetic and clipping. Not among them:
# what a straight-through estimator writes through `.data` on purpose (rounding, signs, copies of quantized
# values: its backward passes the gradient through unchanged), and fills at masked places
# (`masked_fill_(mask, -inf)` before a softmax, whose output there is 0 either way).
CHANGING = frozenset({
    "add_", "sub_", "mul_", "div_", "pow_", "addcmul_", "addcdiv_", "lerp_", "exp_", "log_", "sqrt_", "neg_",
    "reciprocal_", "sigmoid_", "tanh_", "clamp_", "clamp_min_", "clamp_max_", "clip_",
})  # fmt: skip
# Fills in place: changes of the kind only when what they fill is an output its producer's backward uses.
FILLING = frozenset({"fill_", "zero_", "masked_fill_", "index_fill_", "masked_scatter_", "scatter_", "index_put_"})


@dataclass(frozen=True)
class HiddenChange:
    change: ast.AST  # `q.data.mul_(self.scale)`, `att.data *= s`
    name: ast.Name  # the local name whose tensor it changes: `q`
    through: ast.AST  # `q.data`, `out.detach()`
    read: ast.Name  # where the function reads the changed tensor again
    saved: ast.Call | None = None  # for a fill: the operation that saved what it fills (`x.softmax(-1)`)


def hidden_changes(ctx) -> list[HiddenChange]:
    if ".data" not in ctx.source.text and ".detach()" not in ctx.source.text:
        return []
    flows, found = ctx.analysis(GradientFlow), []
    for node in ctx.index.of_type(ast.AugAssign, ast.Assign, ast.Call):
        changed, filling = _changed(ctx, node)
        hidden = _through(ctx, changed)
        if hidden is None or under_no_grad(ctx, node) or not training_forward(ctx, node):
            continue
        through, name = hidden
        root = storage_root(ctx, name)
        if root is None or not isinstance(root[0], (ast.Call, ast.BinOp)) or flows.flow(root[0]).state is not State.GRAPH:
            continue  # a parameter, an argument, an attribute kept (a buffer), or a tensor without a graph
        if filling and not (isinstance(root[0], ast.Call) and saves_output(ctx, root[0])):
            continue  # masking scores before a softmax: its output there is the same either way
        read = read_after_change(ctx, name, node)
        if read is not None:
            found.append(HiddenChange(node, name, through, read, root[0] if filling else None))
    return found


def _changed(ctx, node: ast.AST) -> tuple[ast.AST | None, bool]:
    """(what a call or statement changes in place, whether it fills rather than computes): the receiver of
    `x.mul_(s)` (`CHANGING`) or of `x.fill_(0)` (`FILLING`), the target of `x *= s`, the tensor of
    `x[..., :n] += v` or of a store `x[..., 0] = v`."""
    if isinstance(node, ast.Call):
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) and ctx.qualified_name(func) is None else None
        return (func.value, method in FILLING) if method in CHANGING or method in FILLING else (None, False)
    if isinstance(node, ast.Assign):
        target = node.targets[0] if len(node.targets) == 1 else None
        return (target.value, True) if isinstance(target, ast.Subscript) else (None, False)
    return node.target.value if isinstance(node.target, ast.Subscript) else node.target, False


def _through(ctx, expr: ast.AST | None) -> tuple[ast.AST, ast.Name] | None:
    """(the `.data` or `.detach()` the changed expression goes through, the local name whose tensor it is)
    along views: `h.narrow(...).data` of `h`."""
    through = None
    for _ in range(MAX_ROOT_STEPS):
        if expr is None or isinstance(expr, ast.Name):
            return (through, expr) if through is not None and expr is not None else None
        hiding = isinstance(expr, ast.Attribute) and expr.attr == "data"
        hiding |= isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "detach" and not expr.args
        through = expr if hiding and through is None else through
        expr = expr.value if isinstance(expr, ast.Attribute) and hiding else viewed(ctx, expr)
    return None
