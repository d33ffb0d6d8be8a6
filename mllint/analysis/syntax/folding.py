"""Tests folded where the names they read are known constants: `phase == "train"` under `{"phase": "train"}`.

Pure syntax over a table of constants (the loop variables of an unrolled loop, a call site's constants,
a function's parameter defaults); the values and objects layers and the facets share it. `arms`, `runs` and
`after_exit`, together `runs_under`, are the one answer to "does this node run under these constants" (the
`if`s around it, and those before it whose taken arm returns, each decided by a caller's `decide`: a call's
arguments, a configuration's defaults).
"""
from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable, Iterable, Iterator


def fold(test: ast.AST, constants: dict):
    """True or False when a test is decided by the loop variables known as constants (`phase == "train"`,
    `phase != "src" and x`, `not is_train`, a literal `True`); None when it is not."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name | ast.Attribute):
        value = known_constant(test, constants)
        return None if value is UNKNOWN or value is SOMETHING else bool(value)
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
        if left is SOMETHING or right is SOMETHING:  # only known not to be None (`p is None` of `f(x, m)`)
            return isinstance(op, ast.IsNot) if None in (left, right) and isinstance(op, ast.Is | ast.IsNot) else None
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


def fold_reads(test: ast.AST, reads: list[ast.AST], values: tuple):
    """`fold` of a test whose reads `reads` (names, attributes, items of it) hold `values`, in order:
    `args.config` in `cfg = load(args.config) if args.config else Config()` holding None is False."""
    renamed = _Renamed({_place(n): f"_{i}" for i, n in enumerate(reads)}).visit(copy.deepcopy(test))
    return fold(renamed, {f"_{i}": v for i, v in enumerate(values)})


def _place(node: ast.AST) -> tuple:
    return type(node), node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


class _Renamed(ast.NodeTransformer):
    """A copy of a test with the reads it makes (by place) made plain names, for `fold`."""

    def __init__(self, names: dict) -> None:
        self.names = names

    def visit(self, node: ast.AST) -> ast.AST:
        name = self.names.get(_place(node)) if isinstance(node, ast.expr) and hasattr(node, "lineno") else None
        return ast.Name(name, ast.Load()) if name is not None else self.generic_visit(node)


UNKNOWN = object()
SOMETHING = object()  # a constant's stand-in for a value known only not to be None (a call's argument `m`)
EXITS = (ast.Return, ast.Raise)
Decide = Callable[[ast.AST], "bool | None"]  # an `if` (or `a if c else b`) -> its test's truth, None if open


def arms(ancestors: Iterable[ast.AST], node: ast.AST, stop: ast.AST | None = None) -> Iterator[tuple[ast.AST, bool]]:
    """(each `if` and `a if c else b` around `node`, below `stop` or the first scope, is `node` in the arm
    that runs when its test holds); `ancestors`: `node`'s, innermost first."""
    child = node
    for ancestor in ancestors:
        if ancestor is stop or isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            return
        if isinstance(ancestor, ast.If | ast.IfExp) and child is not ancestor.test:
            yield ancestor, (child in ancestor.body if isinstance(ancestor, ast.If) else child is ancestor.body)
        child = ancestor


def runs(around: Iterable[tuple[ast.AST, bool]], decide: Decide, open: Callable[[ast.AST], bool] = lambda branch: True) -> bool:
    """Does `node` run under `decide`, `around` being its `arms`: no test decided against its arm, and each
    test `decide` leaves open allowed by `open`?"""
    return all(held is wanted if (held := decide(branch)) is not None else open(branch) for branch, wanted in around)


def taken_arms(branch: ast.If, decide: Decide) -> list[list[ast.stmt]]:
    """The arms of an `if` that may run under `decide`."""
    held = decide(branch)
    return [branch.body] if held is True else [branch.orelse] if held is False else [branch.body, branch.orelse]


def ends(block: list[ast.stmt], decide: Decide, exits: tuple[type, ...] = EXITS) -> bool:
    """Does `block` surely end in a `return` or `raise` (or another of `exits`: a loop's turn ends at a
    `continue`), the `if`s `decide` decides running one arm?"""
    last = block[-1] if block else None
    if isinstance(last, ast.If):
        return all(ends(arm, decide, exits) for arm in taken_arms(last, decide))
    return isinstance(last, exits)


def after_exit(ancestors: Iterable[ast.AST], statement: ast.AST, decide: Decide) -> bool:
    """Does `statement` follow, in its block or an enclosing one of its scope, an `if` `decide` decides for
    an arm that ends in `return` or `raise` (`if sched == "step": return StepLR(...)` then `return
    OneCycleLR(...)`, with `sched` "step")? Then it never runs. `ancestors`: `statement`'s, innermost first."""
    child = statement
    for ancestor in ancestors:
        for block in (getattr(ancestor, f, None) for f in ("body", "orelse", "finalbody")):
            if isinstance(block, list) and child in block:
                if any(isinstance(b, ast.If) and decide(b) is not None and ends([b], decide) for b in block[: block.index(child)]):
                    return True
        if isinstance(ancestor, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            return False
        child = ancestor
    return False


def runs_under(scopes, node: ast.AST, decide: Decide, stop: ast.AST | None = None) -> bool:
    """Does `node` run under `decide`: no `if` around it (below `stop`) decided against its arm, and its
    statement follows no `if` decided for an arm that ends in `return` or `raise`? `scopes`: its tree's."""
    statement = scopes.statement(node)
    return runs(arms(scopes.ancestors(node), node, stop), decide) and not after_exit(scopes.ancestors(statement), statement, decide)


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


def is_periodic(test: ast.AST) -> bool:
    """A test of a count modulo another, either way: `is_modulo`, `step % every`, `not step % every`."""
    test = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    return is_modulo(test) or isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod) and not isinstance(test.left, ast.Constant)


def tested_key(scopes, store: ast.Subscript) -> str | None:
    """The string an item store at a name (`table[name] = nn.BCEWithLogitsLoss()`, the only target of its
    assignment) is made at: the nearest `if` around it in its function, or an `elif`, tests the name equal
    to it (`if name == "bce":`); None for any other store."""
    assign = scopes.parent(store)
    if not (isinstance(store.slice, ast.Name) and isinstance(assign, ast.Assign) and assign.targets == [store]):
        return None
    node = assign
    for ancestor in scopes.ancestors(assign):
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
            return None
        if isinstance(ancestor, ast.If) and node in ancestor.body:
            return _equal_string(ancestor.test, store.slice.id)
        node = ancestor
    return None


def _equal_string(test: ast.AST, name: str) -> str | None:
    """The string `test` compares `name` equal to (`name == "bce"`, `"bce" == name`); None for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    sides = (test.left, test.comparators[0])
    for named, other in (sides, sides[::-1]):
        if isinstance(named, ast.Name) and named.id == name and isinstance(other, ast.Constant) and isinstance(other.value, str):
            return other.value
    return None
