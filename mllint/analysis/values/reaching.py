"""Reaching definitions: which assignments (or parameters, loop targets, `with`/`except`/import bindings,
comprehension targets) may reach a use of a name, in statement order, through branches whose arms all
assign and loops whose earlier turns do; a `self.` attribute's assignments in its class's methods; and what
the turns of a loop over a literal or a listed container give its target. `ReachingDefinitions` is the
part of `values.ValueKinds` that answers them; `ValueKinds` describes what the reaching values hold.
"""
from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from mllint.analysis.syntax.folding import arms, fold, tested_key
from mllint.analysis.syntax.names import call_argument, dict_entries, is_self_attribute, reference_key
from mllint.analysis.syntax.scopes import FUNCTION_NODES, SCOPE_NODES, parameters
from mllint.analysis.syntax.tree import assignment_targets, position


MAX_DEPTH = 8  # how many assignments deep a value is followed (`a = b`, `b = c`, ...)
MAX_CHAIN = 64  # links of a chain of `x += ...` answered from the link before (deeper: scanned)


@dataclass(frozen=True)
class Definition:
    name: str
    node: ast.AST  # the target node that binds the name
    value: ast.AST | None  # the assigned expression, None when it cannot be known (parameters, +=, for)


@dataclass(frozen=True)
class Bindings:
    """The definitions of one name in one scope, in source order, and their positions (to bisect)."""

    definitions: list[Definition]
    positions: list[tuple[int, int]]


def _arms(branch: ast.If) -> list[list[ast.stmt]]:
    """The arms of an `if`/`else` (none without an `else`) that may run: the one its test takes when the
    test decides itself (`if True:`, without an `else` too). An `elif` chain dispatching on the values
    of one setting (`if self.kind == "self": ... elif self.kind == "context": ...`) needs no `else`:
    a value no arm handles is a configuration error, not a path the code means."""
    held = _literal(branch)
    if held is not None:
        return [branch.body] if held else [branch.orelse]
    bodies, tests, node = [], [], branch
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        bodies.append(node.body)
        tests.append(node.test)
        node = node.orelse[0]
    bodies.append(node.body)
    tests.append(node.test)
    if node.orelse:
        return [branch.body, branch.orelse]
    dispatch = len(tests) > 1 and all(_compares_with_constants(t) for t in tests)
    subjects = {reference_key(t.left) for t in tests} if dispatch else set()
    return bodies if len(subjects) == 1 and None not in subjects else []


def _literal(branch: ast.If) -> bool | None:
    """The truth of a test its own text decides (`True`, `not 0`), None for any other."""
    return fold(branch.test, {})


def _compares_with_constants(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In))):
        return False
    value = test.comparators[0]
    values = value.elts if isinstance(test.ops[0], ast.In) and isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
    return all(isinstance(v, ast.Constant) for v in values)


COPIES = frozenset({"list", "tuple", "sorted", "reversed", "iter"})


def _kept_items(iterable: ast.AST) -> ast.AST | None:
    """What `iterable` takes its items from, keeping some of them as they are: `xs[1:]`, `list(xs)`,
    `filter(f, xs)`, `[m for m in xs if ...]` (None: anything else)."""
    if isinstance(iterable, ast.Subscript) and isinstance(iterable.slice, ast.Slice):
        return iterable.value
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and not iterable.keywords:
        arguments, name = iterable.args, iterable.func.id
        if name in COPIES and len(arguments) == 1 or name == "filter" and len(arguments) == 2:
            return arguments[-1]
    if isinstance(iterable, (ast.ListComp, ast.GeneratorExp)) and len(iterable.generators) == 1:
        generator = iterable.generators[0]
        if not generator.is_async and _names_of(iterable.elt) is not None and _names_of(iterable.elt) == _names_of(generator.target):
            return generator.iter
    return None


def _names_of(expr: ast.AST) -> tuple | str | None:
    """`m` for a name, `("n", "p")` for a tuple of names; None for anything else."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Tuple):
        names = tuple(_names_of(e) for e in expr.elts)
        return None if None in names else names
    return None


def _constant_index(node: ast.AST) -> int | None:
    """`1` or `-1` written literally."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    return sign * node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _is_reference(expr: ast.AST) -> bool:
    """`self.net.encoder`, `parts["decoder"]`, `nets[0].head`, `getattr(model, name)`: an attribute or constant item
    of a name, however deep."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr" and len(expr.args) == 2:
        return not expr.keywords and _is_reference(ast.Attribute(value=expr.args[0], attr="", ctx=ast.Load()))
    if isinstance(expr, ast.Subscript) and _constant_index(expr.slice) is None:
        if not (isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str)):
            return False
    elif not isinstance(expr, ast.Attribute):
        return False
    inner = expr.value
    return isinstance(inner, ast.Name) or (isinstance(inner, ast.Attribute | ast.Subscript) and _is_reference(inner))


CONDITIONAL_NODES = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match, ast.IfExp, ast.BoolOp, ast.comprehension,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
)  # fmt: skip
BINDING_NODES = (
    ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.withitem,
    ast.comprehension, ast.ExceptHandler, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.ClassDef,
)  # fmt: skip


def _bindings(node: ast.AST):
    """(name, target node, assigned value or None when unknowable) for each name a node binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name, node, None
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            yield from _assigned(target, node.value)
    elif isinstance(node, ast.AnnAssign):
        if node.value is not None:
            yield from _assigned(node.target, node.value)
    elif isinstance(node, ast.NamedExpr):
        yield node.target.id, node.target, node.value
    elif isinstance(node, ast.ExceptHandler):
        if node.name:
            yield node.name, node, None
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0], node, None
    else:  # augmented assignments, loop, with and comprehension targets
        target = node.optional_vars if isinstance(node, ast.withitem) else node.target
        for name in _names_in(target):
            yield name.id, name, None


def _assigned(target: ast.AST, value: ast.AST):
    if isinstance(target, ast.Name):
        yield target.id, target, value
    elif isinstance(target, (ast.Tuple, ast.List)):
        literal = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
        starred = any(isinstance(element, ast.Starred) for element in target.elts)
        for i, element in enumerate(target.elts):
            if literal and isinstance(element, ast.Name):
                yield element.id, element, value.elts[i]
            elif not starred and isinstance(element, ast.Name):  # `logits, probs = model(x)`: item i
                item = ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load())
                yield element.id, element, ast.copy_location(item, value)
            else:
                for name in _names_in(element):
                    yield name.id, name, None


def _unpacked_attributes(target: ast.Tuple | ast.List, value: ast.AST):
    """(attribute, value) for each `self.<attribute>` of a tuple target a call's result is unpacked into
    (`self.model, self.opt = build(cfg)`): item i of what the call returns; None (unknown) under a starred
    target; a literal's item is what it assigns, as a single assignment would (`self.net, self.lam = net, lam`,
    `self.g, self.d = g.to(device), d.to(device)`)."""
    known = isinstance(value, ast.Call) and not any(isinstance(element, ast.Starred) for element in target.elts)
    literal = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and not known
    for i, element in enumerate(target.elts):
        if is_self_attribute(element) and literal:
            yield element.attr, value.elts[i]
        elif is_self_attribute(element):
            item = ast.copy_location(ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load()), value)
            yield element.attr, item if known else None


def _names_in(target: ast.AST | None) -> list[ast.Name]:
    """The names a target binds: itself, or those its tuple, list and starred parts bind. An attribute or
    item target (`self.step += 1`, `for self.i in ...`, `d[k] = v`) binds no name: it changes an object."""
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, ast.Starred):
        return _names_in(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _names_in(element)]
    return []


def _common_loop(node: ast.AST, around: set[ast.AST], scopes) -> ast.AST | None:
    """The innermost loop around `node` that is also in `around` (another node's ancestors)."""
    return next((a for a in scopes.ancestors(node) if a in around and isinstance(a, (ast.For, ast.AsyncFor, ast.While))), None)


class ReachingDefinitions:
    """Which assignments reach a use of a name or a `self.` attribute, and what a loop's turns give its
    target: the part of `ValueKinds` that follows names to the values assigned to them."""

    def assigned_values(self, expr: ast.AST) -> list[ast.AST] | None:
        """What may have been assigned to a name or a `self.` attribute (None: unknown)."""
        if isinstance(expr, ast.Name):
            return self.reaching_values(expr)
        return self._self_attribute_values(expr) if is_self_attribute(expr) else None

    # Reaching definitions.
    def reaching_values(self, use: ast.Name) -> list[ast.AST] | None:
        """The expressions that may have been assigned to `use` when it is read; None when some way
        of reaching it is unknown (a parameter, an augmented assignment, a global defined elsewhere)."""
        definitions = self._reaching(use)
        if not definitions or any(d.value is None for d in definitions):
            return None
        return [d.value for d in definitions]

    def local_function(self, use: ast.Name) -> ast.FunctionDef | None:
        """The function a `def` inside a function binds `use` to, when that is its one binding."""
        definitions = self._reaching(use)
        node = definitions[0].node if len(definitions) == 1 else None
        return node if isinstance(node, ast.FunctionDef) and self.scopes.enclosing_scope(node) is not None else None

    def loop_items(self, use: ast.Name) -> tuple[ast.AST, tuple[ast.AST, ...]] | None:
        """(the loop, what it binds `use` to on each turn) when every binding reaching `use` is the variable,
        or an unpacked part of it, of one loop over a literal list or tuple written there or held by a name
        (`for split in SPLITS:`, `for name, df in (("train", tr), ("test", te)):`), or over `zip` or
        `enumerate` of such literals; None else."""
        found = {self._literal_loop(d.node) for d in self._reaching(use)} or {None}
        return found.pop() if len(found) == 1 else None

    def loop_iterables(self, use: ast.Name) -> list[ast.AST] | None:
        """What the loops iterate over whose variable, or an unpacked part of it, every binding reaching `use`
        is (`losses.items()` for `v` of `{k: v.item() for k, v in losses.items()}`); None when one is not."""
        found = []
        for definition in self._reaching(use):
            node = definition.node
            while isinstance(parent := self.scopes.parent(node), (ast.Tuple, ast.List)):
                node = parent
            if not (isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.target is node):
                return None
            found.append(parent.iter)
        return found or None

    def loop_turns(self, loop: ast.For | ast.comprehension) -> list[dict[str, ast.AST]] | None:
        """Each turn of a loop over literals (as `loop_items` reads them): the item each variable of its target
        is bound to, `enumerate`'s count as a constant; variables bound to no literal left out. None when
        no variable is, or their lists differ in length."""
        items = {}
        for name in (n for n in ast.walk(loop.target) if isinstance(n, ast.Name)):
            found = self._literal_loop(name)
            if found is not None and found[0] is loop:
                items[name.id] = found[1]
        iterable, target = loop.iter, loop.target
        counted = isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate"
        if counted and isinstance(target, ast.Tuple) and isinstance(target.elts[0], ast.Name) and items and self.ctx.qualified_name(iterable.func) is None:
            items[target.elts[0].id] = tuple(ast.Constant(i) for i in range(len(next(iter(items.values())))))
        lengths = {len(i) for i in items.values()}
        return [{name: found[turn] for name, found in items.items()} for turn in range(lengths.pop())] if len(lengths) == 1 else None

    def unpacked_from(self, use: ast.Name) -> tuple[ast.AST, ast.AST, tuple[int, ...]] | None:
        """(the loop or assignment, what it unpacks, the position of `use` in each item) when every binding
        reaching `use` is one place in the target of one loop or tuple assignment: `va` of `for k, (tr, va) in
        enumerate(kf.split(X)):` is (the loop, `kf.split(X)`, (1,)); of `tr, va = train_test_split(idx)`, (the
        assignment, the call, (1,)). `zip` and `enumerate` of one iterable are seen through."""
        found = {self._unpacking(d.node) for d in self._reaching(use)} or {None}
        return found.pop() if len(found) == 1 else None

    def _unpacking(self, target: ast.AST) -> tuple[ast.AST, ast.AST, tuple[int, ...]] | None:
        path, node = [], target
        while isinstance(parent := self.scopes.parent(node), (ast.Tuple, ast.List)):
            path.append(parent.elts.index(node))
            node = parent
        if isinstance(parent, ast.Assign) and node in parent.targets and path:
            return parent, parent.value, tuple(path[::-1])
        if not (isinstance(parent, (ast.For, ast.comprehension)) and parent.target is node):
            return None
        iterable, path = parent.iter, path[::-1]
        name = iterable.func.id if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) else None
        if name in ("zip", "enumerate") and path and not iterable.keywords and self.ctx.qualified_name(iterable.func) is None:
            position = path.pop(0) - (name == "enumerate")
            if not 0 <= position < len(iterable.args) or (name == "enumerate" and len(iterable.args) != 1):
                return None
            iterable = iterable.args[position]
        return parent, iterable, tuple(path)

    def _literal_loop(self, target: ast.AST) -> tuple[ast.AST, tuple[ast.AST, ...]] | None:
        found = self._unpacking(target)
        if found is None or isinstance(found[0], ast.Assign):
            return None
        parent, iterable, path = found
        items = self.literal_items(iterable)
        for position in path:
            if items is None or not all(isinstance(i, (ast.Tuple, ast.List)) and position < len(i.elts) for i in items):
                return None
            items = [i.elts[position] for i in items]
        return (parent, tuple(items)) if items else None

    def literal_items(self, expr: ast.AST) -> list[ast.AST] | None:
        """The items of a literal list or tuple, written there or held by a name on every way to it."""
        if isinstance(expr, ast.Name):
            values = self.reaching_values(expr) or []
            expr = values[0] if len(values) == 1 else None
        return list(expr.elts) if isinstance(expr, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in expr.elts) else None

    def aliased(self, name: ast.AST) -> list[ast.AST] | None:
        """The references a name is bound to on every way to `name` (`enc = self.net.encoder`, `g = nets["g"]`,
        `m, g = nets["m"], nets["g"]`, `layer = getattr(model, name)`): attribute chains and items at constant keys of them; None when one
        binding is anything else. The name holds the very object they hold."""
        values = self.reaching_values(name) if isinstance(name, ast.Name) else None
        return values if values and all(_is_reference(v) for v in values) else None

    def item_sources(self, iterable: ast.AST, depth: int = 0, seen: frozenset = frozenset()) -> list[ast.AST] | None:
        """The collections whose items `iterable` yields, through the names bound to it, slices
        (`layers[1:]`), copies (`list(xs)`, `sorted(xs)`), `filter(f, xs)` and comprehensions that keep
        their item (`[m for m in model.modules() if isinstance(m, nn.Linear)]`); None: a binding unknown.
        A binding met again around a loop (`xs = xs[1:]`) adds nothing new."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(iterable, ast.Name):
            found = []
            for value in self.reaching_values(iterable) or [None]:
                sources = None if value is None else [] if value in seen else self.item_sources(value, depth + 1, seen | {value})
                if sources is None:
                    return None
                found += sources
            return found
        inner = _kept_items(iterable)
        if inner is not None and (not isinstance(iterable, ast.Call) or self.ctx.qualified_name(iterable.func) is None):
            return self.item_sources(inner, depth + 1, seen)
        return [iterable]

    def listed_items(self, name: ast.Name) -> list[ast.AST] | None:
        """The items of the list a name holds: the list literal it is bound to (once), and what is appended
        to it in the same function (`terms.append(lam * center_loss)`, `entropies.append(dist.entropy())` in
        the loop over an episode's steps), or the item of the list comprehension it is bound to
        (`ents = [d.entropy() for d in dists]`); None when it is bound to anything else."""
        assigned = self.reaching_values(name)
        if assigned is not None and len(assigned) == 1 and isinstance(assigned[0], ast.ListComp):
            return [assigned[0].elt]
        if assigned is None or len(assigned) != 1 or not isinstance(assigned[0], ast.List):
            return None
        listed = self.listed_layers(name, name)
        return [i for i in listed[0] if i is not None] or None if listed is not None else None

    def passed_argument(self, call: ast.Call, position: int, keyword: str) -> ast.AST | None:
        """The argument a call passes at `position` or as `keyword=` (`call_argument`), also as an element of
        a `*pair` or an entry of a `**kwargs` whose name one tuple, list or dict literal reaches
        (`pair = (out, y); criterion(*pair)`, `kw = {"input": out}; loss_fn(**kw)`)."""
        found = call_argument(call, position, keyword)
        if found is not None:
            return found
        spread: list[ast.AST] = []
        for argument in call.args[: position + 1]:
            listed = self._one_literal(argument.value, ast.Tuple | ast.List) if isinstance(argument, ast.Starred) else None
            if isinstance(argument, ast.Starred) and (listed is None or any(isinstance(e, ast.Starred) for e in listed.elts)):
                break  # how many it spreads is not known: no later position is
            spread += listed.elts if listed is not None else [argument]
        else:
            spread += call.args[position + 1 :] if len(spread) <= position else []
        if len(spread) > position and not any(isinstance(a, ast.Starred) for a in spread[: position + 1]):
            return spread[position]
        splats = (self._one_literal(k.value, ast.Dict | ast.Call) for k in call.keywords if k.arg is None)
        return next((entry for d in splats if d is not None and (entry := dict_entries(d).get(keyword)) is not None), None)

    def _one_literal(self, expr: ast.AST, kinds: type) -> ast.AST | None:
        """`expr` itself when it is a literal of `kinds`, or the one such literal a name it is reaches."""
        values = self.reaching_values(expr) if isinstance(expr, ast.Name) else [expr]
        return values[0] if values and len(values) == 1 and isinstance(values[0], kinds) else None

    def bound_method(self, func: ast.AST) -> ast.Attribute | None:
        """`opt.zero_grad` for `clear` bound by `clear = opt.zero_grad` on every way to where it is called:
        a method of a reference (`self.opt`, `optimizers["gen"]` too), called through an alias; of anything
        else (`optimizers[name]`) when one binding reaches."""
        values = self.reaching_values(func) if isinstance(func, ast.Name) else None
        if not values or not all(isinstance(v, ast.Attribute) for v in values):
            return None
        keys = {reference_key(v) for v in values}
        return values[0] if len(values) == 1 or len(keys) == 1 and None not in keys else None

    def reaching_definitions(self, name: ast.Name) -> list[Definition]:
        """The bindings that may give `name` its value where it stands (empty: unknown)."""
        return self._reaching(name)

    def making_definitions(self, name: ast.Name) -> list[Definition | None]:
        """The bindings that make the value of `name`: those reaching it, and through `loss += penalty`
        the ones reaching its target too (a loss computed before the block keeps its graph). Any binding
        of unknown value (a parameter, a loop variable) leaves the list incomplete: None in it."""
        found, seen, pending = [], set(), list(self.reaching_definitions(name))
        while pending:
            definition = pending.pop()
            if definition is None or definition.node in seen:
                found += [None] if definition is None else []
                continue
            seen.add(definition.node)
            found.append(definition)
            update = self.scopes.parent(definition.node)
            if isinstance(update, ast.AugAssign) and isinstance(update.target, ast.Name):
                pending += self.reaching_definitions(update.target) or [None]
            elif definition.value is None:
                found.append(None)
        return found

    def _reaching(self, use: ast.Name) -> list[Definition]:
        if use not in self._reached:
            self._reached[use] = self._reaching_of(use)
        return self._reached[use]

    def _reaching_of(self, use: ast.Name) -> list[Definition]:
        scope = self.scopes.enclosing_scope(use)
        definitions = self._definitions_in(scope or self.ctx.tree).get(use.id)
        if scope is not None and not definitions:
            # Not bound in the function: a closure's name bound once in a function around it (`criterion`
            # of `make_step(model, optimizer, criterion)`), or a module-level name, whatever its order.
            outer = self.scopes.enclosing_scope(scope)
            while outer is not None and (isinstance(outer, ast.ClassDef) or not self._definitions_in(outer).get(use.id)):
                outer = self.scopes.enclosing_scope(outer)  # a class's names are not seen from its methods
            captured = self._definitions_in(outer).get(use.id) if outer is not None else None
            if captured:
                return captured.definitions if len(captured.definitions) == 1 else []
            module_definitions = self._definitions_in(self.ctx.tree).get(use.id)
            return module_definitions.definitions if module_definitions and len(module_definitions.definitions) == 1 else []
        if not definitions:
            return []
        bound = self._comprehension_binding(use, definitions.definitions)
        if bound:
            return bound
        definitions = self._outside_comprehensions(definitions)
        before = self._reaching_before(use, definitions)
        if before is None and not self._local_of(scope, use.id):
            return []  # no assignment surely runs first: the name may be bound elsewhere, or unbound
        loop = self._enclosing_loop(use, scope)
        if before is None:  # a local read when none surely ran (`vd` bound in a `for` body, read after it) holds one of them, or raises
            first_after = bisect_left(definitions.positions, (use.lineno, use.col_offset))
            loop_end = bisect_left(definitions.positions, (loop.end_lineno, loop.end_col_offset)) if loop is not None else first_after
            return definitions.definitions[:loop_end]
        reaching = list(before)
        if loop is not None:  # assignments later in the loop reach the next iteration's read
            loop_end = bisect_left(definitions.positions, (loop.end_lineno, loop.end_col_offset))
            after = bisect_right(definitions.positions, (use.lineno, use.col_offset))
            # A later binding reaches the read through the innermost loop around both, unless the binding that
            # surely runs first stands in that loop (`loss = f(x)` before `loss.backward()` in the batch loop
            # kills the epoch loop's `loss = total / n`).
            first, around_use = set(self.scopes.ancestors(before[-1].node)), set(self.scopes.ancestors(use))
            reaching += [d for d in definitions.definitions[after:loop_end] if _common_loop(d.node, around_use, self.scopes) not in first]
        return reaching

    def _local_of(self, scope: ast.AST | None, name: str) -> bool:
        """Is `name` a local of the function `scope` (bound there, not declared `global` or `nonlocal`)?"""
        if not isinstance(scope, FUNCTION_NODES) or isinstance(scope, ast.Lambda):
            return False
        if scope not in self._declared:
            self._declared[scope] = {d for n in self.ctx.index.within(scope, ast.Global, ast.Nonlocal) for d in n.names}
        return name not in self._declared[scope]

    def _reaching_before(self, use: ast.Name, definitions: "Bindings", depth: int = 0) -> list[Definition] | None:
        """The bindings before `use` that may reach it, the latest first, up to one that surely runs first
        (None: none does). A chain of `x += ...` is answered link by link: the first binding met is an
        augmented assignment whose target reads the bindings before it, and they are the use's too when
        no `if` around that assignment holds one of them (so it decides nothing for them) and the one its
        target stops at surely runs before the use. Each link is scanned once, not once per later link."""
        if use in self._before:
            return self._before[use]
        first_after = bisect_left(definitions.positions, (use.lineno, use.col_offset))
        reaching: list[Definition] | None = []
        statements: set[ast.AST] = set()
        proven: set[ast.If] = set()  # the `if`s found to bind the name on every arm (more statements keep them so)
        around_use = {use, *self.scopes.ancestors(use)}
        for index in range(first_after - 1, -1, -1):
            definition = definitions.definitions[index]
            statement = self.scopes.statement(definition.node)
            if self._binds_from(statement, use) or not self._runs_literally(statement):
                continue  # the old `x` of `x = x.detach()`, or a binding in an arm a literal test rules out
            reaching.append(definition)  # type: ignore[union-attr]
            statements.add(statement)
            if self._runs_before(definition.node, around_use) or self._in_both_arms(statements, statement, around_use, proven):
                break
            if len(reaching) == 1 and depth < MAX_CHAIN and self._links(statement, definition, definitions, index):  # type: ignore[arg-type]
                earlier = self._reaching_before(definition.node, definitions, depth + 1)
                if earlier is None or self._runs_before(earlier[-1].node, around_use):
                    reaching = None if earlier is None else reaching + earlier  # type: ignore[operator]
                    break
        else:
            reaching = None
        self._before[use] = reaching
        return reaching

    def _runs_literally(self, statement: ast.AST) -> bool:
        """Does `statement` run as far as the tests around it that decide themselves tell (`if False:`)?
        `runs(arms(...), _literal)`, with each `if`'s answer kept: an `elif` chain nests its arms, and a
        walk up from each statement of it would cost the square of its length."""
        pending, answer = [], True
        for branch, wanted in arms(self.scopes.ancestors(statement), statement):
            held = _literal(branch)
            if held is not None and held is not wanted:
                answer = False
                break
            if branch in self._literally_run:
                answer = self._literally_run[branch]
                break
            pending.append(branch)
        for branch in pending:
            self._literally_run[branch] = answer
        return answer

    def _links(self, statement: ast.AST, definition: Definition, definitions: "Bindings", index: int) -> bool:
        """Is `statement` an augmented assignment of `definition`'s name, with no earlier binding of the name
        inside an `if` around it (each `if` around it decides nothing for the bindings its target reads)?"""
        if not isinstance(statement, ast.AugAssign) or statement.target is not definition.node or index == 0:
            return False
        outermost = None
        for ancestor in self.scopes.ancestors(statement):
            if isinstance(ancestor, (*SCOPE_NODES, ast.Module)):
                break
            if isinstance(ancestor, ast.If):
                outermost = ancestor
        return outermost is None or definitions.positions[index - 1] < position(outermost)

    def _outside_comprehensions(self, definitions: "Bindings") -> "Bindings":
        """The bindings of a name that a read outside the comprehensions can see: a comprehension's
        variable (`[out for out in names]`) is its own, whatever its name."""
        known = self._outside.get(id(definitions))
        if known is None:  # once per name and scope, not per read
            kept = [d for d in definitions.definitions if id(d.node) not in self._comprehension_targets]
            outside = definitions if len(kept) == len(definitions.definitions) else Bindings(kept, [position(d.node) for d in kept])
            known = self._outside[id(definitions)] = (definitions, outside)  # the key's object kept alive with it
        return known[1]

    def _comprehension_binding(self, use: ast.Name, definitions: list[Definition]) -> list[Definition]:
        """The binding of a comprehension's variable its element reads (`f(row) for row in rows`), which
        stands after the read."""
        node = self.scopes.parent(use)
        while isinstance(node, ast.expr | ast.comprehension):
            if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
                targets = {id(n) for g in node.generators for n in ast.walk(g.target)}
                bound = [d for d in definitions if id(d.node) in targets]
                if bound:
                    return bound
            node = self.scopes.parent(node)
        return []

    def _in_both_arms(self, statements: set[ast.AST], last: ast.AST, around_use: set[ast.AST], proven: set[ast.If]) -> bool:
        """Do the statements binding the name (`last` the latest met, the others after it) bind it in both
        arms of an `if`/`else` (or every arm of an `elif` chain) that runs on every path to the use (whose
        ancestors, and itself, are `around_use`)? An `if` whose first arm ends before `last` cannot: the
        `elif` chain above an arm after the first is passed in one step."""
        child, branch = last, self.scopes.parent(last)
        answered: dict[ast.If, bool] = {}  # an elif chain's arms, each judged once
        while isinstance(branch, ast.If):
            if position(child) > position(branch.body[-1]):
                child = self._elif_chain_top(branch)
            elif self._assigns_on_every_arm(branch, statements, answered, proven) and self._runs_before(branch, around_use):
                return True
            else:
                child = branch
            branch = self.scopes.parent(child)
        return False

    def _elif_chain_top(self, branch: ast.If) -> ast.If:
        """The first `if` of the `elif` chain `branch` is a link of."""
        links = []
        while branch not in self._chain_tops:
            links.append(branch)
            parent = self.scopes.parent(branch)
            if not (isinstance(parent, ast.If) and len(parent.orelse) == 1 and parent.orelse[0] is branch):
                self._chain_tops[branch] = branch
                break
            branch = parent
        top = self._chain_tops[branch]
        for link in links:
            self._chain_tops[link] = top
        return top

    def _assigns_on_every_arm(self, branch: ast.If, statements: set, answered: dict[ast.If, bool], proven: set[ast.If]) -> bool:
        """Does each arm of the `if` hold one of the statements at its top level, or an `if` that does so on
        every arm? (`answered`: the `if`s judged already; `proven`: those judged so with fewer statements.)"""
        if branch in proven:
            return True
        if branch not in answered:
            if branch not in self._arms_of:
                self._arms_of[branch] = _arms(branch)
            arms = self._arms_of[branch]
            answered[branch] = bool(arms) and all(
                any(s in statements or (isinstance(s, ast.If) and self._assigns_on_every_arm(s, statements, answered, proven)) for s in arm)
                for arm in arms
            )  # fmt: skip
            if answered[branch]:
                proven.add(branch)
        return answered[branch]

    @staticmethod
    def _binds_from(statement: ast.AST, use: ast.AST) -> bool:
        """Is `use` read by the assignment `statement` (`x = x.detach()`: the old `x`)?"""
        if not isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or statement.value is None:
            return False
        value = statement.value
        return position(value) <= position(use) < (value.end_lineno, value.end_col_offset)

    def same_path(self, node: ast.AST, anchor: ast.AST) -> bool:
        """Is `node` inside no branch, loop or try that leaves `anchor` outside it?"""
        return self._always_runs_before(node, anchor)

    def _always_runs_before(self, target: ast.AST, use: ast.AST) -> bool:
        """Does every path to `use` run the statement binding `target`? True when no branch, loop or
        try around the binding leaves `use` outside it."""
        return self._runs_before(target, {use, *self.scopes.ancestors(use)})

    def _runs_before(self, target: ast.AST, around_use: set[ast.AST]) -> bool:
        """`_always_runs_before`, given the use and its ancestors. The conditional statements around
        `target` nest: when the innermost holds the use, all do."""
        conditional = self._conditional(target)
        return conditional is None or conditional in around_use

    def _conditional(self, node: ast.AST) -> ast.AST | None:
        """The innermost branch, loop or try around `node` in its scope (None: it runs whenever its scope does)."""
        if node not in self._conditionals:
            found = None
            for ancestor in self.scopes.ancestors(node):
                if isinstance(ancestor, (*SCOPE_NODES, ast.Module)):
                    break
                if isinstance(ancestor, CONDITIONAL_NODES):
                    found = ancestor
                    break
            self._conditionals[node] = found
        return self._conditionals[node]

    def _enclosing_loop(self, node: ast.AST, scope: ast.AST | None) -> ast.AST | None:
        loop = None
        for ancestor in self.scopes.ancestors(node):
            if ancestor is scope:
                break
            if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While)):
                loop = ancestor  # the outermost loop inside the scope
        return loop

    def _definitions_in(self, scope: ast.AST) -> dict[str, "Bindings"]:
        if self._definitions is None:
            self._definitions = self._index_definitions()
        return self._definitions.get(scope, {})

    def _index_definitions(self) -> dict[ast.AST, dict[str, "Bindings"]]:
        """Every binding of the file, by scope (function, class or module) and name, in source order."""
        index = self.ctx.index
        by_scope: dict[ast.AST, dict[str, list[Definition]]] = {}
        for node in index.of_type(*BINDING_NODES):
            scope = self.scopes.enclosing_scope(node) or self.ctx.tree
            for name, target, value in _bindings(node):
                by_scope.setdefault(scope, {}).setdefault(name, []).append(Definition(name, target, value))
                if isinstance(node, ast.comprehension):
                    self._comprehension_targets.add(id(target))
        for function in index.of_type(*FUNCTION_NODES):
            for arg in parameters(function):
                by_scope.setdefault(function, {}).setdefault(arg.arg, []).append(Definition(arg.arg, function, None))
        indexed: dict[ast.AST, dict[str, Bindings]] = {}
        for scope, names in by_scope.items():
            indexed[scope] = {}
            for name, definitions in names.items():
                definitions.sort(key=lambda d: position(d.node))
                indexed[scope][name] = Bindings(definitions, [position(d.node) for d in definitions])
        return indexed

    def attribute_values(self, cls: ast.ClassDef, attribute: str) -> list[ast.AST] | None:
        """What the methods of `cls` (or of a base class of this file) assign to `self.<attribute>`; None when unknown."""
        found = self._class_attribute(cls, attribute)
        return None if not found or any(v is None for v in found) else found

    def _self_attribute_values(self, expr: ast.Attribute) -> list[ast.AST] | None:
        cls = self.scopes.enclosing_class(expr)
        found = self._class_attribute(cls, expr.attr) if cls is not None else None
        if not found or any(v is None for v in found):
            return None
        # `self.criterion = None` until a setter method assigns the real object: what is used is that object.
        assigned = [v for v in found if not (isinstance(v, ast.Constant) and v.value is None)]
        return assigned or None

    def held_items(self, expr: ast.Attribute, key: str | type(...)) -> list[ast.AST] | None:
        """What a dict or list kept on `self` holds at `key` (`...`: at any key, or any item of a list), over
        every method of its class: the items of the literals assigned to it (`self.outputs = {"probs": p}`;
        `{}` and `[]` hold nothing), item stores at constant keys (`self.outputs["probs"] = p`), `append`,
        `extend`, `insert` and `update` with what they add. None when one of them is unknown: another value
        assigned, a store at a computed key, a merge of something else, any other method that may add."""
        cls = self.scopes.enclosing_class(expr)
        assigned = self._class_attribute(cls, expr.attr) if cls is not None else None
        if cls is None or not assigned or any(v is None for v in assigned):
            return None
        if cls not in self._attribute_items:
            self._attribute_items[cls] = self._container_fills(cls)
        found: list[ast.AST] = []
        for keyed in [*_literal_items(assigned), *self._attribute_items[cls].get(expr.attr, [])]:
            if keyed is None:
                return None
            if key is ... or keyed[0] in (key, ...):
                found.append(keyed[1])
        return found

    def _container_fills(self, cls: ast.ClassDef) -> dict[str, list[tuple[str | type(...), ast.AST] | None]]:
        """(key, value) of what the methods of `cls` store into or add to each `self.` attribute: a constant
        key of an item store or `update`, `...` for a list's `append`/`extend`/`insert`; None for a fill
        whose key or value is not known."""
        fills: dict[str, list] = {}
        for node in self.ctx.index.within(cls, ast.Attribute):
            if not is_self_attribute(node):
                continue
            parent = self.scopes.parent(node)
            fill = _container_fill(parent, self.scopes.parent(parent)) if parent is not None else ()
            if fill is None and isinstance(parent, ast.Subscript) and (key := tested_key(self.scopes, parent)) is not None:
                fill = (key, self.scopes.parent(parent).value)  # `if name == "bce": self.losses[name] = ...`
            if fill != ():
                fills.setdefault(node.attr, []).extend(fill if isinstance(fill, list) else [fill])
        return fills

    def _class_attribute(self, cls: ast.ClassDef, attribute: str, seen: frozenset = frozenset()) -> list | None:
        """What the methods of `cls` assign to `self.<attribute>`; when they assign nothing, what a base
        class of this file does (`self.softmax` set by the base's `__init__`)."""
        if cls not in self._attribute_values:
            values: dict[str, list[ast.AST]] = {}
            for node in self.ctx.index.within(cls, ast.Assign, ast.AnnAssign, ast.AugAssign):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    targets = assignment_targets(node)
                    for target in targets:
                        if is_self_attribute(target):
                            values.setdefault(target.attr, []).append(node.value)
                        elif isinstance(target, ast.Tuple | ast.List):  # `self.model, self.opt = build(cfg)`
                            for unpacked, value in _unpacked_attributes(target, node.value):
                                values.setdefault(unpacked, []).append(value)
                elif isinstance(node, ast.AugAssign) and is_self_attribute(node.target):
                    values.setdefault(node.target.attr, []).append(None)
            self._attribute_values[cls] = values
        found = self._attribute_values[cls].get(attribute)
        if found is not None:
            return found
        classes = {c.name: c for c in self.ctx.tree.body if isinstance(c, ast.ClassDef)}
        bases = [classes.get(b.id) for b in cls.bases if isinstance(b, ast.Name)]
        inherited = [self._class_attribute(b, attribute, seen | {cls}) for b in bases if b is not None and b not in seen and b is not cls]
        return next((i for i in inherited if i is not None), None)


CONTAINER_READS = frozenset({"get", "keys", "values", "items", "copy", "pop", "popitem", "clear", "remove", "index", "count"})


def _literal_items(assigned: list[ast.AST]) -> list[tuple[str | type(...), ast.AST] | None]:
    """(key, value) of each item of the literals assigned to a container (`...` as a list's keys); None
    for a value that is no such literal (`None` holds nothing)."""
    found: list = []
    for value in assigned:
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        if isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
            found += [(k.value, v) for k, v in zip(value.keys, value.values)]
        elif isinstance(value, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in value.elts):
            found += [(..., e) for e in value.elts]
        else:
            found.append(None)
    return found


def _container_fill(parent: ast.AST, grandparent: ast.AST | None):
    """What a use of a container (the `value` of `parent`) stores into it: a (key, value) pair, a list of
    them, None for an unknown fill, `()` for a use that adds nothing (a read, an assignment of it)."""
    if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):
        stored = isinstance(grandparent, ast.Assign) and parent in grandparent.targets
        key = parent.slice.value if isinstance(parent.slice, ast.Constant) and isinstance(parent.slice.value, str) else None
        return (key, grandparent.value) if stored and key is not None else None
    if not (isinstance(parent, ast.Attribute) and isinstance(grandparent, ast.Call) and grandparent.func is parent):
        return ()
    args = grandparent.args
    if parent.attr == "append" and len(args) == 1:
        return (..., args[0])
    if parent.attr == "insert" and len(args) == 2:
        return (..., args[1])
    if parent.attr == "extend" and len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        return [(..., e) for e in args[0].elts] if not any(isinstance(e, ast.Starred) for e in args[0].elts) else None
    if parent.attr == "update" and not grandparent.keywords and len(args) == 1 and isinstance(args[0], ast.Dict):
        return _literal_items([args[0]])
    if parent.attr == "update" and not args and all(k.arg for k in grandparent.keywords):
        return [(k.arg, k.value) for k in grandparent.keywords]
    return () if parent.attr in CONTAINER_READS else None
