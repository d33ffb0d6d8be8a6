"""One pass over the syntax tree that every other analysis and the rule traversal share: the nodes in
source (pre-)order, each node's parent, and the nodes of each type."""
from __future__ import annotations

import ast
from collections import defaultdict

# Fields that never hold a node worth visiting: names and flags, and the shared Load/Store/operator
# singletons (rules read `node.ctx` or `node.op` directly).
SKIPPED_FIELDS = frozenset(
    {"ctx", "op", "id", "name", "attr", "arg", "module", "level", "asname", "kind", "type_comment",
     "conversion", "is_async", "type_ignores"}
)  # fmt: skip
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(node_type: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        fields = _CHILD_FIELDS[node_type] = tuple(f for f in node_type._fields if f not in SKIPPED_FIELDS)
    return fields


class TreeIndex:
    def __init__(self, ctx) -> None:
        self.nodes: list[ast.AST] = []
        self.parents: dict[ast.AST, ast.AST] = {}
        self.by_type: dict[type, list[ast.AST]] = defaultdict(list)
        nodes, parents, by_type = self.nodes, self.parents, self.by_type
        stack: list[ast.AST] = [ctx.tree]
        while stack:
            node = stack.pop()
            nodes.append(node)
            by_type[type(node)].append(node)
            children = []
            for name in child_fields(type(node)):
                value = getattr(node, name, None)
                if isinstance(value, list):
                    children += [item for item in value if isinstance(item, ast.AST)]
                elif isinstance(value, ast.AST):
                    children.append(value)
            for child in children:
                parents[child] = node
            stack += reversed(children)

    def of_type(self, *types: type) -> list[ast.AST]:
        return [node for t in types for node in self.by_type.get(t, ())]
