"""The training-loop model: which loops train, and what one iteration does, in order.

A loop's iteration is flattened into `Event`s (gradient clear, backward, optimizer step, scheduler step,
calls the model cannot see into), in execution order, each with the `Guard`s it sits under: the branches
of `if`/`match`/exception handlers (compared by their condition text and arm, so that two `if use_amp:`
statements are the same guard), and the nested loops inside the iteration. Calls into functions of the
file (module functions, `self._step(...)` into the enclosing class) are followed several levels deep,
their parameters renamed to the caller's arguments.

A training loop is the innermost loop whose iteration performs a backward pass and an optimizer step:
`TrainingLoops.loops` lists them with their `Iteration`. Which function a call runs is
`CallResolver`'s answer (mllint/analysis/calls.py). Library-managed training (Lightning
`training_step`, HF `Trainer.train`, ignite engines) has no such loop in user code and stays silent.
"""
from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

from mllint.analysis.calls import CallResolver
from mllint.analysis.scopes import FUNCTION_NODES, SCOPE_NODES
from mllint.analysis.values import ValueKinds

MAX_CALL_DEPTH = 4
LOOP_NODES = (ast.For, ast.AsyncFor, ast.While)
EXITS = (ast.Continue, ast.Break, ast.Return, ast.Raise)
CLASSIFIED = frozenset({"backward", "zero_grad", "zero_", "detach_", "step"})  # the methods events come from
OPTIMIZER_NAME = re.compile(r"optim|(^|_)opt($|_|[a-z]?\d*$)", re.IGNORECASE)
SCHEDULER_NAME = re.compile(r"sched", re.IGNORECASE)
SCALER_NAME = re.compile(r"scaler", re.IGNORECASE)
LR_SCHEDULER_MODULE = "torch.optim.lr_scheduler."
FUNCTION_BACKWARDS = {"torch.autograd.backward"}
# Objects whose `backward(loss)` is a backward pass: accelerate, fabric (and their usual names).
BACKWARD_OWNERS = re.compile(r"accelerator|fabric", re.IGNORECASE)


class EventKind(enum.Enum):
    CLEAR = "clear"  # optimizer.zero_grad(), model.zero_grad(), p.grad = None, p.grad.zero_()
    BACKWARD = "backward"
    STEP = "step"  # an optimizer step
    SCHEDULER = "scheduler step"
    OPAQUE = "call"  # a call the model does not follow, with the arguments it receives


@dataclass(frozen=True)
class Guard:
    """A condition an event sits under: an `if` arm, a `match` case, an exception handler, a nested loop."""

    kind: str  # "if", "case", "handler", "loop"
    text: str  # the condition's source (the loop node's id for loops)
    arm: object = None
    node: ast.AST | None = field(default=None, compare=False)

    @property
    def conditional(self) -> bool:
        return self.kind != "loop"


@dataclass(frozen=True)
class Event:
    kind: EventKind
    node: ast.AST  # the call (or assignment) in the source, perhaps in a called function
    key: str | None  # the optimizer, model or scheduler it acts on, in the loop's names (`opt`, `self.optimizer`)
    guards: tuple[Guard, ...]
    closure: bool = False  # `optimizer.step(closure)`: the closure does its own backward and clearing
    arguments: frozenset[str] = frozenset()  # opaque calls: the names they receive

    @property
    def conditions(self) -> tuple[Guard, ...]:
        return tuple(g for g in self.guards if g.conditional)

    @property
    def loops(self) -> tuple[Guard, ...]:
        return tuple(g for g in self.guards if not g.conditional)

    def runs_whenever(self, other: "Event") -> bool:
        """Does this event run on every iteration `other` runs on? (its conditions are a prefix of
        `other`'s, compared by text and arm)"""
        mine, theirs = self.conditions, other.conditions
        return len(mine) <= len(theirs) and theirs[: len(mine)] == mine

    def excludes(self, other: "Event") -> bool:
        """Do the two events sit in opposite arms of the same condition (`if amp:` / `else:`)?"""
        return any(
            a.kind == b.kind == "if" and a.text == b.text and a.arm != b.arm
            for a in self.conditions for b in other.conditions
        )  # fmt: skip

    def with_prefix(self, guards: tuple[Guard, ...], rename) -> "Event":
        arguments = frozenset(rename(a) for a in self.arguments)
        key = rename(self.key) if self.key is not None else None
        return Event(self.kind, self.node, key, guards + self.guards, self.closure, arguments)


@dataclass
class Iteration:
    """A training loop and the events of one of its iterations."""

    loop: ast.AST
    events: list[Event]
    optimizers: list[str]  # the optimizers stepped here after a backward of this iteration
    is_library_call: Callable[[ast.Call], bool] = lambda call: False  # library calls act on nothing of ours

    def of(self, kind: EventKind) -> list[Event]:
        return [e for e in self.events if e.kind is kind]

    def steps(self, optimizer: str) -> list[Event]:
        return [e for e in self.events if e.kind is EventKind.STEP and e.key == optimizer]

    def clears(self, optimizer: str, strict: bool) -> list[Event]:
        """The clears of `optimizer`'s gradients: its own `zero_grad()`, and unless `strict`, the clears of
        something that is not another optimizer (`model.zero_grad()`, `p.grad = None`)."""
        others = {e.key for e in self.of(EventKind.STEP)} - {optimizer}
        return [
            e for e in self.of(EventKind.CLEAR)
            if e.key == optimizer or not (strict or e.key in others)
        ]  # fmt: skip

    def unknown(self, optimizer: str) -> bool:
        """Might the model miss what happens to `optimizer`? A call the model does not follow receives it
        (or the object holding it), or a step takes a closure."""
        if any(e.closure for e in self.steps(optimizer)):
            return True
        return any(
            any(optimizer == name or optimizer.startswith((name + ".", name + "[")) for name in e.arguments)
            and not self.is_library_call(e.node)
            for e in self.of(EventKind.OPAQUE)
        )  # fmt: skip

    @property
    def single_optimizer(self) -> bool:
        return len({e.key for e in self.of(EventKind.STEP)}) == 1


class TrainingLoops:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.resolver = CallResolver(ctx)
        self.values = ctx.analysis(ValueKinds)
        self._function_events: dict[ast.AST, list[Event]] = {}
        self._loop_events: dict[ast.AST, list[Event]] = {}
        self._active: set[ast.AST] = set()  # functions being flattened (recursion guard)
        self.loops: list[Iteration] = []
        self.may_train = self._may_train()
        for loop in ctx.index.of_type(*LOOP_NODES):
            iteration = self._training_iteration(loop) if loop in self.may_train else None
            if iteration is not None:
                self.loops.append(iteration)
        self.loops.sort(key=lambda it: (it.loop.lineno, it.loop.col_offset))

    # Queries.
    def events_of_loop(self, loop: ast.AST) -> list[Event]:
        if loop not in self._loop_events:
            self._loop_events[loop] = self._events(loop.body, (), 0)
        return self._loop_events[loop]

    def events_of_statements(self, statements: list[ast.stmt]) -> list[Event]:
        if not any(statement in self.may_train for statement in statements):
            return []
        return self._events(statements, (), 0)

    def is_library_call(self, call: ast.Call) -> bool:
        return self.ctx.qualified_name(call.func) is not None

    def scheduler_class(self, event: Event) -> tuple[str, ast.Call] | None:
        """The torch scheduler class (`torch.optim.lr_scheduler.StepLR`) and constructor of a scheduler
        step written in the loop's own function."""
        receiver = event.node.func.value if isinstance(event.node, ast.Call) else None
        if receiver is None:
            return None
        constructor = self.values.constructor(receiver)
        if constructor is None:
            return None
        name = self.ctx.qualified_name(constructor.func)
        return (name, constructor) if name else None

    def scheduler_steps(self) -> Iterator[tuple[ast.AST, list[Event], Event]]:
        """(loop, its iteration's events, a scheduler step directly in that iteration) for every loop
        that trains or holds a training loop."""
        for loop in self.ctx.index.of_type(*LOOP_NODES):
            if loop not in self.may_train:
                continue
            events = self.events_of_loop(loop)
            kinds = {e.kind for e in events}
            if EventKind.BACKWARD in kinds and EventKind.STEP in kinds:
                for event in events:
                    if event.kind is EventKind.SCHEDULER and not event.loops:
                        yield loop, events, event

    def is_training_loop(self, loop: ast.AST) -> bool:
        return any(it.loop is loop for it in self.loops)

    # Training loops.
    def _training_iteration(self, loop: ast.AST) -> Iteration | None:
        events = self.events_of_loop(loop)
        backwards = [e for e in events if e.kind is EventKind.BACKWARD]
        if not backwards:
            return None
        optimizers: list[str] = []
        for step in events:
            if step.kind is not EventKind.STEP or step.key in optimizers:
                continue
            # This loop is the innermost one holding both: no nested loop holds the step and a backward.
            if any(not set(step.loops) & set(b.loops) for b in backwards):
                optimizers.append(step.key)
        return Iteration(loop, events, optimizers, self.is_library_call) if optimizers else None

    def _may_train(self) -> set[ast.AST]:
        """The nodes (loops, `try` statements, ...) that hold a backward call or a call of a function of
        the file that may reach one: a cheap lexical over-approximation, so that the events are only built
        where training may happen."""
        calls = self.ctx.index.by_type.get(ast.Call, ())
        marks = [c for c in calls if _callee_name(c) == "backward"]
        if not marks:
            return set()
        by_name: dict[str, list[ast.Call]] = {}
        for call in calls:
            name = _callee_name(call)
            if name is not None and (isinstance(call.func, ast.Name) or _dotted(call.func.value) == "self"):
                by_name.setdefault(name, []).append(call)
        reaching: set[str] = set()
        pending = list(marks)
        while pending:
            function = self.ctx.scopes.enclosing_function(pending.pop())
            while function is not None:
                name = getattr(function, "name", None)
                if name is not None and name not in reaching:
                    reaching.add(name)
                    marks += by_name.get(name, [])
                    pending += by_name.get(name, [])
                function = self.ctx.scopes.enclosing_function(function)
        found: set[ast.AST] = set()
        for mark in marks:
            for ancestor in self.ctx.scopes.ancestors(mark):
                if ancestor in found:
                    break
                found.add(ancestor)
        return found

    # Flattening.
    def _events(self, statements: list[ast.stmt], guards: tuple[Guard, ...], depth: int) -> list[Event]:
        events: list[Event] = []
        for statement in statements:
            events += self._statement_events(statement, guards, depth)
            if isinstance(statement, EXITS):
                break  # the rest of the block does not run
            if isinstance(statement, ast.If):
                # `if cond: continue`: what follows runs only when the arm that goes on was taken.
                exits = [bool(arm) and isinstance(arm[-1], EXITS) for arm in (statement.body, statement.orelse)]
                if exits[0] != exits[1]:
                    guards = guards + (Guard("if", _text(statement.test), exits[0] is False, statement),)
        return events

    def _statement_events(self, node: ast.stmt, guards: tuple[Guard, ...], depth: int) -> list[Event]:
        if isinstance(node, SCOPE_NODES):
            return []
        if isinstance(node, ast.If):
            test = self._expression_events(node.test, guards, depth)
            text = _text(node.test)
            return (
                test
                + self._events(node.body, guards + (Guard("if", text, True, node),), depth)
                + self._events(node.orelse, guards + (Guard("if", text, False, node),), depth)
            )
        if isinstance(node, LOOP_NODES):
            head = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.test
            inner = self.events_of_loop(node) if depth == 0 else self._events(node.body, (), depth)
            loop_guard = Guard("loop", str(id(node)), None, node)
            return self._expression_events(head, guards, depth) + [
                e.with_prefix(guards + (loop_guard,), _same) for e in inner
            ]
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            events = self._events(node.body, guards, depth) + self._events(node.orelse, guards, depth)
            for i, handler in enumerate(node.handlers):
                events += self._events(handler.body, guards + (Guard("handler", str(id(node)), i, handler),), depth)
            return events + self._events(node.finalbody, guards, depth)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            events = []
            for item in node.items:
                events += self._expression_events(item.context_expr, guards, depth)
            return events + self._events(node.body, guards, depth)
        if isinstance(node, ast.Match):
            events = self._expression_events(node.subject, guards, depth)
            for i, case in enumerate(node.cases):
                events += self._events(case.body, guards + (Guard("case", str(id(node)), i, case),), depth)
            return events
        events = self._expression_events(node, guards, depth)
        clear = self._statement_clear(node)
        if clear is not None:
            events.append(Event(EventKind.CLEAR, node, clear, guards))
        return events

    def _expression_events(self, node: ast.AST, guards: tuple[Guard, ...], depth: int) -> list[Event]:
        """The events of the calls in an expression (or simple statement), innermost first."""
        events: list[Event] = []
        for call in _calls_in(node):
            events += self._call_events(call, guards, depth)
        return events

    def _call_events(self, call: ast.Call, guards: tuple[Guard, ...], depth: int) -> list[Event]:
        event = self._classify(call, guards)
        if event is not None:
            return [event]
        callee = self.resolver.resolve(call)
        if callee is None:
            arguments = [_dotted(a) for a in (*call.args, *(k.value for k in call.keywords))]
            if isinstance(call.func, ast.Attribute) and not self.resolver.is_attribute_call(call):
                arguments.append(_dotted(call.func.value))  # a method may act on its object
            arguments = frozenset(a for a in arguments if a)
            return [Event(EventKind.OPAQUE, call, None, guards, arguments=arguments)] if arguments else []
        if depth >= MAX_CALL_DEPTH or callee in self._active:
            return [Event(EventKind.OPAQUE, call, None, guards, arguments=frozenset({"self"}))]
        rename = _renamer(callee, call)
        return [e.with_prefix(guards, rename) for e in self._function(callee, depth + 1)]

    def _function(self, function: ast.AST, depth: int) -> list[Event]:
        if function not in self._function_events:
            self._active.add(function)
            try:
                self._function_events[function] = self._events(function.body, (), depth)
            finally:
                self._active.discard(function)
        return self._function_events[function]

    def _classify(self, call: ast.Call, guards: tuple[Guard, ...]) -> Event | None:
        func = call.func
        name = _callee_name(call)
        if name not in CLASSIFIED:
            return None
        if name == "backward" and self.ctx.qualified_name(func) in FUNCTION_BACKWARDS:
            return Event(EventKind.BACKWARD, call, None, guards)
        if not isinstance(func, ast.Attribute) or self.ctx.qualified_name(func.value) is not None:
            return None
        receiver = _text(func.value)
        if func.attr == "backward":
            if call.args and not BACKWARD_OWNERS.search(receiver) and not _is_scaled(func.value):
                return None  # `y.backward(gradient)` and unknown engines' `backward(loss)`: not modelled
            return Event(EventKind.BACKWARD, call, None, guards)
        if func.attr == "zero_grad":
            return Event(EventKind.CLEAR, call, receiver, guards)
        if func.attr in ("zero_", "detach_") and _is_grad(func.value):
            return Event(EventKind.CLEAR, call, _text(_parameter_of(func.value)), guards)
        if func.attr != "step":
            return None
        if SCALER_NAME.search(receiver) and call.args:  # scaler.step(optimizer)
            return Event(EventKind.STEP, call, _text(call.args[0]), guards)
        kind = self._step_kind(func.value, receiver)
        if kind is EventKind.STEP:
            return Event(kind, call, receiver, guards, closure=bool(call.args or call.keywords))
        return Event(kind, call, receiver, guards) if kind is not None else None

    def _step_kind(self, receiver: ast.AST, text: str) -> EventKind | None:
        name = self.values.constructed_class(receiver) if isinstance(receiver, (ast.Name, ast.Attribute)) else None
        if name:
            if name.startswith(LR_SCHEDULER_MODULE) or name in STEP_SCHEDULER_FUNCTIONS:
                return EventKind.SCHEDULER
            if name.startswith("torch.optim."):
                return EventKind.STEP
        identifiers = re.findall(r"[A-Za-z_]\w*", text)
        last = identifiers[-1] if identifiers else ""
        if SCHEDULER_NAME.search(last):
            return EventKind.SCHEDULER
        if OPTIMIZER_NAME.search(last):
            return EventKind.STEP
        return None

    def _statement_clear(self, node: ast.stmt) -> str | None:
        """`p.grad = None` clears a gradient (the parameter's text is its key). So does `optimizer.zero_grad` written
        without its call, as far as ML2xx is concerned: ML301 reports that one."""
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Attribute) and node.value.attr == "zero_grad":
            return _text(node.value.value)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is None:
            target = node.targets[0]
            if _is_grad(target):
                return _text(_parameter_of(target))
        return None


# Schedulers built by functions (they return a torch LambdaLR stepped per optimizer step).
STEP_SCHEDULER_FUNCTIONS = frozenset({
    "transformers.get_linear_schedule_with_warmup", "transformers.get_cosine_schedule_with_warmup",
    "transformers.get_scheduler", "transformers.get_constant_schedule_with_warmup",
    "transformers.optimization.get_linear_schedule_with_warmup",
    "transformers.optimization.get_cosine_schedule_with_warmup", "transformers.optimization.get_scheduler",
})  # fmt: skip


def _calls_in(node: ast.AST) -> Iterator[ast.Call]:
    """The calls of an expression in evaluation order (arguments before the call), not entering lambdas
    or comprehension-defined functions."""
    if isinstance(node, FUNCTION_NODES):
        return
    stack: list[tuple[ast.AST, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if expanded:
            yield current  # type: ignore[misc]
            continue
        if isinstance(current, ast.Call):
            stack.append((current, True))
        children = [c for c in ast.iter_child_nodes(current) if not isinstance(c, (*FUNCTION_NODES, ast.stmt))]
        stack += [(c, False) for c in reversed(children)]


def _renamer(callee: ast.AST, call: ast.Call):
    """Rename the callee's parameters to the caller's argument texts (`optimizer` -> `opt`)."""
    parameters = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
    if parameters and parameters[0] == "self" and isinstance(call.func, ast.Attribute):
        parameters = parameters[1:]
    mapping: dict[str, str] = {}
    if not any(isinstance(a, ast.Starred) for a in call.args):
        mapping.update(zip(parameters, (_text(a) for a in call.args)))
    mapping.update((k.arg, _text(k.value)) for k in call.keywords if k.arg)
    known = {a.arg for a in (*callee.args.posonlyargs, *callee.args.args, *callee.args.kwonlyargs)}

    def rename(key: str) -> str:
        root = re.match(r"[A-Za-z_]\w*", key)
        if root is None or root.group() not in known or root.group() == "self":
            return key
        replacement = mapping.get(root.group(), f"<{root.group()}>")  # a default value: not the caller's
        return replacement + key[root.end() :]

    return rename


def _callee_name(call: ast.Call) -> str | None:
    """`step` for `opt.step(...)`, `train` for `train(...)`."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _dotted(node: ast.AST) -> str | None:
    """`self.optimizer` for a name or attribute chain; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _same(key: str) -> str:
    return key


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError, AttributeError):
        return "?"


def _is_grad(node: ast.AST) -> bool:
    """`p.grad` or `p.grad.data`"""
    if isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr == "grad"


def _parameter_of(grad: ast.Attribute) -> ast.AST:
    return grad.value.value if grad.attr == "data" else grad.value


def _is_scaled(node: ast.AST) -> bool:
    """`scaler.scale(loss)`"""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "scale"
