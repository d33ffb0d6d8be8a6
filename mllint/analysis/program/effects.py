"""What a project function does to its parameters, closed over the project functions it calls.

A facet names an effect with an `Effect` kind: which node of a function is the effect and which
expression it acts on (`sink`: `x.sub_(m)` acts on `x`; `scaler.fit(X)` on `X`), and which transforms
keep the data it acts on (`keeps`: `x.view(B, -1)` is still `x`'s storage; `df.to_numpy()` still `df`'s
rows). `ParameterEffects.of(function, kind)` gives, per parameter, the places where the effect reaches
what the caller passed: in the function itself (after plain aliases and kept transforms, until the name is
bound to something else, such as `x = x.clone()`), or in a project function or method it calls with it
(`standardize(x, ...)`, `self.fit(df)`), with the argument bound to the callee's parameter. Calls are
followed `MAX_DEPTH` deep; each function's answer is worked out once per kind (an analysis of its module),
so a project's summaries cost one pass per function.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mllint.analysis.program.calls import Callee, CallResolver, bind_arguments
from mllint.analysis.program.project_view import followed_view
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.folding import SOMETHING, arms, fold, runs
from mllint.analysis.syntax.scopes import parameter_defaults, parameters
from mllint.analysis.values.values import ValueKinds

MAX_DEPTH = 3  # calls followed below the function asked about
PENDING = "\0pending"  # what a name holds while its bindings are being read (no parameter's name)


class Effect:
    """A kind of effect, defined by the facet that asks (one instance per kind: it keys the cache)."""

    words: re.Pattern[str] = re.compile("")  # what a module must mention for its functions to be read

    def sink(self, ctx, node: ast.AST) -> ast.AST | None:
        """The expression `node` acts on, when `node` is the effect."""
        raise NotImplementedError

    def keeps(self, ctx, expr: ast.AST) -> ast.AST | None:
        """The expression `expr` still is (one step of a kept transform); None when it is not one."""
        return None

    def passes(self, ctx, call: ast.Call) -> bool:
        """Is the effect of `callee` carried through `call` (False: the call turns it off)?"""
        return True


@dataclass(frozen=True)
class Reach:
    """Where an effect reaches a parameter: the node in `ctx`, and the calls on the way (outermost first)."""

    ctx: object
    node: ast.AST
    calls: tuple[tuple[object, ast.Call], ...] = ()

    def taken_under(self, call: ast.Call, function: ast.AST, strict: bool = True) -> bool:
        """Do the `if`s (and `a if c else b`) around each call on the way, and around the effect, hold under
        the call that enters their function, `call` entering `function` first (`if scaler is None:` with
        `scaler` left to its default None; `if inplace:` with `inplace=True`)? A test that is not known:
        with `strict`, the branch is not taken; without, it is, unless the test is of a parameter the call
        does not decide (`swish(x, self.inplace)`: the caller's own option)."""
        entering = call
        for home, node in [*self.calls, (self.ctx, self.node)]:
            constants = argument_constants(bind_arguments(entering, function, takes_self(home, function)), function)
            decide = lambda branch: fold(branch.test, constants)  # noqa: E731
            if not runs(arms(home.scopes.ancestors(node), node, function), decide, lambda b: not strict and not _of_parameter(b.test, function)):
                return False
            if node is not self.node:
                callee = home.analysis(ParameterEffects).callee(node)
                if callee is None:
                    return False
                entering, function = node, callee.function
        return True


class ParameterEffects:
    """`ctx.analysis(ParameterEffects)`: the effects of the module's functions on their parameters."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._resolver: CallResolver | None = None
        self._found: dict[tuple[ast.AST, Effect], dict[str, tuple[Reach, ...]]] = {}
        self._local: dict[tuple[ast.AST, Effect], tuple[Reach, ...]] = {}
        self._returned: dict[tuple[ast.AST, Effect], frozenset[str]] = {}
        self._order: dict[ast.AST, list[ast.AST]] = {}
        self._names: dict[tuple[ast.Name, Effect, int], str | None] = {}

    def of(self, function: ast.AST, kind: Effect, depth: int = 0) -> dict[str, tuple[Reach, ...]]:
        """Per parameter of `function`, where `kind` reaches the object the caller passes."""
        key = (function, kind)
        if key not in self._found:
            self._found[key] = {}  # a recursive call finds nothing more
            self._found[key] = self._effects(function, kind, depth)
        return self._found[key]

    def anywhere(self, function: ast.AST, kind: Effect, depth: int = 0) -> tuple[Reach, ...]:
        """Where `kind` happens in `function` or the project functions it calls, whatever it acts on."""
        key = (function, kind)
        if key not in self._local:
            self._local[key] = ()
            found = [Reach(self.ctx, n) for n in self._nodes(function) if kind.sink(self.ctx, n) is not None]
            for call, callee in self._calls(function, kind) if depth < MAX_DEPTH else ():
                if kind.passes(self.ctx, call):
                    inner = callee.ctx.analysis(ParameterEffects).anywhere(callee.function, kind, depth + 1)
                    found += [Reach(r.ctx, r.node, ((self.ctx, call), *r.calls)) for r in inner]
            self._local[key] = tuple(found)
        return self._local[key]

    def returned(self, function: ast.AST, kind: Effect, depth: int = 0) -> frozenset[str]:
        """The parameters whose object (or a form `kind` keeps) every `return` of `function` gives back
        (`out = df.copy(); ...; return out`)."""
        key = (function, kind)
        if key not in self._returned:
            self._returned[key] = frozenset()
            returns = [n for n in self._nodes(function) if isinstance(n, ast.Return)]
            given = {self._held(r.value, function, kind, depth) for r in returns}
            self._returned[key] = frozenset(given) if returns and None not in given else frozenset()
        return self._returned[key]

    def callee(self, call: ast.Call) -> Callee | None:
        if self._resolver is None:
            view = followed_view(self.ctx)
            self._resolver = CallResolver(self.ctx, view if view.index is not None else None)
        try:
            return self._resolver.resolve(call, followed=re.compile(rb""), reexported=True)
        except (RecursionError, ValueError):
            return None

    def _calls(self, function: ast.AST, kind: Effect):
        for node in self._nodes(function):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
                callee = self.callee(node)
                if callee is not None and callee.function is not function and _mentions(callee.ctx, kind):
                    yield node, callee

    def _effects(self, function: ast.AST, kind: Effect, depth: int) -> dict[str, tuple[Reach, ...]]:
        found: dict[str, list[Reach]] = {}
        for node in self._nodes(function):
            acted = kind.sink(self.ctx, node)
            parameter = self._held(acted, function, kind, depth) if acted is not None else None
            if parameter is not None:
                found.setdefault(parameter, []).append(Reach(self.ctx, node))
            if isinstance(node, ast.Call) and depth < MAX_DEPTH and isinstance(node.func, (ast.Name, ast.Attribute)):
                self._through_call(node, function, kind, depth, found)
        return {name: tuple(reaches) for name, reaches in found.items()}

    def _through_call(self, call: ast.Call, function: ast.AST, kind: Effect, depth: int, found: dict) -> None:
        if not any(self._held(a, function, kind, depth) is not None for a in [*call.args, *(k.value for k in call.keywords)]):
            return
        callee = self.callee(call)
        if callee is None or not _mentions(callee.ctx, kind) or not kind.passes(self.ctx, call):
            return
        bound = bind_arguments(call, callee.function, takes_self(callee.ctx, callee.function))
        inner = callee.ctx.analysis(ParameterEffects).of(callee.function, kind, depth + 1)
        for name, reaches in inner.items():
            parameter = self._held(bound.get(name), function, kind, depth)
            if parameter is not None:
                found.setdefault(parameter, []).extend(Reach(r.ctx, r.node, ((self.ctx, call), *r.calls)) for r in reaches)

    def _held(self, expr: ast.AST | None, function: ast.AST, kind: Effect, depth: int) -> str | None:
        """The parameter of `function` `expr` holds: a name holding one, a form `kind` keeps of it, or what a
        project function given it returns of it (`df = add_features(df)`)."""
        for _ in range(8):
            if expr is None or isinstance(expr, ast.Name):
                break
            kept = kind.keeps(self.ctx, expr)
            expr = kept if kept is not None or depth >= MAX_DEPTH else self.returned_argument(expr, kind, depth)
        return self._name_held(expr, function, kind, depth) if isinstance(expr, ast.Name) else None

    def _name_held(self, name: ast.Name, function: ast.AST, kind: Effect, depth: int) -> str | None:
        """The parameter every binding of `name` that reaches it holds, as the values layer binds names (the
        parameter itself, an alias or a kept form of one, `x += y` keeping what `x` held); None when one
        binds something else (`x = x.clone()`, a loop target) or they differ."""
        key = (name, kind, depth)
        if key not in self._names:
            self._names[key] = PENDING  # a binding met again around a loop adds nothing
            held = set()
            for definition in self.ctx.analysis(ValueKinds).reaching_definitions(name):
                update = self.ctx.scopes.parent(definition.node)
                if definition.node is function:
                    held.add(definition.name if definition.name in self._parameters(function) else None)
                elif definition.value is not None:
                    held.add(self._held(definition.value, function, kind, depth))
                elif isinstance(update, ast.AugAssign) and update.target is definition.node:
                    held.add(self._name_held(update.target, function, kind, depth))
                else:
                    held.add(None)
            held.discard(PENDING)
            self._names[key] = held.pop() if len(held) == 1 else None
        return self._names[key]

    def _parameters(self, function: ast.AST) -> list[str]:
        names = [p.arg for p in parameters(function, variadic=False)]
        return names[1:] if takes_self(self.ctx, function) else names

    def returned_parts(self, expr: ast.AST) -> list[tuple[object, ast.AST, ast.AST]] | None:
        """(the callee's context, its function, what it returns) for each `return` of the project function a call
        runs, or the element `i` of the tuples it returns for `f(x)[i]` (`mu, sd = stats(w)` binds `sd` to
        `stats(w)[1]`); None when the call runs no known function or a return is no tuple of that length."""
        index = None
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and type(expr.slice.value) is int:
            expr, index = expr.value, expr.slice.value
        callee = self.callee(expr) if isinstance(expr, ast.Call) and isinstance(expr.func, (ast.Name, ast.Attribute)) else None
        returned = function_returns(callee.function) if callee is not None else None
        if not returned or (index is not None and not all(isinstance(r, ast.Tuple) and -len(r.elts) <= index < len(r.elts) for r in returned)):
            return None
        return [(callee.ctx, callee.function, r if index is None else r.elts[index]) for r in returned]

    def returned_argument(self, expr: ast.AST, kind: Effect, depth: int = 0) -> ast.AST | None:
        """The argument of a call of a project function that it gives back (a form `kind` keeps of it)."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, (ast.Name, ast.Attribute)) and (expr.args or expr.keywords)):
            return None
        callee = self.callee(expr)
        if callee is None:
            return None
        given = callee.ctx.analysis(ParameterEffects).returned(callee.function, kind, depth + 1)
        bound = bind_arguments(expr, callee.function, takes_self(callee.ctx, callee.function)) if given else {}
        return next((bound[name] for name in given if bound.get(name) is not None), None)

    def _nodes(self, function: ast.AST) -> list[ast.AST]:
        """The function's own nodes in source order (an assignment after its value), nested functions left out."""
        if function not in self._order:
            self._order[function] = list(_in_order(function.body))
        return self._order[function]


def _in_order(statements: list[ast.AST]):
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield from _in_order(list(ast.iter_child_nodes(statement)))
        yield statement


def argument_constants(bound: dict, function: ast.AST) -> dict[str, object]:
    """What a call gives `function`'s parameters as constants for `fold` (`bound`: its arguments by
    parameter; a parameter it leaves out has its default): a literal's value, or `SOMETHING` (known only
    not to be None) for a name, call or attribute."""
    found = {}
    for name, value in {**parameter_defaults(function), **bound}.items():
        if isinstance(value, ast.Constant):
            found[name] = value.value
        elif isinstance(value, ast.Name | ast.Call | ast.Attribute):
            found[name] = SOMETHING
    return found


def _of_parameter(test: ast.AST, function: ast.AST) -> bool:
    """Is `test` a test of one of `function`'s parameters (`p`, `not p`, `p is None`, `p == c`)?"""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        test = test.left
    return isinstance(test, ast.Name) and test.id in {p.arg for p in parameters(function)}


def takes_self(ctx, function: ast.AST) -> bool:
    """A method called on an instance (its first parameter is the object): not a static method."""
    if not isinstance(ctx.scopes.parent(function), ast.ClassDef):
        return False
    return not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)


def _mentions(ctx, kind: Effect) -> bool:
    source = ctx.source
    return kind.words.search(getattr(source, "text", source) or "") is not None
