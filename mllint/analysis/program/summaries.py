"""Module summaries: what other files need to know about a module.

A `ModuleSummary` holds, for the module's top-level definitions only:
- `imports`: the names it imports, as qualified names (relative imports resolved), to follow re-exports;
- `classes`: each class's bases (qualified names), its methods' names, and what `forward` returns in
  training mode (returns under `if not self.training`, or after an `if self.training: return ...`, are
  eval-only and left out), or another method (`returns_of`);
- `functions`: what each function returns;
- `variables`: module-level names assigned once (`model = nn.Sequential(...)`).

Summaries hold program facts only. What a facet works out about a class or function from its own file (a
class's mode-dependent layer, `layers.class_layers`; whether a function returns a model as built,
`modes.returns_new_model`) is kept with the definition's summary (`fact`), keyed by the function that
computes it: the summaries never import the facets.

Names, lines, bases and imports are read from the module's top-level statements at once; everything else
is worked out from the module's parsed context the first time a rule asks, and kept. A summary keeps no
tree: it asks `load_context` for the context (the project keeps a few parsed modules and parses again a
module it let go), so summaries of a whole project stay small.

Return values are `values.py` descriptors, which may name classes and functions of other modules: the
summary is built from this module alone, and `project_view.ProjectView` resolves the names when a rule asks.
The linted file's own summary is `ctx.analysis(ModuleSummary)`, built from the text being linted.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from functools import cached_property
from typing import TypeVar
from weakref import WeakKeyDictionary

from mllint.analysis.syntax.names import is_self_attribute, module_scope_imports, qualified_name, training_test
from mllint.analysis.syntax.scopes import first_parameter
from mllint.analysis.syntax.tree import bound_receivers, child_nodes, module_statements, own_method, position
from mllint.analysis.values.values import OneOf, Value, ValueKinds

T = TypeVar("T")

# What a summary asks for its module's parsed context (None: the file no longer parses).
LoadContext = Callable[[], object]
# Errors that mean "too deep or too large to analyse": the answer is unknown, not a crash.
TOO_COMPLEX = (RecursionError, MemoryError, ValueError)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class _Definition:
    """A top-level class or function: its name and line at once; what the facets (`layers`, `modes`)
    work out about it from its own file is kept with it (`fact`)."""

    kind: type | tuple[type, ...]

    def __init__(self, node: ast.AST, load: LoadContext) -> None:
        self.name = node.name
        self.line = node.lineno
        self._load = load
        self._facts: dict[Callable, object] = {}

    def definition(self):
        """(its module's parsed context, its node), (None, None) when the file no longer parses."""
        ctx = self._load()
        return (None, None) if ctx is None else (ctx, top_level_definition(ctx.tree, self.kind, self.name))

    def fact(self, compute: Callable[[object, ast.AST], T]) -> T | None:
        """`compute(its module's context, its node)`, worked out once and kept with the summary (one per
        `compute`, a module-level function of the facet that asks); None when the file no longer parses
        or the definition is too complex."""
        if compute not in self._facts:
            ctx, node = self.definition()
            try:
                self._facts[compute] = None if node is None else compute(ctx, node)
            except TOO_COMPLEX:
                self._facts[compute] = None
        return self._facts[compute]  # type: ignore[return-value]


class ClassSummary(_Definition):
    """A top-level class: its bases at once, what `forward` returns when first asked."""

    kind = ast.ClassDef

    def __init__(self, node: ast.ClassDef, bases: tuple[str, ...], load: LoadContext, decorators: tuple[str, ...], index) -> None:
        super().__init__(node, load)
        self.bases = bases
        self.decorators = decorators  # qualified: `registry.register` for `@register("net")` and `@register`
        self.methods = frozenset(m.name for m in node.body if isinstance(m, FUNCTIONS))
        self.has_forward = own_method(node, "forward", ast.FunctionDef) is not None
        self.assigns = frozenset(  # the attributes its own methods assign to `self.` (from the module's `TreeIndex`: no walk)
            t.attr for m in node.body if isinstance(m, FUNCTIONS) for a in index.within(m, ast.Assign, ast.AnnAssign)
            for t in bound_receivers(a) if is_self_attribute(t)
        )  # fmt: skip
        self._returns: dict[str, Value | None] = {}

    @cached_property
    def forward(self) -> Value | None:
        """What `forward` returns in training mode."""
        return self.forward_deciding(None)

    def forward_deciding(self, decide: Callable[[ast.AST], bool | None] | None) -> Value | None:
        """What `forward` returns in training mode, the tests `decide` settles taken its way (a flag a call
        passes as a constant or leaves to its default)."""
        ctx, node = self.definition()
        forward = own_method(node, "forward", ast.FunctionDef) if node is not None else None
        if forward is None:
            return None
        try:
            return _combined(_values(_training_returns(forward.body, decide), ctx.analysis(ValueKinds)))
        except TOO_COMPLEX:
            return None


    @cached_property
    def passed_to_base(self) -> Value | None:
        """The last layer its `__init__` hands its base's (`super().__init__(nn.Linear(h, n), nn.Softmax(-1))`
        in an `nn.Sequential` subclass: the layer its output comes from), as a value; None when it hands none."""
        ctx, node = self.definition()
        init = own_method(node, "__init__", ast.FunctionDef) if node is not None else None
        calls = [c for c in ctx.index.within(init, ast.Call) if _calls_base_init(c)] if init is not None else []
        last = calls[0].args[-1] if len(calls) == 1 and calls[0].args and not calls[0].keywords else None
        if last is None or isinstance(last, ast.Starred):
            return None
        try:
            return _combined(_values([last], ctx.analysis(ValueKinds)))
        except TOO_COMPLEX:
            return None

    def attribute(self, name: str) -> Value | None:
        """What the class keeps in `self.<name>` (its methods' assignments agreeing), as a value."""
        ctx, node = self.definition()
        held = ctx.analysis(ValueKinds).attribute_values(node, name) if node is not None else None
        try:
            return _combined(_values(held, ctx.analysis(ValueKinds))) if held else None
        except TOO_COMPLEX:
            return None

    def returns_of(self, name: str) -> Value | None:
        """What the class's own method `name` returns (`forward`: in training mode)."""
        if name == "forward":
            return self.forward
        if name not in self._returns:
            ctx, node = self.definition()
            method = own_method(node, name) if node is not None else None
            try:
                self._returns[name] = _combined(_values(function_returns(method), ctx.analysis(ValueKinds))) if method else None
            except TOO_COMPLEX:
                self._returns[name] = None
        return self._returns[name]


class FunctionSummary(_Definition):
    kind = FUNCTIONS

    @cached_property
    def returns(self) -> Value | None:
        ctx, node = self.definition()
        try:
            return _combined(_values(function_returns(node), ctx.analysis(ValueKinds))) if node is not None else None
        except TOO_COMPLEX:
            return None


_DEFINITIONS: WeakKeyDictionary = WeakKeyDictionary()  # module -> {name: its top-level definitions in source order}


def top_level_definition(tree: ast.Module, kind, name: str) -> ast.AST | None:
    """The module's last top-level definition of `name` of that kind (the one the module keeps); the
    module's definitions are indexed once, not read per name."""
    if tree not in _DEFINITIONS:
        found: dict[str, list[ast.AST]] = {}
        for statement in module_statements(tree):
            if isinstance(statement, (*FUNCTIONS, ast.ClassDef)):
                found.setdefault(statement.name, []).append(statement)
        _DEFINITIONS[tree] = found
    return next((s for s in reversed(_DEFINITIONS[tree].get(name, ())) if isinstance(s, kind)), None)


class ModuleSummary:
    """The linted file's own summary (`ctx.analysis(ModuleSummary)`); `of_context` summarizes one on disk."""

    def __init__(self, ctx) -> None:
        self._read(ctx, ctx.real_path or ctx.path, lambda: ctx)

    @classmethod
    def of_context(cls, ctx, path: str, load: LoadContext) -> "ModuleSummary":
        summary = cls.__new__(cls)
        summary._read(ctx, path, load)
        return summary

    def _read(self, ctx, path: str, load: LoadContext) -> None:
        tree, module = ctx.tree, ctx.module
        self.name = module.name if module else ""
        self.path = path
        self.imports: dict[str, str] = module_scope_imports(ctx)
        definitions = {
            s.name: f"{self.name}.{s.name}"
            for s in module_statements(tree)
            if module is not None and isinstance(s, (*FUNCTIONS, ast.ClassDef))
        }
        resolve = lambda name: self.imports.get(name.id) or definitions.get(name.id)  # noqa: E731
        self.classes: dict[str, ClassSummary] = {}
        self.functions: dict[str, FunctionSummary] = {}
        assigned: dict[str, list[tuple[int, int] | None]] = {}
        top = {id(s) for s in tree.body}  # a module variable is assigned outside any block
        for statement in module_statements(tree):
            if isinstance(statement, ast.ClassDef):
                bases = tuple(name for name in (qualified_name(b, resolve) for b in statement.bases) if name)
                named = (d.func if isinstance(d, ast.Call) else d for d in statement.decorator_list)
                decorators = tuple(name for name in (qualified_name(d, resolve) for d in named) if name)
                self.classes[statement.name] = ClassSummary(statement, bases, load, decorators, ctx.index)
            elif isinstance(statement, FUNCTIONS):
                self.functions[statement.name] = FunctionSummary(statement, load)
            elif isinstance(statement, ast.Assign) and id(statement) in top:
                single = len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
                for target in statement.targets:
                    for node in ast.walk(target):
                        if isinstance(node, ast.Name):
                            assigned.setdefault(node.id, []).append(position(statement) if single else None)
        # name -> where its single assignment is: the expression is found again when it is described
        self.variables: dict[str, tuple[int, int]] = {n: at[0] for n, at in assigned.items() if len(at) == 1 and at[0]}
        self._load = load
        self._described: dict[str, Value | None] = {}

    def variable(self, name: str) -> Value | None:
        """What a module-level name assigned once holds."""
        if name not in self._described:
            self._described[name] = self._describe(name)
        return self._described[name]

    def _describe(self, name: str) -> Value | None:
        ctx = self._load() if name in self.variables else None
        where = self.variables.get(name)
        assignment = next(
            (s for s in ctx.tree.body if isinstance(s, ast.Assign) and position(s) == where), None
        ) if ctx is not None else None  # fmt: skip
        try:
            return ctx.analysis(ValueKinds).value(assignment.value) if assignment is not None else None
        except TOO_COMPLEX:
            return None


def _calls_base_init(call: ast.Call) -> bool:
    """`super().__init__(...)`."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"


def _values(returned: list[ast.AST] | None, values: ValueKinds) -> list[Value | None] | None:
    return None if returned is None else [values.value(r) for r in returned]


def _combined(values: list[Value | None] | None) -> Value | None:
    if not values or any(v is None for v in values):
        return None
    return values[0] if len(values) == 1 else OneOf(tuple(values))


def returned_expressions(statements: list[ast.stmt]) -> list[ast.AST] | None:
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
            stack += child_nodes(node)
    return [r.value for r in sorted(found, key=lambda r: (r.lineno, r.col_offset))]


_RETURNS: WeakKeyDictionary = WeakKeyDictionary()  # function -> `function_returns`'s answer (gone with its tree)


def function_returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST] | None:
    """`returned_expressions` of a function's body, worked out once per function (read-only)."""
    found = _RETURNS.get(function, _RETURNS)
    if found is _RETURNS:
        found = _RETURNS[function] = returned_expressions(function.body)
    return found


def returns_receiver(function: ast.AST) -> bool:
    """Does a method return its own `self` on every path (`def fit(self, X): ...; return self`)?"""
    returned = function_returns(function) if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) else None
    owner = first_parameter(function) if returned else None
    return owner is not None and all(isinstance(r, ast.Name) and r.id == owner for r in returned)


def _training_returns(statements: list[ast.stmt], decide=None) -> list[ast.AST] | None:
    """The values returned in training mode: `if self.training` / `if not self.training` branches are
    followed the training way (and those `decide` settles, its way), and what follows a training branch
    that returns runs in eval mode only."""
    found: list[ast.AST] = []
    for statement in statements:
        mode = None
        if isinstance(statement, ast.If):
            mode = training_test(statement.test)
            mode = decide(statement.test) if mode is None and decide is not None else mode
        training = (statement.body if mode else statement.orelse) if mode is not None else [statement]
        returned = _training_returns(training, decide) if mode is not None else returned_expressions(training)
        if returned is None:
            return None
        found += returned
        if training and isinstance(training[-1], ast.Return):
            return found
    return found
