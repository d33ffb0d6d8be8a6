"""Module summaries: what other files need to know about a module, built once from its `ast`.

A `ModuleSummary` holds, for the module's top-level definitions only:
- `imports`: the names it imports, as qualified names (relative imports resolved), to follow re-exports;
- `classes`: each class's bases (qualified names), the layers its methods assign to `self.<attr>`
  (qualified class names; an `nn.Sequential`'s contents; "?" where the value is not a constructor call),
  whether it builds layers in ways not tracked (`add_module`, `setattr`, a `ModuleList` from a loop),
  whether it calls the functional dropouts, and what `forward` returns in training mode (returns under
  `if not self.training`, or after an `if self.training: return ...`, are eval-only and left out);
- `functions`: what each function returns;
- `variables`: module-level names assigned once (`model = nn.Sequential(...)`).

Return values are `values.py` descriptors, which may name classes and functions of other modules: the
summary is built from this module alone, and `project.ProjectView` resolves the names when a rule asks.
Summaries are analyses of a module's context, `ctx.analysis(ModuleSummary)`; the project index builds them
for the files on disk, and the linted file's own comes from the text being linted.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from mllint.analysis.names import Names
from mllint.analysis.values import SEQUENTIAL, OneOf, Value, ValueKinds, canonical_class

UNKNOWN_LAYER = "?"
CONTAINERS = {SEQUENTIAL, "torch.nn.ModuleList", "torch.nn.ModuleDict"}
INDIRECT_CALLS = {"add_module", "register_module", "setattr"}
FUNCTIONAL_DROPOUTS = {
    "torch.nn.functional." + name
    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
}


@dataclass
class ClassSummary:
    name: str
    line: int
    bases: tuple[str, ...]  # qualified names of the bases that resolve
    layers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    indirect_layers: bool = False
    functional_dropout: bool = False
    has_forward: bool = False
    forward: Value | None = None  # what `forward` returns in training mode


@dataclass
class FunctionSummary:
    name: str
    line: int
    returns: Value | None


class ModuleSummary:
    def __init__(self, ctx) -> None:
        self.name = ctx.module.name if ctx.module else ""
        self.path = ctx.real_path or ctx.path
        names = ctx.analysis(Names)
        values = ctx.analysis(ValueKinds)
        self.imports: dict[str, str] = names.module_imports()
        self.classes: dict[str, ClassSummary] = {}
        self.functions: dict[str, FunctionSummary] = {}
        self.variables: dict[str, Value] = {}
        assigned: dict[str, int] = {}
        for statement in ctx.tree.body:
            if isinstance(statement, ast.ClassDef):
                self.classes[statement.name] = _class_summary(statement, ctx, values)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                returns = _combined(_values(_returns(statement.body), values))
                self.functions[statement.name] = FunctionSummary(statement.name, statement.lineno, returns)
            elif isinstance(statement, ast.Assign):
                for target in statement.targets:
                    for node in ast.walk(target):
                        if isinstance(node, ast.Name):
                            assigned[node.id] = assigned.get(node.id, 0) + 1
                if len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                    value = values.value(statement.value)
                    if value is not None:
                        self.variables[statement.targets[0].id] = value
        self.variables = {name: v for name, v in self.variables.items() if assigned.get(name) == 1}


def _class_summary(cls: ast.ClassDef, ctx, values: ValueKinds) -> ClassSummary:
    bases = tuple(name for name in (ctx.qualified_name(base) for base in cls.bases) if name)
    summary = ClassSummary(cls.name, cls.lineno, bases)
    for node in ast.walk(cls):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if _is_self_attribute(target) and not isinstance(node.value, ast.Constant):
                    summary.layers[target.attr] = summary.layers.get(target.attr, ()) + _layer_classes(node.value, ctx)
        elif isinstance(node, ast.Call):
            func = node.func
            name = ctx.qualified_name(func)
            if name in FUNCTIONAL_DROPOUTS:
                summary.functional_dropout = True
            elif (isinstance(func, ast.Attribute) and func.attr in INDIRECT_CALLS) or (
                isinstance(func, ast.Name) and func.id in INDIRECT_CALLS
            ):
                summary.indirect_layers = True
    forward = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "forward"), None)
    if forward is not None:
        summary.has_forward = True
        summary.forward = _combined(_values(_training_returns(forward.body), values))
    return summary


def _layer_classes(value: ast.AST, ctx) -> tuple[str, ...]:
    """The classes an assigned value constructs: one, a container's contents, or unknown."""
    name = canonical_class(ctx.qualified_name(value.func)) if isinstance(value, ast.Call) else None
    if name is None:
        return (UNKNOWN_LAYER,)
    if name == SEQUENTIAL:
        items = value.args
    elif name in CONTAINERS:
        if not value.args and not value.keywords:
            return ()
        if not isinstance(value.args[0], (ast.List, ast.Tuple)):
            return (UNKNOWN_LAYER,)
        items = value.args[0].elts
    else:
        return (name,)
    return tuple(c for item in items for c in _layer_classes(item, ctx))


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


def _is_self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and _is_self(node.value)
