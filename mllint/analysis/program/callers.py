"""Callers into parameters: the call sites of the project's functions, and what each binds.

The program layer under the value analyses. A parameter is unknown to `values.ValueKinds` until it is
read under a `Binding`: one call site's arguments bound to the parameters of one function, as Python
binds them. This module finds those call sites and builds the bindings:

- `Callers(ctx).bindings(function)`: one `Binding` per call site of a function of the linted file (a
  module-level function, a method of a top-level class, a class's `__init__` through `Class(...)`),
  searched across the project (its notebooks too), the linted file included; plus one for the defaults
  when it has any. Type annotations are one more source (`annotations.py`): where no call site says what
  a parameter holds (none in the project, `*args`, an object of no known class), `model: Classifier`
  holds a `Classifier` of the project or of torch. Each binding keeps its call site as a `Related`
  location (`call_sites(binding)`), which findings made under it carry.
- `per_call_site(ctx, node, ask)`: the answers of `ask(binding)` for a question about `node`, first with
  no binding, then, when that needed parameters of the function around `node` (or of its class's
  `__init__`, read through `self.` attributes; of a base's `__init__` or setter the class runs as its own,
  only where an object of the class runs it), under each call site's binding in turn. Values of
  different call sites never combine: a finding holds under one call site, and names it.

Finding call sites: a word index first (per process and project: which modules' text calls `name(`, see
`ProjectIndex.modules_calling`), then each call there whose callee resolves to the function: `train(...)`
and `engine.train(...)` through imports and re-exports, `Trainer(...)` for `__init__`, `self.fit(...)` in
its class and `trainer.fit(...)` with `trainer = Trainer(...)` for a method, `cb.on_epoch_end(self)` over a
trainer's callbacks for each class they may be (`Callers.receiver_classes`, which the objects layer above
fills with points-to). `*args` or `**kwargs` at the call leave the parameters they may fill unknown; a
parameter with neither argument nor default too. A call site in a notebook is named by its cell
(`explore.ipynb:cell 3:2`).

Budget (one for the layer): at most `MAX_SITES` call sites per function, read in at most `MAX_MODULES`
modules, and `MAX_CALLER_DEPTH` callers up (an argument that is itself a parameter of the caller is
followed into the caller's own call sites); past them, unknown. Functions named like protocol methods (`forward`, dunders but `__init__`) are called
by frameworks, not by name: a module's `forward`, and any class's `__call__`, is bound at the calls of its instances
(`instance_bindings`: `self.attn(h)`, `model(x)` where the model was passed to `train(model, ...)`, `self.loss_fn(out, y)`),
others have no call sites here.
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import itertools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from mllint.analysis.values.annotations import Annotations, is_none
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.syntax.names import called_name, is_self_attribute
from mllint.analysis.program.hierarchy import TopClasses, dispatched_methods, inherited_method, lineage, project_class, self_classes
from mllint.analysis.program.project_view import ProjectView, find_definition
from mllint.analysis.syntax.folding import fold, runs_under
from mllint.analysis.syntax.scopes import first_parameter, parameter_defaults, parameters
from mllint.analysis.syntax.tree import assignment_targets, module_statements, own_method
from mllint.analysis.program.summaries import function_returns, returns_receiver
from mllint.analysis.values.values import RETURNS_RECEIVER, Passage, ValueKinds, canonical_class
from mllint.findings import Related

# A module's methods that return the module itself (`model = Net().to(device)`).
RETURNS_ITSELF = RETURNS_RECEIVER | {"apply", "type"}  # `module.apply(fn)` and `module.type(dtype)` return the module too
BUILTIN_NAMES = frozenset(dir(builtins))
MAX_SITES = 8  # bindings read per function (call sites, or chains of them through callers of callers)
MAX_CALLER_DEPTH = 3  # callers of callers followed for an argument that is the caller's own parameter
MAX_ALIASES = 3  # local assignments followed back from an argument to the parameters or attributes it reads
MAX_MODULES = 8  # modules whose calls are read per function (the linted file first, then in module order)
# Torch classes an annotation may name that say nothing of what the object does.
TORCH_BASES = {
    "torch.nn.Module", "torch.Tensor", "torch.nn.Parameter", "torch.optim.Optimizer", "torch.utils.data.Dataset",
    "torch.optim.lr_scheduler.LRScheduler", "torch.optim.lr_scheduler._LRScheduler",
}  # fmt: skip
# Trainers that call their subclass's hooks with the model their construction is given (`Trainer(model=m, ...)`).
LIBRARY_TRAINERS = frozenset({"transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer"})
TRAINER_HOOKS = frozenset({"compute_loss", "training_step", "prediction_step"})  # `(self, model, inputs, ...)`
CALLED_BY_FRAMEWORKS = {"forward"}  # called as `model(x)`: a step method (`training_step`) has call sites only in a script loop

T = TypeVar("T")


@dataclass(eq=False)
class Binding:
    """One call site's arguments for the parameters of `function` (a node of `ctx`'s tree)."""

    function: ast.AST
    ctx: object  # the context of the module that defines the function
    path: str  # the call site's file as findings show it ("" for the linted file itself)
    line: int
    arguments: dict[str, tuple[object, ast.AST, Passage]] = field(default_factory=dict)
    outer: "Binding | None" = None  # the caller's own binding, for arguments that are its parameters
    site: Related | None = None  # the call, where a finding's related locations show it (None: the defaults)
    unpacked: tuple = ()  # (parameter, the caller's context, its `*args` argument, the index of its element)
    also: "Binding | None" = None  # the caller's class's `__init__` call site, for the `self.` attributes it sets
    call: ast.Call | None = None  # the call itself, a node of the caller's tree
    caller: object = None  # the context of the caller's module (with `call`)

    def argument(self, name: str) -> tuple[object, ast.AST, Passage] | None:
        """(the context the argument is read in, the argument, its `Passage`); None: unknown."""
        return self.arguments.get(name)

    def of(self, function: ast.AST) -> "Binding | None":
        """The binding of `function` this one holds: itself, `also`'s, or one its callers' chain holds (the
        `__init__` call site of the class a method called as `self.compute_loss(...)` shares `self` with)."""
        if self.function is function:
            return self
        found = self.also.of(function) if self.also is not None else None
        return found if found is not None or self.outer is None else self.outer.of(function)

    @property
    def place(self) -> str:
        return f"{self.path}:{self.line}" if self.path else f"line {self.line}"


def call_sites(binding: Binding | None) -> tuple[Related, ...]:
    """The related locations of a finding that holds under `binding`: its call site, then the call sites of
    its caller that the chain went through."""
    sites = []
    while binding is not None:
        if binding.site is not None:
            sites.append(binding.site)
        binding = binding.outer
    return tuple(sites)


def sited_throughout(binding: Binding | None) -> bool:
    """Does every binding of the chain of `binding` and its callers' come from a call site (none from a
    signature's annotations or defaults alone)?"""
    while binding is not None:
        if binding.site is None:
            return False
        binding = binding.outer
    return True


def signature_passage(binding: Binding, expr: ast.AST) -> Passage | None:
    """For a parameter `expr` whose value under `binding` comes from its own signature (a default, an
    annotation) rather than from what the call site passes, its `Passage` (messages say so); else None."""
    passed = binding.argument(expr.id) if isinstance(expr, ast.Name) else None
    return passed[2] if passed is not None and (passed[2].default or passed[2].annotated) else None


def per_call_site(ctx, node: ast.AST, ask: Callable[[Binding | None], T | None], linted=None) -> Iterator[tuple[T, Binding | None]]:
    """`ask(None)`; when that has no answer and needed parameters of the function around `node` (or of its
    class's `__init__`, or of a base's `__init__` or setter it runs as its own), `ask(binding)` under each
    call site's binding of that function (of an inherited one, the sites running it on an object of this
    class or of one derived from it). Yields each answer with the binding it holds under (None: it holds whatever the callers pass). `linted`: the
    linted file, whose callers layer finds the call sites when `ctx` is a module read for the project."""
    callers = (linted or ctx).analysis(Callers)
    candidates = _binding_candidates(ctx, node)
    inherited = callers.inherited_methods(ctx, candidates)
    recording = list(dict.fromkeys([ctx.analysis(ValueKinds), *(home.analysis(ValueKinds) for home in inherited.values())]))
    outer = [values.unbound for values in recording]
    for values in recording:
        values.unbound = []
    try:
        answer = ask(None)
        needed = list(dict.fromkeys(f for values in recording for f in values.unbound))
    finally:
        for values, kept in zip(recording, outer):
            values.unbound = kept
    if answer is not None:
        yield answer, None
        return
    if candidates and candidates[0] not in needed and any(f in candidates for f in needed):
        # A method needing what `__init__` was passed (`self.criterion`): its own call sites may hold that
        # binding too (`self.compute_loss(self.model, ...)`), with what they pass for its parameters.
        found = False
        for binding in callers.bindings_in(ctx, candidates[0]):
            answer = ask(binding)
            if answer is not None:
                found = True
                yield answer, binding
        if found:
            return
    for function in needed:
        if function in candidates:
            for binding in callers.bindings_in(ctx, function):
                answer = ask(binding)
                if answer is not None:
                    yield answer, binding
        elif function in inherited:
            # `self.model` set by a base's `__init__` or setter this class runs: bound where an object of this
            # class (or of one derived from it) runs it, not where the base's or another subclass's does.
            classes = frozenset(derived.name for _, derived in self_classes(ctx, ctx.scopes.parent(candidates[0]), callers.view))
            for binding in callers.bindings_in(inherited[function], function):
                if binding.call is None or callers.runs_on(binding, classes):
                    answer = ask(binding)
                    if answer is not None:
                        yield answer, binding


def constructions(ctx, expr: ast.AST, under: Binding | None = None) -> Iterator[tuple[tuple[object, ast.Call], Binding | None]]:
    """What built the object `expr` refers to, (the context, the constructor call): as the file tells, or
    under each call site of the function around it (`under`: that one call site's binding only). A project
    function that returns what it builds (`scheduler = build_scheduler(optimizer, cfg)`) is followed to the
    construction it returns."""
    values, view = ctx.analysis(ValueKinds), ctx.analysis(ProjectView)
    if isinstance(expr, ast.Attribute) and not is_self_attribute(expr):  # `metrics.losses_track`
        for owner, binding in constructions(ctx, expr.value, under):
            found = _attribute_built(view, owner, expr.attr)
            if found is not None:
                yield found, binding
        return

    def built(binding: Binding | None) -> tuple[object, ast.Call] | None:
        return _built(view, values.construction(expr, binding=binding), 0)

    if under is None:
        yield from per_call_site(ctx, expr, built)
        return
    found = built(under)
    if found is not None:
        yield found, under


def _attribute_built(view: ProjectView, owner: tuple[object, ast.Call], attribute: str) -> tuple[object, ast.Call] | None:
    """What built `attribute` of an object of a project class, as its `__init__` (or another method) assigns
    `self.<attribute>`: `self.losses_track = LossesTrackEpoch(n)`."""
    ctx, call = owner
    found = view.class_summary(ctx.qualified_name(call.func) or "")
    class_ctx, cls = found[1].definition() if found is not None else (None, None)
    if cls is None:
        return None
    targets = (t for node in class_ctx.index.within(cls, ast.Assign) for t in node.targets)
    target = next((t for t in targets if is_self_attribute(t) and t.attr == attribute), None)
    return _built(view, class_ctx.analysis(ValueKinds).construction(target), 0) if target is not None else None


def _built(view: ProjectView, found: tuple[object, ast.Call] | None, depth: int) -> tuple[object, ast.Call] | None:
    """The construction itself, or for a call of a project function, the construction every `return` of it
    agrees on."""
    if found is None or depth > MAX_CALLER_DEPTH:
        return found
    caller, call = found
    function = view.function(caller.qualified_name(call.func) or "")
    if function is None:
        return found
    builder, node = function
    returned = function_returns(node) or []
    built = [_constructed(view, builder, r, depth + 1) for r in returned]
    if not built or any(b is None for b in built) or len({c.qualified_name(k.func) for c, k in built}) != 1:
        return None
    return built[-1]


def _constructed(view: ProjectView, ctx, expr: ast.AST, depth: int) -> tuple[object, ast.Call] | None:
    """`_built` of what `expr` (of `ctx`) refers to, also through a method that returns its receiver (`pre =
    Prep(cols).fit(train)` is the `Prep(cols)`; a builder returning `Prep(cols).fit(x)`; `Net().to(device)`)."""
    values = ctx.analysis(ValueKinds)
    found = _built(view, values.construction(expr), depth)
    assigned = [expr] if isinstance(expr, ast.Call) else values.assigned_values(expr) or []
    chained = assigned[0] if len(assigned) == 1 and isinstance(assigned[0], ast.Call) else None
    if found is not None or depth >= MAX_CALLER_DEPTH or chained is None or not isinstance(chained.func, ast.Attribute):
        return found
    inner = _constructed(view, ctx, chained.func.value, depth + 1)
    cls = project_class(view, canonical_class(inner[0].qualified_name(inner[1].func))) if inner is not None else None
    method = inherited_method(*cls, chained.func.attr, view) if cls is not None else None
    if cls is not None and method is None and chained.func.attr in RETURNS_RECEIVER:
        return inner  # a library base's `.to(device)`, `.cuda()`, `.train()`: the module itself
    return inner if method is not None and returns_receiver(method[1]) else None


def _as_read_by(ctx, method: tuple[object, ast.AST]) -> tuple[object, ast.AST]:
    """A method of a top-level class (its context and node) as `ctx` reads it, when `ctx` is the same module
    parsed apart (the linted file; the project reads its own copy): its parameters are `ctx`'s nodes."""
    home, node = method
    same = home is not ctx and home.module is not None and ctx.module is not None and home.module.name == ctx.module.name
    cls = home.scopes.parent(node) if same else None
    own = ctx.analysis(TopClasses).first.get(cls.name) if isinstance(cls, ast.ClassDef) else None
    found = own_method(own, node.name) if own is not None else None
    return (ctx, found) if found is not None and found.lineno == node.lineno else method


def _binding_candidates(ctx, node: ast.AST) -> list[ast.AST]:
    """The function around `node` and, for a method, its class's other methods: what `self.` attributes
    hold is passed to `__init__` or to a setter (`def add_loss_op(self, loss): self.loss = loss`); for a
    closure, the functions around it, whose call sites bind what it captures (`criterion` of `step` in
    `def make_step(model, optimizer, criterion)`, bound where `make_step(...)` is called)."""
    function = ctx.scopes.enclosing_function(node)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    outer, enclosing = [], ctx.scopes.enclosing_function(function)
    while isinstance(enclosing, (ast.FunctionDef, ast.AsyncFunctionDef)):
        outer.append(enclosing)
        enclosing = ctx.scopes.enclosing_function(enclosing)
    cls = ctx.scopes.parent(outer[-1] if outer else function)  # a closure in a method (an LBFGS `closure`) shares its `self`
    methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))] if isinstance(cls, ast.ClassDef) else []
    return [function, *(m for m in methods if m is not function and m not in outer), *outer]


def _unwired(linted, caller, node: ast.AST) -> list:
    raise LookupError("Callers asked what points-to answers before mllint.analysis.objects.points_to was imported")


class Callers:
    """The call sites of the linted file's functions (an analysis: `ctx.analysis(Callers)`)."""

    # The project classes an object a method is called on may be, `(linted, caller, receiver) -> [(context,
    # class)]`: what points-to answers (`cb` of `for cb in self.callbacks`), handed down by the objects layer
    # when it is imported (this layer never reads that one). Asked before, it fails loudly rather than find
    # no call sites: a lazy import of the objects layer cannot lose them silently.
    receiver_classes: Callable[[object, object, ast.AST], list[tuple[object, ast.ClassDef]]] = staticmethod(_unwired)
    # The project functions a called value may be, `(linted, caller, call) -> [(context, function)]`: what
    # points-to answers (`loss_fn(pred, y)` with `loss_fn = get_loss("rmse")`), handed down the same way.
    called_functions: Callable[[object, object, ast.Call], list[tuple[object, ast.AST]]] = staticmethod(_unwired)

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.view: ProjectView = ctx.analysis(ProjectView)
        self._bindings: dict[tuple[int, ast.AST], list[Binding]] = {}
        self._calls: dict[tuple[int, _Target], list[ast.Call]] = {}
        self._receivers: dict[tuple[int, ast.Call], list[str | None]] = {}  # `_receiver_classes`
        self._set_in_init: dict[ast.AST, set[str]] = {}  # a method -> the attributes it sets from its parameters
        self._instances: dict[tuple[ast.Call, ast.AST | None], Binding | None] = {}
        self._inherited: dict[ast.ClassDef, dict[ast.AST, object]] = {}  # a class -> the bases' methods it runs (`inherited_methods`)
        self._reads: dict[int, dict[str, list[ast.Name]]] = {}  # a module -> its reads of names not called (`_escapes`)
        self._value_calls: dict[int, list[ast.Call]] = {}  # a module -> its calls of values (`_called_values`)
        self._called: dict[tuple[int, ast.Call], list[tuple[str, int]]] = {}  # ... -> the functions each may run

    def bindings(self, function: ast.AST) -> list[Binding]:
        """One binding per call site of `function`, a function of the linted file (at most `MAX_SITES`),
        and the binding of its defaults when it has any."""
        return self._bindings_in(self.ctx, function, 0)

    def bindings_in(self, ctx, function: ast.AST) -> list[Binding]:
        """`bindings` of a function of another module of the project (`ctx`), found from the linted file."""
        return self._bindings_in(ctx, function, 0)

    def inherited_methods(self, ctx, candidates: list[ast.AST]) -> dict[ast.AST, object]:
        """For the methods of a top-level class (`candidates`, `_binding_candidates`), the methods of its
        project bases it runs as its own (it defines none of their names), with their modules' contexts:
        a base's `__init__` or setter storing what `self.` attributes hold. Worked out once per class."""
        cls = ctx.scopes.parent(candidates[0]) if candidates else None
        if not isinstance(cls, ast.ClassDef) or ctx.scopes.parent(cls) is not ctx.tree:
            return {}
        if cls not in self._inherited:
            found: dict[str, tuple[object, ast.AST]] = {}
            own = {m.name for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for home, base in lineage(ctx, cls, self.view)[1:]:
                for method in base.body:
                    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name not in own:
                        found.setdefault(method.name, (home, method))
            self._inherited[cls] = {method: home for home, method in found.values()}
        return self._inherited[cls]

    def runs_on(self, binding: Binding, classes: frozenset[str]) -> bool:
        """Does a binding's call run its method on an object of one of `classes` (by name): a construction
        (`Child(...)` running a base's `__init__`), `super().__init__(...)` or `self.set(...)` in one of them,
        or a call on an object made as one (`probe.attach(net)` with `probe = Child()`)?"""
        call, caller = binding.call, binding.caller
        if called_name(call.func) in classes:
            return True
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if isinstance(receiver, ast.Call) and called_name(receiver.func) == "super" or isinstance(receiver, ast.Name) and receiver.id == "self":
            return getattr(caller.scopes.enclosing_class(call), "name", None) in classes
        named = self._receiver_classes(caller, call, receiver) if receiver is not None else [None]
        return all(name is not None and name.rpartition(".")[2] in classes for name in named) and bool(named)

    def sites(self, function: ast.AST) -> list[tuple[object, ast.Call]]:
        """The calls of `function`, a function of the linted file, with the context each stands in: in the
        file, then in the project's modules that call it (at most `MAX_SITES`)."""
        target = _target(self.ctx, function)
        return list(itertools.islice(self._sites(self.ctx, target), MAX_SITES)) if target is not None else []

    def sites_in(self, ctx, function: ast.AST) -> list[tuple[object, ast.Call]]:
        """`sites` of a function of another module of the project (`ctx`), found from the linted file."""
        target = _target(ctx, function)
        return list(itertools.islice(self._sites(ctx, target), MAX_SITES)) if target is not None else []

    def _bindings_in(self, ctx, function: ast.AST, depth: int) -> list[Binding]:
        if getattr(function, "name", None) in CALLED_BY_FRAMEWORKS and ctx.analysis(ModuleClasses).method_of_module(function, ctx) is not None:
            return self.instance_bindings(ctx, function)  # a module's `forward`: called as `model(x)`, never by name
        if getattr(function, "name", None) == "__call__" and isinstance(ctx.scopes.parent(function), ast.ClassDef):
            return self.instance_bindings(ctx, function)  # a callable object's `__call__`: `loss_fn(out, y)`
        key = (id(ctx), function)
        if key not in self._bindings:
            self._bindings[key] = []  # a recursive call chain finds nothing new
            target = _target(ctx, function)
            found: list[Binding] = []
            if target is not None and depth <= MAX_CALLER_DEPTH:
                for caller, call in self._sites(ctx, target):
                    found += self._site_bindings(ctx, function, target, caller, call, depth)
                    if len(found) >= MAX_SITES:
                        break
                found += self._hook_bindings(ctx, function)[: MAX_SITES - len(found)]
            own = self._own_binding(ctx, function, annotated=not found)
            self._bindings[key] = found[:MAX_SITES] + ([own] if own is not None else [])
        return self._bindings[key]

    def _hook_bindings(self, ctx, function: ast.AST) -> list[Binding]:
        """A hook a library trainer calls with its model (`compute_loss(self, model, inputs)` of a
        `transformers.Trainer` subclass): one binding of `model` per construction of the class, to the
        model it is given (`MultiLabelTrainer(model=model, args=args)`, or first)."""
        named = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
        if len(named) < 2 or not self.trainer_hook(ctx, function):
            return []
        cls = ctx.scopes.parent(function)
        target = _class_target(ctx, cls)
        init = inherited_method(ctx, cls, "__init__", self.view)
        found = []
        for caller, call in itertools.islice(self._sites(ctx, target), MAX_SITES) if target is not None else ():
            model = next((k.value for k in call.keywords if k.arg == "model"), None)
            positional = init is None or init[1].args.vararg is not None and len(init[1].args.args) == 1
            model = call.args[0] if model is None and positional and call.args and not isinstance(call.args[0], ast.Starred) else model
            if model is not None:
                path, line, site = self.place(caller, call)
                argument = (caller, model, Passage(named[1], caller.text(model), path, line))
                found.append(Binding(function, ctx, path, line, {named[1]: argument}, site=site, call=call, caller=caller))
        return found

    def trainer_hook(self, ctx, function: ast.AST) -> bool:
        """Is `function` a hook (`TRAINER_HOOKS`) of a class deriving from a library trainer (`LIBRARY_TRAINERS`),
        directly or through the project's classes: the library calls it?"""
        cls = ctx.scopes.parent(function)
        if getattr(function, "name", None) not in TRAINER_HOOKS or not isinstance(cls, ast.ClassDef):
            return False
        for _ in range(MAX_CALLER_DEPTH):
            names = [canonical_class(ctx.qualified_name(b)) for b in cls.bases]
            if any(name in LIBRARY_TRAINERS for name in names):
                return True
            bases = [found for name in names if (found := project_class(self.view, name)) is not None]
            if len(bases) != 1:
                return False
            ctx, cls = bases[0]
        return False

    def _own_binding(self, ctx, function: ast.AST, annotated: bool) -> Binding | None:
        """The function's signature as one more call site: its defaults and, when no call site says what
        the parameters hold (`annotated`), the classes their annotations name (where the default is None)."""
        path = self._display(ctx)
        defaults = _defaults_binding(ctx, function, path)
        if not annotated:
            return defaults
        arguments = dict(defaults.arguments) if defaults is not None else {}
        for parameter in parameters(function, variadic=False):
            default = arguments.get(parameter.arg)
            instance = self._annotated(ctx, parameter) if default is None or is_none(default[1]) else None
            if instance is not None:
                arguments[parameter.arg] = instance
        return Binding(function, ctx, path, function.lineno, arguments) if arguments else None

    def _annotated(self, ctx, parameter: ast.arg) -> tuple[object, ast.AST, Passage] | None:
        """The instance a parameter's annotation names (`model: Classifier`), as an argument: for a class
        of the project, or a torch class that is no abstract base (`nn.Module`, `Optimizer`)."""
        instance = ctx.analysis(Annotations).instance(parameter)
        qualified = canonical_class(ctx.qualified_name(instance.func)) if instance is not None else None
        if qualified in TORCH_BASES or not self._is_class(qualified):
            return None
        passage = Passage(parameter.arg, ast.unparse(instance.func), self._display(ctx), instance.lineno, annotated=True)
        return ctx, instance, passage

    def _site_bindings(self, ctx, function, target: "_Target", caller, call: ast.Call, depth: int) -> list[Binding]:
        """The binding of one call site: with each binding of the caller's own function when an argument
        is one of its parameters (a chain of call sites, never mixed), else on its own."""
        path, line, site = self.place(caller, call)
        bound = bind_arguments(call, function, target.skips_first, lambda value: _dict_bound(caller, value))
        splatted = {n: v for n, v in _splatted(call, function, target.skips_first).items() if bound.get(n) is None}
        bound = {**bound, **splatted}
        arguments = {  # what a splat gives is shown as the splat (`**layer_kwargs`)
            name: (caller, argument, Passage(name, caller.text(argument) if name not in splatted else _splat_text(caller, call), path, line))
            for name, argument in bound.items() if argument is not None
        }  # fmt: skip
        unpacked = _unpacked(caller, call, function, target.skips_first, bound)
        for name, _, starred, index in unpacked:  # `set_optim(*build_optim(cfg))`: each parameter its element
            element = ast.copy_location(ast.Subscript(value=starred.value, slice=ast.Constant(index), ctx=ast.Load()), starred)
            arguments.setdefault(name, (caller, element, Passage(name, f"*{caller.text(starred.value)}", path, line)))
        defaults = _defaults_binding(ctx, function, self._display(ctx))
        if defaults is not None:  # what the call leaves out takes its default
            arguments.update({name: default for name, default in defaults.arguments.items() if name not in bound})
        enclosing = caller.scopes.enclosing_function(call)
        for parameter in parameters(function, variadic=False):  # what the call leaves unknown, an annotation may tell
            if parameter.arg in bound:
                instance = self._annotated(ctx, parameter)
                if instance is not None and self._unknown(caller, arguments.get(parameter.arg), enclosing):
                    arguments[parameter.arg] = instance
        outers: list[Binding] = []
        if isinstance(enclosing, (ast.FunctionDef, ast.AsyncFunctionDef)) and _reads_parameters(caller, arguments, enclosing):
            outers = self._bindings_in(caller, enclosing, depth + 1)
            init = self._constructor_of_attributes(caller, enclosing, arguments)
            built = self._bindings_in(caller, init, depth + 1) if init is not None else []
            constructions = [b for b in built if b.site is not None] or ([] if outers else built)  # (no site: its signature)
            if constructions:  # `self.compute_loss(self.model, ...)`: the model the class's construction passes
                outers = [dataclasses.replace(o, also=c) for o in outers for c in constructions] if outers else constructions
        also = self._receiver_binding(ctx, caller, call) if target.method is not None else None
        return [Binding(function, ctx, path, line, arguments, outer, site, unpacked, also, call, caller) for outer in outers[:MAX_SITES] or [None]]

    def _receiver_binding(self, ctx, caller, call: ast.Call) -> Binding | None:
        """For a method (of `ctx`) called on an instance built at a known site (`runner.epoch(loader)` with
        `runner = Runner(net, loss_fn)`): what its `__init__` was passed there (`instance_binding`), which the
        method's `self.` attributes hold: the `__init__` as `ctx` reads it, when it is of `ctx`'s module."""
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if receiver is None or (isinstance(receiver, ast.Name) and receiver.id == "self"):
            return None
        found = _constructed(self.view, caller, receiver, 0)
        cls = project_class(self.view, canonical_class(found[0].qualified_name(found[1].func))) if found is not None else None
        init = inherited_method(*cls, "__init__", self.view) if cls is not None else None
        return self.instance_binding(found[0], found[1], _as_read_by(ctx, init)) if init is not None else None

    def _constructor_of_attributes(self, caller, method: ast.AST, arguments: dict) -> ast.AST | None:
        """The `__init__` of the method's class, when the arguments read `self`'s attributes that `__init__`
        sets from its own parameters (`self.compute_loss(self.model, batch)` with `self.model = model`, also
        `self.model, self.args = model, args`; `self` itself, passed whole: `callback.on_batch_end(self)`):
        what those hold is what the class's construction passes."""
        cls = caller.scopes.parent(method)
        init = own_method(cls, "__init__") if isinstance(cls, ast.ClassDef) and method.name != "__init__" else None
        first = first_parameter(method)
        if init is None or first is None:
            return None
        if any(isinstance(argument, ast.Name) and argument.id == first for _, argument, _ in arguments.values()):
            return init if self._set_from_parameters(caller, init) else None
        read = _read(caller, arguments)
        attributes = {n.attr for n in read if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == first}
        if not attributes:
            return None
        return init if attributes & self._set_from_parameters(caller, init) else None

    def _set_from_parameters(self, ctx, method: ast.AST) -> set[str]:
        """The `self.` attributes a method sets from its own parameters (`self.model = model`, also
        `self.model, self.args = model, args`, `self.model = model.to(device)`)."""
        if method not in self._set_in_init:
            names, found = {a.arg for a in parameters(method, variadic=False)}, set()
            for node in ctx.index.within(method, ast.Assign):
                for target in node.targets:
                    tuples = isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts)
                    pairs = zip(target.elts, node.value.elts) if tuples else [(target, node.value)]
                    found |= {t.attr for t, value in pairs if is_self_attribute(t) and _root_name(value) in names}
            self._set_in_init[method] = found
        return self._set_in_init[method]

    def instance_binding(self, caller, construction: ast.Call, init: tuple[object, ast.AST], setters=(), use: ast.AST | None = None) -> Binding | None:
        """What the attributes of one instance hold from where it was made: the binding of its class's
        `__init__` (`init`: its context and node) at `construction` (a call of `caller`), holding as `also`
        the binding of each setter called on that instance (`setters`: (context, method, call) for the
        calls of the instance's methods with arguments) that stores a parameter on `self`, is called once
        and outside any loop, and before `use` in a block holding it (`r.set_model(m); r.fit()`). One
        instance's bindings, never another's: the answer every reader of `self.x` per instance shares."""
        key = (construction, use)
        if key not in self._instances:
            chain = None
            named: dict[str, list] = {}
            for home, method, call in setters:
                named.setdefault(method.name, []).append((home, method, call))
            for found in named.values():
                home, method, call = found[0]
                if len(found) == 1 and self._set_from_parameters(home, method) and _runs_before(caller, call, use):
                    chain = self._instance_site(home, method, caller, call, chain)
            self._instances[key] = self._instance_site(*init, caller, construction, chain)
        return self._instances[key]

    def _instance_site(self, home, function: ast.AST, caller, call: ast.Call, also: Binding | None) -> Binding | None:
        target = _target(home, function) or _Target("", "", function.name, skips_first=True)  # a nested class's too
        bindings = self._site_bindings(home, function, target, caller, call, 0)
        return dataclasses.replace(bindings[0], also=also) if bindings else also

    def place(self, caller, call: ast.Call) -> tuple[str, int, Related]:
        """Where a call site is, as messages say it (file, line) and as a related location; in a
        notebook, in its cell (`explore.ipynb:cell 3`, the line in the cell)."""
        return self.located(caller, call, f"call site: `{caller.text(call.func)}(...)`")

    def located(self, ctx, node: ast.AST, label: str) -> tuple[str, int, Related]:
        """Where `node` of the module `ctx` is: (file, line) as messages say it, and a related location."""
        path, start, end, cell = self._display(ctx), ctx.start(node), ctx.end(node), None
        if ctx.notebook is not None:
            cell, start = ctx.notebook.cell_position(start)
            end = ctx.notebook.cell_position(end)[1]
            path = f"{path}:cell {cell}"
        return path, start.line, Related(self._finding_path(ctx), start, end, label, cell)

    def _is_class(self, qualified: str | None) -> bool:
        """A class of the project, or of torch (by its capital)?"""
        if qualified is None:
            return False
        if qualified.startswith("torch."):
            return qualified.rpartition(".")[2][:1].isupper()
        return self.view.class_summary(qualified) is not None

    def _unknown(self, caller, passed: tuple[object, ast.AST, Passage] | None, enclosing: ast.AST | None) -> bool:
        """Does a call site leave the class of what it passes unknown (`*args`, `load(path)`), and not
        because it is the caller's own parameter (whose own call sites may tell)?"""
        if passed is None:
            return True
        argument = passed[1]
        if isinstance(argument, ast.Name) and isinstance(enclosing, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if argument.id in {a.arg for a in parameters(enclosing, variadic=False)}:
                return False
        found = _built(self.view, caller.analysis(ValueKinds).construction(argument), 0)
        return found is None or not self._is_class(canonical_class(found[0].qualified_name(found[1].func)))

    def instance_calls(self, cls: ast.ClassDef, ctx=None) -> list[tuple[object, ast.Call]] | None:
        """The calls of the instances of a top-level class of the linted file (or of `ctx`, a module read
        for it) (`self.drop(h)` where `self.drop = FeatureDropout(0.3)`, `m(x)` where `m = Net()`),
        searched where the class is built; None when an instance goes anywhere else (into an
        `nn.Sequential`, a list, a return, an argument) or the search is past the budget."""
        found = self._instance_calls(cls, ctx or self.ctx)
        return [(caller, call) for caller, call, _ in found] if found is not None else None

    def _instance_calls(self, cls: ast.ClassDef, ctx) -> list[tuple[object, ast.Call, ast.Call | None]] | None:
        """`instance_calls`, each with the call that handed the instance to the function making it (None: made there)."""
        target = _class_target(ctx, cls)
        if target is None:
            return None
        found: list[tuple[object, ast.Call, ast.Call | None]] = []
        for caller, construction in self._sites(ctx, target):
            calls = _calls_of_instance(caller, construction, self.view)
            calls = self._calls_of_returned(caller, construction) if calls is None else calls
            if calls is None or len(found) + len(calls) > MAX_SITES:
                return None
            found += calls
        return found

    def _calls_of_returned(self, ctx, construction: ast.Call) -> list[tuple[object, ast.Call, ast.Call | None]] | None:
        """The calls of an instance a module-level function of the project builds and returns itself (`return
        MixedLoss(alpha)` in `make_loss(kind)`): those of what each call site of the function binds (`loss_fn =
        make_loss(cfg)`, then `loss_fn(out, y)`), one step, at the sites whose constant arguments leave the
        construction's branch open (not `make_loss("focal")` for `if kind == "mixed": return MixedLoss()`)."""
        statement = ctx.scopes.parent(_moved_up(ctx, construction))
        function = ctx.scopes.enclosing_function(statement) if isinstance(statement, ast.Return) else None
        target = _target(ctx, function) if function is not None else None
        if target is None or target.cls is not None or ctx.index.within(function, ast.Yield, ast.YieldFrom):
            return None
        found: list[tuple[object, ast.Call, ast.Call | None]] = []
        for caller, site in itertools.islice(self._sites(ctx, target), MAX_SITES + 1):
            passed = {k: v.value for k, v in bind_arguments(site, function, False).items() if isinstance(v, ast.Constant)}
            if passed and not runs_under(ctx.scopes, construction, lambda branch: fold(branch.test, passed), stop=function):
                continue
            calls = _calls_of_instance(caller, site, self.view)
            if calls is None or len(found) + len(calls) > MAX_SITES:
                return None
            found += calls
        return found

    def instance_bindings(self, ctx, forward: ast.FunctionDef) -> list[Binding]:
        """One binding of a module's `forward` per call of its instances (`loss_fn(out, batch["y"])` where
        `loss_fn = WeightedMSE()`), as `instance_calls` finds them: `forward` has no call sites by name."""
        cls = ctx.scopes.parent(forward)
        key = (id(ctx), forward)
        if key not in self._bindings:
            self._bindings[key] = []  # a forward calling another instance of its own class finds nothing new
            target = _class_target(ctx, cls) if isinstance(cls, ast.ClassDef) else None
            calls = self._instance_calls(cls, ctx) if target is not None else None
            found = []
            for caller, call, handed in calls or ():
                for binding in self._site_bindings(ctx, forward, target, caller, call, 0):
                    if handed is not None:  # a call of a parameter holding the instance: under the sites that pass it
                        binding = self._handed(caller, call, handed, binding)
                    found += [binding] if binding is not None else []
            self._bindings[key] = found[:MAX_SITES]
        return self._bindings[key]

    def _handed(self, caller, call: ast.Call, handed: ast.Call, binding: Binding) -> Binding | None:
        """`binding` of a call of a parameter (`net(x)` in `def fit(net, loader)`) when its chain goes through
        `handed`, the call passing the instance (`fit(model, ...)`); its outer binding made that one when the
        call's arguments read no parameter (the values around the call must come from that site, never another)."""
        if binding.outer is not None:
            return binding if binding.outer.call is handed else None
        enclosing = caller.scopes.enclosing_function(call)
        own = [b for b in self._bindings_in(caller, enclosing, 1) if b.call is handed] if enclosing is not None else []
        return dataclasses.replace(binding, outer=own[0]) if own else None

    def constructions(self, cls: ast.ClassDef) -> Iterator[tuple[object, ast.Call]]:
        """The calls building a top-level class of the linted file (`RegressionTrainer(model=m, ...)`), with
        the context each stands in."""
        target = _class_target(self.ctx, cls)
        if target is not None:
            yield from self._sites(self.ctx, target)

    # Where the call sites are.
    def _sites(self, ctx, target: "_Target") -> Iterator[tuple[object, ast.Call]]:
        for each in self._inheriting(ctx, target):
            for caller in self._candidate_contexts(ctx, each):
                for call in self._calls_of(caller, each):
                    yield caller, call
        if target.cls is None:
            yield from self._value_sites(ctx, target)

    def _value_sites(self, ctx, target: "_Target") -> Iterator[tuple[object, ast.Call]]:
        """The calls of a module-level function through a value that holds it, as points-to resolves the
        called value: a name it is bound to, a table it is filed in (`LOSSES = {"rmse": rmse_loss}`), what a
        function of its module gives back (`loss_fn = get_loss(name)`, then `loss_fn(pred, y)`). Searched
        only when its module or the linted file reads the function other than by calling it: in those two,
        and in the modules calling a function of its module that reads it (`get_loss(`)."""
        holders = self._holders(ctx, target.word) | self._holders(self.ctx, target.word)
        if not holders:
            return
        contexts = [self.ctx, ctx]
        index = self.ctx.project
        for word in sorted(holders - {""}) if index is not None else ():
            contexts += [c for c in map(index.context, index.modules_calling(word)) if c is not None]
        seen: set[str] = set()
        for caller in contexts:
            if caller.absolute_path in seen or len(seen) >= MAX_MODULES:
                continue
            seen.add(caller.absolute_path)
            for call in self._called_values(caller):
                if (target.path, target.line) in self._functions_called(caller, call):
                    yield caller, call

    def _holders(self, ctx, word: str) -> set[str]:
        """Where a module reads its function `word` other than by calling it: the module-level names assigned
        from it (a table `LOSSES = {"rmse": rmse_loss}`), and its functions that read it or such a name
        (`def get_loss(name): return LOSSES[name]`); "" for a read anywhere else. Empty when it reads none."""
        found: set[str] = set()
        tables: set[str] = set()
        for name in self._escapes(ctx).get(word, ()):
            statement = _top_statement(ctx, name)
            if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                tables |= {t.id for t in assignment_targets(statement) if isinstance(t, ast.Name)}
            found.add(statement.name if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) else "")
        for name in (n for table in tables for n in self._escapes(ctx).get(table, ())):
            statement = _top_statement(ctx, name)
            found.add(statement.name if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) else "")
        return found

    def _escapes(self, ctx) -> dict[str, list[ast.Name]]:
        """A module's reads of names that do not call them, by name (built once per module)."""
        key = id(ctx)
        if key not in self._reads:
            reads: dict[str, list[ast.Name]] = {}
            for name in ctx.index.by_type.get(ast.Name, ()):
                parent = ctx.scopes.parent(name)
                if isinstance(name.ctx, ast.Load) and not (isinstance(parent, ast.Call) and parent.func is name):
                    reads.setdefault(name.id, []).append(name)
            self._reads[key] = reads
        return self._reads[key]

    def _called_values(self, caller) -> list[ast.Call]:
        """The calls of a module whose callee is a value (`loss_fn(...)`, `LOSSES[name](...)`) rather than a
        name the module defines or imports, or a builtin."""
        key = id(caller)
        if key not in self._value_calls:
            self._value_calls[key] = [
                call for call in caller.index.by_type.get(ast.Call, ()) if (call.args or call.keywords) and (
                    isinstance(call.func, ast.Subscript) or isinstance(call.func, ast.Name)
                    and call.func.id not in BUILTIN_NAMES and caller.qualified_name(call.func) is None
                )
            ]  # fmt: skip
        return self._value_calls[key]

    def _functions_called(self, caller, call: ast.Call) -> list[tuple[str, int]]:
        """(file, line) of each project function a call of a value may run (`called_functions`), once per call."""
        key = (id(caller), call)
        if key not in self._called:
            self._called[key] = []  # a chain back to this call finds nothing
            found = self.called_functions(self.ctx, caller, call)
            self._called[key] = [(home.absolute_path, function.lineno) for home, function in found]
        return self._called[key]

    def _inheriting(self, ctx, target: "_Target") -> list["_Target"]:
        """The target, and for a method (or `__init__`) of a class, the same method as the project's classes
        derived from it run it (`ContrastiveTrainer(model, opt)` runs `BaseTrainer.__init__`, and
        `trainer.training_step(batch)` its `training_step`, when the subclass defines neither)."""
        name = target.method or ("__init__" if target.skips_first else None)
        cls = next((n for n in module_statements(ctx.tree) if isinstance(n, ast.ClassDef) and n.name == (target.cls or target.qualified).rpartition(".")[2]), None)
        if name is None or cls is None:
            return [target]
        found = [target]
        for home, derived in self_classes(ctx, cls, self.view)[1:]:
            method = inherited_method(home, derived, name, self.view)
            if method is None or (_module_of(method[0]), method[1].lineno) != (target.module, target.line) or home.module is None:
                continue
            qualified = f"{home.module.name}.{derived.name}"
            path = home.absolute_path
            word, cls_name = (name, qualified) if target.method else (derived.name, None)
            found.append(dataclasses.replace(target, module=home.module.name, qualified=qualified, word=word, cls=cls_name, path=path))
        return found

    def _calls_of(self, caller, target: "_Target") -> list[ast.Call]:
        """The calls of `target` in a module: worked out once, as functions defined again under the same
        name (a script re-creating `train` per experiment) share them."""
        key = (id(caller), target)
        if key not in self._calls:
            named = caller.analysis(CallsByName).named.get(target.word, ())
            self._calls[key] = [call for call in named if self._reaches(caller, call, target)]
        return self._calls[key]

    def _candidate_contexts(self, ctx, target: "_Target") -> Iterator[object]:
        """The linted file, then the project's modules whose text calls the function (for a method, also
        calls its class, or names a module that does: `from builders import build_engine`), in module order."""
        yield self.ctx
        index = self.ctx.project
        if index is None:
            return
        modules = index.modules_calling(target.word)
        if target.method is not None:  # the modules that make an instance, or import one a builder makes
            owners = set(index.modules_calling(target.cls.rpartition(".")[2]))
            names = sorted({o.rpartition(".")[2] for o in owners})
            builders = re.compile(rb"\b(" + b"|".join(re.escape(name.encode()) for name in names) + rb")\b")
            owners |= set(self.view.base_modules(target.cls))  # a base's template method calling `self.method(...)`
            modules = (
                m for m in modules if m in owners or m == target.module
                or (owners and any(index.mentions(m, name) for name in names) and index.mentions(m, builders))
                or index.mentions(m, _given_self(target.word))  # a trainer calling its callbacks: `cb.on_epoch_end(self)`
            )  # the words first: a search of the pattern costs a hundred times more, and most modules have none
        own = self.ctx.absolute_path
        # Tested one at a time, in module order, until `MAX_MODULES - 1` pass: a word called in hundreds of
        # modules (`apply_rotary_pos_emb(`) costs the tests of the first few, not of them all.
        seen = (m for m in modules if index.locate(m) != own and self._sees(index, m, target))
        for module in itertools.islice(seen, MAX_MODULES - 1):
            # Parsed only when its text may call the function: it is the module that defines it, or it
            # names it other than in a call (an import), or calls it as an attribute (`engine.train(`).
            if module != target.module and not index.mentions(module, _import_or_attribute_call(target.word)):
                continue
            caller = index.context(module)
            if caller is not None:
                yield caller

    @staticmethod
    def _sees(index, module: str, target: "_Target") -> bool:
        """Does a run of `module` import the target's module as the linted file does? A script of another
        folder with its own `model.py` (`a/train.py`, `b/train.py`) runs that one."""
        path = index.locate(module)
        if path is None:
            return False
        expected = index.locate(target.module)
        with index.running(path):
            return index.locate(target.module) == expected

    def _reaches(self, caller, call: ast.Call, target: "_Target") -> bool:
        func = call.func
        if target.method is None:
            return self._is(caller.qualified_name(func), target.qualified, target.path)
        if not isinstance(func, ast.Attribute):
            return False
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id == "self":
            cls = caller.scopes.enclosing_class(call)  # the class's module by either name (see `_is`)
            if cls is None or (cls.name == target.cls.rpartition(".")[2] and caller.absolute_path == target.path):
                return cls is not None
            # A base's template method: the method its class runs, or the override of a subclass that runs it.
            methods = dispatched_methods(caller, cls, target.method, self.view, caller.scopes.enclosing_function(call))
            return any((_module_of(method[0]), method[1].lineno) == (target.module, target.line) for method in methods)
        return any(self._is(name, target.cls, target.path) for name in self._receiver_classes(caller, call, receiver))

    def _receiver_classes(self, caller, call: ast.Call, receiver: ast.AST) -> list[str | None]:
        """The classes the object a method call is made on may be, by name: the one of the construction that
        makes it (`Engine(...)`, a builder's, a fluent method's, or the one its function's call sites pass),
        else the ones points-to says (`cb` of `for cb in self.callbacks: cb.on_epoch_end(self)`). Worked out
        once per call, as each class deriving the method's class searches the same calls again (`_inheriting`)."""
        key = (id(caller), call)
        if key not in self._receivers:
            found = _constructed(self.view, caller, receiver, 0) or self._passed_object(caller, call, receiver)
            if found is not None:
                self._receivers[key] = [canonical_class(found[0].qualified_name(found[1].func))]
            else:
                classes = self.receiver_classes(self.ctx, caller, receiver)
                self._receivers[key] = [f"{home.module.name}.{cls.name}" for home, cls in classes if home.module is not None]
        return self._receivers[key]

    def _passed_object(self, caller, call: ast.Call, receiver: ast.AST) -> tuple[object, ast.Call] | None:
        """What the call sites of the function around `call` pass for its parameter `receiver` (`agent` of
        `def collect(agent, device)` called as `collect(agent, device)` with `agent = make_agent(6)`), when
        every one of them passes an object made the same way."""
        enclosing = caller.scopes.enclosing_function(call)
        if not isinstance(receiver, ast.Name) or enclosing is None or receiver.id not in {p.arg for p in parameters(enclosing)}:
            return None
        made, found = set(), None
        for binding in (b for b in self._bindings_in(caller, enclosing, 1) if b.site is not None):
            passed = binding.argument(receiver.id)
            found = _constructed(self.view, passed[0], passed[1], 1) if passed is not None else None
            if found is None:
                return None
            made.add((id(found[0]), found[1]))
        return found if len(made) == 1 else None

    def _is(self, qualified: str | None, target: str, path: str) -> bool:
        """Does `qualified` name `target`, defined in the file at `path`: also by the name of a namespace
        package (`models.classifier.Net` of `models/classifier.py`, which has no `__init__.py` beside it)?"""
        if qualified is None:
            return False
        if qualified == target:
            return True
        found = find_definition(self.view.summary, qualified)
        if found is None or found[1] != target.rpartition(".")[2]:
            return False
        return f"{found[0].name}.{found[1]}" == target or (self.ctx.project is not None and self.ctx.project.locate(found[0].name) == path)

    def _display(self, ctx) -> str:
        """A file as messages show it: "" for the linted file, else relative to it."""
        return "" if ctx is self.ctx else self.view.display_path(ctx.real_path or ctx.path)

    def _finding_path(self, ctx) -> str:
        """A file's path as the linted file's findings show theirs (from the same directory)."""
        if ctx is self.ctx:
            return self.ctx.path
        here = os.path.dirname(self.ctx.absolute_path)
        relative = os.path.relpath(ctx.absolute_path, here)
        return os.path.normpath(os.path.join(os.path.dirname(self.ctx.path), relative))


class CallsByName:
    """A file's calls by the name they spell (`f(...)`, `obj.f(...)`), in source order: built once per file,
    so that finding the call sites of each function does not walk every call again."""

    def __init__(self, ctx) -> None:
        self.named: dict[str | None, list[ast.Call]] = {}
        for call in ctx.index.by_type.get(ast.Call, ()):
            self.named.setdefault(called_name(call.func), []).append(call)


def _splatted(call: ast.Call, function: ast.AST, skips_first: bool) -> dict[str, ast.AST]:
    """What a call's keywords give the parameters only a `**kwargs` splat may fill, and the function's own
    `**kwargs`: with one splat (`DenseLayer(ch, **layer_kwargs)`), its item at each such parameter's name
    (`layer_kwargs.get("inplace", False)` for one whose default is a constant, else `layer_kwargs["inplace"]`;
    unknown past another default) and, with no other keyword left over for it, the splatted dict; with none,
    the dict of the keywords left over (`Net(inplace=True)` for `def __init__(self, **kw)`)."""
    splats = [k.value for k in call.keywords if k.arg is None]
    args = function.args
    named = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    left = [k for k in call.keywords if k.arg is not None and k.arg not in named]
    if len(splats) > 1 or (not splats and not left):
        return {}
    if not splats:
        rest = ast.Dict(keys=[ast.Constant(k.arg) for k in left], values=[k.value for k in left])
        return {args.kwarg.arg: ast.copy_location(rest, left[0].value)} if args.kwarg is not None else {}
    positional = [*args.posonlyargs, *args.args][1 if skips_first else 0 :]
    splat, passed = splats[0], {k.arg for k in call.keywords} | {a.arg for a in positional[: len(call.args)]}
    defaults, found = parameter_defaults(function), {}
    for name in [a.arg for a in [*positional, *args.kwonlyargs] if a not in args.posonlyargs and a.arg not in passed]:
        default = defaults.get(name)
        if default is None:  # a parameter it must fill: its item
            found[name] = ast.copy_location(ast.Subscript(value=splat, slice=ast.Constant(name), ctx=ast.Load()), splat)
        elif isinstance(default, ast.Constant):  # `layer_kwargs.get("inplace", False)`: the default where the dict may lack it
            get = ast.Attribute(value=splat, attr="get", ctx=ast.Load())
            found[name] = ast.copy_location(ast.Call(func=get, args=[ast.Constant(name), default], keywords=[]), splat)
    if args.kwarg is not None and not left:
        found[args.kwarg.arg] = splat
    return found


def _splat_text(caller, call: ast.Call) -> str:
    return ", ".join(f"{k.arg}={caller.text(k.value)}" if k.arg else f"**{caller.text(k.value)}" for k in call.keywords)


def _unpacked(caller, call: ast.Call, function: ast.AST, skips_first: bool, bound: dict) -> tuple:
    """The parameters a last positional `*args` argument fills, each with its element: `train_dl` and
    `val_dl` of `fit(model, train_dl, val_dl)` called as `fit(model, *make_loaders())`."""
    if not call.args or not isinstance(call.args[-1], ast.Starred) or any(isinstance(a, ast.Starred) for a in call.args[:-1]):
        return ()
    args = function.args
    rest = [*args.posonlyargs, *args.args][(1 if skips_first else 0) + len(call.args) - 1 :]
    return tuple((p.arg, caller, call.args[-1], i) for i, p in enumerate(rest) if bound.get(p.arg, None) is None)


@dataclass(frozen=True)
class _Target:
    module: str
    qualified: str  # the function, or for `__init__` the class: what a call names
    word: str  # the name a call of it spells: function, class or method name
    cls: str | None = None  # a method's class
    method: str | None = None
    skips_first: bool = False  # `self` is bound by the call
    path: str = ""  # the file of the function
    line: int = 0  # the function's line, which tells it from an override


def _top_statement(ctx, node: ast.AST) -> ast.AST:
    """The statement of the module's top level that `node` is in."""
    while (parent := ctx.scopes.parent(node)) is not None and parent is not ctx.tree:
        node = parent
    return node


def _target(ctx, function: ast.AST) -> _Target | None:
    """What calls of a module-level function or a method of a top-level class look like."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.module is None:
        return None
    module, path = ctx.module.name, ctx.absolute_path
    parent = ctx.scopes.parent(function)
    if parent is ctx.tree:
        return _Target(module, f"{module}.{function.name}", function.name, path=path, line=function.lineno)
    if not isinstance(parent, ast.ClassDef) or ctx.scopes.parent(parent) is not ctx.tree:
        return None
    if function.name == "__init__":
        return _class_target(ctx, parent, function.lineno)
    cls = f"{module}.{parent.name}"
    decorators = {d.id for d in function.decorator_list if isinstance(d, ast.Name)}
    if function.name in CALLED_BY_FRAMEWORKS or function.name.startswith("__") or "property" in decorators:
        return None
    return _Target(module, cls, function.name, cls, function.name, skips_first="staticmethod" not in decorators, path=path, line=function.lineno)


def _class_target(ctx, cls: ast.ClassDef, line: int = 0) -> _Target | None:
    """What constructions of a top-level class look like (`Trainer(...)`, its `__init__` at `line` called)."""
    if ctx.module is None or ctx.scopes.parent(cls) is not ctx.tree:
        return None
    module = ctx.module.name
    return _Target(module, f"{module}.{cls.name}", cls.name, skips_first=True, path=ctx.absolute_path, line=line)


def _calls_of_instance(ctx, construction: ast.Call, view: ProjectView) -> list[tuple[object, ast.Call, ast.Call | None]] | None:
    """The calls of the object `construction` makes, bound to `self.x` (calls `self.x(...)` in its class) or
    to a name (calls `name(...)` in its function; a module-level name, also in the file's functions that
    read it as a global); also where the object is passed to a project function or class (`train(model,
    loader, criterion)`, `Trainer(model, WeightedMSE())`: the calls of its parameter there, or of the `self.`
    attribute its `__init__` stores it in), with the context each stands in and the call that passed it (None:
    none did). None when the object is used any other way (read from the files' indexes)."""
    construction = _moved_up(ctx, construction)
    target = _assigned_to(ctx, construction)
    if target is None:
        return _passed_on(ctx, construction, view)
    return _calls_of_uses(ctx, _uses(ctx, target, construction), view, aliased=False)


def _calls_of_uses(ctx, uses: list[ast.AST] | None, view: ProjectView, aliased: bool) -> list[tuple[object, ast.Call, ast.Call | None]] | None:
    """The calls of an object through `uses` of what holds it (`_calls_of_instance`), and through the uses
    of a local name it is copied to (`net = self.model`, then `net(x)`), once."""
    calls: list[tuple[object, ast.Call, ast.Call | None]] = []
    for node in uses if uses is not None else [None]:
        parent = ctx.scopes.parent(node) if node is not None else None
        if isinstance(parent, ast.Call) and parent.func is node and isinstance(node.ctx, ast.Load):
            calls.append((ctx, parent, None))
            continue
        method = _method_use(ctx, node, parent)
        if method is not None:
            calls += [(ctx, method, None)] if isinstance(method, ast.Call) else []
            continue
        alias = _local_alias(ctx, node, parent) if not aliased else None
        passed = _calls_of_uses(ctx, alias, view, aliased=True) if alias is not None else None
        passed = passed if alias is not None else _passed_on(ctx, node, view) if node is not None else None
        if passed is None:
            return None
        calls += passed
    return calls


def _local_alias(ctx, node: ast.AST, parent: ast.AST | None) -> list[ast.AST] | None:
    """The other uses of the name a load of an object is copied to (`net = self.model`; at module level,
    `model = built_model`), when its function (or the module level) binds it nowhere else; None otherwise."""
    if not (isinstance(node, ast.Name) or is_self_attribute(node)) or not isinstance(node.ctx, ast.Load):
        return None
    if not (isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return None
    function = ctx.scopes.enclosing_function(parent)
    name = parent.targets[0]
    if ctx.scopes.writes(function, name.id) != [name]:
        return None
    if function is None and any(name.id in g.names for g in ctx.index.of_type(ast.Global)):  # a function may rebind it
        return None
    return _uses(ctx, name, node)


def _moved_up(ctx, construction: ast.AST) -> ast.AST:
    """`Net().to(device)`, `Net().cuda().eval()`: the outermost call of the moves the built module goes
    through (each returns the module itself)."""
    parent = ctx.scopes.parent(construction)
    while isinstance(parent, ast.Attribute) and parent.attr in RETURNS_ITSELF and isinstance(ctx.scopes.parent(parent), ast.Call):
        construction = ctx.scopes.parent(parent)
        parent = ctx.scopes.parent(construction)
    return construction


def _method_use(ctx, node: ast.AST, parent: ast.AST | None) -> ast.Call | bool | None:
    """A use of a module object `node` that hands the object to nobody: `m.forward(x)` (a call of it: that
    call), `m.parameters()`, `m.state_dict()`, a submodule `m.encoder`, `m.to(device)` or `m.eval()` as a
    statement (True). None for any other use."""
    if not (isinstance(node, ast.Name) or is_self_attribute(node)):
        return None
    if isinstance(node.ctx, ast.Store):  # `model = model.to(device)`: the same module again
        return True if isinstance(parent, ast.Assign) and parent.targets == [node] and _moves_of(parent.value, node) else None
    if not isinstance(parent, ast.Attribute):
        return None
    called = ctx.scopes.parent(parent)
    if not isinstance(called, ast.Call) or called.func is not parent:
        return True if isinstance(parent.ctx, ast.Load) and not parent.attr.startswith("__") and parent.attr != "forward" else None
    if parent.attr == "forward":
        return called
    if parent.attr in RETURNS_ITSELF:
        outer = _moved_up(ctx, called)
        statement = ctx.scopes.parent(outer)
        kept = isinstance(statement, ast.Assign) and len(statement.targets) == 1 and _same_reference(statement.targets[0], node)
        return True if isinstance(statement, ast.Expr) or kept else None
    return True if not parent.attr.startswith("__") else None


def _moves_of(value: ast.AST, node: ast.AST) -> bool:
    """Is `value` the module `node` names, moved (`model.to(device)`, `self.net.cuda().eval()`)?"""
    moved = False
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in RETURNS_ITSELF:
        value, moved = value.func.value, True
    return moved and _same_reference(value, node)


def _same_reference(a: ast.AST, b: ast.AST) -> bool:
    """The same name, or the same `self.` attribute."""
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    return is_self_attribute(a) and is_self_attribute(b) and a.attr == b.attr


def _assigned_to(ctx, value: ast.AST) -> ast.AST | None:
    """The one target `value` is assigned to: `x = value`, or its element of `a, b = value, other`."""
    parent = ctx.scopes.parent(value)
    if isinstance(parent, ast.Tuple):
        statement = ctx.scopes.parent(parent)
        targets = statement.targets if isinstance(statement, ast.Assign) and statement.value is parent else []
        if len(targets) == 1 and isinstance(targets[0], ast.Tuple) and len(targets[0].elts) == len(parent.elts):
            return targets[0].elts[parent.elts.index(value)]
        return None
    return parent.targets[0] if isinstance(parent, ast.Assign) and len(parent.targets) == 1 else None


def _uses(ctx, target: ast.AST, value: ast.AST) -> list[ast.AST] | None:
    """The other loads and stores of `target` (a `self.` attribute in its class, a name in its function, a
    module-level name in the file's functions that do not bind it), assigned `value`; an empty list when none."""
    scopes = ctx.scopes
    if is_self_attribute(target):
        cls = scopes.enclosing_class(value)
        uses = [n for n in ctx.index.within(cls, ast.Attribute) if is_self_attribute(n) and n.attr == target.attr] if cls else []
    elif isinstance(target, ast.Name):
        function = scopes.enclosing_function(value)
        if function is not None:
            uses = scopes.reads(function, target.id) + scopes.writes(function, target.id)
        else:
            uses = [n for n in scopes.loads(target.id) if (f := scopes.enclosing_function(n)) is None or target.id not in scopes.local_bindings(f)]
            uses += scopes.writes(None, target.id)
    else:
        return None
    return [n for n in uses if n is not target]


def _passed_on(ctx, node: ast.AST, view: ProjectView) -> list[tuple[object, ast.Call, ast.Call | None]] | None:
    """The calls of an object passed as `node` to a project function (of its parameter there) or class (of
    the `self.` attribute its `__init__` assigns the parameter to): one step, never further."""
    call = ctx.scopes.parent(node)
    call = ctx.scopes.parent(call) if isinstance(call, ast.keyword) else call
    if not isinstance(call, ast.Call) or node is call.func:
        return None
    qualified = ctx.qualified_name(call.func) or ""
    found, skips_first = view.function(qualified), False
    if found is None:
        summary = view.class_summary(qualified)
        found = summary[1].definition() if summary is not None else None
        init = own_method(found[1], "__init__") if found is not None and isinstance(found[1], ast.ClassDef) else None
        found, skips_first = ((found[0], init), True) if init is not None else (None, False)
    if found is None or found[0] is None:
        return None
    callee, function = found
    bound = bind_arguments(call, function, skips_first)
    parameter = next((name for name, argument in bound.items() if argument is node), None)
    if parameter is None:
        return None
    reads = callee.scopes.reads(function, parameter)
    if skips_first:  # `self.criterion = criterion` in `__init__`, alone
        if len(reads) != 1 or callee.scopes.writes(function, parameter):
            return None
        store = callee.scopes.parent(reads[0])
        if not (isinstance(store, ast.Assign) and len(store.targets) == 1 and is_self_attribute(store.targets[0])):
            return None
        reads = _uses(callee, store.targets[0], reads[0])
    elif callee.scopes.writes(function, parameter):
        return None
    calls = []
    for read in reads or ():
        parent = callee.scopes.parent(read)
        method = parent if isinstance(parent, ast.Call) and parent.func is read else _method_use(callee, read, parent)
        if method is None and isinstance(parent, ast.Return) and isinstance(ctx.scopes.parent(call), ast.Expr):
            continue  # `return model` to a caller that drops it (`pretrain(net, loader)` as a statement)
        if method is None:
            return None
        calls += [(callee, method, None if skips_first else call)] if isinstance(method, ast.Call) else []  # kept on `self`: any site
    return calls if reads else None


def _runs_before(ctx, call: ast.Call, use: ast.AST | None) -> bool:
    """Does the statement of `call` run once, outside any loop of its function, and (with a `use`) before
    `use`, in a later statement of its own block or inside one?"""
    scopes, statement = ctx.scopes, ctx.scopes.statement(call)
    function = scopes.enclosing_function(call)
    for node in scopes.ancestors(statement):
        if node is function:
            break
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return False
    if use is None:
        return True
    block = scopes.parent(statement)
    body = next((v for _, v in ast.iter_fields(block) if isinstance(v, list) and statement in v), []) if block is not None else []
    later = body[body.index(statement) + 1 :] if body else []
    return any(node in later for node in (use, *scopes.ancestors(use)))


@lru_cache(maxsize=4096)
def _given_self(word: str) -> re.Pattern[bytes]:
    """A call of method `word` given the caller's own instance (`cb.on_epoch_end(self)`, `(trainer=self)`)."""
    return re.compile(rb"\.\s*" + re.escape(word.encode()) + rb"\(\s*(\w+\s*=\s*)?self\b")


@lru_cache(maxsize=4096)  # compiled once per word: a run asks for thousands, past `re`'s own cache
def _import_or_attribute_call(word: str) -> re.Pattern[bytes]:
    """`word` other than right before a call (as imported), or called as an attribute (`x.word(`): what a
    module that calls a function of another module by this name must contain."""
    name = re.escape(word.encode())
    return re.compile(rb"\.\s*" + name + rb"\(|\b" + name + rb"\b(?!\()")


def _defaults_binding(ctx, function: ast.AST, path: str) -> Binding | None:
    """The defaults as one more call site: a call that passes nothing it could leave out."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    defaults += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    if not defaults:
        return None
    arguments = {a.arg: (ctx, d, Passage(a.arg, ctx.text(d), path, d.lineno, default=True)) for a, d in defaults}
    return Binding(function, ctx, path, function.lineno, arguments)


def _dict_bound(caller, value: ast.AST) -> ast.AST:
    """The one value a `**kwargs` name is bound to where the call reads it (`kwargs = dict(model=model)`)."""
    values = caller.analysis(ValueKinds).reaching_values(value) if isinstance(value, ast.Name) else None
    return values[0] if values is not None and len(values) == 1 else value


def _root_name(value: ast.AST) -> str | None:
    """`model` for `model`, `model.to(device)`, `model.cuda()`: the name a chain of method calls starts from."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        value = value.func.value
    return value.id if isinstance(value, ast.Name) else None


def _reads_parameters(caller, arguments: dict, function: ast.AST) -> bool:
    """Does an argument read a parameter of the caller's function (`train(model)` in `def main(model)`,
    also through a local alias: `model = self.model; step(model)`)?"""
    names = {a.arg for a in parameters(function)}
    return any(isinstance(node, ast.Name) and node.id in names for node in _read(caller, arguments))


def _read(caller, arguments: dict) -> list[ast.AST]:
    """The nodes the arguments read: their own, and those of what the local names among them are assigned
    (`model = self.model.to(device)`), `MAX_ALIASES` assignments deep."""
    values, read, seen = caller.analysis(ValueKinds), [], set()
    frontier = [argument for _, argument, _ in arguments.values()]
    for depth in range(MAX_ALIASES + 1):
        read += (nodes := [n for expr in frontier for n in ast.walk(expr)])
        names = [n for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n not in seen]
        seen.update(names)
        frontier = [v for name in names for v in values.reaching_values(name) or ()] if depth < MAX_ALIASES else []
    return read


def _module_of(ctx) -> str | None:
    return ctx.module.name if ctx.module is not None else None
