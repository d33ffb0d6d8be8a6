"""Parents, enclosing functions and classes, and the names each function binds."""
from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from functools import cached_property

from mllint.analysis.syntax.tree import child_nodes

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
SCOPE_NODES = (*FUNCTION_NODES, ast.ClassDef)


class Scopes:
    def __init__(self, ctx) -> None:
        self._index = ctx.index
        self._parents = ctx.index.parents
        self._bindings: dict[ast.AST, frozenset[str]] = {}
        self._stores: tuple[list[tuple[int, int]], list[str]] | None = None
        self._bound_anywhere: frozenset[str] | None = None
        # Memoized answers for statements: a query costs the nodes up to a statement seen before.
        self._functions: dict[ast.AST, ast.AST | None] = {}
        self._classes: dict[ast.AST, ast.AST | None] = {}
        self._scopes: dict[ast.AST, ast.AST | None] = {}
        self._loads: dict[str, list[ast.Name]] | None = None
        self._reads: dict[tuple[ast.AST | None, str], list[ast.Name]] | None = None
        self._writes: dict[tuple[ast.AST | None, str], list[ast.Name]] | None = None
        self._uses: dict[tuple[ast.AST | None, str], list[ast.Name]] | None = None
        self._statements: dict[ast.AST | None, list[ast.stmt]] | None = None

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        node = self._parents.get(node)
        while node is not None:
            yield node
            node = self._parents.get(node)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        return self._enclosing(node, FUNCTION_NODES, self._functions)

    def statement(self, node: ast.AST) -> ast.AST | None:
        """The statement `node` is part of (itself if it is one)."""
        while node is not None and not isinstance(node, ast.stmt):
            node = self._parents.get(node)
        return node

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        """The class whose method (or class body) holds `node`."""
        return self._enclosing(node, ast.ClassDef, self._classes)

    def enclosing_scope(self, node: ast.AST) -> ast.AST | None:
        """The innermost function or class around `node` (None: module level)."""
        return self._enclosing(node, SCOPE_NODES, self._scopes)

    def _enclosing(self, node: ast.AST, kinds, memo: dict[ast.AST, ast.AST | None]) -> ast.AST | None:
        """The nearest ancestor of one of `kinds`. The statements passed on the way remember the answer
        (expressions are a few steps below theirs: remembering them too would double the memory)."""
        if node in memo:
            return memo[node]
        path, parents, found = [node], self._parents, None
        parent = parents.get(node)
        while parent is not None:
            if isinstance(parent, kinds):
                found = parent
                break
            if parent in memo:
                found = memo[parent]
                break
            path.append(parent)
            parent = parents.get(parent)
        for passed in path:
            if isinstance(passed, ast.stmt):
                memo[passed] = found
        return found

    def loads(self, name: str) -> list[ast.Name]:
        """Every load of `name` in the file, in source order."""
        if self._loads is None:
            self._loads = {}
            for node in self._index.by_type.get(ast.Name, ()):
                if isinstance(node.ctx, ast.Load):
                    self._loads.setdefault(node.id, []).append(node)
        return self._loads.get(name, [])

    def reads(self, function: ast.AST | None, name: str) -> list[ast.Name]:
        """The loads of `name` whose enclosing function is `function` (None: outside functions), in
        source order."""
        if self._reads is None:
            self._reads = self._names_by_function(ast.Load)
        return self._reads.get((function, name), [])

    def writes(self, function: ast.AST | None, name: str) -> list[ast.Name]:
        """The stores of `name` (as a `Name`: assignment and loop targets) whose enclosing function is
        `function` (None: outside functions), in source order."""
        if self._writes is None:
            self._writes = self._names_by_function(ast.Store)
        return self._writes.get((function, name), [])

    def uses(self, scope: ast.AST | None, name: str) -> list[ast.Name]:
        """Every `Name` of `name` (read, written or deleted) whose enclosing scope is `scope` (None: module
        level), in pre-order."""
        if self._uses is None:
            self._uses = {}
            for node in self._index.by_type.get(ast.Name, ()):
                self._uses.setdefault((self.enclosing_scope(node), node.id), []).append(node)
        return self._uses.get((scope, name), [])

    def _names_by_function(self, context: type) -> dict[tuple[ast.AST | None, str], list[ast.Name]]:
        found: dict[tuple[ast.AST | None, str], list[ast.Name]] = {}
        for node in self._index.by_type.get(ast.Name, ()):
            if isinstance(node.ctx, context):
                found.setdefault((self.enclosing_function(node), node.id), []).append(node)
        return found

    def statements(self, function: ast.AST | None) -> list[ast.stmt]:
        """The statements whose enclosing function is `function` (None: outside functions), in source
        order (nested functions' bodies excluded, the `def` statements themselves included)."""
        if self._statements is None:
            self._statements = {}
            for node in self._index.nodes:
                if isinstance(node, ast.stmt):
                    self._statements.setdefault(self.enclosing_function(node), []).append(node)
        return self._statements.get(function, [])

    def _file_stores(self) -> tuple[list[tuple[int, int]], list[str]]:
        if self._stores is None:
            self._stores = _stores(self._index)
        return self._stores

    def bound_anywhere(self) -> frozenset[str]:
        """Every name some function's `local_bindings` may hold: the file's bindings and parameters."""
        if self._bound_anywhere is None:
            functions = self._index.of_type(*FUNCTION_NODES)
            self._bound_anywhere = frozenset(self._file_stores()[1]) | {arg.arg for f in functions for arg in parameters(f)}
        return self._bound_anywhere

    def bound_out_of_view(self, function: ast.AST | None, name: str) -> bool:
        """Is `name`, as `function` (None: the module) uses it, bound before that code runs by code the file
        does not show? So it is when the function declares it `global` or `nonlocal`, and at module level
        when the file binds it only by updating it (`total += loss`, `total = total + loss`): an earlier
        notebook cell or session seeded it, or the update would raise. Never when a `from m import *` may
        bind it, nor for a name an import, a definition or a plain assignment binds."""
        if function is not None:
            declared = self._index.within(function, ast.Global, ast.Nonlocal)
            return any(name in n.names and self.enclosing_function(n) is function for n in declared)
        if any(a.name == "*" or (a.asname or a.name).split(".")[0] == name for n in self._index.of_type(ast.Import, ast.ImportFrom) for a in n.names):
            return False
        if name in self._definition_names:
            return False
        stores = [n for n in self.uses(None, name) if not isinstance(n.ctx, ast.Load)]
        return bool(stores) and all(_updates(self.statement(store), store) for store in stores)

    @cached_property
    def _definition_names(self) -> frozenset[str]:
        return frozenset(node.name for node in self._index.of_type(*SCOPE_NODES) if not isinstance(node, ast.Lambda))

    def local_bindings(self, function: ast.AST) -> frozenset[str]:
        """Names a function binds other than by import: parameters, assignment targets, loop variables,
        nested definitions (those its nested functions bind count too)."""
        if function not in self._bindings:
            positions, names = self._file_stores()
            body = function.body if isinstance(function.body, list) else [function.body]
            first = bisect_left(positions, (body[0].lineno, body[0].col_offset))
            last = bisect_right(positions, (function.end_lineno, function.end_col_offset))
            self._bindings[function] = frozenset(names[first:last]) | {arg.arg for arg in parameters(function)}
        return self._bindings[function]


def _stores(index) -> tuple[list[tuple[int, int]], list[str]]:
    """The file's bindings by name, in source order: (positions, names), for a function's body to be the
    bindings between two positions."""
    names = index.by_type.get(ast.Name, ())
    bound = [(name.lineno, name.col_offset, name.id) for name in names if isinstance(name.ctx, ast.Store)]
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        bound += [(node.lineno, node.col_offset, node.name) for node in index.by_type.get(kind, ())]
    bound.sort()
    return [(line, column) for line, column, _ in bound], [name for _, _, name in bound]


def _updates(statement: ast.AST | None, store: ast.Name) -> bool:
    """Does `statement` bind `store` only by updating its old value (`x += v`, `x = x + v`)?"""
    if isinstance(statement, ast.AugAssign):
        return statement.target is store
    return (
        isinstance(statement, ast.Assign) and statement.targets == [store]
        and any(isinstance(n, ast.Name) and n.id == store.id for n in ast.walk(statement.value))
    )  # fmt: skip


def statement_blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists of a compound statement or function (`body`, `orelse`, `finalbody`)."""
    return [b for b in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")) if isinstance(b, list)]


def own_nodes(block: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a block in source order, not those of the functions, lambdas and classes it defines
    (their definitions themselves included)."""
    stack = list(reversed(block))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPE_NODES):
            stack += reversed(child_nodes(node))


def parameter_defaults(function: ast.AST) -> dict[str, ast.AST]:
    """A function's parameters that have a default, with it."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    return defaults


def parameters(function: ast.AST, variadic: bool = True) -> list[ast.arg]:
    """A function's (or lambda's) parameters in order, then `*args` and `**kwargs` unless not `variadic`."""
    args = function.args
    extra = [a for a in (args.vararg, args.kwarg) if a is not None] if variadic else []
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def first_parameter(function: ast.AST) -> str | None:
    """The name of a function's first positional parameter (`self` of a method); None for anything else."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    positional = [*function.args.posonlyargs, *function.args.args]
    return positional[0].arg if positional else None
