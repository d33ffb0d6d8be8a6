"""Name resolution: the qualified name an expression refers to through imports and their aliases.

`import torch.nn.functional as F` makes `F.softmax` resolve to `torch.nn.functional.softmax`. Imports inside
functions are honoured, and a name that a function binds otherwise (a parameter, an assignment) shadows
the module's import of the same name, so it resolves to nothing: unknown stays unknown. When the module's
own name is known (`ctx.module`), relative imports resolve (`from .models import Net` in `pkg.train` is
`pkg.models.Net`) and so do the module's top-level classes and functions (`Net` is `pkg.train.Net`).
A name only a `from models import *` can bind is that module's, when the linted file's project has the
module and it defines the name at its top level (the last such import wins, as in Python). A file that
binds none of `torch`, `nn`, `F` and `optim` (a pasted snippet, a script whose imports were cut) reads them
as the usual torch imports (`ASSUMED_IMPORTS`); an unbound `Variable` is torch's legacy wrapper.
"""
from __future__ import annotations

import ast
from collections.abc import Callable

from mllint.analysis.syntax.scopes import Scopes
from mllint.analysis.syntax.tree import module_statements, position


class Names:
    def __init__(self, ctx) -> None:
        self.scopes: Scopes = ctx.analysis(Scopes)
        self._imports: dict[ast.AST, dict[str, str]] = {}
        self._resolved: dict[tuple[ast.AST | None, str], str | None] = {}
        self._qualified: dict[ast.AST, str | None] = {}  # every rule asks about the same calls
        self._shadowable: frozenset[str] | None = None
        self._rebinding: dict[str, tuple[int, int]] | None = None
        self._module_imports = [n for n in module_statements(ctx.tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        self._index = ctx.index
        module = ctx.module
        for node in ctx.index.of_type(ast.Import, ast.ImportFrom):
            scope = self.scopes.enclosing_function(node) or ctx.tree
            self._imports.setdefault(scope, {}).update(_bindings(node, module))
        self._assumed = assumed_imports(ctx.index.of_type(ast.Name, ast.arg, ast.Import, ast.ImportFrom, *DEFINITIONS))
        self._module = ctx.tree
        self._project = ctx.read_for
        self._starred = [  # the modules a module-level `from m import *` reads, last first
            origin for node in reversed(ctx.tree.body) if isinstance(node, ast.ImportFrom)
            and any(alias.name == "*" for alias in node.names) and (origin := _absolute(node, module))
        ]  # fmt: skip
        self._definitions: dict[str, str] = {}
        if module is not None:
            for statement in module_statements(ctx.tree):
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self._definitions[statement.name] = f"{module.name}.{statement.name}"

    def qualified_name(self, expr: ast.AST) -> str | None:
        """`torch.nn.functional.softmax` for `F.softmax` under `import torch.nn.functional as F`."""
        if expr not in self._qualified:
            self._qualified[expr] = qualified_name(expr, self.resolve)
        return self._qualified[expr]

    def module_level(self, name: str) -> str | None:
        """What a name of the module's own scope is imported or defined as (`torch.nn` for `nn`)."""
        return self._resolve(None, name)

    def resolve(self, name: ast.Name) -> str | None:
        if self._unshadowed(name.id):  # the same in every scope: no need to find the one `name` is in
            return self._resolve(None, name.id)
        function = self.scopes.enclosing_function(name)
        rebound = self._rebound().get(name.id)
        if rebound is not None and (function is not None or position(name) >= rebound):
            return self._resolve(function, name.id, rebound=True)
        key = (function, name.id)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(function, name.id)
        return self._resolved[key]

    def _resolve(self, function: ast.AST | None, name: str, rebound: bool = False) -> str | None:
        while function is not None:
            imported = self._imports.get(function, {}).get(name)
            if imported is not None:
                return imported
            if name in self.scopes.local_bindings(function):
                return None
            function = self.scopes.enclosing_function(function)
        if rebound:
            return None
        module_level = self._imports.get(self._module, {})
        return module_level.get(name) or self._definitions.get(name) or self._star_imported(name) or self._assumed.get(name)

    def _rebound(self) -> dict[str, tuple[int, int]]:
        """Module-level imports that a later module-level assignment replaces (`import model` then `model =
        model.Net()`), by where that assignment ends: the name holds the assigned value from there on, and in
        functions (they run after the module's statements). A fallback in an `except` handler replaces nothing."""
        if self._rebinding is None:
            self._rebinding = {}
            imported = {alias.asname or alias.name.split(".")[0] for node in self._module_imports for alias in node.names}
            module_stores: dict[str, list[ast.Name]] = {}  # of the imported names only: no scope asked of other names
            for n in self._index.by_type.get(ast.Name, ()):
                if n.id in imported and isinstance(n.ctx, ast.Store) and self.scopes.enclosing_scope(n) is None:
                    module_stores.setdefault(n.id, []).append(n)
            for node in self._module_imports:
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    stores = [
                        n for n in module_stores.get(bound, ()) if position(n) > position(node)
                        and not any(isinstance(a, ast.ExceptHandler) for a in self.scopes.ancestors(n))
                    ]  # fmt: skip (`except ImportError: amp = None` is the import's alternative)
                    statement = self.scopes.statement(stores[0]) if stores else None
                    if statement is not None and bound not in self._rebinding:
                        self._rebinding[bound] = (statement.end_lineno, statement.end_col_offset)
        return self._rebinding

    def _star_imported(self, name: str) -> str | None:
        """`models.Net` for `Net` under `from models import *`, when the project's `models` defines `Net`."""
        for origin in self._starred if self._project is not None else ():
            names = self._project.fact(origin, TopLevelNames)  # kept when the module's tree is let go
            if names is not None and name in names:
                return f"{origin}.{name}"
        return None

    def _unshadowed(self, name: str) -> bool:
        """Does `name` resolve alike in every scope: no function imports it, and nothing in the file binds it
        but imports outside functions?"""
        if self._shadowable is None:
            inner_imports = (names for scope, names in self._imports.items() if scope is not self._module)
            self._shadowable = self.scopes.bound_anywhere().union(*inner_imports)
        return name not in self._shadowable

    def is_own_or_local(self, name: ast.Name) -> bool:
        """Does `name` resolve to nothing imported: a class or function of this module, or a local name?"""
        return self.resolve(name) in (None, self._definitions.get(name.id))

    def module_imports(self) -> dict[str, str]:
        """The module-level imports (the assumed torch imports too): bound name -> qualified name."""
        return {**self._assumed, **self._imports.get(self._module, {})}

    def imports(self, prefix: str) -> bool:
        """Does the module import anything from `prefix` (e.g. "torch")?"""
        return any(
            target == prefix or target.startswith(prefix + ".")
            for bindings in self._imports.values()
            for target in bindings.values()
        )


def qualified_name(expr: ast.AST, resolve: Callable[[ast.Name], str | None]) -> str | None:
    """The dotted name `expr` spells, its first name resolved by `resolve` (None: not a dotted name, or
    its first name resolves to nothing)."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    base = resolve(expr)
    return None if base is None else ".".join([base, *reversed(parts)])


def reference_key(expr: ast.AST) -> str | None:
    """The one key of a reference: `self.model.encoder` for that expression, `model` for a name,
    `self.optimizers['gen']` for an entry read by a constant key (a word or an integer); None for anything
    else (a call, an entry read by a computed key)."""
    parts: list[str] = []
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        if isinstance(expr, ast.Attribute):
            parts.append(f".{expr.attr}")
        elif _constant_key(expr.slice):
            parts.append(f"[{expr.slice.value!r}]")
        else:
            return None
        expr = expr.value
    return expr.id + "".join(reversed(parts)) if isinstance(expr, ast.Name) else None


def _constant_key(key: ast.AST) -> bool:
    value = getattr(key, "value", None) if isinstance(key, ast.Constant) else None
    return type(value) is int or isinstance(value, str) and value.isidentifier()


def is_self_attribute(node: ast.AST) -> bool:
    """`self.x`: an attribute the object itself holds (its key `self.x`)."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def training_test(test: ast.AST) -> bool | None:
    """True for `self.training`, False for `not self.training`, None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = training_test(test.operand)
        return None if inner is None else not inner
    return True if is_self_attribute(test) and test.attr == "training" else None


def module_scope_imports(ctx) -> dict[str, str]:
    """What `Names.module_imports` gives, read from the statements outside functions (the assumed imports
    from the file's tree index, never a walk of its own)."""
    bound: dict[str, str] = {}
    module = ctx.module
    stack: list[ast.AST] = list(reversed(ctx.tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(_bindings(node, module))
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack += reversed([c for c in ast.iter_child_nodes(node) if isinstance(c, NESTED_STATEMENTS)])
    return {**assumed_imports(ctx.index.of_type(ast.Name, ast.arg, ast.Import, ast.ImportFrom, *DEFINITIONS)), **bound}


NESTED_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# The imports a torch snippet is written against: read so when the file binds none of these names.
ASSUMED_IMPORTS = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "optim": "torch.optim"}
# A name with one meaning in torch code, read so on its own when the file does not bind it.
ASSUMED_ALONE = {"Variable": "torch.autograd.Variable"}


def assumed_imports(nodes) -> dict[str, str]:
    """`ASSUMED_IMPORTS` when none of `nodes` (a file's names, parameters, imports and definitions) binds
    one of its names, and each of `ASSUMED_ALONE` that none binds; nothing when a `from m import *` may."""
    bound: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name):
            bound.update((node.id,) if not isinstance(node.ctx, ast.Load) else ())
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, DEFINITIONS):
            bound.add(node.name)
    if "*" in bound:
        return {}
    assumed = {} if not ASSUMED_IMPORTS.keys().isdisjoint(bound) else dict(ASSUMED_IMPORTS)
    return assumed | {name: target for name, target in ASSUMED_ALONE.items() if name not in bound}


def _bindings(node: ast.Import | ast.ImportFrom, module=None) -> dict[str, str]:
    bound: dict[str, str] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                bound[alias.asname] = _sibling(alias.name, module)
            else:
                top = alias.name.split(".")[0]
                bound[top] = _sibling(top, module)
        return bound
    origin = _absolute(node, module)
    if origin is None:
        return bound  # a relative import in a module whose name is not known
    for alias in node.names:
        if alias.name != "*":
            bound[alias.asname or alias.name] = f"{origin}.{alias.name}" if origin else alias.name
    return bound


class TopLevelNames:
    """The classes, functions and variables a module defines at its top level (a project `fact`)."""

    @staticmethod
    def of(ctx) -> frozenset[str]:
        names = set()
        for node in module_statements(ctx.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
        return frozenset(names)


def imported_modules(node: ast.Import | ast.ImportFrom, module) -> list[str]:
    """The modules an import statement may read: `a.b` of `import a.b`; `pkg.data`, and `pkg.data.x` in
    case `x` is a module, of `from .data import x` in `pkg.train` (whether each exists is the project's to say)."""
    if isinstance(node, ast.Import):
        return [_sibling(alias.name, module) for alias in node.names]
    origin = _absolute(node, module)
    if not origin:
        return []
    return [origin, *(f"{origin}.{alias.name}" for alias in node.names if alias.name != "*")]


def _absolute(node: ast.ImportFrom, module) -> str | None:
    """The module a `from` import imports from: `from ..data import x` in `pkg.sub.train` is `pkg.data`."""
    if not node.level:
        return _sibling(node.module, module) if node.module else node.module
    if module is None:
        return None
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    if node.level - 1 > len(package) or (node.level - 1 == len(package) and not node.module):
        return None
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def call_argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    """The argument passed at `position` or as `keyword=`: `F.cross_entropy(logits, ...)`, `(input=...)` or
    `(**{"input": ...})`."""
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    found = next((k.value for k in call.keywords if k.arg == keyword), None)
    unpacked = (dict_entries(k.value).get(keyword) for k in call.keywords if k.arg is None)
    return found if found is not None else next((v for v in unpacked if v is not None), None)


def dict_entries(node: ast.AST) -> dict[str, ast.AST]:
    """A dict literal's entries under constant string keys (a `dict(key=...)` call's too)."""
    if isinstance(node, ast.Dict):
        return {k.value: v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {k.arg: k.value for k in node.keywords if k.arg is not None}
    return {}


def partial_target(ctx, node: ast.AST | None) -> ast.AST | None:
    """`f` of `functools.partial(f, ...)` (by any import of `partial`) in `ctx`; None for any other node."""
    if isinstance(node, ast.Call) and node.args and ctx.qualified_name(node.func) == "functools.partial":
        return node.args[0]
    return None


def callee_name(call: ast.AST) -> str | None:
    """`step` for `opt.step(...)`, `print` for `print(...)`; None for anything but such a call."""
    return called_name(call.func) if isinstance(call, ast.Call) else None


def called_name(func: ast.AST) -> str | None:
    """The name a call's function spells last: `step` for `opt.step`, `train` for `train`; None for
    anything else (`fns[0]`, `make()`)."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _sibling(name: str, module) -> str:
    """`pkg.utils` for `utils` imported in `pkg.train` beside `pkg/utils.py` when the root has no `utils`."""
    if module is None or name.split(".")[0] not in getattr(module, "siblings", ()):
        return name
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    return f"{package}.{name}"
