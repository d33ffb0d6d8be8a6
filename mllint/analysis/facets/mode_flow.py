"""The mode flow of one function (or the module): the facts of each tracked receiver along its statements,
the model calls it notes (`Use`), what it leaves at its exit and returns, for `modes.Modes`.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from functools import cached_property

from mllint.analysis.program.calls import ANY_MODULE, bind_arguments
from mllint.analysis.values.library_models import library_model
from mllint.analysis.syntax.scopes import first_parameter
from mllint.analysis.facets.mode_facts import (
    ACTING, BUILTIN_NAMES, COPIES, FUNCTIONS, HARMLESS_BUILTINS, LOOPS, MAX_CALL_DEPTH, MAX_ROUNDS, MODE_NEUTRAL, SAME_MODULE, Fact, Mode,
    ENTRY, State, Summary, Targets, Use, called_receiver, common_built, is_getattr, is_items, join, last_round_arm, lookup, moved_model,
    own_calls, requested_mode, saved_mode, strip_same_module, translate_key,
)  # fmt: skip
from mllint.analysis.syntax.folding import known_constant
from mllint.analysis.syntax.names import call_argument, reference_key
from mllint.analysis.objects.constants import call_constants, fold, method_getter, unrolled
from mllint.analysis.objects.instances import Instances
from mllint.analysis.objects.points_to import NONE, either, union
from mllint.analysis.program.hierarchy import dispatched_method, dispatched_methods, inherited_method, made_runner
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.syntax.tree import assignment_targets, child_nodes
from mllint.analysis.facets.layers import CONTAINERS
from mllint.analysis.values.values import canonical_class


class Flow:
    """The facts along one function's statements (or the module's)."""

    def __init__(self, modes, scope: ast.AST, depth: int, constants: dict | None = None) -> None:
        self.modes = modes
        self.ctx = modes.ctx
        self.scope = scope
        self.depth = depth
        self.uses: list[Use] = []
        self.cut = False  # a call was not followed, past `MAX_CALL_DEPTH` (see `Summary.cut`)
        self.before: dict[ast.Call, State] = {}  # the state just before each call
        self._uses_at: dict[tuple, int] = {}
        self.returned: frozenset = frozenset()
        self.returned_items: tuple[frozenset, ...] | None = None  # `return model, tok`: each item's mode there
        self._returns_items = True  # no return so far gave something else than such a tuple
        self._returns: list[State] = []
        self._loops: list[Targets] = []
        self.self_name = first_parameter(scope) if self._is_method() else None
        self.constants: dict = constants or {}  # the loop variables of the unrolled loops around the statement
        # run, the parameters the call site passes constants for, and the flags they decide
        for name, value in modes.flags(scope) if constants and isinstance(scope, FUNCTIONS) else ():
            decided = fold(value, self.constants)
            if decided is not None:
                self.constants[name] = decided
        self.saved: dict[str, tuple[str, frozenset]] = {}  # `was = m.training`: was -> (m's key, m's facts then)
        self._keys: dict[ast.AST, str | None] = {}
        self._parameter_attributes: dict[str, set[str]] = {}  # a parameter -> the attributes its objects store
        nodes = modes.own_nodes(scope, *ACTING)
        self._followed = {call for call in nodes if isinstance(call, ast.Call) and self._may_follow(call)}
        # The function's own names whose facts it never reads: not tracked (the module's are all tracked,
        # as its helpers may read any of them).
        self.untracked = frozenset()
        if isinstance(scope, FUNCTIONS):
            self.untracked = modes.scopes.local_bindings(scope) - self._read_names(nodes)
        self.active = self._active_statements(nodes)

    def run(self) -> State:
        body = self.scope.body if isinstance(self.scope.body, list) else []
        end = self._block(body, {})
        return join([end, *self._returns]) or {}

    def _is_method(self) -> bool:
        return isinstance(self.scope, FUNCTIONS) and isinstance(self.modes.scopes.parent(self.scope), ast.ClassDef)

    def _read_names(self, nodes: list[ast.AST]) -> set[str]:
        """The heads of the receivers whose facts the flow may read: parameters (the caller reads them),
        models called or switched, the arguments of calls it follows (or of every call, when call sites
        are read), values assigned or returned, and the variables of loops over listed models."""
        read = {a.arg for a in parameters(self.scope)}
        for node in nodes:
            if isinstance(node, ast.Call):
                receivers = self._read_by_call(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)) and node.value is not None:
                receivers = [self._held(node.value)]
            elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)):
                receivers = [node.target]
            else:
                continue
            for receiver in receivers:
                key = self.key(receiver) if receiver is not None else None
                if key is not None:
                    read.add(key.partition(".")[0])
        return read

    def _read_by_call(self, call: ast.Call) -> list[ast.AST]:
        """The receivers whose facts a call may read (see `_call`)."""
        func, read = call.func, []
        if isinstance(func, ast.Name):
            read.append(func)
        elif isinstance(func, ast.Attribute) and (func.attr in ("eval", "train", "forward") or func.attr in self.modes.wrapper_methods):
            moved = moved_model(func.value)
            read += [func.value, moved.args[0] if is_getattr(moved) else moved]
        if self.modes.call_sites_read or call in self._followed:
            read += [a.value if isinstance(a, ast.Starred) else a for a in [*call.args, *(k.value for k in call.keywords)]]
        return read

    def _may_follow(self, call: ast.Call) -> bool:
        """Can the flow apply the summary of the function `call` runs (see `_call` and `_method_call`)?"""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.modes.functions:
            return True
        if self._instance_method(call) is not None or self._construction(call) is not None:
            return True
        if isinstance(func, ast.Attribute) and self.key(func.value) is not None and self.modes.qualified_name(func.value) is None:
            return self.key(func.value) == self.self_name or func.attr in self.modes.wrapper_methods
        return self.modes.project_callee(call) is not None

    def _held(self, value: ast.AST) -> ast.AST | None:
        """The receiver whose facts an assigned or returned value has (see `_value_facts`)."""
        while isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr in (*SAME_MODULE, "eval", "train"):
                value = func.value
            elif len(handed := self.modes.objects.handed_back(value) or ()) == 1:
                value = handed[0]  # `DataParallel(model)`, `fabric.setup(model)`: the model itself
            else:
                return None
        return value

    def _tracks(self, key: str) -> bool:
        return key.partition(".")[0] not in self.untracked

    def _active_statements(self, nodes: list[ast.AST]) -> set[ast.AST]:
        """The statements the flow must run: those holding a call that may note a model call or change a
        tracked receiver's facts, a binding of one, or a jump. Any other statement leaves the state as it
        is (and asks for no summary): the flow passes it by."""
        active: set[ast.AST] = set()
        for node in nodes:
            if not self._acts(node):
                continue
            while node is not self.scope and node not in active:
                if isinstance(node, ast.stmt):
                    active.add(node)
                node = self.modes.scopes.parent(node)
        return active

    def _acts(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return self._call_acts(node)
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if saved_mode(node) is not None:
                return True
            return node.value is not None and any(self._binds_tracked(t) for t in assignment_targets(node))
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return self._binds_tracked(node.target)
        if isinstance(node, ast.withitem):
            return node.optional_vars is not None and self._binds_tracked(node.optional_vars)
        if isinstance(node, ast.While):
            return isinstance(node.test, ast.Constant) and bool(node.test.value)
        return isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue))

    def _binds_tracked(self, target: ast.AST) -> bool:
        key = self.key(target)
        if key is None:
            return any(self._binds_tracked(element) for element in getattr(target, "elts", ()))
        return self._tracks(key)

    def _call_acts(self, call: ast.Call) -> bool:
        """Can `_call` note a model call, apply a summary, or change a tracked receiver's facts?"""
        func = call.func
        if call in self._followed or any(self._passes_tracked(a) for a in [*call.args, *(k.value for k in call.keywords)]):
            return True
        if isinstance(func, ast.Name):
            return func.id not in BUILTIN_NAMES and self.modes.qualified_name(func) is None
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in ("eval", "train"):
            moved = moved_model(func.value)
            owner = self.key(moved.args[0] if is_getattr(moved) else moved)
            return owner is not None and self._tracks(owner)
        owner = self.key(func.value)
        if owner is None or self.modes.qualified_name(func.value) is not None:
            return False
        return func.attr == "forward" or owner == self.self_name or (func.attr not in MODE_NEUTRAL and self._tracks(owner))

    def _passes_tracked(self, argument: ast.AST) -> bool:
        key = self.key(argument.value if isinstance(argument, ast.Starred) else argument)
        return key is not None and self._tracks(key)

    def key(self, expr: ast.AST) -> str | None:
        if expr not in self._keys:
            self._keys[expr] = self.modes.key(expr, self.scope)
        return self._keys[expr]

    # Statements.
    def _block(self, statements: list, state: State | None) -> State | None:
        for statement in statements:
            if state is None:
                return None
            if statement in self.active:
                state = self._statement(statement, state)
        return state

    def _statement(self, node: ast.AST, state: State) -> State | None:
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            return state
        if isinstance(node, ast.If):
            state = self._expression(node.test, state)
            loop = self._loops[-1].loop if self._loops else None
            last = last_round_arm(node, loop)
            if last is not None:  # the loop ends after that round: its state leaves the loop, as a break's
                rest = loop.body[loop.body.index(node) + 1 :]
                self._loops[-1].breaks.append(self._block(rest, self._block(last, state)))
                return self._block(node.orelse if last is node.body else node.body, state)
            decided = fold(node.test, self.constants) if self.constants else None
            if decided is not None:
                return self._block(node.body if decided else node.orelse, state)
            arms = self._block(node.body, state), self._block(node.orelse, state)
            return self._restored(node.test, *arms) or join(arms)
        if isinstance(node, LOOPS):
            return self._loop(node, state)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                state = self._expression(item.context_expr, state)
                if item.optional_vars is not None:
                    state = self._bind(item.optional_vars, frozenset({Fact(Mode.UNKNOWN)}), state)
            return self._block(node.body, state)
        if isinstance(node, ast.Try) or (hasattr(ast, "TryStar") and isinstance(node, ast.TryStar)):
            body = self._block(node.body, state)
            handler_entry = join([state, body])
            handlers = [self._block(h.body, handler_entry) for h in node.handlers]
            end = join([self._block(node.orelse, body), *handlers])
            if not node.finalbody:
                return end
            return self._block(node.finalbody, end if end is not None else handler_entry)
        if isinstance(node, ast.Match):
            state = self._expression(node.subject, state)
            return join([state, *(self._block(case.body, state) for case in node.cases)])
        if isinstance(node, ast.Return):
            if node.value is not None:
                state = self._expression(node.value, state)
                if self._read_by_callers():
                    self.returned |= self._value_facts(node.value, state, returned=True)
                    self._return_items(node.value, state)
            self._returns.append(state)
            return None
        if isinstance(node, (ast.Break, ast.Continue)):
            if self._loops:
                targets = self._loops[-1]
                (targets.breaks if isinstance(node, ast.Break) else targets.continues).append(state)
            return None
        if isinstance(node, ast.Raise):
            return None
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is None:
                return state
            saved = saved_mode(node)
            if saved is not None and self.key(saved[1]) is not None:
                key = self.key(saved[1])
                self.saved[saved[0]] = (key, lookup(state, key))
            state = self._expression(node.value, state)
            targets = assignment_targets(node)
            if self._may_be_run(targets, node.value):
                facts = self._value_facts(node.value, state)
            else:
                facts = frozenset({Fact(Mode.UNKNOWN, node.value)})
            for target in targets:
                if isinstance(target, (ast.Tuple, ast.List)):
                    state = self._bind_items(target, node.value, state)
                else:
                    state = self._bind(target, facts, state)
            return self._bind_held(node.value, state) if isinstance(node.value, (ast.Dict, ast.List, ast.Tuple)) else state
        for child in child_nodes(node):
            if isinstance(child, ast.expr):
                state = self._expression(child, state)
        return state

    def _loop(self, node: ast.AST, state: State) -> State | None:
        items = unrolled(node, self.modes.scopes)
        if items is not None:
            return self._unroll(node, items, state)
        if not isinstance(node, ast.While):
            state = self._bind_iterated(node.target, self._expression(node.iter, state))
        head = state
        for _ in range(1 if self._dispatches(node) else MAX_ROUNDS):
            self._loops.append(Targets(node))
            entry = self._expression(node.test, head) if isinstance(node, ast.While) else head
            end = self._block(node.body, entry)
            targets = self._loops.pop()
            rounds = join([end, *targets.continues])
            new_head = join([head, rounds])
            if new_head == head:
                break
            head = new_head
        forever = isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and bool(node.test.value)
        normal_exit = None if forever else self._block(node.orelse, head)
        return self._set_through_target(node, join([normal_exit, *targets.breaks]), rounds)

    def _dispatches(self, loop: ast.AST) -> bool:
        """Is the loop's body only calls of its items' hooks (`for cb in self.callbacks: cb.on_epoch_end(self)`)?
        Each item runs its hook once: one round, each hook seeing the state the loop starts in, leaves what
        any of them leaves (the order of the items is not known)."""
        body = loop.body if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and not loop.orelse else []
        calls = [s.value for s in body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
        return bool(calls) and len(calls) == len(body) and all(self._item_hooks(call, loop.target.id) for call in calls)

    def _item_hooks(self, call: ast.Call, item: str) -> list:
        """The hooks `call` runs on the object `item` names (`item.hook(...)`, `getattr(item, name)(...)`)."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == item:
            return self.modes.hooks(call)
        getter = method_getter(self.ctx, func)
        if getter is not None and isinstance(getter.args[0], ast.Name) and getter.args[0].id == item:
            hook = known_constant(getter.args[1], self.constants)
            return self.modes.hooks(call, hook) if isinstance(hook, str) else []
        return []

    def _restored(self, test: ast.AST, body: State | None, orelse: State | None) -> State | None:
        """`if was_training: m.train()` after `was_training = m.training`: the arms are correlated with the
        saved mode (training in one, not in the other), so `m` is back as it was when saved."""
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        name = test.operand if negated else test
        saved = self.saved.get(name.id) if isinstance(name, ast.Name) else None
        if saved is None or body is None or orelse is None:
            return None
        training, other = (orelse, body) if negated else (body, orelse)
        key, facts = saved
        if all(f.mode is Mode.TRAIN for f in lookup(training, key)) and all(f.mode is Mode.EVAL for f in lookup(other, key)):
            joined = join([body, orelse])
            return self._set(joined, key, facts)
        return None

    def _unroll(self, node: ast.For, items: list, state: State) -> State | None:
        """A loop over literal constants, run once per item with the loop variable as that constant: the
        branches it decides are taken as the program takes them (`if phase == "train": model.train()`)."""
        state, outer, breaks = self._expression(node.iter, state), self.constants, []
        for item in items:
            if state is None:
                break
            self.constants = {**outer, node.target.id: item}
            self._loops.append(Targets(node))
            end = self._block(node.body, state)
            targets = self._loops.pop()
            breaks += targets.breaks
            state = join([end, *targets.continues])
        self.constants = outer
        return join([self._block(node.orelse, state) if state is not None else None, *breaks])

    def _bind_iterated(self, target: ast.AST, state: State) -> State:
        """A loop variable is, each round, one of the objects the objects layer says it may be: it has their
        facts joined when the flow holds them all (`for name, m in models.items()` over models built here),
        unknown facts else."""
        for variable in target.elts if isinstance(target, ast.Tuple) else [target]:
            key = self.key(variable)
            held = [state[k] for k in either(key) if k in state] if key is not None else []
            whole = held and len(held) == len(either(key))
            state = self._bind(variable, frozenset().union(*held) if whole else frozenset({Fact(Mode.UNKNOWN)}), state)
        return state

    def _set_through_target(self, loop: ast.AST, state: State | None, rounds: State | None) -> State | None:
        """`for net in (generator, discriminator): net.train()`, `for name, m in models.items(): m.eval()`:
        the models listed, or the objects the loop variable is one of, take the modes it was given by the
        end of its round (`rounds`: the state the rounds end in)."""
        if state is None or rounds is None or not isinstance(loop, (ast.For, ast.AsyncFor)):
            return state
        variables = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
        for target in filter(None, map(self.key, variables)):
            if isinstance(loop.iter, (ast.List, ast.Tuple, ast.Set)) and loop.target in variables:
                keys = [self.key(element) for element in loop.iter.elts]
            elif len(either(target)) > 1:  # the objects layer's union: each of them in turn
                keys = either(target)
            else:
                continue
            if any(
                isinstance(call.func, ast.Attribute) and call.func.attr in ("train", "eval") and self.key(call.func.value) == target
                for call in own_calls(loop)
            ):
                for key in filter(None, keys):
                    state = self._set(state, key, lookup(rounds, target))
        return state

    def _bind(self, target: ast.AST, facts: frozenset, state: State) -> State:
        key = self.key(target)
        if key is None:
            for element in getattr(target, "elts", ()):
                state = self._bind(element, frozenset({Fact(Mode.UNKNOWN)}), state)
            return state
        return self._set(state, key, facts)

    def _bind_held(self, container: ast.Dict | ast.List | ast.Tuple, state: State) -> State:
        """The objects a container literal builds (`{"student": conv_net(32), ...}`) keep their modes
        under their own keys, where `models["student"]` finds them."""
        for element in container.values if isinstance(container, ast.Dict) else container.elts:
            key = self.modes.objects.key(element, self.scope) if isinstance(element, ast.Call) else None
            if key is not None and key.startswith("@"):
                state = self._set(state, key, self._value_facts(element, state))
        return state

    def _bind_items(self, target: ast.Tuple | ast.List, value: ast.AST, state: State) -> State:
        """`student, teacher = Net(), Net().eval()`, `benchmark, model = make_parts()`: each name gets the
        mode of what is at its position, or of what the function of the file returns there, or of what a
        runner hands back there (a construction trains, `Net().eval()` evaluates; anything else: unknown)."""
        size = len(target.elts)
        returns = [value] if is_items(value, size) else self._returned_tuples(value, size)
        unknown = frozenset({Fact(Mode.UNKNOWN)})
        handed = self.modes.objects.handed_back(value) if returns is None and isinstance(value, ast.Call) else None
        if handed is not None and len(handed) == size:  # `model, opt = accelerator.prepare(model, opt)`: each as it was
            facts = [self._value_facts(h, state) for h in handed]
            for element, held in zip(target.elts, facts):
                state = self._bind(element, held, state)
            return state
        if returns is None and isinstance(value, ast.Call):
            elsewhere = self._returned_elsewhere(value)
            items = elsewhere[0].returned_items if elsewhere is not None else None
            for i, element in enumerate(target.elts):
                facts = self._built_elsewhere(element, value)
                if not facts and items is not None and len(items) == size:
                    facts = self._substitute(items[i], {}, "", value, elsewhere[1])
                state = self._bind(element, facts or unknown, state)
            return state
        returned = self._returned_items(value, size) if returns is not None and returns[0] is not value else None
        if returned is not None:  # `model, tok = load(name)`: each as the function left it at its returns
            for element, facts in zip(target.elts, returned):
                state = self._bind(element, self._substitute(facts, {}, "", value) or unknown, state)
            return state
        returns = returns or []
        for i, element in enumerate(target.elts):
            items = [r.elts[i] for r in returns]
            facts = frozenset().union(*(self._value_facts(v, {}) if isinstance(v, ast.Call | ast.Subscript) else unknown for v in items))
            state = self._bind(element, facts or unknown, state)
        return state

    def _built_elsewhere(self, target: ast.AST, value: ast.AST) -> frozenset | None:
        """The modes of what a builder of another module made, as the objects layer follows it into its
        returns (`tok, model = load_model(cfg)`, an item of a dict it returns: `parts["model"]`): a library
        model that loads in eval mode (`from_pretrained`), any other module in training mode; None when one
        of the objects is not such a construction, or a function on the way may switch its mode
        (`model.eval()` before `return model`)."""
        call = isinstance(value, ast.Call)  # a builder that only builds is followed too
        callee = (self.modes.switching_module(value) or self.modes.switching_module(value, ANY_MODULE)) if call else None
        table = isinstance(value, ast.Subscript) or (call and isinstance(value.func, ast.Subscript))  # `parts["model"]`, `MODELS[name](...)`
        made = self.modes.objects.made(target) if callee is not None or table else None
        if not made or any(ctx is self.ctx for ctx, _ in made):
            return None
        called = [(callee.ctx, callee.function)] if callee is not None else []
        functions = [*called, *((ctx, ctx.scopes.enclosing_function(call)) for ctx, call in made)]
        if any(switches_modes(ctx, function) for ctx, function in functions):
            return None
        facts = set()
        for ctx, call in made:
            library = library_model(ctx, call)
            if library is None and not (self.modes.of_module(ctx).builds_module(call) and self._module_class(ctx, call)):
                return None
            self.modes.homes[call] = ctx
            facts.add(Fact(Mode.EVAL if library is not None and library.starts_in_eval else Mode.TRAIN, value, call, call))
        return frozenset(facts)

    def _returned_elsewhere(self, call: ast.Call) -> tuple[Summary, object] | None:
        """The summary of the module-level function of another module that `call` runs (and that module's
        context), which tells the modes of what it returns as it left them (`model.eval()` before
        `return model, tok`)."""
        callee = self.modes.switching_module(call)
        modes = self.modes.of_module(callee.ctx) if callee is not None else None
        if modes is None or not modes.is_module_function(callee.function):
            return None
        summary = self._callee_summary(modes, callee.function)
        return (summary, callee.ctx) if summary is not None else None

    def _callee_summary(self, modes, function: ast.AST, constants: tuple = ()) -> Summary | None:
        """`modes.summary` of a function this one calls, one call deeper; notes when the depth cuts it short."""
        summary = modes.summary(function, self.depth + 1, constants)
        self.cut = self.cut or (summary.cut if summary is not None else self.depth + 1 > MAX_CALL_DEPTH)
        return summary

    def _made_here(self, container: ast.AST) -> bool:
        """Is every object `container` may be made by a call in this function (`parts = build(cfg)`), so
        that nothing before it can have switched the mode of what it holds?"""
        found = self.modes.objects.points_to(container)
        scope = None if isinstance(self.scope, ast.Module) else self.scope
        if not found or NONE in found:
            return False
        return all(o.site is not None and self.modes.scopes.enclosing_function(o.site) is scope for o in found)

    def _module_class(self, ctx, call: ast.Call) -> bool:
        """Is what a call of another module builds an `nn.Module`, when it is a class of the project (which
        that module's own modes count as one until asked: `TextTokenCollater(...)` is none)?"""
        name = canonical_class(ctx.qualified_name(call.func))
        view = self.modes.view
        return view is None or name is None or view.class_summary(name) is None or view.is_module_class(name)

    @cached_property
    def _local_functions(self) -> dict[str, list[ast.AST]]:
        found: dict[str, list[ast.AST]] = {}
        for node in self.modes.own_nodes(self.scope, *FUNCTIONS):
            found.setdefault(node.name, []).append(node)
        return found

    def _returned_tuples(self, value: ast.AST, size: int) -> list[ast.Tuple] | None:
        """The `return a, b` statements of the function of the file that `value` calls, when every return
        of it is a tuple of `size` items."""
        function = self._called_function(value)
        returns = self.modes.own_nodes(function, ast.Return) if function is not None else None
        if returns and all(is_items(r.value, size) for r in returns):
            return [r.value for r in returns]
        return None

    def _returned_items(self, value: ast.AST, size: int) -> tuple[frozenset, ...] | None:
        """The modes of the items the module-level function `value` calls returns, from its summary."""
        function = self._called_function(value)
        if function is None or not self.modes.is_module_function(function):
            return None
        summary = self.modes.summary(function, self.depth + 1)
        items = summary.returned_items if summary is not None else None
        return items if items is not None and len(items) == size else None

    def _called_function(self, value: ast.AST) -> ast.AST | None:
        """The function of the file that `value` calls by name."""
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return None
        name = value.func.id
        local = self._local_functions.get(name, [])
        if local:
            return local[0] if len(local) == 1 else None
        return None if self._shadowed(value.func) else self.modes.functions.get(name)

    def _set(self, state: State, key: str, facts: frozenset) -> State:
        """`key` holds `facts` now, and so do its submodules; an enclosing model with a known mode is
        now partly in another mode: unknown."""
        if not self._tracks(key):
            return state
        prefix, state = key + ".", dict(state)
        for submodule in [k for k in state if k.startswith(prefix)]:
            del state[submodule]
        modes = {f.mode for f in facts}
        parent = key
        while "." in parent:
            parent = parent.rsplit(".", 1)[0]
            if parent in state and {f.mode for f in state[parent]} != modes:
                state[parent] = frozenset({Fact(Mode.UNKNOWN)})
        state[key] = facts
        return state

    # Expressions, in evaluation order.
    def _expression(self, expr: ast.AST, state: State) -> State:
        skipped = self._skipped_arms(expr) if self.constants else ()
        for call in self.modes.calls_in_order(expr):
            if call not in skipped:
                state = self._call(call, state)
        return state

    def _skipped_arms(self, expr: ast.AST) -> set[ast.AST]:
        """The calls in the arms of conditional expressions the loop variables decide against
        (`model.train() if phase == "train" else model.eval()`)."""
        skipped: set[ast.AST] = set()
        for choice in self.ctx.index.within(expr, ast.IfExp):
            decided = fold(choice.test, self.constants)
            if decided is not None:
                skipped.update(self.ctx.index.within(choice.orelse if decided else choice.body, ast.Call))
        return skipped

    def _call(self, call: ast.Call, state: State) -> State:
        self.before[call] = state
        func = call.func
        built = self._instance_method(call) or self._construction(call)
        if built is not None:  # `Runner(model).fit()`: its `self.model` is the `model` passed here
            home, function, passed = built
            owner = self.key(func.value) if isinstance(func, ast.Attribute) else None
            return self._follow(call, function, owner, state, home if home is not self.ctx else None, passed)
        if isinstance(func, ast.Attribute):
            owner = self.key(func.value)
            if owner is not None and self.modes.qualified_name(func.value) is None:
                return self._method_call(call, owner, func.attr, state)
            if isinstance(func.value, ast.Call) and func.attr in ("eval", "train"):
                # `model.to(device).train()` sets the mode of `model`; `Net().eval()` makes a new object,
                # read by `_value_facts`.
                moved = moved_model(func.value)
                if is_getattr(moved):  # `getattr(model, "module", model).train()`: the model or its wrapped one
                    moved = moved.args[0]
                owner = self.key(moved)
                return state if owner is None else self._method_call(call, owner, func.attr, state)
        getter = method_getter(self.ctx, func)
        if getter is not None:  # `getattr(cb, name)(self)`, `handler(self)` of `handler = getattr(cb, name, None)`
            hooks = self._item_hooks(call, getattr(getter.args[0], "id", None))
            if hooks:
                return self._hooks(call, hooks, self.key(getter.args[0]), state)
        if isinstance(func, ast.Name):
            if func.id in self.modes.functions and not self._shadowed(func):
                function = self.modes.functions[func.id]  # `with eval_mode(model):` of a `@contextmanager`: not run as called
                return self._follow(call, function, None, state) if self.modes.runs_as_called(function) else self._unknown_arguments(call, state)
            if func.id in self.modes.classes or func.id in HARMLESS_BUILTINS:
                return state
            key = self.key(func)
            if key is not None and self.modes.qualified_name(func) is None and func.id not in BUILTIN_NAMES:
                self._record(call, call, key, lookup(state, key))
        if (self.modes.qualified_name(func) or "").startswith("torch.") or self.modes.qualified_name(func) in COPIES:
            return state
        callee = self.modes.project_callee(call)
        if callee is not None:
            return self._follow(call, callee.function, None, state, callee.ctx)
        if self.modes.leaves_modes(call):  # `log_stats(model, step)` of a module that switches no mode
            return state
        return self._unknown_arguments(call, state)

    def _method_call(self, call: ast.Call, owner: str, method: str, state: State) -> State:
        own = self._own_method(call, owner, method) if method in ("eval", "train") else None
        if own is not None:  # `self.eval(loader)` of a trainer: its own method, not `Module.eval()`
            return self._follow(call, own, owner, state)
        if method in ("eval", "train"):
            restored = self.saved.get(getattr(call_argument(call, 0, "mode"), "id", None)) if method == "train" else None
            if restored is not None and restored[0] == owner:  # `m.train(was_training)`: back as it was
                return self._set(state, owner, restored[1])
            mode = requested_mode(call, method)
            facts = lookup(state, owner)
            built = common_built(facts)
            return self._set(state, owner, frozenset({Fact(mode, call, call, built)}))
        if method in MODE_NEUTRAL:
            if method == "forward":
                self._record(call, call, owner, lookup(state, owner))
            return self._unknown_arguments(call, state)
        if owner != self.self_name and self._mode_keeping_runner(call.func.value):
            return state  # `accelerator.accumulate(model)`, `fabric.backward(loss)`: the runner never switches modes
        dispatched = self._dispatched(method) if owner == self.self_name else []
        if dispatched:  # `self.validate()`: the class's method, and each override a subclass running this one has
            return join(self._follow(call, function, owner, state, home if home is not self.ctx else None) for home, function in dispatched)
        held = self.self_name is not None and (reference_key(call.func.value) or "").startswith(f"{self.self_name}.")
        if owner != self.self_name and method in self.modes.wrapper_methods and not held:  # not `self.optimizer.step()`
            home, function = self.modes.wrapper_methods[method]
            return self._follow(call, function, owner, state, home if home is not self.ctx else None)
        if method in self._held_attributes(owner):
            # `self.model(x)`, `trainer.model(x)`: a call of the model held in an attribute.
            key = self.key(call.func) or f"{owner}.{method}"
            self._record(call, call, key, lookup(state, key))
        else:  # `model.freeze()`, `x.copy_(...)`: a method that may change its object's mode
            callee = self.modes.project_callee(call)  # unless it is a method of another module's class
            if callee is not None:
                return self._follow(call, callee.function, owner, state, callee.ctx)
            hooks = self.modes.hooks(call) if owner != self.self_name else []
            if hooks:
                return self._hooks(call, hooks, owner, state)
            state = self._set(state, owner, frozenset({Fact(Mode.UNKNOWN, call)}))
        return self._unknown_arguments(call, state)

    def _hooks(self, call: ast.Call, hooks: list, owner: str | None, state: State) -> State:
        """`cb.on_epoch_end(self)` over callbacks of several classes: what any of their hooks leaves (a
        validation callback's `trainer.model.eval()` is the trainer's `self.model` in eval mode)."""
        return join([self._follow(call, h.function, owner, state, h.ctx if h.ctx is not self.ctx else None) for h in hooks])

    def _held_attributes(self, owner: str) -> set[str]:
        """The attributes the object `owner` names stores on `self`: the analysed method's own class's for
        its `self`; for a parameter (`trainer` of a callback's `on_epoch_end(self, trainer)`), those every
        class its call sites are known to pass an instance of stores."""
        if owner == self.self_name:
            return self.modes.attributes(self.modes.scopes.parent(self.scope))
        if not isinstance(self.scope, FUNCTIONS) or owner not in {p.arg for p in parameters(self.scope)}:
            return set()
        if owner not in self._parameter_attributes:
            objects = self.modes.objects
            classes = objects.classes_of(frozenset({objects.parameter(self.scope, owner)}))
            held = [self.modes.attributes(cls, home) for home, cls in classes]
            self._parameter_attributes[owner] = set.intersection(*held) if held else set()
        return self._parameter_attributes[owner]

    def _mode_keeping_runner(self, receiver: ast.AST) -> bool:
        """Is `receiver` made by a runner (`Accelerator()`), whose methods (`accumulate`, `backward`,
        `unwrap_model`) leave every model's mode as it is?"""
        made = self.modes.objects.made(receiver)
        return bool(made) and all(made_runner(c, m, self.modes.view) for c, m in made)

    def _own_method(self, call: ast.Call, owner: str, method: str) -> ast.AST | None:
        """The method a class of the file that is no nn.Module defines itself under a name of `Module`'s,
        called on its instance (`self.eval(...)` in a trainer, `trainer.train()`)."""
        if owner == self.self_name:
            cls = self.modes.scopes.parent(self.scope)
            found = self._method(method) if cls not in self.modes.module_classes else None
            return found[1] if found is not None and found[0] is self.ctx else None
        found = self.modes.objects.points_to(call.func.value)
        classes = {self.modes.objects.instance_class(obj) for obj in found or ()}
        if len(classes) != 1 or None in classes or classes & set(self.modes.module_classes):
            return None
        found = inherited_method(self.ctx, classes.pop(), method)
        return found[1] if found is not None else None

    def _method(self, name: str) -> tuple[object, ast.AST] | None:
        """The method `self.name(...)` runs in the analysed method (`hierarchy.dispatched_method`: its class's or
        a base's, or the one override of the project's subclasses when that is abstract), with its module's context."""
        cls = self.modes.scopes.parent(self.scope)
        return dispatched_method(self.ctx, cls, name, self.modes.view) if isinstance(cls, ast.ClassDef) else None

    def _dispatched(self, name: str) -> list[tuple[object, ast.AST]]:
        """Each method `self.name(...)` may run in the analysed method (`hierarchy.dispatched_methods`)."""
        cls = self.modes.scopes.parent(self.scope)
        return dispatched_methods(self.ctx, cls, name, self.modes.view, self.scope) if isinstance(cls, ast.ClassDef) else []

    def _shadowed(self, name: ast.Name) -> bool:
        return self._binds(name.id)

    def _binds(self, name: str) -> bool:
        """Does the analysed function bind `name` itself (a local, not the module's)?"""
        return isinstance(self.scope, FUNCTIONS) and name in self.modes.scopes.local_bindings(self.scope)

    def _record(self, call: ast.Call, site: ast.AST, key: str, facts: frozenset, inner: tuple = (), named: str = "") -> None:
        """Note the facts at a model call (of each model it runs: a wrapper's method may run several); a
        loop's later rounds replace its earlier ones."""
        constants = tuple(sorted({**dict(inner), **self.constants}.items(), key=str))
        use = Use(call, site, self.scope, key, facts, constants=constants, named=named)
        index = self._uses_at.get((call, site, constants, key))
        if index is None:
            self._uses_at[(call, site, constants, key)] = len(self.uses)
            self.uses.append(use)
        else:
            self.uses[index] = use

    def _unknown_arguments(self, call: ast.Call, state: State) -> State:
        """A call we cannot follow may change the mode of any model it receives (`self` included)."""
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(argument, ast.Starred):
                argument = argument.value
            key = self.key(argument)
            if key is not None and self.modes.qualified_name(argument) is None:
                state = self._set(state, key, frozenset({Fact(Mode.UNKNOWN, call)}))
        return state

    def _instance_method(self, call: ast.Call) -> tuple[object, ast.AST, dict[str, str]] | None:
        """For a method called on an instance built at a known site of this file (`objects.instances`):
        (the method's context, the method, the caller's key of what was passed for each parameter the
        instance's attributes hold, by the parameter's object key); None for any other call."""
        func = call.func
        instances = self.ctx.analysis(Instances)
        instance = instances.built(func.value) if isinstance(func, ast.Attribute) else None
        found = self.modes.objects.method(call) if instance is not None else None
        if found is None or not self.modes.of_module(found[0]).runs_as_called(found[1]):
            return None
        passed = {}
        for parameter, argument in instances.passed(instance, call).items():
            here = (self.modes.scopes.enclosing_function(argument) or self.ctx.tree) is self.scope
            key = self.key(argument) if here else self.modes.key(argument, self.scope)
            if key is not None and (here or key.startswith("@")):
                passed[parameter] = key
        return found[0], found[1], passed

    def _construction(self, call: ast.Call) -> tuple[object, ast.AST, dict[str, str]] | None:
        """For the construction of an instance `_instance_method` knows (`Trainer(model, opt)`): its
        `__init__`, which gets what the call passes as any function does."""
        instance = self.ctx.analysis(Instances).built(call)
        found = self.modes.objects.class_of(instance) if instance is not None and instance.node is call else None
        init = inherited_method(found[0], found[1], "__init__", self.modes.view) if found is not None else None
        return (init[0], init[1], {}) if init is not None else None

    def _follow(self, call: ast.Call, function: ast.AST, owner: str | None, state: State, home=None, passed: dict | None = None) -> State:
        """Apply a function's summary: the modes it leaves, the model calls it makes. `home`: the context of
        another module of the project that defines it (its model calls are reported there, not here).
        `passed`: for a method of an instance built here, the keys of what its attributes hold."""
        callee_modes = self.modes if home is None else self.modes.of_module(home)
        deciding = callee_modes.deciding(function)
        constants = {k: v for k, v in call_constants(call, function, self.constants).items() if k in deciding}
        summary = self._callee_summary(callee_modes, function, tuple(sorted(constants.items(), key=str)))
        mapping = self._parameter_mapping(call, function, owner, callee_modes.ctx, passed is not None)
        if mapping is not None and passed:
            mapping.update(passed)
        if summary is None or mapping is None:
            if owner is not None:
                state = self._set(state, owner, frozenset({Fact(Mode.UNKNOWN, call)}))
            return self._unknown_arguments(call, state)
        for parameter in self._rebound(function, mapping, callee_modes.ctx):
            # `batch = {...}` in the callee: its facts on the name are no longer of what the caller passed,
            # which the callee may have switched first; the rest of its summary still holds.
            state = self._set(state, mapping.pop(parameter), frozenset({Fact(Mode.UNKNOWN, call)}))
        before = state
        if home is None:
            # Module-level names the callee uses are the caller's too, unless the caller binds its own.
            for head in {k.split(".")[0] for k in summary.exit} - set(mapping):
                if head not in self.modes.scopes.local_bindings(function) and not self._binds(head):
                    mapping[head] = head
            for use in summary.uses:
                key = translate_key(use.key, mapping)
                if key is not None:
                    self._record(use.call, call, key, self._substitute(use.facts, before, key, call, mapping=mapping), use.constants)
        else:  # `module.training_step(batch)` of another module's class runs `module` here: a model call of it
            self._run_elsewhere(call, summary, mapping, before, home)
        for callee_key in sorted(summary.exit, key=len):
            key = translate_key(callee_key, mapping)
            if key is not None:
                key = self._held_object(key, call)
                state = self._set(state, key, self._substitute(summary.exit[callee_key], before, key, call, home, mapping))
        spread = [a.value for a in call.args if isinstance(a, ast.Starred)] + [k.value for k in call.keywords if k.arg is None]
        for value in spread:  # `model.train_emb(*batch)`: which parameters its items fill is unknown
            key = self.key(value)
            if key is not None:
                state = self._set(state, key, frozenset({Fact(Mode.UNKNOWN, call)}))
        return state

    def _run_elsewhere(self, call: ast.Call, summary: Summary, mapping: dict[str, str], before: State, home) -> None:
        """Note `call` as a call of each model the caller passes (its receiver included) or tracks that the callee,
        a function of the module `home`, runs (`self(x)` in a model's `training_step`): the model calls
        of another module are its own (`_follow`), but whether this call trains or evaluates is this
        module's to say."""
        run: dict[str, frozenset] = {}
        named: dict[str, str] = {}
        for use in summary.uses:
            key = translate_key(use.key, mapping)
            # what the caller passes, or an object it holds whose mode this flow tracks (`self.enc` of a
            # wrapper passed as `self`, keyed by the object the objects layer knows it is)
            if key is not None and (key.split(".")[0] in mapping.values() or key.startswith("@") and key in before):
                run[key] = run.get(key, frozenset()) | self._built_there(self._substitute(use.facts, before, key, call, home), use.call, home)
                spelled = reference_key(called_receiver(use.call))
                named[key] = (translate_key(spelled, mapping) if spelled else None) or ""
        for key, facts in sorted(run.items()):
            self._record(call, call, key, facts, named=named[key])

    def _built_there(self, facts: frozenset, model_call: ast.Call, home) -> frozenset:
        """The facts of a model another module's function calls (`self.encoder(x)` of a wrapper's method), with the
        one construction its objects layer knows made it where they know none: what its layers are read from."""
        made = self.modes.of_module(home).objects.made(called_receiver(model_call)) or []
        if len(made) != 1 or all(f.built is not None for f in facts):
            return facts
        where, built = made[0]
        self.modes.homes.setdefault(built, where or home)
        return frozenset(f if f.built is not None else replace(f, built=built) for f in facts)

    def _held_object(self, key: str, call: ast.Call) -> str:
        """A callee's key translated to an attribute of what the call passes (`self.model` for a hook's
        `trainer.model`, given the trainer as `self`) as the flow keys that attribute here: the object it
        holds, when the objects layer knows it."""
        head, dot, rest = key.partition(".")
        plain = dot and not head.startswith("@") and all(name.isidentifier() for name in rest.split("."))
        arguments = [*call.args, *(k.value for k in call.keywords)] if plain else []
        passed = next((a for a in arguments if self.key(a) == head), None)
        if passed is None:
            return key
        objects = self.modes.objects
        found = objects.points_to(passed)
        for name in rest.split("."):
            found = union(*(objects.member(base, name) for base in found - {NONE})) if found else None
        return objects.key_of(found, self.scope) or key

    def _parameter_mapping(self, call: ast.Call, function: ast.AST, owner: str | None, home, method: bool = False) -> dict[str, str] | None:
        """Callee parameter -> the caller's receiver passed for it (`home`: the callee's context; `method`:
        a method called on an object, even one with no key). A parameter the call's `*batch` or `**kw` may
        fill is left out (`_follow` makes what they spread unknown); None when a model goes to the callee's
        `*args` or `**kwargs` (see `_rebound` for the parameters the callee rebinds)."""
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
        skips_first = (owner is not None or method) and not static
        bound = {p: a for p, a in bind_arguments(call, function, skips_first).items() if a is not None}
        passed = [*call.args, *(k.value for k in call.keywords)]
        if len(bound) < len(passed) and any(self.key(a) is not None for a in passed if a not in bound.values()):
            return None  # a model taken by the callee's `*args` or `**kwargs`: where it goes is unknown
        mapping: dict[str, str] = {}
        if skips_first:
            first = first_parameter(function)
            if first is None:
                return None
            if owner is not None:
                mapping[first] = owner
        for parameter, argument in bound.items():
            key = self.key(argument)
            if key is not None:
                mapping[parameter] = key
        return mapping

    @staticmethod
    def _rebound(function: ast.AST, mapping: dict[str, str], home) -> list[str]:
        """The parameters of `mapping` the callee (of context `home`) binds anew."""
        stored = {n.id for n in home.index.within(function, ast.Name) if isinstance(n.ctx, ast.Store)}
        return sorted(stored & set(mapping))

    def _substitute(self, facts: frozenset, state: State, key: str, site: ast.AST, home=None, mapping: dict | None = None) -> frozenset:
        """The callee's facts seen from the caller: ENTRY is the caller's state (of the key it was copied from,
        through `mapping`: the callee's keys as the caller's); the rest happened at `site` (`home`: the
        callee's context, when another module's: where its nodes are)."""
        result = set()
        before = lookup(state, key)
        for fact in facts:
            if fact.mode is Mode.ENTRY and fact.source is not None and mapping is not None:
                source = translate_key(fact.source, mapping)
                entered = lookup(state, source) if source is not None else frozenset({Fact(Mode.UNKNOWN, site)})
                result |= {Fact(Mode.ENTRY, source=source) if f == Fact(Mode.ENTRY) and source != key else f for f in entered}
                continue
            if fact.mode is Mode.ENTRY:
                result |= before
                continue
            if home is not None:  # where the callee's module knows the node is (a module it follows in turn), or there
                known = self.modes.of_module(home).homes
                self.modes.homes.update({node: known.get(node, home) for node in (fact.origin, fact.built) if node is not None})
            result.add(Fact(fact.mode, site, fact.origin, fact.built or common_built(before)))
        return frozenset(result)

    def _return_items(self, value: ast.AST, state: State) -> None:
        """Join the modes of the items of a returned tuple into `returned_items`, while every return so
        far is a tuple of as many items."""
        size = len(self.returned_items) if self.returned_items is not None else len(getattr(value, "elts", ()))
        if not self._returns_items or not is_items(value, size):
            self._returns_items, self.returned_items = False, None
            return
        items = [self._value_facts(item, state, returned=True) for item in value.elts]
        previous = self.returned_items or [frozenset()] * size
        self.returned_items = tuple(a | b for a, b in zip(previous, items))

    def _read_by_callers(self) -> bool:
        """Do callers read the mode of what this function returns? Only of module-level functions,
        called by name (`model = build()`); what a method returns is as unknown as any other call's."""
        return self.modes.is_module_function(self.scope)

    def _may_be_run(self, targets: list[ast.AST], value: ast.AST) -> bool:
        """Can the object a call assigns to these names be run as a model here? Not when no read of the
        names may run it (`Modes._read_as_model`): then what the call builds is not worth asking."""
        calls = self.modes.call_graph()
        if strip_same_module(value) is None or not all(isinstance(t, ast.Name) and t.id in calls.candidates for t in targets):
            return True
        return any(t.id in calls.read_as_model for t in targets)

    # Values.
    def _value_facts(self, value: ast.AST, state: State, returned: bool = False) -> frozenset:
        """The mode of the object an expression gives: a new module trains; `m.eval()` returns `m`."""
        unknown = frozenset({Fact(Mode.UNKNOWN, value)})
        if isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr in (*SAME_MODULE, "eval", "train"):
                inner = self._value_facts(func.value, state, returned)
                if func.attr in ("eval", "train"):
                    return frozenset({Fact(requested_mode(value, func.attr), value, value, common_built(inner))})
                return inner
            if self.modes.qualified_name(func) in COPIES and len(value.args) == 1:  # a copy keeps its source's mode
                copied, source = self._value_facts(value.args[0], state, returned), self.key(value.args[0])
                return frozenset(Fact(Mode.ENTRY, source=source) if f == Fact(Mode.ENTRY) and source else f for f in copied)
            if isinstance(func, ast.Name) and func.id in self.modes.functions and not self._shadowed(func):
                summary = self.modes.summary(self.modes.functions[func.id], self.depth + 1)
                return self._substitute(summary.returned, {}, "", value) if summary is not None and summary.returned else unknown
            handed = self.modes.objects.handed_back(value)
            if handed is not None and len(handed) == 1:
                return self._value_facts(handed[0], state, returned)  # runs the wrapped model as it is
            if self.modes.builds_module(value):
                parts = _held_parts(value) if canonical_class(self.modes.qualified_name(func)) in CONTAINERS else None
                if parts:  # `nn.Sequential(encoder, head)`: the modules it holds keep their own modes
                    return frozenset().union(*(self._value_facts(part, state, returned) for part in parts))
                library = library_model(self.modes.ctx, value)
                mode = Mode.EVAL if library is not None and library.starts_in_eval else Mode.TRAIN
                return frozenset({Fact(mode, value, value, value)})
            given = self.key(value)  # `getattr(model, "module", model)`, `unwrap(model)`: an object it is given
            built = self._built_elsewhere(value, value)
            elsewhere = self._returned_elsewhere(value) if not built and given is None else None
            if elsewhere is not None and elsewhere[0].returned:  # `model = load(name)` of another module
                return self._substitute(elsewhere[0].returned, {}, "", value, elsewhere[1])
            return built or (lookup(state, given) if given is not None else unknown)
        if isinstance(value, ast.IfExp):  # `ema if use_ema else model`: either arm, unless the constants decide
            decided = fold(value.test, self.constants) if self.constants else None
            arms = [value.body, value.orelse] if decided is None else [value.body if decided else value.orelse]
            return frozenset().union(*(self._value_facts(arm, state, returned) for arm in arms))
        key = self.key(value)
        if key is None and isinstance(value, ast.Subscript):  # `parts["model"]` of a dict a builder returns
            return self._built_elsewhere(value, value) or unknown
        if key is None:
            return unknown
        facts = lookup(state, key)
        if facts is ENTRY and isinstance(value, ast.Subscript) and self._made_here(value.value):
            return self._built_elsewhere(value, value) or unknown  # `parts = build(cfg)`, then `parts["model"]`
        if returned:  # the caller does not know what ENTRY meant here
            return frozenset(Fact(Mode.UNKNOWN, value) if f.mode is Mode.ENTRY else f for f in facts)
        return facts


def switches_modes(ctx, function: ast.AST | None) -> bool:
    """Does a function call `.train(...)` or `.eval()` on anything?"""
    return function is not None and any(
        isinstance(call.func, ast.Attribute) and call.func.attr in ("train", "eval") for call in ctx.index.within(function, ast.Call)
    )


def _held_parts(container: ast.Call) -> list[ast.AST] | None:
    """The modules a container is built from when one of them exists already (`nn.Sequential(encoder,
    head)`): building the container does not change their modes. None when it builds all of its parts."""
    parts = list(container.args)
    if any(isinstance(part, ast.Starred) for part in parts) or all(isinstance(part, ast.Call) for part in parts):
        return None
    return parts
