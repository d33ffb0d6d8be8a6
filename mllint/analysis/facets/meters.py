"""Meters: project classes whose method keeps what it is given across calls.

`kept_argument(ctx, call, argument)` answers, for a call `meter.update(loss, n)` of the linted file where
`meter` is an instance of a project class (built where the file says, by a project helper, or passed by a
call site), into which attribute the called method accumulates `argument`: `self.sum += val * n`,
`self.sum = self.sum + val`, `self.values.append(val)`. Not when the method cuts it first (`val.item()`,
`float(val)`, `val.detach()`, `.data`) or rebinds the parameter; unknown (None) when the class, the method
or the binding is unknown (library meters such as torchmetrics' are never read).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from mllint.analysis.program.callers import constructions
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.program.project import ProjectView
from mllint.analysis.syntax.tree import own_method

CUT_METHODS = frozenset({"item", "detach", "tolist", "numpy"})
CUT_ATTRIBUTES = frozenset({"data"})
CUT_BUILTINS = frozenset({"float", "int"})
APPENDS = frozenset({"append", "extend", "insert"})


@dataclass(frozen=True)
class Kept:
    cls: str  # the meter's class name
    attribute: str  # `sum` of `self.sum`
    path: str  # the class's file as findings show it ("" for the linted file)
    line: int  # the statement that accumulates the argument


def kept_argument(ctx, call: ast.Call, argument: ast.AST) -> Kept | None:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    view = ctx.analysis(ProjectView)
    for (builder, constructor), _ in constructions(ctx, func.value):
        found = view.class_summary(builder.qualified_name(constructor.func) or "")
        if found is None:
            return None
        class_ctx, cls = found[1].definition()
        method = own_method(cls, func.attr) if cls is not None else None
        if method is None:
            return None
        bound = bind_arguments(call, method, skips_first=True)
        parameter = next((name for name, value in bound.items() if value is argument), None)
        if parameter is None or _rebinds(method, parameter):
            return None
        for statement in ast.walk(method):
            attribute = _accumulates(class_ctx, statement, parameter)
            if attribute is not None:
                return Kept(cls.name, attribute, view.display(found[0]), statement.lineno)
        return None
    return None


def _accumulates(ctx, statement: ast.AST, parameter: str) -> str | None:
    """The `self.` attribute a statement adds the parameter into, uncut: `self.sum += val * n`,
    `self.sum = self.sum + val`, `self.values.append(val)`."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add):
        target, value = statement.target, statement.value
    elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.value, ast.BinOp):
        target, value = statement.targets[0], statement.value
        accumulating = is_self_attribute(target) and isinstance(value.op, ast.Add)
        if not (accumulating and any(_same_attribute(target, n) for n in ast.walk(value))):
            return None
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if not (isinstance(func, ast.Attribute) and func.attr in APPENDS):
            return None
        target, value = func.value, statement.value
    else:
        return None
    if not is_self_attribute(target):
        return None
    uses = [n for n in ast.walk(value) if isinstance(n, ast.Name) and n.id == parameter]
    return target.attr if any(not _cut(ctx, use, statement) for use in uses) else None


def _cut(ctx, use: ast.Name, statement: ast.AST) -> bool:
    """Does the value of `use` pass through `.item()`, `.detach()`, `.data`, `float(...)` within `statement`?"""
    node = use
    for parent in ctx.scopes.ancestors(use):
        if parent is statement:
            return False
        if isinstance(parent, ast.Attribute) and parent.attr in CUT_ATTRIBUTES | CUT_METHODS:
            return True
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in CUT_BUILTINS:
            return node in parent.args
        node = parent
    return False


def _rebinds(method: ast.AST, parameter: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == parameter and isinstance(n.ctx, ast.Store) for n in ast.walk(method))


def _same_attribute(target: ast.AST, node: ast.AST) -> bool:
    return is_self_attribute(node) and isinstance(node.ctx, ast.Load) and node.attr == target.attr
