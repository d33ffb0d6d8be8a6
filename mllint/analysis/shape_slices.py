"""Which statements of a scope the shape interpreter evaluates: those whose expressions a rule asked
about, and those that bind a name such a statement reads, transitively (a backward slice by names).

The interpreter walks the other statements for their control flow only (where paths leave and join, what
loops forget), so the cost of a scope follows what is asked about it, not its length. A name's value
depends only on the statements that bind it and on what they read, so the values of the statements in
the slice are those a run over every statement gives."""
from __future__ import annotations

import ast

from mllint.analysis.tree import assignment_targets


class Slice:
    """The statements of one scope to evaluate, grown as rules ask about more of its expressions."""

    def __init__(self, scope: ast.AST, index) -> None:
        self.statements: set[ast.stmt] = set()
        self._names: set[str] = set()  # the names the statements read
        self._reads: dict[ast.stmt, set[str]] = {}
        self._binders: dict[str, list[ast.stmt]] = {}  # name -> the statements whose evaluation binds it
        any_walrus = bool(index.of_type(ast.NamedExpr))
        for statement in _statements(scope.body):
            expressions = evaluated(statement)
            self._reads[statement] = {n.id for e in expressions for n in index.within(e, ast.Name)}
            walrus = [n.target.id for e in expressions for n in index.within(e, ast.NamedExpr)] if any_walrus else []
            for name in _binds(statement, walrus):
                self._binders.setdefault(name, []).append(statement)

    def add(self, statement: ast.stmt) -> bool:
        """Take in a statement and the statements its values depend on: False if it was in already."""
        if statement in self.statements:
            return False
        pending = [statement]
        while pending:
            current = pending.pop()
            if current in self.statements:
                continue
            self.statements.add(current)
            for name in self._reads.get(current, ()):
                if name not in self._names:
                    self._names.add(name)
                    pending += self._binders.get(name, ())
        return True


def evaluated(statement: ast.stmt) -> list[ast.expr]:
    """The expressions the interpreter evaluates for a statement (a compound statement's header only)."""
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)):
        return [statement.value] if statement.value is not None else []
    if isinstance(statement, ast.AugAssign):
        return [statement.target, statement.value]
    if isinstance(statement, (ast.If, ast.While)):
        return [statement.test]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.iter]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, ast.Match):
        return [statement.subject]
    return []


def size_receiver(node: ast.AST | None) -> ast.AST | None:
    """`x` in `x.shape` or `x.size()`: unpacking its sizes (`B, T, C = x.shape`) tells x's rank."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args:
        return node.func.value
    return None


def _binds(statement: ast.stmt, walrus: list[str]) -> set[str]:
    """The names whose values evaluating a statement may change: its targets (for a loop, the loop
    variables the iterated value gives), an unpacked `x.shape`'s `x`, the receiver of an in-place method
    (`x.unsqueeze_(1)`), the targets of `:=`."""
    names = set(walrus)
    targets: list[ast.AST] = []
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        targets = assignment_targets(statement)
        receiver = size_receiver(statement.value)
        if isinstance(receiver, ast.Name) and any(isinstance(t, (ast.Tuple, ast.List)) for t in targets):
            names.add(receiver.id)
    elif isinstance(statement, (ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [statement.target]
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr.endswith("_"):
            names.add(func.value.id)
    names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def _statements(body: list[ast.stmt]):
    """The statements of a block and of the blocks nested in it, not those of nested functions and classes."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(statement, field, []))
        for handler in getattr(statement, "handlers", []):
            yield from _statements(handler.body)
        for case in getattr(statement, "cases", []):
            yield from _statements(case.body)
