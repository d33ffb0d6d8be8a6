"""The events of a training loop's iteration (`loops.TrainingLoops` makes them) and what is done to lists
of them: `Event`s in execution order, each under its `Guard`s; an `Iteration` of a training loop; a
function's events under a call's constant flags (`folded`); one key per optimizer object
(`one_key_per_object`).
"""
from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field, replace
from typing import Callable

from mllint.analysis.objects.constants import fold
from mllint.analysis.syntax.folding import existence_test, is_periodic
from mllint.analysis.syntax.scopes import parameters


class EventKind(enum.Enum):
    CLEAR = "clear"  # optimizer.zero_grad(), model.zero_grad(), p.grad = None, p.grad.zero_(), p.grad.fill_(0)...
    BACKWARD = "backward"
    STEP = "step"  # an optimizer step
    SCHEDULER = "scheduler step"
    UPDATE = "update"  # a parameter updated in place by its own gradient (`p.add_(p.grad, alpha=-lr)`): manual SGD
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

    @property
    def periodic(self) -> bool:
        """An arm of `if step % every == 0:` (or of `if step % every: return`): every so many iterations."""
        return self.kind == "if" and isinstance(self.node, ast.If) and is_periodic(self.node.test)

    @property
    def checks_existence(self) -> bool:
        return self.existing is not None

    @property
    def checks_type(self) -> bool:
        """An arm of `if isinstance(x, T):` (or its `not`): which kind of object it is given, not how often
        (`clear_all(opts)` clearing an optimizer, or recursing into each of a container's)."""
        if self.kind != "if" or not isinstance(self.node, ast.If):
            return False
        test = self.node.test
        test = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
        return isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"

    @property
    def existing(self) -> ast.AST | None:
        """What this arm of an `if` only knows to exist (`p.grad` for `if p.grad is not None:`, `params` for
        `if params:`, the `else:` of `if x is None:`); None for any other guard."""
        if self.kind != "if" or not isinstance(self.node, ast.If):
            return None
        tested = existence_test(self.node.test)
        return tested[0] if tested and tested[1] == (self.arm is True) else None


@dataclass(frozen=True)
class Event:
    kind: EventKind
    node: ast.AST  # the call (or assignment) in the source, perhaps in a called function
    key: str | None  # the optimizer, model or scheduler it acts on, in the loop's names (`opt`, `self.optimizer`)
    guards: tuple[Guard, ...]
    closure: bool = False  # `optimizer.step(closure)`: the closure does its own backward and clearing
    arguments: frozenset[str] = frozenset()  # opaque calls: the names they receive
    callee: str | None = None  # opaque calls: the qualified name of what they call, None when unknown
    path: str | None = None  # the file `node` is in, as findings show it; None: the linted file
    entry: ast.AST | None = None  # for an event of another file: the call of the linted file leading to it
    via: str | None = None  # ... and the function that call runs
    # The calls that lead to the event from the loop's function, outermost first: a helper called twice
    # (`self._reset_grads()` before the backward and again before the step) makes two events.
    calls: tuple[ast.AST, ...] = ()
    # The objects the optimizer or scheduler `key` may be (`objects.Objects`), for an event written in the
    # linted file's function that holds the loop; None when unknown or seen through a call.
    objects: frozenset | None = field(default=None, compare=False)
    ctx: object = field(default=None, compare=False)  # the context of the file `node` is in

    @property
    def at(self) -> ast.AST:
        """Where a finding about the event is reported: the event itself in the linted file, else the
        call of the linted file that leads to it."""
        return self.entry or self.node

    @property
    def place(self) -> str:
        """`line 12`, or `steps.py:12` in another file."""
        return f"{self.path}:{self.node.lineno}" if self.path else f"line {self.node.lineno}"

    @property
    def where(self) -> str:
        """What a message adds for an event of another file: ` in `train_step` (steps.py:12)`; for one of a
        helper of the linted file, the call that runs it: ` (through `self._reset_grads()`, line 31)`."""
        if self.entry is not None:
            return f" in `{self.via}` ({self.place})"
        call = self.calls[-1] if self.calls else None  # the call of the function that holds it
        if call is None or not isinstance(call, ast.Call):
            return ""
        return f" (through `{source_text(call.func)}()`, line {call.lineno})"

    def text(self, ctx) -> str:
        """The event's source text (unparsed when it is in another file)."""
        return ctx.text(self.node) if self.path is None else source_text(self.node)

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

    def runs_periodically_whenever(self, other: "Event") -> bool:
        """`runs_whenever`, or does so every so many of those iterations: its own conditions past `other`'s
        are tests of a count modulo another (`if trainer.global_step % self.every: return` in a callback)."""
        theirs = other.conditions
        mine = tuple(g for g in self.conditions if g in theirs or not g.periodic)
        return len(mine) <= len(theirs) and theirs[: len(mine)] == mine

    def excludes(self, other: "Event") -> bool:
        """Do the two events sit in opposite arms of the same condition (`if amp:` / `else:`, two cases of a
        `match` or of a call that runs one class's method or another's)?"""
        return any(
            a.kind == b.kind and a.kind in ("if", "case") and a.text == b.text and a.arm != b.arm
            for a in self.conditions for b in other.conditions
        )  # fmt: skip

    def with_prefix(
        self, guards: tuple[Guard, ...], rename, entry: ast.AST | None = None, via: str | None = None, call: ast.AST | None = None
    ) -> "Event":
        """The event as seen from a call site (`call`, None for a nested loop): under its guards, named in
        its names; `entry` and `via` when the call site is in the linted file and the event in another."""
        arguments = frozenset(rename(a) for a in self.arguments)
        key = rename(self.key) if self.key is not None else None
        entry, via = (entry, via) if entry is not None else (self.entry, self.via)
        objects = self.objects if rename is same else None  # a callee's objects are in the callee's terms
        calls = (call, *self.calls) if call is not None else self.calls
        return replace(self, key=key, guards=guards + self.guards, arguments=arguments, entry=entry, via=via, objects=objects, calls=calls)


@dataclass
class Iteration:
    """A training loop and the events of one of its iterations."""

    loop: ast.AST
    events: list[Event]
    optimizers: list[str]  # the optimizers stepped here after a backward of this iteration
    is_library: Callable[[str], bool] = lambda name: False  # library functions act on nothing of ours

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
            and not (e.callee is not None and self.is_library(e.callee))
            for e in self.of(EventKind.OPAQUE)
        )  # fmt: skip

    def misdirected_clear(self, optimizer: str, step: Event) -> Event | None:
        """The clear of another optimizer of the iteration that was likely meant for `optimizer`, whose
        `step` clears nothing: one that clears that optimizer a second time, with no step of it after
        (`opt_d.zero_grad()` copied into the generator phase), the nearest to the step; None when none is."""
        order = {id(e): i for i, e in enumerate(self.events)}
        steps = self.of(EventKind.STEP)
        found = None
        for clear in self.of(EventKind.CLEAR):
            other = clear.key
            if other is None or other == optimizer or clear.excludes(step):
                continue
            if other not in self.optimizers:  # a model (`netD.zero_grad()`): cleared before, another step between
                if order[id(clear)] > order[id(step)] or not any(
                    c.key == other and any(order[id(c)] < order[id(s)] < order[id(clear)] and s.key != optimizer for s in steps)
                    for c in self.of(EventKind.CLEAR)
                ):
                    continue
            elif any(order[id(s)] > order[id(clear)] for s in self.steps(other)):
                continue  # it clears for a step of its own optimizer
            if not any(c is not clear and c.key == other for c in self.of(EventKind.CLEAR)):
                continue  # its optimizer's (or model's) only clear
            if found is None or abs(order[id(clear)] - order[id(step)]) < abs(order[id(found)] - order[id(step)]):
                found = clear
        return found

    @property
    def single_optimizer(self) -> bool:
        return len({e.key for e in self.of(EventKind.STEP)}) == 1



def one_key_per_object(events: list[Event]) -> list[Event]:
    """The events of an iteration with one key per optimizer or scheduler object: `opt = self.optimizer;
    opt.zero_grad()` clears what `self.optimizer.step()` steps, named as its first step (or first event)
    names it."""
    named: dict[frozenset, str] = {}
    for event in sorted((e for e in events if e.objects), key=lambda e: e.kind is not EventKind.STEP):
        named.setdefault(event.objects, event.key)
    if len(set(named.values())) == len(named) and all(named[e.objects] == e.key for e in events if e.objects):
        return events
    return [replace(e, key=named[e.objects]) if e.objects and named[e.objects] != e.key else e for e in events]


def decided_by_parameters(events: list[Event], function: ast.AST) -> bool:
    """Does an event sit under an `if` whose test names a parameter of `function` (a cheap test before
    asking the call sites)?"""
    names = {a.arg for a in parameters(function, variadic=False)}
    return any(
        g.kind == "if" and isinstance(g.node, ast.If) and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(g.node.test))
        for e in events for g in e.guards
    )  # fmt: skip


GIVEN = "given "  # the text of a case guard taken when a parameter (the rest of the text) is its arm's constant


def folded(events: list[Event], flags: dict[str, object], ifs: list[ast.AST]) -> list[Event]:
    """The events of a function under a call's constant flags: an `if` of the function (one of `ifs`)
    decided by them runs its arm or not (its guard goes), the other arm's events go."""
    if not flags:
        return events
    ifs = set(ifs)
    kept = []
    for event in events:
        guards, taken = [], True
        for guard in event.guards:
            decided = fold(guard.node.test, flags) if guard.kind == "if" and guard.node in ifs else None
            given = guard.text.removeprefix(GIVEN) if guard.kind == "case" and guard.text.startswith(GIVEN) else None
            if given in flags:  # a hook by name, the items at a key: the constant the call passes for the parameter
                decided = flags[given] == guard.arm
                decided = guard.arm if decided else not guard.arm
            if decided is None:
                guards.append(guard)
            elif decided != guard.arm:
                taken = False
        if taken:
            kept.append(replace(event, guards=tuple(guards)) if len(guards) != len(event.guards) else event)
    return kept


def same(key: str) -> str:
    return key


def source_text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError, AttributeError):
        return "?"
