"""What a statement adds into a total it keeps: the one reader of accumulations, for a loop's running totals
and lists (ML207) and a meter's attributes (`meters.kept_argument`).

`added(node)` answers for `total += v`, `total = total + v` (in any order, the old total scaled too: a
running average `avg = 0.9 * avg + 0.1 * v`; an arm of `ema = v if ema is None else 0.98 * ema + 0.02 * v`),
`torch.lerp(avg, v, w)`, `avg.lerp(v, w)`, `torch.cat([scores, s])`, `avg.add_(v)` and `avg.mul_(0.9).add_(v)`,
`total.append(v)` (also `extend`, `insert`; each value of a record `logs.append({"loss": loss})`), and an
entry of a dict: `stats["loss"] += v`, `totals[k] = totals.get(k, 0) + v`, `history[k].append(v)`. The
total is a local name or an attribute of `self`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mllint.analysis.syntax.tree import same_expression

APPENDS = frozenset({"append", "extend", "insert"})
JOINING = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "add"})


@dataclass(frozen=True)
class Added:
    target: ast.AST  # as written: `total`, `stats["loss"]`, `self.sum`, `history[k]` of `history[k].append(v)`
    values: tuple[ast.AST, ...]  # what it adds: the factors of a product (`loss * x.size(0)`), a record's items
    plain: bool  # `.item()` after a value makes it a number the total still adds (`+=`, `a + b`, an append)

    @property
    def total(self) -> ast.Name | ast.Attribute:
        """What holds the total across iterations: `stats` of `stats["loss"]`, `self.sums` of `self.sums[k]`."""
        return total_of(self.target)


def added(node: ast.AST) -> Added | None:
    """What `node` (a statement, or a call of a method of the total) adds into a total it keeps; None for
    anything else."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and total_of(node.target) is not None:
        return Added(node.target, tuple(_factors(node.value)), True)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and total_of(node.targets[0]) is not None:
        values = _added_to(node.targets[0], node.value)
        plain = isinstance(node.value, ast.BinOp)
        return Added(node.targets[0], tuple(f for v in values for f in _factors(v)), plain) if values is not None else None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
        return None
    if node.func.attr == "add_" and len(node.args) == 1:  # `avg.mul_(0.9).add_(loss)`: changed in place
        receiver = node.func.value
        while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr in ("mul_", "div_"):
            receiver = receiver.func.value
        return Added(receiver, tuple(_factors(node.args[0])), False) if total_of(receiver) is receiver else None
    if node.func.attr in APPENDS and not node.keywords and total_of(node.func.value) is not None:
        item = node.args[-1]  # `logs.append({"step": i, "loss": loss})`: each value of the record
        items = item.values if isinstance(item, ast.Dict) else item.elts if isinstance(item, ast.Tuple | ast.List) else [item]
        return Added(node.func.value, tuple(items), True)
    return None


def total_of(target: ast.AST) -> ast.Name | ast.Attribute | None:
    """`total` for `total`, `stats` for `stats["loss"]` and `losses[k]`; `self.outputs` for an attribute
    of `self` (kept by the object across a loop's iterations and a method's calls), `model.history` for one
    of another object."""
    if isinstance(target, ast.Subscript):
        target = target.value
    return target if isinstance(target, ast.Name) or isinstance(root_of(target), ast.Name) else None


def root_of(node: ast.AST) -> ast.AST:
    """`model` of `model.history` and of `model.logs.values`."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _factors(value: ast.AST) -> list[ast.AST]:
    """What a sum adds that may be the loss: `loss`, both factors of `loss * x.size(0)`, the terms of `a + b`."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        return [value.left, value.right]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return [*_factors(value.left), *_factors(value.right)]
    return [value]


def _added_to(target: ast.AST, value: ast.AST) -> list[ast.AST] | None:
    """What `value` adds to the old value of `target`: the other operands of a sum that reads it once
    (scaled or not), the other argument of a `lerp`, the other items a join makes one tensor with."""
    if isinstance(value, ast.IfExp):
        arms = [_added_to(target, arm) for arm in (value.body, value.orelse)]
        return next((a for a in arms if a is not None), None)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        listed = len(value.args) == 1 and isinstance(value.args[0], ast.List | ast.Tuple)
        arguments = (value.args[0].elts if listed else value.args) if _joins(value) else []
        if any(_reads(a, target) for a in arguments):  # `torch.cat([self.scores, s])`, `torch.add(total, v)`
            return [a for a in arguments if not _reads(a, target)]
        interpolated = value.func.attr == "lerp"
        if interpolated and len(value.args) == 3 and _reads(value.args[0], target):  # `torch.lerp(avg, loss, 0.1)`
            return [value.args[1]]
        if interpolated and len(value.args) == 2 and _reads(value.func.value, target):  # `avg.lerp(loss, 0.1)`
            return [value.args[0]]
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    operands, pending = [], [value]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pending += [node.right, node.left]
        else:
            operands.append(node)
    old = [o for o in operands if _reads(o, target) or (isinstance(o, ast.BinOp) and isinstance(o.op, ast.Mult) and (_reads(o.left, target) or _reads(o.right, target)))]
    return [o for o in operands if o not in old] if len(old) == 1 else None


def _joins(call: ast.Call) -> bool:
    """`torch.cat([...])`, `torch.stack(...)`, `torch.add(a, b)`: a call that makes one tensor of those it is given."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in JOINING and isinstance(func.value, ast.Name) and func.value.id in ("torch", "th")


def _reads(value: ast.AST, target: ast.AST) -> bool:
    """Is `value` the old value of `target`: the same name or entry, or the entry read by `.get(key, default)`?"""
    if same_expression(value, target):
        return True
    get = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" and value.args
    return bool(get) and isinstance(target, ast.Subscript) and same_expression(value.func.value, target.value) and same_expression(value.args[0], target.slice)
