"""Losses a function of the file returns as a new leaf made from numbers taken out of tensors.

`rewrapped_returns(ctx)` finds `torch.tensor(v, requires_grad=True)` returned by a module-level function
or by the `forward` or `__call__` of a top-level class (the call itself, a name bound to it, an element of a returned
tuple, or a method of it: `.mean()`), where `v` is computed from `.item()`, `.tolist()`, `.numpy()`,
`.detach()` or `float(t)` of something (also through names the function assigns or appends to first), or, in
a class's method, from a tensor it is given (`torch.tensor([w * fn(outputs[k]) for ...], requires_grad=True)`).
That leaf has no path to anything the function was given, whatever its caller passes. Listed for
functions nothing in the project calls (and classes nothing builds), and for the others when the
gradient flow does not already see the function cut what it is given (then `ML404` reports it where the
loss is backpropagated). A constant leaf (`torch.tensor(0.0, requires_grad=True)` for an empty batch) is
no cut.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mllint.analysis.facets.gradients import GRAPH, VALUE_CUTS, Given, GradientFlow, State, is_cut_method
from mllint.analysis.program.callers import Callers
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.syntax.tree import module_statements

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
CALLED = ("forward", "__call__")  # what calling a loss object runs
REWRAPPING = frozenset({"torch.tensor", "torch.as_tensor"})
MAX_NAMES = 4  # names bound once followed from a returned one


@dataclass(frozen=True)
class Rewrapped:
    call: ast.Call  # `torch.tensor(total, requires_grad=True)`
    function: str  # `MultiTaskLoss.forward`, `sequence_loss`
    cut: ast.AST  # the `.item()` (or other) its value comes from


def rewrapped_returns(ctx) -> list[Rewrapped]:
    found = []
    for name, function, owner in _defined(ctx):
        if not any(_rewrap(ctx, call) for call in ctx.index.within(function, ast.Call)):
            continue  # (most functions: no need to read what they assign)
        assigned = _assigned(function)
        given = {p.arg for p in parameters(function, variadic=False)[1:]} if isinstance(owner, ast.ClassDef) else set()
        for call in _returned_rewraps(ctx, function, assigned):
            cut = _taken_out(call.args[0], assigned, given)
            if cut is not None and (_uncalled(ctx, owner) or not _cut_for_callers(ctx, function, owner)):
                found.append(Rewrapped(call, name, cut))
    return found


def _defined(ctx):
    """(name, function, what a call site would call) for module-level functions and `forward`s of classes."""
    for statement in module_statements(ctx.tree):
        if isinstance(statement, FUNCTIONS):
            yield statement.name, statement, statement
        elif isinstance(statement, ast.ClassDef):
            for method in statement.body:
                if isinstance(method, FUNCTIONS) and method.name in CALLED:
                    yield f"{statement.name}.{method.name}", method, statement


def _uncalled(ctx, owner: ast.AST) -> bool:
    """Does nothing in the project call the function (or build the class)?"""
    callers = ctx.analysis(Callers)
    if isinstance(owner, ast.ClassDef):
        return next(iter(callers.constructions(owner)), None) is None
    return not callers.sites(owner)


def _cut_for_callers(ctx, function: ast.AST, owner: ast.AST) -> bool:
    """Does the gradient flow already see the function cut what it is given (the callers' `backward()`
    sites then report it)?"""
    method = isinstance(owner, ast.ClassDef)
    given = {p.arg: GRAPH for p in parameters(function, variadic=False)[1 if method else 0:]}  # `self` is no tensor
    instance = (ctx, owner) if method else None
    returned = ctx.analysis(GradientFlow).returned(function, Given(function, given, instance))
    return returned.state is State.NONE and bool(returned.cuts)


def _assigned(function: ast.AST) -> dict[str, list[ast.AST]]:
    """Name -> what the function assigns, adds (`+=`), appends to it or iterates for it, in one pass."""
    found: dict[str, list[ast.AST]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found.setdefault(name.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.For | ast.comprehension):  # `for logits, y in zip(outputs, targets)`: what it iterates
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    found.setdefault(name.id, []).append(node.iter)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
            if isinstance(node.func.value, ast.Name):
                found.setdefault(node.func.value.id, []).extend(node.args)
    return found


def _returned_rewraps(ctx, function: ast.AST, assigned: dict[str, list[ast.AST]]) -> list[ast.Call]:
    """The rewrapping calls with `requires_grad=True` the function returns, as a whole value (or a tuple's element)."""
    found = []
    for returned in function_returns(function) or ():
        for value in returned.elts if isinstance(returned, ast.Tuple) else [returned]:
            for _ in range(MAX_NAMES):
                while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not _rewrap(ctx, value):
                    value = value.func.value  # `.mean()`, `.to(device)` of it
                if not (isinstance(value, ast.Name) and len(assigned.get(value.id, ())) == 1):
                    break
                value = assigned[value.id][0]  # a name bound once
            if _rewrap(ctx, value):
                found.append(value)
    return found


def _rewrap(ctx, node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and node.args):
        return False
    flag = next((k.value for k in node.keywords if k.arg == "requires_grad"), None)
    return isinstance(flag, ast.Constant) and flag.value is True and ctx.qualified_name(node.func) in REWRAPPING


def _taken_out(value: ast.AST, assigned: dict[str, list[ast.AST]], given: set[str]) -> ast.AST | None:
    """The first `.item()`-like cut `value` is computed from, following the names the function binds; for a
    loss's `forward` or `__call__`, also a tensor it is `given` (`outputs` of `[w * fn(outputs[k], ...)
    for ...]`): the new leaf copies the numbers computed from it."""
    seen: set[str] = set()
    pending = [value]
    while pending:
        for node in ast.walk(pending.pop()):
            if isinstance(node, ast.Call) and is_cut_method(node, VALUE_CUTS):  # a value's numbers (an index is no loss's)
                return node
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" and node.args:
                if not isinstance(node.args[0], ast.Constant):
                    return node
            if isinstance(node, ast.Name) and node.id in given and isinstance(node.ctx, ast.Load):
                return node
            if isinstance(node, ast.Name) and node.id not in seen:
                seen.add(node.id)
                pending.extend(assigned.get(node.id, ()))
    return None
