"""Module summaries: what other files need to know about a module, built once from its `ast`.

A `ModuleSummary` holds, for the module's top-level definitions only:
- `imports`: the names it imports, as qualified names (relative imports resolved), to follow re-exports;
- `classes`: each class's bases (qualified names), its mode-dependent layer as far as its own file
  tells (`layers.ClassLayers`), and what `forward` returns in training mode (returns under
  `if not self.training`, or after an `if self.training: return ...`, are eval-only and left out);
- `functions`: what each function returns, and whether that is a model as built (a factory);
- `variables`: module-level names assigned once (`model = nn.Sequential(...)`).

Return values are `values.py` descriptors, which may name classes and functions of other modules: the
summary is built from this module alone, and `project.ProjectView` resolves the names when a rule asks.
Summaries are analyses of a module's context, `ctx.analysis(ModuleSummary)`; the project index builds them
for the files on disk, and the linted file's own comes from the text being linted.
"""
from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING

from mllint.analysis.names import Names
from mllint.analysis.values import Called, OneOf, Value, ValueKinds

if TYPE_CHECKING:
    from mllint.analysis.layers import ClassLayers


class ClassSummary:
    """A top-level class: its name, line and bases at once; the rest worked out when first asked."""

    def __init__(self, node: ast.ClassDef, ctx) -> None:
        self.name = node.name
        self.line = node.lineno
        self.bases: tuple[str, ...] = tuple(name for name in (ctx.qualified_name(b) for b in node.bases) if name)
        self._forward = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "forward"), None)
        self.has_forward = self._forward is not None
        self._node, self._ctx = node, ctx

    @cached_property
    def forward(self) -> Value | None:
        """What `forward` returns in training mode."""
        if self._forward is None:
            return None
        return _combined(_values(_training_returns(self._forward.body), self._ctx.analysis(ValueKinds)))

    @cached_property
    def mode_layers(self) -> ClassLayers:
        """Its Dropout/BatchNorm-like layer as its own file tells (`layers.ModeLayers`)."""
        from mllint.analysis.layers import ModeLayers  # the layers ask the project, which holds summaries

        return ModeLayers.of_summarized_class(self._ctx, self._node)

    def freeze(self) -> None:
        """Work everything out and drop the tree: for summaries kept after their file's lint."""
        self.forward, self.mode_layers  # noqa: B018
        self._node = self._ctx = self._forward = None


class FunctionSummary:
    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef, ctx) -> None:
        self.name = node.name
        self.line = node.lineno
        self._node, self._ctx = node, ctx

    @cached_property
    def returns(self) -> Value | None:
        return _combined(_values(_returns(self._node.body), self._ctx.analysis(ValueKinds)))

    @cached_property
    def returns_new_model(self) -> bool:
        """Does it return a model in training mode, as built (a factory), by `modes.Modes` in its file?"""
        if not isinstance(self.returns, Called):
            return False
        from mllint.analysis.modes import Mode  # the modes ask the project, which holds summaries

        summary = self._ctx.analysis(_factory_modes).summary(self._node, 0)
        facts = summary.returned if summary is not None else ()
        return bool(facts) and all(f.mode is Mode.TRAIN and f.built is not None for f in facts)

    def freeze(self) -> None:
        self.returns, self.returns_new_model  # noqa: B018
        self._node = self._ctx = None


def _factory_modes(ctx):
    """The modes of a module's models, its classes from other modules counted as models: a summary
    cannot tell, the lint that asks whether a factory returns a model can."""
    from mllint.analysis.layers import ModeLayers
    from mllint.analysis.modes import Modes

    return Modes(ctx, ModeLayers.summarizing(ctx))


class ModuleSummary:
    def __init__(self, ctx) -> None:
        self.name = ctx.module.name if ctx.module else ""
        self.path = ctx.real_path or ctx.path
        self.imports: dict[str, str] = ctx.analysis(Names).module_imports()
        self.classes: dict[str, ClassSummary] = {}
        self.functions: dict[str, FunctionSummary] = {}
        assigned: dict[str, list[ast.AST]] = {}
        for statement in ctx.tree.body:
            if isinstance(statement, ast.ClassDef):
                self.classes[statement.name] = ClassSummary(statement, ctx)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[statement.name] = FunctionSummary(statement, ctx)
            elif isinstance(statement, ast.Assign):
                single = len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
                for target in statement.targets:
                    for node in ast.walk(target):
                        if isinstance(node, ast.Name):
                            assigned.setdefault(node.id, []).append(statement.value if single else None)
        self._variables = {name: values[0] for name, values in assigned.items() if len(values) == 1 and values[0]}
        self._ctx = ctx

    @property
    def variables(self) -> dict[str, ast.AST]:
        """Module-level names assigned once (the expressions; `variable(name)` describes one)."""
        return self._variables

    @cached_property
    def _described(self) -> dict[str, Value | None]:
        values = self._ctx.analysis(ValueKinds)
        return {name: values.value(expr) for name, expr in self._variables.items()}

    def variable(self, name: str) -> Value | None:
        return self._described.get(name)

    def freeze(self) -> None:
        for entity in (*self.classes.values(), *self.functions.values()):
            entity.freeze()
        self._variables = dict.fromkeys(self._variables)
        self._described  # noqa: B018
        self._ctx = None


def _values(returned: list[ast.AST] | None, values: ValueKinds) -> list[Value | None] | None:
    return None if returned is None else [values.value(r) for r in returned]


def _combined(values: list[Value | None] | None) -> Value | None:
    if not values or any(v is None for v in values):
        return None
    return values[0] if len(values) == 1 else OneOf(tuple(values))


def _returns(statements: list[ast.stmt]) -> list[ast.AST] | None:
    """The values the `return` statements of a body return (not those of nested functions); None when
    that is not a value (a generator, a bare `return`)."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)) or (isinstance(node, ast.Return) and node.value is None):
            return None
        if isinstance(node, ast.Return):
            found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return [r.value for r in sorted(found, key=lambda r: (r.lineno, r.col_offset))]


def _training_returns(statements: list[ast.stmt]) -> list[ast.AST] | None:
    """The values returned in training mode: `if self.training` / `if not self.training` branches are
    followed the training way, and what follows a training branch that returns runs in eval mode only."""
    found: list[ast.AST] = []
    for statement in statements:
        mode = _training_test(statement.test) if isinstance(statement, ast.If) else None
        training = (statement.body if mode else statement.orelse) if mode is not None else [statement]
        returned = _training_returns(training) if mode is not None else _returns(training)
        if returned is None:
            return None
        found += returned
        if training and isinstance(training[-1], ast.Return):
            return found
    return found


def _training_test(test: ast.AST) -> bool | None:
    """True for `self.training`, False for `not self.training`, None for anything else."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _training_test(test.operand)
        return None if inner is None else not inner
    is_training = isinstance(test, ast.Attribute) and test.attr == "training" and _is_self(test.value)
    return True if is_training else None


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"

