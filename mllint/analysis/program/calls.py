"""Which function of the linted project a call runs.

The loop model follows calls through `CallResolver.resolve`: the functions of the module (module-level,
nested in an enclosing function, `self.method(...)` of the enclosing class, its bases, or the one subclass that
defines it (`classes.dispatched_method`)) and, through the project
index, the functions of the project's other modules it imports (`from steps import train_step`,
`import utils; utils.step(...)`), read from their own module's tree, their names resolved there.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from mllint.analysis.program.hierarchy import dispatched_method, lineage, self_classes
from mllint.analysis.syntax.names import dict_entries, is_self_attribute
from mllint.analysis.syntax.tree import bound_receivers, module_statements

# What one of the module's functions must hold for the loop model to read it: a module that mentions
# none of these can neither clear, backpropagate nor step, and its calls stay unknown.
FOLLOWED = re.compile(rb"backward|step|grad")
ANY_MODULE = re.compile(rb"")  # every module is read
T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Callee:
    function: ast.FunctionDef | ast.AsyncFunctionDef
    ctx: object  # the context of the module that defines it
    instance: tuple | None = None  # (its module's context, the class) of the object a method runs on, when known


class CallResolver:
    """Which function of the linted project a call runs: a module-level function, a function defined in
    an enclosing function, `self.method(...)` of the enclosing class, or a function of another module of
    the project (`project` is the linted file's `ProjectView`; None: this module alone)."""

    def __init__(self, ctx, project=None) -> None:
        self.ctx = ctx
        self.project = project
        self.scopes = ctx.scopes
        self.module_functions = _functions_in(module_statements(ctx.tree))
        self._stored: dict[ast.ClassDef, set[str]] = {}
        self._nested: dict[ast.AST, dict[str, ast.AST]] = {}

    def resolve(
        self, call: ast.Call, at: ast.AST | None = None, followed: re.Pattern[bytes] | None = None, reexported: bool = False
    ) -> Callee | None:
        """`at`: where the call stands when it is not in the tree (a call of the function `map` is given);
        `followed`: what another module must mention to be read (default: the loop model's words), or with
        `reexported`, the module that defines what a package re-exports (`from .stats import compute_stats`)."""
        if is_self_attribute(call.func):
            return self._dispatched(call.func, at or call, followed or FOLLOWED)
        function = self._in_module(call.func, at or call)
        if function is not None:
            return Callee(function, self.ctx)
        return self._in_project(call.func, followed or FOLLOWED, reexported)

    def _dispatched(self, func: ast.Attribute, at: ast.AST, followed: re.Pattern[bytes]) -> Callee | None:
        """`self.method(...)`: what `classes.dispatched_method` finds for the enclosing class, another
        module's method read only when that module mentions `followed`."""
        cls = self.scopes.enclosing_class(at)
        found = dispatched_method(self.ctx, cls, func.attr, self.project) if cls is not None else None
        if found is None:
            return None
        home, method = found
        module = home.module.name if home is not self.ctx and home.module is not None else None
        if module is not None and self.project.index is not None and not self.project.index.mentions(module, followed):
            return None
        return Callee(method, home)

    def _in_module(self, func: ast.AST, at: ast.AST) -> ast.AST | None:
        if isinstance(func, ast.Name):
            scope = self.scopes.enclosing_function(at)  # through the functions around it (not lambdas)
            while scope is not None:
                if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    local = self._nested_functions(scope).get(func.id)
                    if local is not None:
                        return local
                    if func.id in self.scopes.local_bindings(scope):
                        return None
                scope = self.scopes.enclosing_function(scope)
            return self.module_functions.get(func.id)
        return None

    def _in_project(self, func: ast.AST, followed: re.Pattern[bytes], reexports: bool) -> Callee | None:
        if self.project is None or self.project.index is None or not isinstance(func, (ast.Name, ast.Attribute)):
            return None
        qualified = self.ctx.qualified_name(func)
        if qualified is None or "." not in qualified:
            return None
        module, _, member = qualified.rpartition(".")
        index = self.project.index
        reexported = False
        if module != self.project.own_name and not index.mentions(module, followed):
            reexported = reexports and index.mentions(module, _imports(member))
            if not reexported:  # a package's `from .stats import compute_stats`: read where it is defined
                return None
        found = self.project.function(qualified)
        defined_in = found[0].module.name if found is not None else None  # the module that defines a re-export
        if found is None or (reexported and defined_in != self.project.own_name and not index.mentions(defined_in, followed)):
            return None
        return Callee(found[1], found[0])

    def _nested_functions(self, function: ast.AST) -> dict[str, ast.AST]:
        """The functions a function defines, also inside its loops and branches (the last one wins)."""
        if function not in self._nested:
            defined = self.ctx.index.within(function, ast.FunctionDef, ast.AsyncFunctionDef)
            self._nested[function] = {
                node.name: node for node in defined if node is not function and self.scopes.enclosing_scope(node) is function
            }  # fmt: skip
        return self._nested[function]

    def is_attribute_call(self, call: ast.Call) -> bool:
        """`self.model(x)`: a call of an object the class stores (not a method acting on `self`)."""
        func = call.func
        if not is_self_attribute(func):
            return False
        cls = self.scopes.enclosing_class(call)
        if cls is None:
            return False
        if cls not in self._stored:  # a mixin's `self.encoder(x)`: stored by the classes mixing it in, or a base
            classes = [*self_classes(self.ctx, cls, self.project), *list(lineage(self.ctx, cls, self.project))[1:]]
            self._stored[cls] = {
                target.attr
                for home, stored in classes
                for node in home.index.within(stored, ast.Assign, ast.AnnAssign)
                for target in bound_receivers(node)
                if is_self_attribute(target)
            }  # fmt: skip
        return func.attr in self._stored[cls]


@lru_cache(maxsize=4096)
def _imports(member: str) -> re.Pattern[bytes]:
    """An import naming `member` (compiled once per name: a run asks for thousands, past `re`'s own cache)."""
    return re.compile(rb"import[^\n]*\b" + re.escape(member.encode()) + rb"\b")


def _functions_in(body: list[ast.stmt]) -> dict[str, ast.AST]:
    return {s.name: s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


def bind_arguments(call: ast.Call, function: ast.AST, skips_first: bool, literal=None) -> dict[str, ast.AST | None]:
    """The arguments of `call` by the parameter of `function` they fill, bound as Python binds them
    (`skips_first`: the call passes no `self`, as `obj.method(...)` does not). None for a parameter that
    `*args` or `**kwargs` may fill (unknown); a missing one is left out (its default applies). The one
    argument binder of the analyses: callers into parameters and callees followed from a call use it.
    `literal`: the dict literal a `**name` is bound to (the name itself when not one), read as its entries."""
    keywords = []
    for keyword in call.keywords:  # `f(**{"lr": 0.1})`, `f(**dict(lr=0.1))`: the entries as keywords
        value = literal(keyword.value) if keyword.arg is None and literal is not None else keyword.value
        entries = dict_entries(value) if keyword.arg is None and _whole_dict(value) else None
        keywords += list(entries.items()) if entries is not None else [(keyword.arg, keyword.value)]
    return bind_values(function, call.args, keywords, skips_first)


def _whole_dict(node: ast.AST) -> bool:
    """A dict literal every key of which is a string constant (no `**` inside), or a `dict(k=v)` call."""
    if isinstance(node, ast.Dict):
        return all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args and all(k.arg for k in node.keywords)


def bind_values(
    function: ast.AST, positional: Sequence[T], keywords: Iterable[tuple[str | None, T]], skips_first: bool
) -> dict[str, T | None]:
    """`bind_arguments` for what a family makes of the arguments (their texts, their abstract values):
    `positional` in order, an `ast.Starred` for `*args`; `keywords` as (name, value), None naming
    `**kwargs`. A keyword names its parameter even after `*args`."""
    args = function.args
    parameters = [*args.posonlyargs, *args.args][1 if skips_first else 0 :]
    keyword_names = {a.arg for a in [*args.args, *args.kwonlyargs]}
    bound: dict[str, T] = {}
    unknown: set[str] = set()
    for parameter, argument in zip(parameters, positional):
        if isinstance(argument, ast.Starred):
            unknown |= {p.arg for p in parameters} - set(bound)
            break
        bound[parameter.arg] = argument
    for name, value in keywords:
        if name is None:
            unknown |= keyword_names - set(bound)
        elif name in keyword_names:
            bound[name] = value
    return {**bound, **dict.fromkeys(unknown - set(bound))}
