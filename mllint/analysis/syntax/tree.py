"""One pass over the syntax tree that every other analysis and the rule traversal share: the nodes in
source (pre-)order, each node's parent, and the nodes of each type."""
from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections import defaultdict

# Fields that never hold a node worth visiting: names and flags, and the shared Load/Store/operator
# singletons (rules read `node.ctx` or `node.op` directly).
SKIPPED_FIELDS = frozenset(
    {"ctx", "op", "id", "name", "attr", "arg", "module", "level", "asname", "kind", "type_comment",
     "conversion", "is_async", "type_ignores"}
)  # fmt: skip
LEAVES = (ast.Constant, ast.MatchSingleton)  # their `value` is a Python object, never a node
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _last_descendant(node: ast.AST) -> ast.AST:
    """The last node of `node`'s subtree in pre-order."""
    children = child_nodes(node)
    while children:
        node = children[-1]
        children = child_nodes(node)
    return node


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` as a list, faster, and without the `ctx` and operator singletons."""
    children: list[ast.AST] = []
    node_type = type(node)
    fields = _CHILD_FIELDS_FIRST_FIRST.get(node_type)
    if fields is None:
        fields = _CHILD_FIELDS_FIRST_FIRST[node_type] = tuple(reversed(_child_fields_last_first(node_type)))
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            children += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


_CHILD_FIELDS_FIRST_FIRST: dict[type, tuple[str, ...]] = {}


def _child_fields_last_first(node_type: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        fields = _CHILD_FIELDS[node_type] = (
            () if issubclass(node_type, LEAVES)
            else tuple(f for f in reversed(node_type._fields) if f not in SKIPPED_FIELDS)
        )  # fmt: skip
    return fields


class TreeIndex:
    def __init__(self, ctx) -> None:
        self.nodes: list[ast.AST] = []
        self.parents: dict[ast.AST, ast.AST] = {}
        self.by_type: dict[type, list[ast.AST]] = defaultdict(list)
        self._order: dict[ast.AST, int] | None = None
        self._type_numbers: dict[type, list[int]] = {}
        self._ends: dict[ast.AST, int] = {}  # a node asked `within` -> the number of its subtree's last node
        nodes, parents, child_fields = self.nodes, self.parents, _CHILD_FIELDS
        stack: list[ast.AST] = [ctx.tree]
        pop, push, append, node_class = stack.pop, stack.append, nodes.append, ast.AST
        while stack:  # children are pushed last first, so that they come out in source order
            node = pop()
            append(node)
            fields = child_fields.get(type(node))
            for name in fields if fields is not None else _child_fields_last_first(type(node)):
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in reversed(value):
                        if isinstance(item, node_class):
                            parents[item] = node
                            push(item)
                elif isinstance(value, node_class):
                    parents[value] = node
                    push(value)
        by_type = self.by_type
        for node in nodes:
            by_type[type(node)].append(node)

    def of_type(self, *types: type) -> list[ast.AST]:
        if len(types) == 1:
            return list(self.by_type.get(types[0], ()))
        return [node for t in types for node in self.by_type.get(t, ())]

    def within(self, node: ast.AST, *types: type) -> list[ast.AST]:
        """The nodes of `types` in `node`'s subtree, `node` included, in pre-order: what filtering
        `ast.walk(node)` gives, without walking it."""
        if self._order is None:
            self._order = {node: i for i, node in enumerate(self.nodes)}
        first, end = self._order[node], self._ends.get(node)
        if end is None:  # (asked again and again of the same functions and statements)
            end = self._ends[node] = self._order[_last_descendant(node)]
        found: list[tuple[int, ast.AST]] = []
        for t in types:
            of_type = self.by_type.get(t, ())
            numbers = self._numbers(t)
            found += [(numbers[i], of_type[i]) for i in range(bisect_left(numbers, first), bisect_right(numbers, end))]
        return [n for _, n in sorted(found, key=lambda pair: pair[0])] if len(types) > 1 else [n for _, n in found]

    def _numbers(self, node_type: type) -> list[int]:
        numbers = self._type_numbers.get(node_type)
        if numbers is None:
            order = self._order or {}
            numbers = self._type_numbers[node_type] = [order[n] for n in self.by_type.get(node_type, ())]
        return numbers


def assignment_targets(node: ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr) -> list[ast.AST]:
    """What an assignment binds: `a = b = x` has two targets; `a: int = x`, `a += x`, `(a := x)` one."""
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def bound_receivers(node: ast.Assign | ast.AnnAssign) -> list[ast.AST]:
    """The receivers an assignment binds (`a`, `self.b` in `a, *self.b = ...`; not `x[i]`)."""
    found, stack = [], list(assignment_targets(node))
    while stack:
        target = stack.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            stack += target.elts
        elif isinstance(target, ast.Starred):
            stack.append(target.value)
        elif isinstance(target, (ast.Name, ast.Attribute)):
            found.append(target)
    return found


def own_method(cls: ast.ClassDef, name: str, kinds=(ast.FunctionDef, ast.AsyncFunctionDef)) -> ast.AST | None:
    """The method `name` defined in the class's own body (the first such definition of `kinds`)."""
    return next((s for s in cls.body if isinstance(s, kinds) and s.name == name), None)


def position(node: ast.AST | None) -> tuple[int, int]:
    """Where a node starts, to order nodes by; (0, 0) for None or a node without a position."""
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def same_expression(a: object, b: object) -> bool:
    """Are two expressions written alike, their load/store context and positions aside (`totals[k]` read and
    assigned)? Compared field by field: `ast.dump` would leave a reference cycle per call."""
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(same_expression, a, b))
    if not isinstance(a, ast.AST) or not isinstance(b, ast.AST):
        return a == b
    fields = [f for f in a._fields if f != "ctx"]
    return type(a) is type(b) and all(same_expression(getattr(a, f, None), getattr(b, f, None)) for f in fields)


MODULE_BLOCKS = (ast.If, ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()), ast.With)


def module_statements(tree: ast.Module) -> list[ast.stmt]:
    """The statements run in the module's own scope, in source order: its body and the bodies of the `if`,
    `try` and `with` statements there (a class under `if __name__ == "__main__":` is a module-level class)."""
    found: list[ast.stmt] = []
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        statement = stack.pop()
        found.append(statement)
        if isinstance(statement, MODULE_BLOCKS):
            handlers = [s for h in getattr(statement, "handlers", ()) for s in h.body]
            blocks = [statement.body, getattr(statement, "orelse", []), handlers, getattr(statement, "finalbody", [])]
            stack += reversed([s for block in blocks for s in block])
    return found
