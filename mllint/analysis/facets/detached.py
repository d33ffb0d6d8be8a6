"""Submodules a module class never trains through: those whose output its code always cuts from the graph.

`always_detached(ctx, cls)` lists the `self.` submodules with parameters of a module class of `ctx`'s file
whose every use in the file is a call whose result is cut: `self.encoder(x).detach()`, `.data`, a call under
`torch.no_grad()`, or a name bound to the call and read only through `.detach()` or `.data`. No gradient
ever reaches their parameters through the class's code. Any other use in the file (a second loss, weight
tying, `model.encoder(x)` in a script) keeps a submodule out; other classes' `self.` attributes are theirs. Local to one file: it runs on the linted file or on the module of a class it reaches.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mllint.analysis.facets.gradients import GradientFlow, State, under_no_grad
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.values.values import ValueKinds


@dataclass(frozen=True)
class Detached:
    name: str  # `encoder` of `self.encoder`
    call: ast.Call  # the first call `self.encoder(...)` whose result is cut


def always_detached(ctx, cls: ast.ClassDef) -> list[Detached]:
    found = []
    attributes: dict[str, list[ast.Attribute]] = {}
    for attribute in ctx.index.of_type(ast.Attribute):
        attributes.setdefault(attribute.attr, []).append(attribute)
    for name, assignment in _parametrised_submodules(ctx, cls):
        uses = [
            a for a in attributes.get(name, ())
            if a is not assignment
            and not (is_self_attribute(a) and ctx.scopes.enclosing_class(a) is not cls)  # another class's own
            and not _snapshot(ctx, a)
        ]  # fmt: skip
        calls = [_detached_call(ctx, use) for use in uses]
        if calls and all(calls):
            found.append(Detached(name, calls[0]))
    return found


def _snapshot(ctx, use: ast.Attribute) -> bool:
    """Does `use` read only values cut from the graph: `model.sub.weight.data`, `model.sub.weight.grad`,
    `model.sub.bias.detach()` (a copy to print or compare is no second use of the submodule)?"""
    node, parent = use, ctx.scopes.parent(use)
    while isinstance(parent, ast.Attribute) and parent.value is node:
        if parent.attr in SNAPSHOTS and node is not use:
            return True
        node, parent = parent, ctx.scopes.parent(parent)
    return node is not use and node.attr == "detach" and isinstance(parent, ast.Call) and parent.func is node


SNAPSHOTS = frozenset({"data", "grad"})


def _parametrised_submodules(ctx, cls: ast.ClassDef):
    flows = ctx.analysis(GradientFlow)
    for statement in ctx.index.within(cls, ast.Assign):
        if len(statement.targets) == 1:
            target = statement.targets[0]
            if is_self_attribute(target) and isinstance(statement.value, ast.Call):
                if flows.flow(statement.value).state is State.GRAPH:
                    yield target.attr, target


def _detached_call(ctx, use: ast.Attribute) -> ast.Call | None:
    """The call `self.sub(...)` that `use` makes, when its result is only ever used detached."""
    call = ctx.scopes.parent(use)
    if not (is_self_attribute(use) and isinstance(call, ast.Call) and call.func is use):
        return None
    holder = ctx.scopes.parent(call)
    if under_no_grad(ctx, call) or cut_along_chain(ctx, call):
        return call
    single = isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)
    return call if single and _only_read_detached(ctx, holder.targets[0]) else None


def _only_read_detached(ctx, target: ast.Name) -> bool:
    """Is every read of the value bound to `target` a `.detach()` or `.data`?"""
    values = ctx.analysis(ValueKinds)
    function = ctx.scopes.enclosing_function(target)
    reads = [n for n in ctx.scopes.reads(function, target.id) if target in [d.node for d in values.reaching_definitions(n)]]
    return bool(reads) and all(_cuts(ctx, ctx.scopes.parent(read)) for read in reads)


def cut_along_chain(ctx, node: ast.AST) -> bool:
    """Is `node`'s value cut further along its own chain of methods and indexing, before anything else
    reads it (`net(x).detach()`, `net(x).max(1)[0].detach()`, `net(x).data`)?"""
    while True:
        holder = ctx.scopes.parent(node)
        if _cuts(ctx, holder):
            return True
        if isinstance(holder, ast.Subscript) and holder.value is node:
            node = holder
            continue
        call = ctx.scopes.parent(holder) if isinstance(holder, ast.Attribute) and holder.value is node else None
        if not (isinstance(call, ast.Call) and call.func is holder):
            return False
        node = call


def _cuts(ctx, node: ast.AST | None) -> bool:
    """Is `node` (the parent of a value) `.data` or the `.detach` of a `.detach()` call?"""
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr == "data":
        return True
    call = ctx.scopes.parent(node)
    return node.attr == "detach" and isinstance(call, ast.Call) and call.func is node
