"""Helpers whose failure a training loop skips on (ML501): `loss = safe_forward(model, x, y)`, then
`if loss is None: continue` in a training loop of this module or another. A handler in such a helper
that returns None (or falls through to it) makes every error of its body a skipped batch.
"""
from __future__ import annotations

import ast

from mllint.analysis.facets.loops import LOOP_NODES, TrainingLoops
from mllint.analysis.program.callers import Callers
from mllint.analysis.syntax.folding import existence_test
from mllint.analysis.syntax.scopes import FUNCTION_NODES


class SkippedResults:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._skipped: dict[ast.AST, tuple[object, ast.AST] | None] = {}

    def skipped_on_none(self, function: ast.AST) -> tuple[object, ast.AST] | None:
        """(the caller's context, its skip) for a call of `function` in a training loop whose result, when
        None (or false), skips the rest of the iteration (`continue`); None when no call site does."""
        if function not in self._skipped:
            sites = self.ctx.analysis(Callers).sites(function)
            self._skipped[function] = next((s for caller, call in sites if (s := _skip_after(caller, call)) is not None), None)
        return self._skipped[function]


def _skip_after(caller, call: ast.Call) -> tuple[object, ast.AST] | None:
    statement = caller.scopes.parent(call)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return None
    loop = next((a for a in caller.scopes.ancestors(statement) if isinstance(a, (*LOOP_NODES, *FUNCTION_NODES))), None)
    if not isinstance(loop, LOOP_NODES) or not caller.analysis(TrainingLoops).is_training_loop(loop):
        return None
    name = statement.targets[0].id
    for test in caller.index.within(loop, ast.If):
        if test.lineno > statement.lineno and _is_failed(test.test, name) and any(isinstance(s, ast.Continue) for s in test.body):
            return caller, test
    return None


def _is_failed(test: ast.AST, name: str) -> bool:
    """`name is None`, `not name`."""
    tested = existence_test(test)
    return tested is not None and not tested[1] and isinstance(tested[0], ast.Name) and tested[0].id == name
