"""The training-loop model: which loops train, and what one iteration does, in order.

A loop's iteration is flattened into `Event`s (`loop_events.py`: gradient clear, backward, optimizer step,
scheduler step, calls the model cannot see into), in execution order, each with the `Guard`s it sits under: the branches
of `if`/`match`/exception handlers (compared by their condition text and arm, so that two `if use_amp:`
statements are the same guard), and the nested loops inside the iteration. Calls into functions of the
file (module functions, `self._step(...)` into the enclosing class) and into functions of the project's
other modules (`from steps import train_step`) are followed several levels deep, their parameters renamed
to the caller's arguments; an event of another file keeps the call of the linted file that leads to it
(`Event.entry`), where findings about it are reported. A loop that does not say `backward` is only
considered when it calls a function of a module of the project that calls `.backward(`.

A comprehension or generator expression is a loop too (`[self.train_step(b) for b in loader]`): its
filters and element are its iteration. So is `map(step, loader)` (also `map(partial(step, model=m), ...)`
and `map(lambda b: step(m, b), ...)`): a call of the function it maps is its iteration.

A training loop is the innermost loop whose iteration performs a backward pass and an optimizer step:
`TrainingLoops.loops` lists them with their `Iteration`. Which function a call runs is
`CallResolver`'s answer (mllint/analysis/program/calls.py). Library-managed training (Lightning
`training_step`, HF `Trainer.train`, ignite engines) has no such loop in user code and stays silent.
"""
from __future__ import annotations

import ast
import re
from functools import cached_property, partial
from dataclasses import replace
from typing import Iterator, NamedTuple

from mllint.analysis.program.callers import Binding, call_sites, per_call_site, signature_passage
from mllint.analysis.program.calls import Callee, CallResolver, bind_arguments
from mllint.analysis.syntax.folding import fold
from mllint.analysis.syntax.names import Names, callee_name, called_name, is_self_attribute, reference_key
from mllint.analysis.objects.call_sites import attribute_makers, branch_note, built, classes_of, decided, made_by_runner, made_classes, makers, possible_constants, under
from mllint.analysis.objects.constants import call_constants, got_attribute, is_zero, passes_self, site_constants
from mllint.analysis.objects.points_to import NONE, Obj, Objects
from mllint.analysis.objects.steps import StepKind, names_optimizer, step_of
from mllint.analysis.program.hierarchy import inherited_method, self_classes
from mllint.analysis.values.optimizers import Scheduler, is_optimizer, scheduler_made_by
from mllint.analysis.facets.loop_events import (
    GIVEN, Event, EventKind, Guard, Iteration, decided_by_parameters, folded, one_key_per_object, same, source_text,
)  # fmt: skip
from mllint.analysis.facets.gradients import requires_grad
from mllint.analysis.facets.parameters import is_module, is_module_constructor, optimizer_helper
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.scopes import FUNCTION_NODES, SCOPE_NODES, parameters, statement_blocks
from mllint.analysis.syntax.tree import child_nodes, module_statements, own_method
from mllint.analysis.values.values import ValueKinds, canonical_class, is_parameter
from mllint.findings import Related

MAX_CALL_DEPTH = 4
MAX_HOOK_NAMES = 8  # names a `getattr(item, name)` hook may be, past which it is not followed
MAX_OWNER_DEPTH = 8  # nesting of the expression an optimizer's parameters are given by
# A file holds a training loop only if it says one of these: a backward pass, or a call of a project
# function that may do it (`train_step(model, batch, optimizer)`, `tagger.training_update(batch)`).
TRAINING_WORDS = ("backward", "step", "optim", "train")
LOOP_NODES = (ast.For, ast.AsyncFor, ast.While)
# Comprehensions iterate too: `[self.train_step(batch) for batch in loader]` is a training loop.
COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
ITERATING_NODES = (*LOOP_NODES, *COMPREHENSION_NODES)
# What `_calls_in` does not enter: functions, statements, and names and constants (which hold no call).
NOT_ENTERED = (*FUNCTION_NODES, ast.stmt, ast.Name, ast.Constant)
# A `.backward(` call on a line that is no comment and no doctest: a module without one reaches none.
BACKWARD_CALL = re.compile(rb"^(?![ \t]*(?:#|>>>|\.\.\.))[^\n]*\.backward\(", re.MULTILINE)
EXITS = (ast.Continue, ast.Break, ast.Return, ast.Raise)
# The calls events come from.
CLASSIFIED = frozenset({"backward", "zero_grad", "zero_grads", "zero_", "zeros_", "detach_", "fill_", "mul_", "copy_", "step"})
# `p.grad.fill_(0)`, `p.grad.mul_(0)`, `p.grad.copy_(torch.zeros_like(p))`: in-place methods that clear a
# gradient given zeros.
ZEROING = frozenset({"fill_", "mul_", "copy_"})
UPDATING = frozenset({"add_", "sub_"})  # in-place updates of a parameter by its gradient (manual SGD)
# Factories of a fresh tensor of a given size: with `requires_grad=True`, the weights of a model written out.
LEAF_FACTORIES = frozenset(f"torch.{name}" for name in ("zeros", "ones", "randn", "rand", "empty", "normal", "full"))
FUNCTION_BACKWARDS = {"torch.autograd.backward"}
# Calls that pass on the parameters of what they are given: `list(model.parameters())`, `chain(a, b)`.
OWNER_PRESERVING = {"list", "tuple", "dict", "filter", "itertools.chain"}
PARAMETER_LISTS = frozenset({"parameters", "named_parameters"})
# Objects whose `backward(loss)` is a backward pass: accelerate, fabric (and their usual names), and an
# optimizer wrapper (apex's `FP16_Optimizer`, OpenNMT's `Optimizer`: `self.optim.backward(loss)`).
BACKWARD_OWNERS = re.compile(r"accelerator|fabric", re.IGNORECASE)
# What makes the gradient a tensor's `backward(gradient)` takes (`one = torch.FloatTensor([1])`).
GRADIENT_FACTORIES = frozenset({
    "torch.tensor", "torch.ones", "torch.ones_like", "torch.full", "torch.full_like", "torch.Tensor", "torch.FloatTensor",
    "torch.cuda.FloatTensor", "torch.as_tensor",
})  # fmt: skip
MAX_GRADIENT_DEPTH = 6
# Methods that read or rescale the gradients of the optimizer they are given and never clear them
# (`scaler.unscale_(optimizer)` before clipping): not a call that may hide a clear.
GRADIENT_READERS = frozenset({"unscale_"})
# Methods that read their object and leave every gradient as it is: a call of one on an optimizer or a
# model (`{"opt": opt.state_dict()}` in a checkpoint) does not hide a clear.
# A loss object whose origin is not known (a parameter, a config) but whose name says what it is: it
# computes a value and acts on no optimizer (`self.criterion(out, y)` of an unseen attribute).
LOSS_NAME = re.compile(r"^(criterion|loss_fn|loss_func|loss_function)$")
GRADIENT_NEUTRAL = frozenset({
    "state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules",
    "children", "named_children", "get_last_lr", "get_lr", "train", "eval",
})  # fmt: skip


class SchedulerClass(NamedTuple):
    made: Scheduler  # what the class or factory makes
    constructor: ast.Call  # in the file that built it
    passed: str  # ", passed at main.py:12" or ", built at utils.py:8" when made elsewhere, else ""
    sites: tuple[Related, ...] = ()  # passed in: the call sites (`callers.call_sites`)
    home: object = None  # the context of the file the constructor is written in (None: the linted file)


class Owners(NamedTuple):
    modules: dict[str, ast.AST | None]  # by their text in the linted file -> the node there that spells it
    passed: str  # " (as passed at main.py:12)" when a call site's optimizer, else ""
    sites: tuple[Related, ...] = ()  # that call site (`callers.call_sites`)


class BackwardReach:
    """Lexically, which calls of a module may reach a backward pass: the `backward` calls, and the calls
    of its functions (by name, or by a method's name on any object) that hold one. Kept with the module's
    context."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.calls = ctx.index.by_type.get(ast.Call, ())
        self.marks, reaching = self._reach([c for c in self.calls if callee_name(c) == "backward"])
        self.functions = frozenset(reaching)  # the names of the functions that reach one

    @classmethod
    def of(cls, ctx) -> frozenset[str]:
        """What other modules' lints keep of it (`ProjectIndex.fact`): the functions that reach one."""
        return ctx.analysis(cls).functions

    def reaching_through(self, names: frozenset[str]) -> frozenset[str]:
        """The functions that reach a backward pass when the methods `names` do, called on any object (a
        method of another module: `self.learner.update(batch)`)."""
        more = [c for c in self.calls if isinstance(_called(c).func, ast.Attribute) and callee_name(_called(c)) in names]
        return frozenset(self._reach(self.marks + more)[1]) if more else self.functions

    def marks_with(self, more: list[ast.Call]) -> list[ast.Call]:
        """The marks, when `more` calls reach a backward pass too."""
        return self._reach(self.marks + more)[0] if more else self.marks

    def _reach(self, marks: list[ast.Call]) -> tuple[list[ast.Call], set[str]]:
        reaching: set[str] = set()
        if not marks:
            return marks, reaching
        by_name: dict[str, list[ast.Call]] = {}
        # `self.fit()`, `solver.train_step()`: a method of a class of the module, on its instance (a guess
        # by name: the events decide).
        methods = {f.name for c in self.ctx.index.of_type(ast.ClassDef) for f in c.body if isinstance(f, FUNCTION_NODES)}
        for call in self.calls:
            called = _called(call)
            name = callee_name(called)
            if name is not None and (isinstance(called.func, ast.Name) or isinstance(called.func, ast.Attribute) and name in methods):
                by_name.setdefault(name, []).append(call)
        marks, pending = list(marks), list(marks)
        while pending:
            function = self.ctx.scopes.enclosing_function(pending.pop())
            while function is not None:
                name = getattr(function, "name", None)
                if name is not None and name not in reaching:
                    reaching.add(name)
                    marks += by_name.get(name, [])
                    pending += by_name.get(name, [])
                function = self.ctx.scopes.enclosing_function(function)
        return marks, reaching


class _Module:
    """A module whose code the loop model reads: the linted file, or a module of the project it calls."""

    def __init__(self, ctx, project: ProjectView | None, path: str | None) -> None:
        self.ctx = ctx
        self.resolver = CallResolver(ctx, project)
        self.path = path  # as findings show it; None for the linted file

    @cached_property
    def values(self) -> ValueKinds:
        return self.ctx.analysis(ValueKinds)

    def event(self, kind: EventKind, node: ast.AST, key: str | None, guards: tuple[Guard, ...], **more) -> Event:
        return Event(kind, node, key, guards, path=self.path, ctx=self.ctx, **more)


def _parameter(m: _Module, node: ast.AST) -> bool:
    """Is `node` a name of `m` every binding of which that reaches it is its function's parameter (`model` of
    `def train(model, loader)`)?"""
    definitions = m.values.reaching_definitions(node) if isinstance(node, ast.Name) else []
    return bool(definitions) and all(is_parameter(d) for d in definitions)


def loop_or_function(ctx, node: ast.AST) -> ast.AST | None:
    """The innermost loop, function or class around `node`."""
    return next((a for a in ctx.scopes.ancestors(node) if isinstance(a, (*LOOP_NODES, *SCOPE_NODES))), None)


def is_library(project: ProjectView | None, qualified: str) -> bool:
    """Is the function or class of that name no part of the project (its effects are not ours)?"""
    return project is None or project.find(qualified) is None


class TrainingLoops:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.project = ctx.analysis(ProjectView) if ctx.project is not None else None
        self.own = _Module(ctx, self.project, None)
        self.resolver = self.own.resolver
        self.values = self.own.values
        self._modules: dict[int, _Module] = {id(ctx): self.own}
        self._function_events: dict[ast.AST, list[Event]] = {}
        self._reaching_elsewhere: dict[str, frozenset[str]] = {}  # module -> its functions that reach a backward
        self._loop_events: dict[ast.AST, list[Event]] = {}
        self._active: set[ast.AST] = set()  # functions being flattened (recursion guard)
        self._owned: dict[ast.AST, Owners | None] = {}  # by step call: ML201 asks for each clear
        self._trains: dict[tuple[ast.AST, bool], bool] = {}  # by body: `trains`
        self.loops: list[Iteration] = []
        self.may_train = self._may_train()
        for loop in self._iterating:
            iteration = self._training_iteration(loop) if loop in self.may_train else None
            if iteration is not None:
                self.loops.append(iteration)
        self.loops.sort(key=lambda it: (it.loop.lineno, it.loop.col_offset))
        self._training_loops = {it.loop for it in self.loops} | {
            loop for loop in self._iterating if loop in self.may_train and _updates_manually(self.events_of_loop(loop))
        }  # fmt: skip

    # Queries.
    def events_of_loop(self, loop: ast.AST) -> list[Event]:
        """The events of one iteration of a loop of the file; the branches of the function around it that
        its parameters decide are taken as every call site of the project decides them alike
        (`engine.run_epoch(loader, step_per_batch=False)`: `if step_per_batch:` never runs)."""
        if loop not in self._loop_events:
            events = self._iteration_events(self.own, loop, 0)
            function = self.ctx.scopes.enclosing_function(loop)
            if function is not None and decided_by_parameters(events, function):
                events = folded(events, site_constants(self.ctx, function), self.ctx.index.within(function, ast.If))
            self._loop_events[loop] = one_key_per_object(_rebound_keys(self.ctx, function, events))
        return self._loop_events[loop]

    def trains(self, body: ast.AST, ctx=None, nested: bool = True) -> bool:
        """Does `body` (a loop or comprehension, a function, a statement, an expression, the module; of
        `ctx`, another module of the project read from this file, or of this file) backpropagate: a backward
        pass among the events of its own code or of the project functions it calls (`nested`: or of the
        `for`/`while` loops it holds)? The one answer to "does this train"; for this file the lexical marks
        (`may_train`) gate it; memoized."""
        m = self.own if ctx is None or ctx is self.ctx else self._module(ctx)
        if (body, nested) not in self._trains:
            gated = m is self.own and body not in self.may_train
            backwards = [e for e in self._events_of(m, body) if e.kind is EventKind.BACKWARD] if not gated else []
            if not nested:
                inner = set(m.ctx.index.within(body, *LOOP_NODES)) - {body}
                backwards = [e for e in backwards if not any(g.node in inner for g in e.loops)]
            self._trains[(body, nested)] = bool(backwards)
        return self._trains[(body, nested)]

    def _events_of(self, m: _Module, body: ast.AST) -> list[Event]:
        if isinstance(body, ITERATING_NODES):
            return self.events_of_loop(body) if m is self.own else self._iteration_events(m, body, 0)
        if isinstance(body, FUNCTION_NODES):
            return self._function(m, body, 0)
        if isinstance(body, ast.expr):
            return self._expression_events(m, body.body if isinstance(body, ast.Lambda) else body, (), 0)
        statements = [body] if isinstance(body, ast.stmt) else [s for block in statement_blocks(body) for s in block]
        return self._events(m, statements, (), 0)

    def events_of_statements(self, statements: list[ast.stmt]) -> list[Event]:
        if not any(statement in self.may_train for statement in statements):
            return []
        return self._events(self.own, statements, (), 0)

    def events_after(self, statement: ast.stmt) -> list[Event]:
        """The events of what runs after `statement` up to the end of the innermost loop iteration or
        function around it (the blocks that hold it, each from the statement after it), whether or not
        the file knows that what it calls may train (a module read for another's sake does not)."""
        node, following = statement, []
        while not isinstance(node, (*SCOPE_NODES, *LOOP_NODES, ast.Module)):
            parent = self.ctx.scopes.parent(node)
            block = next((b for b in statement_blocks(parent) if node in b), [])
            following += block[block.index(node) + 1 :] if node in block else []
            node = parent
        return self._events(self.own, [statement, *following], (), 0)[len(self._events(self.own, [statement], (), 0)) :]

    def scheduler_class(self, event: Event, loop: ast.AST) -> SchedulerClass | None:
        """The scheduler class or factory (`torch.optim.lr_scheduler.StepLR`, a transformers warm-up
        schedule) and constructor of a scheduler step of `loop`'s iteration: built where the step is
        written or by a project helper that returns it, passed in by a call site of the function holding
        the loop (the first that tells), or passed to the function holding the step by a call in the loop
        (`train_one_epoch(..., scheduler)`)."""
        if not isinstance(event.node, ast.Call) or not isinstance(event.node.func, ast.Attribute):
            return None
        if event.path is None:
            for made, binding in makers(self.ctx, event.node.func.value):
                (ctx, constructor), names = made[0], _classes(self.ctx, made)
                scheduler = scheduler_made_by(names.pop()) if len(names) == 1 else None
                if scheduler is None:
                    continue
                if binding is not None:
                    own = signature_passage(binding, event.node.func.value)
                    how = f"passed at {binding.place}" if own is None else f"{'its default' if own.default else 'annotated'} at {own.place}"
                    return SchedulerClass(scheduler, constructor, f", {how}" + branch_note(ctx, constructor, self.ctx), call_sites(binding), ctx)
                where = self.ctx.analysis(ProjectView).display_path(ctx.real_path or ctx.path)
                built_at = "" if ctx is self.ctx else f", built at {where}:{constructor.lineno}"
                return SchedulerClass(scheduler, constructor, built_at + branch_note(ctx, constructor, self.ctx), home=ctx)
        constructor = self._argument_constructor(loop, event.key) if event.key is not None else None
        made = scheduler_made_by(self.ctx.qualified_name(constructor.func)) if constructor is not None else None
        if made is None and event.ctx is not None and event.entry is not None:  # what the step's own module is given
            given = self._first_scheduler(makers(event.ctx, event.node.func.value, self.ctx))
            if given is not None:
                return given
        if made is None and event.entry is not None:  # `trainer.scheduler` of a callback given the loop's `self`
            return self._keyed_scheduler(event, loop)
        return SchedulerClass(made, constructor, "") if made else None

    def _keyed_scheduler(self, event: Event, loop: ast.AST) -> SchedulerClass | None:
        """The scheduler class of a step of a called function whose receiver the loop's names spell as the
        event's key (`self.scheduler`) with no node of the loop spelling it: what made that attribute."""
        root, *attributes = (event.key or "").split(".")
        name = next((n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == root), None)
        if name is None or not attributes or not all(a.isidentifier() for a in attributes):
            return None
        return self._first_scheduler(attribute_makers(self.ctx, name, attributes))

    def _first_scheduler(self, found_makers) -> SchedulerClass | None:
        """The first of (makers, binding) pairs whose objects are all of one scheduler class, with where it is built."""
        for found, _ in found_makers:
            names = _classes(self.ctx, found)
            made = scheduler_made_by(names.pop()) if len(names) == 1 else None
            if made is not None:
                ctx, constructor = found[0]
                where = self.ctx.analysis(ProjectView).display_path(ctx.real_path or ctx.path)
                return SchedulerClass(made, constructor, "" if ctx is self.ctx else f", built at {where}:{constructor.lineno}", home=ctx)
        return None

    def scheduler_items(self, event: Event) -> list[SchedulerClass]:
        """Each scheduler the variable of a loop over a list may be, when they are of several classes (`for s
        in self.schedulers: s.step()` over `[warmup, decay]`), as the file tells or the first call site that
        tells; empty when one is not a scheduler or unknown."""
        # A step of another module (`LRCallback.on_batch_end` looping over its schedulers) is read in its
        # own module, its call sites searched from the linted file.
        home = self.ctx if event.path is None else event.ctx if event.entry is not None else None
        if home is None or not isinstance(event.node, ast.Call) or not isinstance(event.node.func, ast.Attribute):
            return []
        receiver = event.node.func.value
        bound = home.analysis(ValueKinds).reaching_definitions(receiver) if isinstance(receiver, ast.Name) else []
        loop = home.scopes.parent(bound[0].node) if len(bound) == 1 else None
        if not isinstance(loop, ast.For) or loop.target is not bound[0].node:
            return []  # an item of a list a loop steps, not a name bound on several branches
        for made, binding in makers(home, receiver, None if home is self.ctx else self.ctx):
            items = [(ctx, call, _classes(self.ctx, [(ctx, call)])) for ctx, call in made]
            schedulers = [(ctx, call, scheduler_made_by(names.pop())) for ctx, call, names in items if len(names) == 1]
            if len(schedulers) < 2 or len(schedulers) != len(made) or any(s is None for _, _, s in schedulers):
                continue
            sites = call_sites(binding) if binding is not None else ()
            display = self.ctx.analysis(ProjectView).display_path
            return [
                SchedulerClass(s, call, "" if ctx is self.ctx else f", built at {display(ctx.real_path or ctx.path)}:{call.lineno}", sites, ctx)
                for ctx, call, s in schedulers
            ]  # fmt: skip
        return []

    def parameter_owners(self, step: Event) -> Owners | None:
        """The modules whose parameters the optimizer of a step (written in the linted file) updates,
        when its constructor says so, by their text in the linted file (with the node that spells it
        there, when one does): `Adam(list(enc.parameters()) + list(head.parameters()))` -> {enc, head};
        param groups and `itertools.chain` too, an optimizer a project helper builds and returns
        (`build_optimizer(model.enc, model.head)`: the helper's parameters named by the call's arguments),
        and an optimizer passed in, as the first call site that tells builds it (its modules named by the
        parameters they are passed as). None when any part is unknown."""
        call = step.node
        if step.path is not None or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return None
        if call not in self._owned:
            self._owned[call] = self._step_owners(call)
        return self._owned[call]

    def cleared_part(self, step: Event, clear: Event) -> str | None:
        """When the optimizer of a step (of the linted file) updates a whole model and a clear clears one of
        its submodules (`model.module.backbone.zero_grad()` with `SGD(net.parameters())` built for the same
        model, through builders and wrappers as the objects layer follows them): the model as the clear
        spells it (`model.module`); None otherwise."""
        call, cleared = step.node, clear.node
        if (step.path or clear.path) and (step.ctx is None or clear.ctx is None or not clear.key):
            return None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return None
        if not (isinstance(cleared, ast.Call) and isinstance(cleared.func, ast.Attribute) and isinstance(cleared.func.value, ast.Attribute)):
            return None
        given = _named_at(step.entry, step.key, self.ctx) if step.path else None  # `opt` passed to `step(net, opt, x)`
        made = built(self.ctx, given) if given is not None else built(step.ctx or self.ctx, _stepped(step.ctx or self.ctx, call))
        if not made or len(made) != 1 or not is_optimizer(made[0][0].qualified_name(made[0][1].func)):
            return None
        ctx, constructor = made[0]
        params = constructor.args[0] if constructor.args else None
        if not (isinstance(params, ast.Call) and isinstance(params.func, ast.Attribute) and params.func.attr == "parameters"):
            return None
        objects = self.ctx.analysis(Objects)

        def made(found) -> set:  # what made the objects, wherever the builder that made them was called
            return {(obj.kind, id(obj.node), obj.name) for obj in found or () if obj is not NONE}

        owners = made(objects._of(ctx).points_to(params.func.value))
        whole, home = cleared.func.value, objects._of(clear.ctx or self.ctx)
        if not owners or owners & made(home.points_to(whole)):
            return None
        part = whole.value
        while isinstance(part, (ast.Attribute, ast.Name)):
            if made(home.points_to(part)) & owners:
                if clear.path is None:
                    return self.ctx.text(part)
                rest = source_text(whole)[len(source_text(part)) :]  # `.encoder` of `self.encoder`, in the loop's names
                return clear.key[: -len(rest)] if clear.key.endswith(rest) and len(clear.key) > len(rest) else None
            part = part.value if isinstance(part, ast.Attribute) else None
        prefixes = clear.key.split(".")[:-1] if clear.path else []  # `net` of `net.backbone`, passed as `model`
        for end in range(len(prefixes), 0, -1):
            given = _named_at(clear.entry, ".".join(prefixes[:end]), self.ctx)
            if given is not None and made(objects.points_to(given)) & owners:
                return self.ctx.text(given)
        return None

    def uncleared_owners(self, step: Event, clears: list[Event]) -> tuple[list[str], str] | None:
        """The modules the optimizer of a step gets the parameters of that none of the module clears
        reaches (each written in the linted file or a file its loop calls), as the objects layer follows both wherever they are
        built (`Adam(list(enc.parameters()) + list(heads.parameters()))` of a builder, `net.zero_grad()` of
        the `enc` it returned): (their texts where the optimizer is built, where that is); None when one is
        unknown, or a clear is not of one of them, whole."""
        call = step.node
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)) or (step.path and step.ctx is None):
            return None
        if any((c.path and c.ctx is None) or not (isinstance(c.node, ast.Call) and isinstance(c.node.func, ast.Attribute)) for c in clears):
            return None
        objects = self.ctx.analysis(Objects)

        def of(event: Event) -> Objects:  # the points-to of the file the event is written in
            return objects._of(event.ctx) if event.path else objects

        found = of(step).points_to(_stepped(step.ctx if step.path else self.ctx, call))
        held = [objects._of(o.ctx).held(o) if o.kind == "field" and o.ctx is not None else {o} for o in found - {NONE}] if found else [None]
        optimizers = {o for h in held for o in h or {None}} if held else {None}
        optimizer = optimizers.pop() if len(optimizers) == 1 else None
        if optimizer is None or optimizer.kind != "made" or not isinstance(optimizer.node, ast.Call) or optimizer.ctx is None:
            return None
        home = objects._of(optimizer.ctx)
        owners = {home.ctx.text(o): _made(home.points_to(o)) for o in home.parameter_owners(optimizer.node) if not _torch_loss(home, o)}
        cleared = [_made(of(c).points_to(c.node.func.value)) for c in clears]
        if len(owners) < 2 or not all(owners.values()) or not cleared or not all(any(c <= m for m in owners.values()) for c in cleared if c):
            return None
        if any(_reads_from(a, b) for a in owners.values() for b in owners.values() if a is not b):
            return None  # `model.head.parameters() if freeze else model.parameters()`: other choices, not parts
        if not all(cleared):
            return None
        where = "" if home.ctx is self.ctx else f"{self.ctx.analysis(ProjectView).display_path(home.ctx.real_path or home.ctx.path)}:"
        return sorted(t for t, m in owners.items() if not any(m & c for c in cleared)), f"{where}{optimizer.node.lineno}"

    def clears_stepped(self, step: Event, clear: Event) -> bool:
        """Does a module's clear (`model.zero_grad()`) zero gradients the optimizer of `step` applies: the
        module, or a part of it or a module it is part of, is what the optimizer gets the parameters of
        (`Adam(model.parameters())`), as the objects layer follows both where they are written?"""
        call, stepping = clear.node, step.node
        if clear.ctx is None or step.ctx is None or not isinstance(stepping, ast.Call) or not isinstance(stepping.func, ast.Attribute):
            return False
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "zero_grad"):
            return False
        stepped = _stepped(step.ctx, stepping)
        if clear.ctx is step.ctx:  # both in one function, under its call sites: `train(model, optimizer)`
            asked = per_call_site(step.ctx, stepping, lambda b: self._overlap(under(clear.ctx, call.func.value, b), under(step.ctx, stepped, b)) or None, self.ctx)
            return next(asked, None) is not None
        objects = self.ctx.analysis(Objects)
        return self._overlap(objects._of(clear.ctx).points_to(call.func.value), objects._of(step.ctx).points_to(stepped))

    def _overlap(self, cleared: frozenset | None, optimizers: frozenset | None) -> bool:
        """Is an object of `cleared` what an optimizer of `optimizers` gets the parameters of, a part of it
        or a module it is part of?"""
        objects = self.ctx.analysis(Objects)
        if not cleared or NONE in cleared or not optimizers:
            return False
        # A mixin's `self` is an instance of a class mixing it in; its `self.optim` what that class stores.
        cleared = {Obj("self", c, ctx=home) for o in cleared if o.kind == "self" for home, c in self_classes(o.ctx, o.node, objects.view)} | set(cleared)
        held = [objects._of(o.ctx).held(o) if o.kind == "field" and o.ctx is not None else {o} for o in optimizers]
        trained = {obj for found in held for optimizer in found or () for obj in objects.trained_objects(optimizer)}
        return any(_within(a, b) or _within(b, a) for a in cleared for b in trained)

    def _step_owners(self, call: ast.Call) -> Owners | None:
        receiver = _stepped(self.ctx, call)
        for modules, binding in per_call_site(self.ctx, receiver, lambda binding: self._built_owners(receiver, binding)):
            if binding is None:
                return Owners(modules, "")
            renamed = _as_parameters(modules, binding)
            return Owners(renamed, f" (as passed at {binding.place})", call_sites(binding)) if renamed is not None else None
        return None

    def _built_owners(self, receiver: ast.AST, binding: Binding | None) -> dict[str, ast.AST | None] | None:
        """The owners of the optimizer `receiver` holds, in the terms of the module that builds it (the
        linted file, or under `binding` the call site's)."""
        found = self.values.construction(receiver, binding=binding)
        if found is None and binding is None and isinstance(receiver, ast.Subscript):
            found = item_construction(self.ctx, receiver)  # `self.opts["G"]` of a dict of optimizers
        if found is None or (binding is not None and all(c is not found[0] for c, _, _ in binding.arguments.values())):
            return None
        m, constructor = self._module(found[0]), found[1]
        if is_optimizer(m.ctx.qualified_name(constructor.func)):
            return self._optimizer_owners(m, constructor, None)
        helper = optimizer_helper(self.project, m.ctx, constructor) if self.project else None
        if helper is None or len(helper[2]) != 1:
            return None
        ctx, function, (built,) = helper
        return self._optimizer_owners(self._module(ctx), built, bind_arguments(constructor, function, False))

    def _optimizer_owners(self, m: _Module, constructor: ast.Call, arguments: dict[str, ast.AST | None] | None):
        """The owners of an optimizer built by `constructor` in `m`; `arguments`: what a call passes for the
        parameters of the helper around it (None: in `m`'s own terms)."""
        params = constructor.args[0] if constructor.args else next(
            (k.value for k in constructor.keywords if k.arg == "params"), None
        )
        found = self._owners(m, params, 0) if params is not None else None
        if found is None or arguments is None:
            return found
        owners: dict[str, ast.AST | None] = {}
        for text, node in found.items():
            root = _root_name(node)
            argument = arguments.get(root) if root is not None else None
            if argument is None:
                return None  # a module of the helper itself, or a parameter the call leaves to `*args`
            owners[source_text(argument) + text[len(root) :]] = argument if isinstance(node, ast.Name) else None
        return owners

    def _owners(self, m: _Module, node: ast.AST, depth: int) -> dict[str, ast.AST] | None:
        if depth > MAX_OWNER_DEPTH:
            return None
        parts: list[ast.AST]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PARAMETER_LISTS:
            if _torch_loss(self.ctx.analysis(Objects)._of(m.ctx), node.func.value):
                return {}  # `criterion.parameters()` of `nn.CrossEntropyLoss()`: nothing to update or clear
            owner = reference_key(node.func.value)
            return {owner: node.func.value} if owner and not node.args and not node.keywords else None
        if isinstance(node, ast.Call) and (m.ctx.qualified_name(node.func) or reference_key(node.func)) in OWNER_PRESERVING:
            parts = [a for a in node.args if not isinstance(a, ast.Lambda)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "values" and not node.args:
            parts = [node.func.value]  # `trainable.values()` of a dict of named parameters
        elif isinstance(node, COMPREHENSION_NODES) and len(node.generators) == 1:
            parts = [node.generators[0].iter]  # `[p for p in model.parameters() if p.requires_grad]`
        elif isinstance(node, ast.Starred):
            parts = [node.value]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            parts = [node.left, node.right]
        elif isinstance(node, (ast.List, ast.Tuple)):
            parts = [_group_params(e) for e in node.elts]
        elif isinstance(node, ast.Name):
            values = m.values.assigned_values(node)
            parts = values if values and len(values) == 1 else [None]
        else:
            return None
        owners: dict[str, ast.AST] = {}
        for part in parts:
            found = self._owners(m, part, depth + 1) if part is not None else None
            if found is None:
                return None
            owners.update(found)
        return owners or None

    def fresh_parameters(self, iteration: Iteration, optimizer: str) -> bool:
        """Does every step of `optimizer` update only the parameters of modules built anew in each
        iteration (`net = Net(**case)` in the loop's body, on every path, the optimizer built over it
        there too)? Their gradients start empty at each iteration: nothing can accumulate."""
        steps = iteration.steps(optimizer)
        return bool(steps) and all(self._fresh_owners(iteration.loop, step) for step in steps)

    def _fresh_owners(self, loop: ast.AST, step: Event) -> bool:
        owners = self.parameter_owners(step)
        if owners is None or owners.passed or not isinstance(loop, LOOP_NODES):
            return False
        return all(isinstance(node, ast.Name) and self._built_in(loop, node) for node in owners.modules.values())

    def _built_in(self, loop: ast.AST, name: ast.Name) -> bool:
        """Is `name` bound by a module constructor in `loop`'s body, on every path of its iteration, and
        by nothing else, not wrapping a module built before (`DataParallel(model)`; the layers of
        `nn.Sequential(nn.Linear(4, 8), ...)` are built there)?"""
        definitions = self.values.reaching_definitions(name)
        return bool(definitions) and all(
            isinstance(d.value, ast.Call) and is_module_constructor(self.ctx, d.value)
            and not any(_holds_module(self.ctx, a) for a in (*d.value.args, *(k.value for k in d.value.keywords)))
            and self.ctx.scopes.parent(self.ctx.scopes.statement(d.node)) is loop
            for d in definitions
        )  # fmt: skip

    def _argument_constructor(self, loop: ast.AST, key: str) -> ast.Call | None:
        """The constructor of the object a call in `loop` passes as `key` (an event's key is named as
        the arguments of the loop's calls name it)."""
        for node in ast.walk(loop):
            if isinstance(node, ast.Call):
                for argument in (*node.args, *(k.value for k in node.keywords)):
                    if reference_key(argument) == key:
                        made = built(self.ctx, argument)
                        return made[0][1] if made and len(made) == 1 and made[0][0] is self.ctx else None
        return None

    def scheduler_steps(self) -> Iterator[tuple[ast.AST, list[Event], Event]]:
        """(loop, its iteration's events, a scheduler step directly in that iteration) for every loop
        that trains or holds a training loop."""
        for loop in self._iterating:
            if loop not in self.may_train:
                continue
            events = self.events_of_loop(loop)
            kinds = {e.kind for e in events}
            if EventKind.BACKWARD in kinds and EventKind.STEP in kinds:
                for event in events:
                    if event.kind is EventKind.SCHEDULER and not event.loops:
                        yield loop, events, event

    @cached_property
    def _iterating(self) -> list[ast.AST]:
        """The loops, comprehensions and `map` calls of the file, in source order."""
        maps = [c for c in self.ctx.index.by_type.get(ast.Call, ()) if _mapped(c) is not None]
        return sorted([*self.ctx.index.of_type(*ITERATING_NODES), *maps], key=lambda n: (n.lineno, n.col_offset))

    def is_training_loop(self, loop: ast.AST) -> bool:
        return loop in self._training_loops

    def runs_training_step(self, function: ast.AST) -> bool:
        """Does a training step run `function` of the file: a training loop's iteration backpropagates or
        steps in it (`do_batch(...)` called from the loop), it is a step itself (a backward pass, then an
        optimizer step, outside any loop of its own: `train_step(batch)` handed to `map` by another
        module), or it is a `training_step` method (Lightning's, or a trainer's that calls it) or a method
        that one calls on `self`?"""
        if function in self._stepping_functions or self.is_a_step(function):
            return True
        cls = self.ctx.scopes.parent(function)
        step = own_method(cls, "training_step") if isinstance(cls, ast.ClassDef) else None
        if step is None or step is function:
            return step is not None
        return any(isinstance(n, ast.Call) and is_self_attribute(n.func) and n.func.attr == function.name for n in ast.walk(step))

    def is_a_step(self, function: ast.AST) -> bool:
        """Does `function`'s own body (not a loop of it) backpropagate and then step an optimizer?"""
        events = self.events_of_statements(function.body)
        if _updates_manually(events):
            return True
        events = [e for e in events if not e.loops]
        backwards = [i for i, e in enumerate(events) if e.kind is EventKind.BACKWARD]
        return bool(backwards) and any(e.kind is EventKind.STEP for e in events[backwards[0] :])

    @cached_property
    def _stepping_functions(self) -> set[ast.AST]:
        """The functions of the file a training loop's backward or step events are in."""
        kinds = (EventKind.BACKWARD, EventKind.STEP)
        return {
            self.ctx.scopes.enclosing_function(e.node)
            for iteration in self.loops for e in iteration.events if e.path is None and e.kind in kinds
        }  # fmt: skip

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
            # This loop is the innermost one holding both: no nested loop holds the step and a backward
            # (sibling loops, two phases of an epoch each with its own backward, are their own iterations).
            if not any(set(step.loops) & set(b.loops) for b in backwards):
                optimizers.append(step.key)
        # Not a bound method: an iteration the analysis keeps would keep the analysis, and the file's tree.
        return Iteration(loop, events, optimizers, partial(is_library, self.project)) if optimizers else None

    def _may_train(self) -> set[ast.AST]:
        """The nodes (loops, `try` statements, ...) that hold a backward call or a call of a function that
        may reach one (of the file, or of a module of the project that calls `.backward(`): a cheap
        lexical over-approximation, so that the events are only built where training may happen."""
        calls = self.ctx.index.by_type.get(ast.Call, ()) if self._backward_modules else ()
        elsewhere = [c for c in calls if self._reaches_backward_elsewhere(c)]
        marks = self.ctx.analysis(BackwardReach).marks_with(elsewhere)
        found: set[ast.AST] = set()
        for mark in marks:
            for ancestor in (mark, *self.ctx.scopes.ancestors(mark)):  # the mark too: `map(step, loader)`
                if ancestor in found:
                    break
                found.add(ancestor)
        return found

    @cached_property
    def _backward_imports(self) -> dict[str, str]:
        """The names the file imports from modules of the project that call `.backward(`, or reach one
        through a method of another (`_reached_through`) -> the module."""
        through = self._reached_through
        return {name: module for name, module in self._project_imports.items() if _calls_backward(self.project.index, module) or module in through}

    @cached_property
    def _project_imports(self) -> dict[str, str]:
        """The names the file imports from other modules of the project -> the module (none when no module
        of the project calls `.backward(`: then no import is followed)."""
        if not self._project_calls_backward:
            return {}
        index, found = self.project.index, {}
        for name, qualified in self.ctx.analysis(Names).module_imports().items():
            module = qualified if index.locate(qualified) else qualified.rpartition(".")[0]
            defined = self.project.find(qualified) if module and not index.locate(qualified) else None
            module = defined[0].name if defined is not None else module  # `from models import Net` of `models/net.py`
            if module and module != self.project.own_name and index.locate(module):
                found[name] = module
        return found

    @cached_property
    def _reached_through(self) -> dict[str, frozenset[str]]:
        """The modules the file imports from that call no `.backward(` themselves, with their functions that
        call, on any object, a method reaching one in a module that does (`runner.train()` whose loop calls
        `self.learner.update(batch)`, the learner handed to the runner): one step, by the methods' names (a
        cheap guess: the events decide)."""
        index = self.project.index if self._project_imports else None
        names = frozenset().union(*(self._reaching(m) for m in self._calling_modules))
        found: dict[str, frozenset[str]] = {}
        for module in set(self._project_imports.values()) if names else ():
            home = index.context(module) if not _calls_backward(index, module) else None
            reached = home.analysis(BackwardReach).reaching_through(names) if home is not None else frozenset()
            if reached:
                found[module] = reached
        return found

    @cached_property
    def _backward_modules(self) -> set[str]:
        """The modules whose methods a call on an object may run that reach a backward pass: those that call
        `.backward(` (`_calling_modules`), and those that call a method of one (`_reached_through`)."""
        return self._calling_modules | set(self._reached_through)

    @cached_property
    def _calling_modules(self) -> set[str]:
        """The modules whose methods a call on an object may run that call `.backward(`: those the file
        imports from, and those defining a project base of a class it imports (a mixin's step,
        `model.contrastive_step(a, b)`) or that the module of a function it imports imports (a builder's)."""
        found = {m for m in self._project_imports.values() if _calls_backward(self.project.index, m)}
        imported = list(self.ctx.analysis(Names).module_imports().values()) if self._project_calls_backward else []
        for qualified in list(imported):  # a builder's module: the classes it may return (`build_model(opt)`)
            defined = self.project.find(qualified) if self.project.class_summary(qualified) is None else None
            home = self.project.index.context(defined[0].name) if defined and defined[1] in defined[0].functions else None
            imported += list(home.analysis(Names).module_imports().values()) if home is not None else []
        for qualified in imported:
            if (summary := self.project.class_summary(qualified)) is not None:  # its own module and its bases'
                bases = [summary[0].name, *self.project.base_modules(qualified)]
                found |= {m for m in bases if m != self.project.own_name and _calls_backward(self.project.index, m)}
        if self._project_calls_backward:  # a template method's `self.train_step(batch)`: a subclass's override
            own = [f"{self.project.own_name}.{cls.name}" for cls in module_statements(self.ctx.tree) if isinstance(cls, ast.ClassDef)]
            derived = {s.rpartition(".")[0] for qualified in own for s in self.project.subclasses(qualified)}
            found |= {m for m in derived if m != self.project.own_name and _calls_backward(self.project.index, m)}
        return found

    @cached_property
    def _project_calls_backward(self) -> bool:
        """Does any module of the project call `.backward(`? Most libraries' do not; then no import is
        followed to the module defining it (which parses that module)."""
        index = self.project.index if self.project is not None else None
        if index is None:
            return False
        callers = index.modules_calling("backward")
        return not index.listed_whole() or any(_calls_backward(index, module) for module in callers)

    def _reaches_backward_elsewhere(self, call: ast.Call) -> bool:
        """Does the call run a function of another module that lexically reaches a backward call there?
        (the function itself, not a re-export: a cheap test, the events decide)"""
        func = _called(call).func
        if _root_name(func) not in self._backward_imports:
            # A method of an object of a class such a module defines (`solver.train_step(...)`)?
            return isinstance(func, ast.Attribute) and any(func.attr in self._reaching(m) for m in self._backward_modules)
        qualified = self.ctx.qualified_name(func)
        module, _, member = (qualified or "").rpartition(".")
        defined = self.project.find(qualified) if qualified else None  # through a package's re-export
        return member in self._reaching(defined[0].name if defined is not None else module)

    def _reaching(self, module: str) -> frozenset[str]:
        """The functions and methods of a module of the project that lexically reach a backward call."""
        if module not in self._reaching_elsewhere:
            index = self.project.index  # type: ignore[union-attr]
            if module and _calls_backward(index, module):
                reaching = index.fact(module, BackwardReach)
            else:  # (`_reached_through` reads only modules that call one)
                reaching = self._reached_through.get(module) if module in self._project_imports.values() else None
            self._reaching_elsewhere[module] = reaching or frozenset()
        return self._reaching_elsewhere[module]

    # Flattening.
    def _events(self, m: _Module, statements: list[ast.stmt], guards: tuple[Guard, ...], depth: int) -> list[Event]:
        events: list[Event] = []
        for statement in statements:
            events += self._statement_events(m, statement, guards, depth)
            if isinstance(statement, EXITS):
                break  # the rest of the block does not run
            if isinstance(statement, ast.If):
                # `if cond: continue`: what follows runs only when the arm that goes on was taken.
                exits = [bool(arm) and isinstance(arm[-1], EXITS) for arm in (statement.body, statement.orelse)]
                if exits[0] != exits[1]:
                    guards = guards + (Guard("if", source_text(statement.test), exits[0] is False, statement),)
        return events

    def _statement_events(self, m: _Module, node: ast.stmt, guards: tuple[Guard, ...], depth: int) -> list[Event]:
        if isinstance(node, SCOPE_NODES):
            return []
        if isinstance(node, ast.If):
            test = self._expression_events(m, node.test, guards, depth)
            # `if k % 1 == 0:` always runs its body, `if args.sched_per_batch:` as the option's default says: no guard
            held = fold(node.test, {})
            held = decided(m.ctx, node, self.ctx) if held is None and _may_give_events(node.body + node.orelse) else held
            if held is not None:
                return test + self._events(m, node.body if held else node.orelse, guards, depth)
            text = source_text(node.test)
            return (
                test
                + self._events(m, node.body, guards + (Guard("if", text, True, node),), depth)
                + self._events(m, node.orelse, guards + (Guard("if", text, False, node),), depth)
            )
        if isinstance(node, LOOP_NODES):
            head = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.test
            return self._expression_events(m, head, guards, depth) + self._nested_loop_events(m, node, guards, depth)
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            events = self._events(m, node.body, guards, depth) + self._events(m, node.orelse, guards, depth)
            for i, handler in enumerate(node.handlers):
                events += self._events(m, handler.body, guards + (Guard("handler", str(id(node)), i, handler),), depth)
            return events + self._events(m, node.finalbody, guards, depth)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            events = []
            for item in node.items:
                events += self._expression_events(m, item.context_expr, guards, depth, entered=item.context_expr)
            return events + self._events(m, node.body, guards, depth)
        if isinstance(node, ast.Match):
            events = self._expression_events(m, node.subject, guards, depth)
            for i, case in enumerate(node.cases):
                events += self._events(m, case.body, guards + (Guard("case", str(id(node)), i, case),), depth)
            return events
        events = self._expression_events(m, node, guards, depth)
        clear = self._statement_clear(m, node)
        if clear is not None:
            events.append(m.event(EventKind.CLEAR, node, clear, guards))
        updated = _updated_by_gradient(m.ctx, node.target, node.value) if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Sub, ast.Add)) else None
        if updated is not None:  # `p -= lr * p.grad`, `w.data += -lr * w.grad`
            events.append(m.event(EventKind.UPDATE, node, updated, guards))
        return events

    def _nested_loop_events(self, m: _Module, loop: ast.AST, guards: tuple[Guard, ...], depth: int) -> list[Event]:
        """The events of a loop's (or comprehension's) iteration, under the loop's guard; a loop that hands
        the call on to each item's hook (`for cb in self.callbacks: cb.on_batch_end(...)`) runs each hook
        once, in turn: no repetition and no condition, so its events need no guard of their own."""
        inner = self.events_of_loop(loop) if depth == 0 and m is self.own else self._iteration_events(m, loop, depth)
        items = _written_items(m.values, loop)
        if items is not None and _item_events(inner, loop):  # `for opt in (opt_g, opt_d): opt.zero_grad()`
            return [e.with_prefix(guards, _item_renamer(loop, item)) for item in items for e in inner]
        dispatch = self._dispatches(loop) if m is self.own else self._steps_all_items(m, loop)
        loop_guard = () if dispatch else (Guard("loop", str(id(loop)), None, loop),)
        return [e.with_prefix(guards + loop_guard, same) for e in inner]

    def _iteration_events(self, m: _Module, loop: ast.AST, depth: int) -> list[Event]:
        """One iteration of a loop (its body) or of a comprehension (its filters, then its element)."""
        if isinstance(loop, LOOP_NODES):
            return self._events(m, loop.body, (), depth)
        mapped = _mapped(loop) if isinstance(loop, ast.Call) else None
        if isinstance(mapped, ast.Lambda):
            return self._expression_events(m, mapped.body, (), depth)
        if mapped is not None:
            return self._call_events(m, mapped, (), depth, at=loop)
        parts = [*(c for g in loop.generators for c in g.ifs), *_elements(loop)]
        return [e for part in parts for e in self._expression_events(m, part, (), depth)]

    def _expression_events(
        self, m: _Module, node: ast.AST, guards: tuple[Guard, ...], depth: int, entered: ast.AST | None = None
    ) -> list[Event]:
        """The events of the calls in an expression (or simple statement), innermost first; a
        comprehension's iterable, then its iterations as a nested loop's. `entered`: the call a `with`
        enters (a context manager, not an action on its object)."""
        events: list[Event] = []
        calls = list(_calls_in(node))
        mapped = {id(c.args[0]) for c in calls if isinstance(c, ast.Call) and _mapped(c) is not None}
        for call in calls:
            if id(call) in mapped:
                continue  # `partial(step, model=m)` given to `map`: called in the map's iteration
            if isinstance(call, COMPREHENSION_NODES):
                events += self._expression_events(m, call.generators[0].iter, guards, depth)
                events += self._nested_loop_events(m, call, guards, depth)
            elif _mapped(call) is not None:
                events += self._nested_loop_events(m, call, guards, depth)
            else:
                events += self._call_events(m, call, guards, depth, entered=call is entered)
        return events

    def _call_events(
        self, m: _Module, call: ast.Call, guards: tuple[Guard, ...], depth: int, at: ast.AST | None = None, entered: bool = False
    ) -> list[Event]:
        """`at`: the `map` call that makes `call` (the function it maps, called with its elements); `entered`:
        `call` makes the context manager a `with` enters, which sets up a scope (autocast, a parallel or
        sharding context) and does not act on its own object's optimizer (only its arguments count)."""
        event = self._classify(m, call, guards)
        if event is not None:
            return [event]
        if isinstance(call.func, ast.Attribute) and call.func.attr in GRADIENT_READERS:
            return []
        callee = m.resolver.resolve(call, at, reexported=True) or self._method_callee(m, call)
        alternatives = self._alternatives(m, call) if callee is None or is_self_attribute(call.func) else []
        if alternatives:  # one class's method or another's: each under an arm of its own, as a `match`'s cases
            return [
                e for i, alternative in enumerate(alternatives)
                for e in self._callee_events(m, call, alternative, guards + (Guard("case", str(id(call)), i, call),), depth, at)
            ]  # fmt: skip
        if callee is None and m is self.own:
            keyed = self._keyed_hooks(call)
            if keyed:  # `for fn in self.events[event]: fn(self)`: the items the call's key holds run
                return [
                    e for case, hooks in keyed for hook in hooks
                    for e in self._callee_events(m, call, hook, guards + case, depth, at)
                ]  # fmt: skip
            hooks = self.item_methods(call)
            if hooks:  # `for cb in callbacks: cb.on_after_backward(...)`: each item's method runs in turn
                return [e for hook in hooks for e in self._callee_events(m, call, hook, guards, depth, at)]
            named = self._named_hooks(call)
            if named:  # `getattr(cb, name)(self)`: the hook each name the function is called with selects
                return [
                    e for case, (name, hooks) in named for hook in hooks
                    for e in self._callee_events(m, call, hook, guards + case, depth, at)
                ]  # fmt: skip
        if callee is None:
            return self._opaque(m, call, guards, entered)
        return self._callee_events(m, call, callee, guards, depth, at)

    def _opaque(self, m: _Module, call: ast.Call, guards: tuple[Guard, ...], entered: bool = False) -> list[Event]:
        """A call the model does not follow, as what it receives: its arguments, and the object of a method
        that may act on it (not of a context manager a `with` enters)."""
        arguments = [reference_key(a) for a in (*call.args, *(k.value for k in call.keywords))]
        acting = not entered and call.func.attr not in GRADIENT_NEUTRAL and not LOSS_NAME.match(call.func.attr) if isinstance(call.func, ast.Attribute) else False
        stored = acting and (m.resolver.is_attribute_call(call) or self.ctx.analysis(Objects)._of(m.ctx).calls_stored(call))
        if acting and not stored:
            arguments.append(reference_key(call.func.value))  # a method may act on its object
        arguments = frozenset(a for a in arguments if a)
        if not arguments:
            return []
        return [m.event(EventKind.OPAQUE, call, None, guards, arguments=arguments, callee=m.ctx.qualified_name(call.func))]

    def _callee_events(
        self, m: _Module, call: ast.Call, callee: Callee, guards: tuple[Guard, ...], depth: int, at: ast.AST | None
    ) -> list[Event]:
        """The events of the function `call` runs, seen from the call."""
        function = callee.function
        if depth >= MAX_CALL_DEPTH or function in self._active:  # not followed again: what it receives
            return self._opaque(m, call, guards) if isinstance(call.func, ast.Name | ast.Attribute) else [m.event(EventKind.OPAQUE, call, None, guards, arguments=frozenset({"self"}))]
        rename = _renamer(function, call)
        crossing = m is self.own and callee.ctx is not self.ctx  # from the linted file into another
        entry, via = (at or call, function.name) if crossing else (None, None)
        events = self._function(self._module(callee.ctx), function, depth + 1)
        events = folded(events, call_constants(call, function), callee.ctx.index.within(function, ast.If))
        events = [e.with_prefix(guards, rename, entry, via, call) for e in events]
        return _spread_varargs(events, function, call) if function.args.vararg is not None and isinstance(call, ast.Call) else events

    def _dispatches(self, loop: ast.AST) -> bool:
        """Is the loop's body only calls of its items' hooks (`cb.on_batch_end(self, loss)`, `getattr(cb, name)(self)`) that the objects
        layer resolves (`item_methods`), or steps of its items when every one is a torch scheduler or
        optimizer (`for sched in self.schedulers: sched.step()`)?"""
        body = loop.body if isinstance(loop, ast.For) and not loop.orelse else []
        calls = [s.value for s in body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
        return bool(calls) and len(calls) == len(body) and all(self.item_methods(c) or self._named_hooks(c) or self._keyed_hooks(c) or self._steps_items(loop, c) for c in calls)

    def _steps_all_items(self, m: _Module, loop: ast.AST) -> bool:
        """A loop of another module the linted file's loop calls into whose body only steps its items, all
        schedulers or optimizers (`for sched in self.schedulers: sched.step()` in a callback's
        `on_batch_end`): each runs once per call, as in the linted file (`_dispatches`)."""
        body = loop.body if isinstance(loop, ast.For) and not loop.orelse else []
        calls = [s.value for s in body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
        return bool(calls) and len(calls) == len(body) and all(self._steps_items(loop, c, m.ctx) for c in calls)

    def _steps_items(self, loop: ast.For, call: ast.Call, home=None) -> bool:
        """`item.step()` of the loop's variable, every object it may be made by a scheduler or optimizer
        class, under every call site that tells (`home`: the loop's module, when not the linted file)."""
        func = call.func
        item = func.value if isinstance(func, ast.Attribute) and func.attr in ("step", "zero_grad") else None
        if not isinstance(item, ast.Name) or not isinstance(loop.target, ast.Name) or loop.target.id != item.id:
            return False
        made = list(makers(home, item, self.ctx)) if home is not None and home is not self.ctx else list(makers(self.ctx, item))
        names = {name for found, _ in made for name in _classes(self.ctx, found)}
        return bool(made) and all(scheduler_made_by(name) is not None or is_optimizer(name) for name in names)

    def _named_hooks(self, call: ast.Call) -> list[tuple[tuple[Guard, ...], tuple[str, list[Callee]]]]:
        """For `getattr(item, name)(...)` of a loop variable `item` over objects of project classes: per
        string `name` may be (a constant, or a parameter of the function the call sites fill with constants),
        the methods of that name each item runs, under a guard of their own when `name` is a parameter
        (a call passing the constant keeps that name's only: `folded`); empty when one is unknown."""
        func = call.func
        if got_attribute(func) is None:
            return []
        name = func.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            hooks = self.item_methods(call, hook=name.value)
            return [((), (name.value, hooks))] if hooks else []
        if not (isinstance(name, ast.Name) and _parameter(self.own, name)):
            return []
        found = []
        for value in sorted(possible_constants(self.ctx, name) or (), key=str)[:MAX_HOOK_NAMES]:
            hooks = self.item_methods(call, hook=value) if isinstance(value, str) and value.isidentifier() else []
            if not hooks:
                return []
            found.append(((Guard("case", f"{GIVEN}{name.id}", value, func),), (value, hooks)))
        return found

    def _keyed_hooks(self, call: ast.Call) -> list[tuple[tuple[Guard, ...], list[Callee]]]:
        """For `item.hook(...)` (or `item(...)`) of a loop variable over a container read at a parameter of
        the function (`for fn in self.events[event]: fn(self)`) that the call sites fill with constants: per
        constant, the methods of the items at that key (each write through a parameter key at the key of its
        own call site: `Objects._per_site`), under a guard of their own (a call passing the constant keeps
        that key's only: `folded`); empty when one is unknown."""
        func = call.func
        item, hook = (func.value, func.attr) if isinstance(func, ast.Attribute) else (func, "__call__")
        loop = self._item_loop(call, item)
        read = loop.iter if loop is not None else None
        if not (isinstance(read, ast.Subscript) and isinstance(read.slice, ast.Name) and _parameter(self.own, read.slice)):
            return []
        objects = self.ctx.analysis(Objects)
        found = []
        for key in sorted(possible_constants(self.ctx, read.slice) or (), key=str)[:MAX_HOOK_NAMES]:
            items = objects.items_at(read.value, key)
            classes = {objects.class_of(obj) for obj in items - {NONE}} if items is not None else {None}
            methods = [inherited_method(ctx, cls, hook, objects.view) for ctx, cls in classes] if None not in classes else [None]
            if None in methods:
                return []
            found.append(((Guard("case", f"{GIVEN}{read.slice.id}", key, read),), [Callee(m, ctx) for ctx, m in sorted(methods, key=lambda cm: cm[1].lineno)]))
        return found

    def _item_loop(self, call: ast.Call, item: ast.AST) -> ast.For | None:
        """The `for` whose variable `item` (a name) is, innermost around `call` in its scope."""
        loop = next((a for a in self.ctx.scopes.ancestors(call) if isinstance(a, (ast.For, *SCOPE_NODES))), None)
        if not isinstance(item, ast.Name) or not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name) or loop.target.id != item.id:
            return None
        return loop

    def item_methods(self, call: ast.Call, linted=None, hook: str | None = None) -> list[Callee]:
        """The methods `item.hook(...)` (or `item(...)`: `__call__`) runs for a loop variable `item` over a
        container of objects of project classes (`for cb in callbacks:`), as the objects layer tells here
        or under the call sites of the function around it or of its class's `__init__` (`self.callbacks =
        callbacks`, given by `Trainer(model, opt, [LRSchedulerCallback(sched), PrintCallback()])`, or
        appended to `trainer.callbacks`): one method per class, all of them run; empty when one is unknown.
        `linted`: the linted file, when this one is a module read for its project (its call sites are searched from there)."""
        func = call.func
        if hook is not None:  # `getattr(item, "name")(...)`
            item = got_attribute(func)
        else:
            item, hook = (func.value, func.attr) if isinstance(func, ast.Attribute) else (func, "__call__")
        if self._item_loop(call, item) is None:
            return []
        linted_objects = linted.analysis(Objects) if linted is not None else None
        objects = linted_objects._of(self.ctx) if linted_objects is not None else self.ctx.analysis(Objects)

        def methods_under(binding: Binding | None) -> list[Callee] | None:
            found = under(self.ctx, item, binding, linted_objects)
            classes = {objects.class_of(obj) for obj in found - {NONE}} if found else {None}
            if None in classes:
                return None
            methods = [inherited_method(ctx, cls, hook, objects.view) for ctx, cls in classes]
            if not all(method is not None for method in methods):
                return None
            return [Callee(method, ctx) for ctx, method in sorted(methods, key=lambda cm: cm[1].lineno)]

        return next((hooks for hooks, _ in per_call_site(self.ctx, call, methods_under, linted)), [])

    def _method_callee(self, m: _Module, call: ast.Call) -> Callee | None:
        """The method of a project class a call on its instance runs (`engine.run_epoch(...)`, `engine =
        Engine(...)` of another module), as the objects layer tells, for a parameter of the file's
        under the first call site that tells; for a parameter of another module's function the loop runs
        (`runner.backward(loss)` in `fit(runner, ...)`), or an attribute holding what its class was passed
        (`self.learner.update(batch)` of a runner handed a learner), the one class every call site passes."""
        if not isinstance(call.func, ast.Attribute) or m.ctx.qualified_name(call.func.value) is not None:
            return None
        objects = self.ctx.analysis(Objects)
        found = objects._of(m.ctx).method(call)
        if found is None and m is self.own and (_parameter(self.own, call.func.value) or self._passed_in(objects, call.func.value)):  # as the first call site that tells
            classes = (c for c, binding in classes_of(m.ctx, call.func.value) if binding is not None)
            found = next((inherited_method(home, cls, call.func.attr, objects.view) for home, cls in classes), None)
        elif found is None and m is not self.own and (_parameter(m, call.func.value) or self._passed_in(objects._of(m.ctx), call.func.value)):
            classes = {id(c[1]): c for c, binding in classes_of(m.ctx, call.func.value, self.ctx) if binding is not None}
            found = inherited_method(*classes.popitem()[1], call.func.attr, objects.view) if len(classes) == 1 else None
        return Callee(found[1], found[0]) if found is not None else None

    def _alternatives(self, m: _Module, call: ast.Call) -> list[Callee]:
        """The methods a call on an object of several project classes may run (`model.optimize(...)` of a
        builder returning one of four models; `self.compute_loss(...)` overridden by two subclasses), when
        there are at least two and every one is known."""
        if not isinstance(call.func, ast.Attribute) or m.ctx.qualified_name(call.func.value) is not None:
            return []
        found = self.ctx.analysis(Objects)._of(m.ctx).methods(call)
        return [Callee(function, ctx) for ctx, function in found] if len(found) > 1 else []

    def _passed_in(self, objects: Objects, node: ast.AST) -> bool:
        """Is `node` an attribute of `self` that holds only what a method of its class was passed (`self.model`
        of `self.model = model` in `__init__`)?"""
        found = objects.points_to(node) if is_self_attribute(node) else None
        return bool(found) and all(obj.kind == "parameter" for obj in found)

    def _module(self, ctx) -> _Module:
        if id(ctx) not in self._modules:
            path = ctx.real_path or ctx.path  # as findings show it; a module read without a project: its own
            self._modules[id(ctx)] = _Module(ctx, self.project, self.project.display_path(path) if self.project else path)
        return self._modules[id(ctx)]

    def _function(self, m: _Module, function: ast.AST, depth: int) -> list[Event]:
        if function not in self._function_events:
            self._active.add(function)
            try:
                self._function_events[function] = _rebound_keys(m.ctx, function, self._events(m, function.body, (), depth))
            finally:
                self._active.discard(function)
        return self._function_events[function]

    def _classify(self, m: _Module, call: ast.Call, guards: tuple[Guard, ...]) -> Event | None:
        event = self._classified(m, call, guards)
        if event is None or m is not self.own or event.kind is EventKind.BACKWARD or not isinstance(call.func, ast.Attribute):
            return event
        receiver = _stepped(m.ctx, call) if event.kind is EventKind.STEP else call.func.value
        if event.key != source_text(receiver):
            return event
        found = self.ctx.analysis(Objects).points_to(receiver)
        return replace(event, objects=found) if found and all(o.kind == "made" for o in found) else event

    def _classified(self, m: _Module, call: ast.Call, guards: tuple[Guard, ...]) -> Event | None:
        func = m.ctx.analysis(ValueKinds).bound_method(call.func) or call.func  # `clear = opt.zero_grad`
        name = called_name(func)
        if name in UPDATING and isinstance(func, ast.Attribute):  # `p.add_(p.grad, alpha=-lr)`, `p.data.sub_(lr * p.grad)`
            updated = _updated_by_gradient(m.ctx, func.value, call)
            return m.event(EventKind.UPDATE, call, updated, guards) if updated is not None else None
        if name not in CLASSIFIED:
            return None
        if name == "backward" and m.ctx.qualified_name(func) in FUNCTION_BACKWARDS:
            return m.event(EventKind.BACKWARD, call, None, guards)
        if m.ctx.qualified_name(func) == "torch.nn.init.zeros_" and call.args and _is_grad(call.args[0]):
            return m.event(EventKind.CLEAR, call, source_text(_parameter_of(call.args[0])), guards)
        if name in ("zero_grad", "zero_grads") and (isinstance(func, ast.Name) or m.ctx.qualified_name(func.value) is not None):
            # A function clearing what it is given: `pyro.infer.util.zero_grads(params)`, `zero_grad(model)`.
            return m.event(EventKind.CLEAR, call, source_text(call.args[0]) if call.args else None, guards)
        if not isinstance(func, ast.Attribute) or m.ctx.qualified_name(func.value) is not None:
            return None
        receiver = source_text(func.value)
        if func.attr == "backward":
            if call.args and not (
                BACKWARD_OWNERS.search(receiver) or _is_scaled(func.value) or names_optimizer(receiver)
                or _is_gradient(m.ctx.analysis(Objects), call.args[0]) or _engine_subclass(m.ctx, func.value)
                or made_by_runner(m.ctx, func.value)
            ):  # fmt: skip
                return None  # unknown engines' `backward(loss)`: not modelled
            return m.event(EventKind.BACKWARD, call, None, guards)
        if func.attr == "zero_grad":
            return m.event(EventKind.CLEAR, call, receiver, guards)
        if _is_grad(func.value) and (func.attr in ("zero_", "detach_") or (func.attr in ZEROING and _zeros(m, call.args))):
            return m.event(EventKind.CLEAR, call, source_text(_parameter_of(func.value)), guards)
        step = step_of(m.ctx, call, func)
        if step is None or step.kind is StepKind.OTHER:
            return None
        if step.kind is not StepKind.OPTIMIZER:
            return m.event(EventKind.SCHEDULER, call, receiver, guards)
        return m.event(EventKind.STEP, call, source_text(step.stepped), guards, closure=not step.scaled and bool(call.args or call.keywords))

    def _statement_clear(self, m: _Module, node: ast.stmt) -> str | None:
        """`p.grad = None`, `p.grad = torch.zeros_like(p)` and `p.grad *= 0` clear a gradient (the
        parameter's text is its key). So does `optimizer.zero_grad` written without its call, as far as
        ML2xx is concerned: ML301 reports that one."""
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Attribute) and node.value.attr == "zero_grad":
            return source_text(node.value.value)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            target = target.value if isinstance(target, ast.Subscript) and _zeros(m, [node.value]) else target  # `p.grad[:] = 0`
            if _is_grad(target) and (_zeros(m, [node.value]) or (isinstance(node.value, ast.Constant) and node.value.value is None)):
                return source_text(_parameter_of(target))
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Mult) and _is_grad(node.target) and _zeros(m, [node.value]):
            return source_text(_parameter_of(node.target))
        return None


def _holds_module(ctx, argument: ast.AST) -> bool:
    """Is the argument a module built elsewhere (a name or attribute, or a starred one, that holds one)?"""
    if isinstance(argument, ast.Starred):
        argument = argument.value
    return isinstance(argument, (ast.Name, ast.Attribute)) and is_module(ctx, argument)


def _named_at(entry: ast.AST | None, key: str | None, ctx) -> ast.AST | None:
    """The expression of the call of the linted file (`step(net, opt, x)`) an event of another file leads
    from that the loop's names spell `key` (`opt`)."""
    if not isinstance(entry, ast.Call) or not key:
        return None
    return next((a for a in (*entry.args, *(k.value for k in entry.keywords)) if ctx.text(a) == key), None)


def _within(part, whole) -> bool:
    """Is the object `part` the object `whole` or an attribute of it, of an attribute of it...?"""
    while part is not None:
        if part == whole:
            return True
        part = part.base if part.kind == "field" else None
    return False


def _classes(ctx, made: list[tuple[object, ast.Call]] | None) -> set[str | None]:
    """The qualified classes or factories of the calls that made an object, as points-to names what a
    call constructs (`SCHEDULES[name](opt)` with a table of `partial(OneCycleLR, ...)`); {None} when unknown."""
    names: set[str | None] = set()
    for c, k in made or ():
        constructed = made_classes(c, k, ctx)
        names |= constructed if constructed else {None}
    return names or {None}


def _calls_in(node: ast.AST) -> Iterator[ast.Call | ast.expr]:
    """The calls of an expression in evaluation order (arguments before the call), not entering lambdas
    or comprehension-defined functions; a comprehension is yielded whole, not entered."""
    if isinstance(node, FUNCTION_NODES):
        return
    stack: list[tuple[ast.AST, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if expanded:
            yield current  # type: ignore[misc]
            continue
        if isinstance(current, COMPREHENSION_NODES):
            yield current
            continue
        if isinstance(current, ast.Call):
            stack.append((current, True))
        children = [c for c in child_nodes(current) if not isinstance(c, NOT_ENTERED)]
        stack += [(c, False) for c in reversed(children)]


def _mapped(call: ast.Call) -> ast.expr | None:
    """For `map(f, loader)`: a call of `f` with an element (`f(_)`, placed at the `map` call), or for
    `map(lambda b: ..., loader)` the lambda; `functools.partial(f, *args, **kwargs)` becomes
    `f(*args, _, **kwargs)`. None for any other call."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "map" and len(call.args) >= 2 and not call.keywords):
        return None
    function, arguments, keywords = call.args[0], [], []
    if isinstance(function, ast.Lambda):
        return function
    if isinstance(function, ast.Call) and callee_name(function) == "partial" and function.args:
        function, arguments, keywords = function.args[0], function.args[1:], function.keywords
    if not isinstance(function, (ast.Name, ast.Attribute)):
        return None
    elements = [ast.Name(id="_", ctx=ast.Load()) for _ in call.args[1:]]
    return ast.copy_location(ast.Call(func=function, args=[*arguments, *elements], keywords=keywords), call)


def _called(call: ast.Call) -> ast.Call:
    """The call itself, or for `map(f, loader)` the call of `f` it makes."""
    mapped = _mapped(call)
    return mapped if isinstance(mapped, ast.Call) else call


def _group_params(element: ast.AST) -> ast.AST | None:
    """`{"params": enc.parameters(), "lr": 1e-4}` -> `enc.parameters()`; any other element as it is."""
    if not isinstance(element, ast.Dict):
        return element
    return next((v for k, v in zip(element.keys, element.values) if isinstance(k, ast.Constant) and k.value == "params"), None)


def _as_parameters(modules: dict[str, ast.AST | None], binding: Binding) -> dict[str, ast.AST | None] | None:
    """Modules named in a call site's terms (`model.enc`), named by the parameters they are passed as
    (`enc`, or `model.enc` for a `model` parameter); None when one is not passed."""
    passed = {name: source_text(argument) for name, (_, argument, passage) in binding.arguments.items() if not passage.default}
    renamed: dict[str, ast.AST | None] = {}
    for text in modules:
        name = next((n for n, a in passed.items() if text == a or text.startswith(a + ".")), None)
        if name is None:
            return None
        renamed[name + text[len(passed[name]) :]] = None
    return renamed


def _elements(comprehension: ast.AST) -> list[ast.expr]:
    """What a comprehension computes at each iteration: its element, or a dict comprehension's key and value."""
    if isinstance(comprehension, ast.DictComp):
        return [comprehension.key, comprehension.value]
    return [comprehension.elt]


def _rebound_keys(ctx, function: ast.AST | None, events: list[Event]) -> list[Event]:
    """The events of a function (None: the module's own code) on a local name bound in turn to other
    optimizers (`opt = self.optimizers["critic"]`, later `opt = self.optimizers["gen"]`), keyed by what the
    binding that reaches each assigns, so that the two are not taken for one; a name bound once keeps its key."""
    rebound = {e.key for e in events if e.key is not None and len(ctx.scopes.writes(function, e.key)) > 1}
    if not rebound:
        return events
    values, rekeyed = ctx.analysis(ValueKinds), []
    for event in events:
        name = _key_name(event) if event.key in rebound and ctx.scopes.enclosing_function(event.node) is function else None
        definitions = values.reaching_definitions(name) if name is not None else []
        value = definitions[0].value if len(definitions) == 1 else None
        reference = isinstance(value, ast.Name | ast.Attribute | ast.Subscript)  # its objects are the name's, all bindings'
        rekeyed.append(replace(event, key=source_text(value), objects=None) if reference else event)
    return rekeyed


def _key_name(event: Event) -> ast.Name | None:
    """The name an optimizer event of the function's own code acts on (`opt` of `opt.step()`, of
    `scaler.step(opt)`)."""
    call = event.node
    if event.kind not in (EventKind.STEP, EventKind.CLEAR) or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    return next((n for n in (call.func.value, *call.args[:1]) if isinstance(n, ast.Name) and n.id == event.key), None)


def _renamer(callee: ast.AST, call: ast.Call):
    """Rename the callee's parameters to the caller's argument texts (`optimizer` -> `opt`); a parameter
    the call leaves to its default, or to `*args`/`**kwargs`, becomes `<name>`: not the caller's."""
    named = [a.arg for a in parameters(callee, variadic=False)]
    skips_self = passes_self(call, callee)
    bound = bind_arguments(call, callee, skips_self)
    if skips_self:  # `self.optimizer` of `engine.run_epoch(...)`'s method is `engine.optimizer`
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else got_attribute(call.func)
        bound[named[0]] = receiver or call.func  # `hook(...)` of `__call__`

    def rename(key: str) -> str:
        root = re.match(r"[A-Za-z_]\w*", key)
        if root is None or root.group() not in named:
            return key
        argument = bound.get(root.group())
        replacement = source_text(argument) if argument is not None else f"<{root.group()}>"
        return replacement + key[root.end() :]

    return rename


def _written_items(values: ValueKinds, loop: ast.AST) -> list[ast.AST] | None:
    """The references a `for` loop runs over, written out (`(opt_g, opt_d)`, or a name bound once to such
    a tuple or list), at most `MAX_HOOK_NAMES`; None for any other loop."""
    if not isinstance(loop, ast.For) or loop.orelse or not isinstance(loop.target, ast.Name):
        return None
    written = loop.iter
    if isinstance(written, ast.Name):
        definitions = values.reaching_definitions(written)
        written = definitions[0].value if len(definitions) == 1 and isinstance(definitions[0], ast.Assign) else None
    if not isinstance(written, (ast.Tuple, ast.List)) or not 0 < len(written.elts) <= MAX_HOOK_NAMES:
        return None
    return list(written.elts) if all(isinstance(e, (ast.Name, ast.Attribute)) for e in written.elts) else None


def _item_events(events: list[Event], loop: ast.For) -> bool:
    """Are the events of a loop's iteration all clears or steps of its item (`opt.zero_grad()`)?"""
    target = loop.target.id
    return bool(events) and all(
        e.kind in (EventKind.CLEAR, EventKind.STEP, EventKind.SCHEDULER) and e.key is not None and _root_of(e.key) == target for e in events
    )  # fmt: skip


def _item_renamer(loop: ast.For, item: ast.AST):
    """Rename the loop's variable to the text of one of its items."""
    target, text = loop.target.id, source_text(item)
    return lambda key: text + key[len(target) :] if _root_of(key) == target else key


def _spread_varargs(events: list[Event], function: ast.AST, call: ast.Call) -> list[Event]:
    """The events of a function that loops over its `*args` (`def reset(*optimizers): for o in optimizers:
    o.zero_grad()`), seen from a call that writes them out (`reset(opt_g, opt_d)`): the loop's
    events once per argument, renamed to it; as they are when the call's arguments are not written out."""
    vararg = function.args.vararg.arg
    written = len(function.args.posonlyargs) + len(function.args.args) - (1 if passes_self(call, function) else 0)
    extras = call.args[written:]
    if not extras or len(extras) > MAX_HOOK_NAMES or any(isinstance(a, ast.Starred) for a in call.args):
        return events

    def over_vararg(event: Event) -> Guard | None:
        return next((
            g for g in event.loops
            if isinstance(g.node, ast.For) and isinstance(g.node.iter, ast.Name) and g.node.iter.id == vararg
            and isinstance(g.node.target, ast.Name) and not g.node.orelse
        ), None)  # fmt: skip

    spread, position = [], 0
    while position < len(events):
        guard = over_vararg(events[position])
        if guard is None or not _item_events([events[position]], guard.node):
            spread.append(events[position])
            position += 1
            continue
        run = []
        while position < len(events) and over_vararg(events[position]) == guard and _item_events([events[position]], guard.node):
            run.append(events[position])
            position += 1
        for item in extras:
            rename = _item_renamer(guard.node, item)
            spread += [replace(e, key=rename(e.key), guards=tuple(g for g in e.guards if g != guard)) for e in run]
    return spread


def _updates_manually(events: list[Event]) -> bool:
    """Do the events backpropagate outside any loop of their own, then update parameters by their gradients
    (manual SGD: `for p in model.parameters(): p.add_(p.grad, alpha=-lr)`, a loop over the parameters
    that holds no backward)?"""
    backwards = [i for i, e in enumerate(events) if e.kind is EventKind.BACKWARD and not e.loops]
    inner = {g for e in events if e.kind is EventKind.BACKWARD for g in e.loops}
    return bool(backwards) and any(e.kind is EventKind.UPDATE and not inner & set(e.loops) for e in events[backwards[0] :])


def _updated_by_gradient(ctx, target: ast.AST, value: ast.AST) -> str | None:
    """The parameter (its text) an in-place update of `target` (`p`, `p.data`) by `value` changes, when
    `value` reads that parameter's own gradient (`p.grad`, `p.grad.data`): manual SGD. A tensor made from
    data to take a gradient (an attack's or a visualisation's image, a latent) is no parameter."""
    parameter = target.value if isinstance(target, ast.Attribute) and target.attr == "data" else target
    if not isinstance(parameter, (ast.Name, ast.Attribute)):
        return None
    text = source_text(parameter)
    read = next((_parameter_of(n) for n in ast.walk(value) if _is_grad(n) and source_text(_parameter_of(n)) == text), None)
    return text if read is not None and _is_model_parameter(ctx, read) else None


def _is_model_parameter(ctx, tensor: ast.AST) -> bool:
    """Is `tensor` a parameter a model or optimizer holds: an attribute (`self.w`, `layer.weight`), an
    `nn.Parameter(...)`, a fresh leaf of a given size (`w = torch.zeros(d, 1, requires_grad=True)`), or a variable of a loop over parameters (`for p in model.parameters()`,
    `for name, p in net.named_parameters()`, `for p in group["params"]`)?"""
    if isinstance(tensor, ast.Attribute):
        return True
    definitions = ctx.analysis(ValueKinds).reaching_definitions(tensor) if isinstance(tensor, ast.Name) else []
    return bool(definitions) and all(_binds_parameter(ctx, d) for d in definitions)


def _binds_parameter(ctx, definition) -> bool:
    made = definition.value
    if isinstance(made, ast.Call):
        name = canonical_class(ctx.qualified_name(made.func)) or ""
        fresh_leaf = name in LEAF_FACTORIES and requires_grad(made)
        return name == "torch.nn.Parameter" or fresh_leaf
    if made is not None:
        return False
    loop = ctx.scopes.parent(definition.node)
    loop = ctx.scopes.parent(loop) if isinstance(loop, ast.Tuple) else loop
    return isinstance(loop, (ast.For, ast.comprehension)) and "param" in source_text(loop.iter).lower()


def _root_of(key: str) -> str | None:
    root = re.match(r"[A-Za-z_]\w*", key)
    return root.group() if root is not None else None


def _root_name(node: ast.AST) -> str | None:
    """`utils` for `utils.step`, `train_step` for `train_step`."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_grad(node: ast.AST) -> bool:
    """`p.grad` or `p.grad.data`"""
    if isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr == "grad"


def _parameter_of(grad: ast.Attribute) -> ast.AST:
    return grad.value.value if grad.attr == "data" else grad.value


def item_construction(ctx, item: ast.Subscript) -> tuple[object, ast.Call] | None:
    """(context, call) of the one object the objects layer finds at a container's constant key (`self.opts["G"]`
    of `{"G": Adam(...), "D": Adam(...)}`, `self.nets["D"]` of an `nn.ModuleDict`); None when not one call."""
    found = ctx.analysis(Objects).points_to(item)
    made = [o for o in found or () if o.kind == "made" and isinstance(o.node, ast.Call)]
    return (made[0].ctx, made[0].node) if len(made) == 1 and len(found) == 1 and made[0].ctx is ctx else None


def _engine_subclass(ctx, receiver: ast.AST) -> bool:
    """Is `receiver` the `self` of a class deriving from an engine whose `backward(loss)` is a backward pass
    (`class ImageFabric(Fabric)`, an `Accelerator` subclass)?"""
    cls = ctx.scopes.enclosing_class(receiver) if isinstance(receiver, ast.Name) and receiver.id == "self" else None
    return cls is not None and any(BACKWARD_OWNERS.search(ctx.qualified_name(base) or "") for base in cls.bases)


def _torch_loss(objects: Objects, owner: ast.AST) -> bool:
    """Is `owner` a torch loss module (`nn.CrossEntropyLoss()`: no parameters to clear)?"""
    found = objects.points_to(owner) or frozenset()
    names = {o.ctx.qualified_name(o.node.func) if o.kind == "made" and o.ctx is not None and isinstance(o.node, ast.Call) else None for o in found}
    return bool(names) and all(n is not None and n.startswith("torch.nn.") and n.endswith("Loss") and "Adaptive" not in n for n in names)


def _made(found: frozenset | None) -> frozenset:
    """What made the objects (with the attributes read from it: `model.head` of a `Classifier(...)`),
    wherever the builder that made them was called; empty when one is unknown."""
    if not found or NONE in found or any(o.root().kind != "made" for o in found):
        return frozenset()
    return frozenset((id(o.root().node), o.root().name, *o.path()) for o in found)


def _reads_from(whole: frozenset, part: frozenset) -> bool:
    """Is an object of `part` (made, read by attributes: `_made`) one of `whole` or an attribute read from one?"""
    return any(p[: len(w)] == w for w in whole for p in part)


def _stepped(ctx, call: ast.Call) -> ast.AST:
    """The optimizer an optimizer step steps: `opt` of `opt.step()` and of `scaler.step(opt)`."""
    step = step_of(ctx, call)
    return step.stepped if step is not None else call.func.value


def _zeros(m: _Module, arguments: list[ast.expr]) -> bool:
    """Is the one argument a zero (`0`, `0.0`) or a tensor of zeros (`torch.zeros_like(p)`, `g.new_zeros(n)`)?"""
    return len(arguments) == 1 and is_zero(m.values, arguments[0])


def _is_gradient(objects: Objects, value: ast.AST, depth: int = 0) -> bool:
    """Is a `backward` argument the gradient a tensor's backward takes, not the loss an engine's does: a
    number, a tensor a torch factory makes (`one = torch.tensor(1.0)`, `torch.ones_like(loss)`) or a
    negation or product of those (`mone = -one`, `one * -1`), through names and imports?"""
    if depth > MAX_GRADIENT_DEPTH:
        return False
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
    if isinstance(value, ast.UnaryOp):
        return _is_gradient(objects, value.operand, depth + 1)
    if isinstance(value, ast.BinOp):
        return _is_gradient(objects, value.left, depth + 1) and _is_gradient(objects, value.right, depth + 1)
    if isinstance(value, ast.Call):
        name = objects.ctx.qualified_name(value.func) or ""
        return name in GRADIENT_FACTORIES or callee_name(value) in ("new_ones", "new_tensor", "new_full")
    found = objects.points_to(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    return bool(found) and all(
        o.kind == "made" and o.node is not value and _is_gradient(objects._of(o.ctx), o.node, depth + 1) for o in found
    )  # fmt: skip


def _is_scaled(node: ast.AST) -> bool:
    """`scaler.scale(loss)`"""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "scale"


def _calls_backward(index, module: str) -> bool:
    """Does the module's text call `.backward(` outside comments and doctests? The words first: a search of
    the pattern over a large module costs a hundred times more, and most modules have none."""
    return index.mentions(module, ".backward(") and index.mentions(module, BACKWARD_CALL)


def _may_give_events(statements: list[ast.stmt]) -> bool:
    """Might a block give an event: does it hold a call, an augmented assignment, or a gradient's or
    `zero_grad` attribute? A block of none gives none, so no test needs deciding to choose it (a cheap
    look before `call_sites.decided` follows the test's values to the configuration)."""
    return any(
        isinstance(n, ast.Call | ast.AugAssign) or (isinstance(n, ast.Attribute) and n.attr in ("grad", "zero_grad"))
        for statement in statements for n in ast.walk(statement)
    )  # fmt: skip


