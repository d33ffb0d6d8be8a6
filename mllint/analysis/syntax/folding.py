"""Tests folded where the names they read are known constants: `phase == "train"` under `{"phase": "train"}`.

Pure syntax over a table of constants (the loop variables of an unrolled loop, a call site's constants,
a function's parameter defaults); the values and objects layers and the facets share it.
"""
from __future__ import annotations

import ast
import operator


def fold(test: ast.AST, constants: dict):
    """True or False when a test is decided by the loop variables known as constants (`phase == "train"`,
    `phase != "src" and x`, `not is_train`); None when it is not."""
    if isinstance(test, ast.Name | ast.Attribute):
        value = known_constant(test, constants)
        return None if value is UNKNOWN else bool(value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = fold(test.operand, constants)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [fold(v, constants) for v in test.values]
        decisive = isinstance(test.op, ast.And) is False  # `or`: a True decides; `and`: a False does
        if decisive in values:
            return decisive
        return (not decisive) if all(v is not None for v in values) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        values = [known_constant(test.left, constants), known_constant(test.comparators[0], constants)]
        if any(k is UNKNOWN for k in values) or not any(isinstance(n, ast.Name | ast.Attribute | ast.BinOp) for n in (test.left, test.comparators[0])):
            return None
        left, right = values
        op = test.ops[0]
        if isinstance(op, ast.Eq | ast.Is):
            return left == right
        if isinstance(op, ast.NotEq | ast.IsNot):
            return left != right
        if isinstance(op, ast.In | ast.NotIn) and isinstance(right, tuple):
            return (left in right) == isinstance(op, ast.In)
        numbers = all(type(v) in (int, float) for v in values)
        if numbers and isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):  # `if p_drop > 0:`
            return ORDERS[type(op)](left, right)
    return None


UNKNOWN = object()
ORDERS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


def existence_test(test: ast.AST) -> tuple[ast.AST, bool] | None:
    """What a test checks to exist, and whether it is true when that exists: `x is not None` and `x` give
    `(x, True)`, `x is None` and `not x` give `(x, False)`; None for any other test."""
    exists = True
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, exists = test.operand, not exists
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        tested = test.comparators[0]
        if not (isinstance(tested, ast.Constant) and tested.value is None and isinstance(test.ops[0], ast.Is | ast.IsNot)):
            return None
        return test.left, exists == isinstance(test.ops[0], ast.IsNot)
    return (test, exists) if isinstance(test, ast.Name | ast.Attribute) else None


def known_constant(node: ast.AST, constants: dict):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id, UNKNOWN)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return constants.get(f"self.{node.attr}", UNKNOWN)  # an attribute `__init__` set from a constant
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and all(isinstance(e, ast.Constant) for e in node.elts):
        return tuple(e.value for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_one(known_constant(node.right, constants)):
        return 0  # a count modulo 1 (`k % 1`, `i % accum` with `accum = 1`): every count divides
    return UNKNOWN


def _is_one(value) -> bool:
    return type(value) is int and value == 1


def is_modulo(test: ast.AST) -> bool:
    """`(i + 1) % k == 0` (or `!=`): a test that holds every so many counts."""
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)) and any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in (test.left, *test.comparators)
    )
