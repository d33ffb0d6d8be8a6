"""What one file's lint knows of its project: `ProjectView`, over the project index (`project.py`).

Its own module's summary comes from the text being linted (an editor's unsaved buffer, standard input),
the others from disk. It resolves the value descriptors of `values.py` across modules
(`Called(Ref("pkg.models.Net"))` -> what `Net.forward` returns) and records every module it consulted,
with the digest of its file: a cached result stays valid while they do.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.project import ProjectIndex
from mllint.analysis.program.registries import applied_stores, filed_name, is_registry, library_registrations, registrations
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.library_models import is_module_base
from mllint.analysis.program.summaries import FUNCTIONS, ClassSummary, ModuleSummary, function_returns, top_level_definition
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import (
    STACK_FUNCTIONS, Called, Chained, Complement, Exp, Item, Keyed, Kind, Made, Mapped, Member, Mixed, OneOf, Own, Origin, Packed, Padded, Passage, Passed, Ref, Selected, Source,
    Unwrapped, Value, SEQUENTIAL, at_key, built_record, canonical_class, makes_task_model,
    ValueKinds,
)  # fmt: skip
from mllint.findings import Position
from mllint.source import is_notebook

MAX_SUBCLASSES = 16  # project classes derived from one class that are searched for a method it lacks


@dataclass(frozen=True)
class Found:
    """A resolved value: a tensor of a known kind (or a module object whose output has it)."""

    kind: Kind
    layer: bool
    node: object  # the call that made it (or applied the layer that did), in `module`'s file
    module: ModuleSummary
    line: int  # where the kind is made: the softmax call, the layer's constructor
    via: str | None = None  # the outermost class or function of the project it came through
    entry: object = None  # the call in the linted file that led to `via`
    exp_of_log: bool = False
    mixture: bool = False
    complement: bool = False  # `1 - p` on at least one path (`values.Complement`)
    padded: bool = False  # beside or into explicit zeros on at least one path (`values.Padded`)
    passage: Passage | None = None  # it reached the linted code as an argument of this call site
    contained: bool = False  # a layer whose activation a container holds: `line` is the activation's
    rows: bool = False  # each row of the tensor has the kind too (`values.over_rows`)
    defaulted: tuple[str, ...] = ()  # the parameters whose defaults chose the layer (`values.Made`)
    normalised: bool = False  # a distribution's own log-probabilities (`values.Made`)


@dataclass(frozen=True)
class Instance:
    cls: str  # an instance of this class of the project
    site: object = dataclasses.field(default=None, compare=False)  # the call that built it
    method: str | None = None  # its method of that name (`values.Member`), for a call of it


@dataclass(frozen=True)
class Chain:
    last: Instance  # an `nn.Sequential` ending in this module of the project (nested ones too): calling it calls that


@dataclass(frozen=True)
class Entity:
    name: str  # a class, function or module-level object of the project


@dataclass(frozen=True)
class Tuple:
    values: tuple  # descriptors of the elements, described in `module`
    module: ModuleSummary
    keys: tuple | None = None  # a dict's keys, by element


@dataclass(frozen=True, eq=False)
class Each:
    """A collection every item of which is `value` (a comprehension, `nn.ModuleDict` of one), described
    in `module`; with `keyed`, a dict a comprehension that keeps its keys builds (`keyed_loop`): its item at a key, `value` read
    at that key (`at_key`)."""

    value: Value | None
    module: ModuleSummary
    keyed: ast.AST | None = None

    def item(self, index) -> Value | None:
        """The descriptor of its item at `index` (a key, or not one: any item)."""
        return self.value if self.keyed is None else at_key(self.value, self.keyed, index if isinstance(index, str) else None)


@dataclass(frozen=True, eq=False)
class _Through:
    """An element of a tuple returned by `via`: once found, it says it came through `via`."""

    value: Value | None
    via: str
    entry: object


@dataclass(frozen=True, eq=False)
class _Either:
    """An element of tuples that paths of the code return (`forward`s of two classes an if/else chooses
    between): (descriptor, its module) for each; known when they agree."""

    options: tuple[tuple[Value, ModuleSummary], ...]


@dataclass(frozen=True)
class TaskModel:
    """A transformers task model (`AutoModelForSequenceClassification.from_pretrained(...)`), made wherever
    (a builder of the project returning it, in a tuple too): calling it gives raw `.logits`."""


Resolved = Found | Instance | Chain | Entity | Tuple | Each | TaskModel


def place_in(ctx, home, node: ast.AST) -> str:
    """Where `node` of the module `home` is, seen from the linted file `ctx`: `line 12` there, else
    `utils.py:12`."""
    if home is ctx:
        return f"line {node.lineno}"
    return f"{ctx.analysis(ProjectView).display_path(home.real_path or home.path)}:{node.lineno}"


def followed_view(ctx) -> "ProjectView":
    """The project as a file sees it; a module read for another file's lint (no project of its own) sees
    the project it was read for, so its helpers' calls of further modules are followed too."""
    view = ctx.analysis(ProjectView)
    if view.index is None and ctx.read_for is not None:
        view = ProjectView(ctx)
        view.index = ctx.read_for
    return view


class ProjectView:
    """What one file's lint knows of its project (an analysis: `ctx.analysis(ProjectView)`)."""

    def __init__(self, ctx, index: "ProjectIndex | None" = None) -> None:
        self.ctx = ctx
        self.index: ProjectIndex | None = index or ctx.project
        self._global_values: dict[str, tuple[object, ast.AST] | None] = {}
        self._subclasses: dict[str, list[str]] = {}
        self._tables: dict[str, list[tuple[str, object]] | None] = {}
        self._module_setters: dict[str, bool] = {}  # class -> `defines_module`
        self._displayed: dict[str, str] = {}  # a file's path -> as findings show it
        self.dispatched: dict[tuple, list] = {}  # `hierarchy.dispatched_methods`, per (context, class, name, caller)
        self.lineages: dict[tuple, tuple] = {}  # `hierarchy.lineage`, per (context, class)
        self.self_classes: dict[tuple, tuple] = {}  # `hierarchy.self_classes`, per (context, class)

    @property
    def own(self) -> ModuleSummary:
        """The linted file's summary, from its text: built only when a value leads into its own classes."""
        return self.ctx.analysis(ModuleSummary)

    # Finding classes and functions by qualified name.
    @property
    def own_name(self) -> str:
        """The linted file's module name, as its summary has it ("" when not known), without building it."""
        return self.ctx.module.name if self.ctx.module else ""

    def summary(self, module: str) -> ModuleSummary | None:
        if module == self.own_name:  # the linted file: from its text
            return self.own
        return None if self.index is None else self.index.summary(module, ModuleSummary.of_context)

    def find(self, qualified: str) -> tuple[ModuleSummary, str] | None:
        """The module that defines `qualified` (following re-exports) and the name there."""
        return find_definition(self.summary, qualified)

    def function(self, qualified: str):
        """(the context of its module, its node) for a function of the project, following re-exports; the
        linted file's own functions come from its tree. None for anything else (classes, unknown names)."""
        found = self.find(qualified)  # the summaries first: a module is parsed again only for a function it has
        if found is None or found[1] not in found[0].functions:
            return None
        summary, name = found
        ctx = self.ctx if summary is self.own else self.index.context(summary.name)  # type: ignore[union-attr]
        defined = top_level_definition(ctx.tree, FUNCTIONS, name) if ctx is not None else None
        return (ctx, defined) if defined is not None else None

    def library_name(self, qualified: str | None) -> str | None:
        """What a name of the project stands for where a module of the project imports it from outside
        (`torch.cuda.OutOfMemoryError` of `utils.CudaOOM`, with `from torch.cuda import OutOfMemoryError as
        CudaOOM` or `CudaOOM = torch.cuda.OutOfMemoryError` in `utils.py`), following re-exports; any other
        name as it is."""
        for _ in range(MAX_DEPTH):
            module, _, member = (qualified or "").rpartition(".")
            summary = self.summary(module) if module else None
            if summary is None or member in summary.classes or member in summary.functions:
                return qualified
            if member in summary.variables:  # an alias assigned (`OOMError = torch.cuda.OutOfMemoryError`)
                found = self.global_value(qualified)
                target = found[0].qualified_name(found[1]) if found is not None and isinstance(found[1], ast.Name | ast.Attribute) else None
                if target is None or target == qualified:
                    return qualified
                qualified = target
                continue
            target = summary.imports.get(member)
            if not target or target == qualified:
                return qualified
            qualified = target
        return qualified

    def global_value(self, qualified: str) -> tuple[object, ast.AST] | None:
        """(the context of its module, the value) of a module-level name of another module of the project
        bound once (`mone = one * -1` of `from utils import mone`, `FAKE` of `REAL, FAKE = -1.0, 1.0`), following
        re-exports; None otherwise. Worked out once per name."""
        if qualified not in self._global_values:
            self._global_values[qualified] = self._global_value(qualified)
        return self._global_values[qualified]

    def _global_value(self, qualified: str) -> tuple[object, ast.AST] | None:
        found = self.find(qualified)
        if found is None:  # a name assigned with others is no summary variable
            module, _, member = qualified.rpartition(".")
            summary = self.summary(module) if module else None
            found = (summary, member) if summary is not None and member not in summary.imports else None
        if found is None or found[0] is self.own or self.index is None:
            return None
        ctx = self.index.context(found[0].name) if found[1] not in found[0].classes and found[1] not in found[0].functions else None
        if ctx is None:
            return None
        stores = [
            n for s in ctx.tree.body if not isinstance(s, (*FUNCTIONS, ast.ClassDef))
            for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == found[1] and isinstance(n.ctx, ast.Store)
        ]  # fmt: skip
        values = [value for n in ctx.tree.body if isinstance(n, ast.Assign) for value in _assigned_to(n, found[1])]
        return (ctx, values[0]) if len(values) == 1 and len(stores) == 1 else None

    def class_summary(self, qualified: str) -> tuple[ModuleSummary, ClassSummary] | None:
        found = self.find(qualified)
        if found is None or found[1] not in found[0].classes:
            return None
        return found[0], found[0].classes[found[1]]

    def is_module_class(self, qualified: str, depth: int = 0) -> bool:
        """Does the project class derive from `torch.nn.Module` (directly, by alias, or via project classes)?"""
        found = self.class_summary(qualified)
        if found is None or depth > MAX_DEPTH:
            return False
        return any(is_module_base(base) or self.is_module_class(base, depth + 1) for base in found[1].bases)

    def subclasses(self, qualified: str) -> list[str]:
        """The project classes that derive from the project class `qualified`, directly or through others
        (breadth first, at most `MAX_SUBCLASSES`): in its module, the linted file, and the modules whose
        class statements name it as a base (`ProjectIndex.modules_deriving`)."""
        found = self.find(qualified)
        if found is None or found[1] not in found[0].classes:
            return []
        root = f"{found[0].name}.{found[1]}"
        if root not in self._subclasses:
            derived: list[str] = []
            queue = [root]
            while queue and len(derived) < MAX_SUBCLASSES:
                base = queue.pop(0)
                module, _, name = base.rpartition(".")
                deriving = self.index.modules_deriving(name) if self.index is not None else []
                for summary in filter(None, map(self.summary, dict.fromkeys([module, self.own_name, *deriving]))):
                    for cls in _classes_by_base(summary).get(name, ()):
                        named = f"{summary.name}.{cls.name}"
                        if named not in derived and named != root and any(self._names(b, base) for b in cls.bases):
                            derived.append(named)
                            queue.append(named)
            self._subclasses[root] = derived[:MAX_SUBCLASSES]
        return self._subclasses[root]

    def base_modules(self, qualified: str) -> list[str]:
        """The modules that define the project bases of a project class, its bases' bases too."""
        found, queue = [], [qualified]
        while queue and len(found) < MAX_SUBCLASSES:
            summary = self.class_summary(queue.pop(0))
            for base in summary[1].bases if summary is not None else ():
                defined = self.find(base)
                if defined is not None and defined[1] in defined[0].classes and defined[0].name not in found:
                    found.append(defined[0].name)
                    queue.append(f"{defined[0].name}.{defined[1]}")
        return found

    def _names(self, qualified: str, cls: str) -> bool:
        """Does a qualified name (a base as its module imports it) name the project class `cls`?"""
        found = self.find(qualified) if qualified.rpartition(".")[2] == cls.rpartition(".")[2] else None
        return found is not None and f"{found[0].name}.{found[1]}" == cls

    def forward_of(self, qualified: str) -> tuple[ModuleSummary, ClassSummary] | None:
        """The project class (this one, a project base, or for a mixin the one class mixing it in that has
        one) whose `forward` instances of `qualified` run."""
        return self.method_of(qualified, "forward")

    def method_of(self, qualified: str, name: str) -> tuple[ModuleSummary, ClassSummary] | None:
        """The project class whose method `name` instances of `qualified` run: this one or a project base
        (depth first, in order); when none has it, the one the project's subclasses agree on (a mixin's
        `self.forward(x)` runs the forward of the model that mixes it in)."""
        found = self._inherited(qualified, name, 0)
        if found is not None:
            return found
        derived = {(m.name, c.name): (m, c) for s in self.subclasses(qualified) if (f := self._inherited(s, name, 0)) for m, c in [f]}
        return next(iter(derived.values())) if len(derived) == 1 else None

    def _inherited(self, qualified: str, name: str, depth: int) -> tuple[ModuleSummary, ClassSummary] | None:
        found = self.class_summary(qualified)
        if found is None or depth > MAX_DEPTH:
            return None
        if name in found[1].methods:
            return found
        return next((f for base in found[1].bases if (f := self._inherited(base, name, depth + 1)) is not None), None)

    def is_module_like(self, qualified: str) -> bool:
        """A module class of the project, or a mixin of one (a class every module class derived from it
        makes a module, as `class Net(ScoringMixin, nn.Module)` does)."""
        return self.is_module_class(qualified) or any(self.is_module_class(s) for s in self.subclasses(qualified))

    # What values are.
    def origin(self, expr: ast.AST, binding=None, turn: tuple | None = None) -> Origin | None:
        """Where a softmax/log_softmax/sigmoid/Linear value was made, if every way `expr` can get its
        value agrees on the kind: in the linted file, or in a class or function of the project; under
        `binding`, through the arguments of one call site (`values.ValueKinds.value` describes it); in the
        `turn` (loop, key) of a loop over a dict, read at that key (`values.at_key`)."""
        value = self.ctx.analysis(ValueKinds).value(expr, binding=binding)
        return self.origin_of(at_key(value, *turn) if turn and value is not None else value)

    def origin_of(self, value: Value | None) -> Origin | None:
        """`origin` of a value descriptor (one the objects layer makes: a project model's call)."""
        found = None if value is None else self.resolve(value, self.own)
        if not isinstance(found, Found) or found.layer:
            return None
        if found.via is None and found.module is self.own and found.passage is None:
            return Origin(found.kind, found.node, exp_of_log=found.exp_of_log, mixture=found.mixture, complement=found.complement, padded=found.padded, normalised=found.normalised)
        source = Source(found.via or "", *self.line_of(found.module, found.line))
        return Origin(found.kind, found.entry or found.node, source, found.exp_of_log, found.mixture, found.passage, found.complement, found.padded, found.normalised)

    def instance_class(self, value: Value) -> str | None:
        """The project class an object was built from (directly or by a factory function)."""
        found = self.resolve(value, self.own)
        return found.cls if isinstance(found, Instance) and found.method is None else None

    def resolve(self, value: Value | None, module: ModuleSummary, depth: int = 0) -> Resolved | None:
        if value is None or depth > MAX_DEPTH:
            return None
        if isinstance(value, Made):
            line = _placed_line(value)
            contained = value.activation is not None
            return Found(value.kind, value.layer, value.node, module, line, contained=contained, rows=value.rows, defaulted=value.defaulted, normalised=value.normalised)
        if isinstance(value, Ref):
            return Entity(value.name)
        if isinstance(value, Exp):
            inner = self.resolve(value.value, module, depth + 1)
            tensor = isinstance(inner, Found) and not inner.layer and inner.kind is Kind.LOG_PROBABILITIES
            return dataclasses.replace(inner, kind=Kind.PROBABILITIES, exp_of_log=True) if tensor else None
        if isinstance(value, Complement):
            inner = self.resolve(value.value, module, depth + 1)
            probabilities = isinstance(inner, Found) and not inner.layer and inner.kind in (Kind.PROBABILITIES, Kind.SIGMOID)
            if probabilities and _of_own_attribute(inner.node):
                return inner  # a rate the module learns (`torch.sigmoid(self.p_logit)`), not a prediction
            return dataclasses.replace(inner, complement=True) if probabilities else None
        if isinstance(value, Padded):
            inner = self.resolve(value.value, module, depth + 1)
            probabilities = isinstance(inner, Found) and not inner.layer and inner.kind is Kind.PROBABILITIES
            return dataclasses.replace(inner, padded=True) if probabilities else None
        if isinstance(value, OneOf):
            return _agreed([self.resolve(v, module, depth + 1) for v in value.values])
        if isinstance(value, Packed):
            return Tuple(value.values, module, value.keys)
        if isinstance(value, Mixed) and value.joined:  # `torch.stack(dists, 1)`: a tensor of what its slices agree on
            return _agreed([self.resolve(v, module, depth + 1) for v in value.values])
        if isinstance(value, Keyed):
            return Each(value.entry, module, value.comprehension)
        if isinstance(value, Mixed) and value.stacked:
            return Each(value.values[0], module) if len(value.values) == 1 else None
        if isinstance(value, Mixed):
            return _combined([self.resolve(v, module, depth + 1) for v in value.values])
        if isinstance(value, Passed):
            caller = self.summary(value.module)
            found = self.resolve(value.value, caller, depth + 1) if caller is not None else None
            if isinstance(found, Found):  # where it was made is in the caller's code, not the linted file's
                return dataclasses.replace(found, entry=None, passage=value.passage)
            return found
        if isinstance(value, _Either):
            return _agreed([self.resolve(v, m, depth + 1) for v, m in value.options])
        if isinstance(value, _Through):
            found = self.resolve(value.value, module, depth + 1)
            if not isinstance(found, Found):
                return found
            return dataclasses.replace(found, via=value.via, entry=value.entry or found.entry)
        if isinstance(value, Mapped):  # `adj @ logits + bias`: still raw logits
            found = self.resolve(value.value, module, depth + 1)
            return found if isinstance(found, Found) and not found.layer and found.kind is Kind.LOGITS else None
        if isinstance(value, Selected):
            found = self.resolve(value.value, module, depth + 1)
            return found if isinstance(found, Found) and not found.layer else None
        if isinstance(value, Item) and isinstance(value.index, ast.AST):  # read at a loop's turn not taken: at any key
            value = Item(value.value, ...)
        if isinstance(value, Item):
            packed = self.resolve(value.value, module, depth + 1)
            if value.index is None and isinstance(packed, Found) and not packed.layer and packed.rows:  # a tensor's row
                return packed
            if isinstance(packed, Each):
                return self.resolve(packed.item(value.index), packed.module, depth + 1)
            if isinstance(packed, Found) and not packed.layer and (value.index is ... or isinstance(value.index, int)):
                return packed  # `probs[a]`, `probs[0]`: values of a tensor
            index = packed.keys.index(value.index) if isinstance(packed, Tuple) and value.index in (packed.keys or ()) else value.index
            if not isinstance(packed, Tuple) or not isinstance(index, int) or (packed.keys is not None) != isinstance(value.index, str):
                return None  # indexing another tensor, or an unknown container: unknown
            if not -len(packed.values) <= index < len(packed.values):
                return None
            return self.resolve(packed.values[index], packed.module, depth + 1)
        if isinstance(value, Unwrapped):  # `model.module`: the model, unless its class has a `module` of its own
            found = self.resolve(value.value, module, depth + 1)
            return None if isinstance(found, Instance) and self._sets_module(found.cls) else found
        if isinstance(value, Own):  # `self` in a method: an instance of its class, a module or not
            return Instance(value.cls)
        if isinstance(value, Member):  # a method of an instance, for `_call`; a field of a record (`out.scores`)
            inner = self.resolve(value.value, module, depth + 1)
            if isinstance(inner, Tuple) and value.name in (inner.keys or ()):
                return self.resolve(inner.values[inner.keys.index(value.name)], inner.module, depth + 1)
            if inner is None and isinstance(value.value, Called):  # `trainer.predict_proba(x)` of a plain class
                inner = self._plain_instance(value.value, module, depth)
            return dataclasses.replace(inner, method=value.name) if isinstance(inner, Instance) and inner.method is None else None
        if isinstance(value, Called) and isinstance(value.callee, Passed):  # `model(x)`, `model` a parameter
            caller = self.summary(value.callee.module)
            found = self._call(Called(value.callee.value, value.node), caller, depth) if caller is not None else None
            return dataclasses.replace(found, entry=None, passage=value.callee.passage) if isinstance(found, Found) else found
        if isinstance(value, Chained):
            last = self.resolve(value.last, module, depth + 1)
            if isinstance(last, Found) and last.layer:  # a builder's `nn.Sequential(..., nn.Softmax(-1))`: the same layer
                return last
            return Chain(last) if isinstance(last, Instance) else last if isinstance(last, Chain) else None
        if isinstance(value, Called):
            return self._call(value, module, depth)
        return None

    def _sets_module(self, qualified: str) -> bool:
        """Does the project class have a `module` of its own (a wrapper of its own, not torch's)? Worked out
        once per class; a class not found counts as one that does."""
        if qualified not in self._module_setters:
            found = self.class_summary(qualified)
            node = found[1].definition()[1] if found is not None else None
            self._module_setters[qualified] = node is None or defines_module(node)
        return self._module_setters[qualified]

    def _call(self, value: Called, module: ModuleSummary, depth: int) -> Resolved | None:
        if isinstance(value.callee, OneOf):  # `model = Wide() if wide else Narrow()`: known when the calls agree
            return _agreed([self._call(Called(v, value.node), module, depth + 1) for v in value.callee.values])
        filed = self._registered(value.callee, module, depth) if isinstance(value.callee, Item | Selected) else None
        if filed:  # `MODELS["resnet"](n)`, `MODELS[args.arch](n)`: known when what may be called agrees
            return _agreed([self._call(Called(Ref(name), value.node), module, depth + 1) for name in filed])
        built = self._built_from_table(value, module, depth)
        if built is not None:
            return built
        callee = self.resolve(value.callee, module, depth + 1)
        callee = callee.last if isinstance(callee, Chain) else callee
        if isinstance(callee, Found):
            if not callee.layer:
                return None
            # Where the kind is made: where the layer is applied, or where a factory built it.
            line = callee.line if callee.via or callee.contained else value.node.lineno
            return dataclasses.replace(callee, layer=False, node=value.node, line=line)
        if isinstance(callee, Instance):
            name = callee.method or "forward"
            defining = self.method_of(callee.cls, name)
            if defining is None and name == "forward" and self.derives_from(callee.cls, SEQUENTIAL):
                return self._sequence_call(callee, value, depth)
            if defining is None:
                return self._attribute_call(callee, value, depth)
            owner, cls = defining
            if (self._reassigned(callee.cls, cls, 0) or frozenset()) & cls.assigns:
                return None  # `self.head = nn.Linear(...)` in a subclass: the base's method reads another layer
            returned = cls.forward_deciding(value.decide) if name == "forward" and value.decide is not None else cls.returns_of(name)
            result = _as_called(self.resolve(returned, owner, depth + 1), self._definition(callee.cls, "__init__"), callee.site)
            if result is None and value.decide is None:
                made = (self._class_node(callee.cls), callee.site)  # what `self.layer = layer` holds
                result = self._applied(self._definition(f"{owner.name}.{cls.name}", name), owner, value.node, module, depth, made)
            via = f"{cls.name}.{name}"
        elif isinstance(callee, TaskModel):  # its output: a record whose `.logits` are raw scores (the call may be the linted file's)
            home = self.own if self.ctx.scopes.parent(value.node) is not None else module
            return Tuple((Made(Kind.LOGITS, value.node),), home, ("logits",))
        elif isinstance(callee, Entity):
            found = self.find(callee.name)
            if found is None:
                return TaskModel() if makes_task_model(callee.name) else self._library_registered(callee.name, value.node, module)
            owner, name = found
            if name in owner.classes:
                if self.is_module_like(f"{owner.name}.{name}"):
                    return Instance(f"{owner.name}.{name}", value.node)
                return self._record(owner.classes[name], value.node, module)
            if name in owner.variables:  # a module-level object: call what it holds
                held = self.resolve(owner.variable(name), owner, depth + 1)
                if isinstance(held, Found) and held.layer:  # `probs = nn.Softmax(1)` in another module
                    entry = value.node if module is self.own else held.entry
                    return dataclasses.replace(held, layer=False, via=name, entry=entry)
                return self._call(Called(owner.variable(name), value.node), owner, depth + 1)
            result = self.resolve(owner.functions[name].returns, owner, depth + 1)
            result = _as_called(result, owner.functions[name].definition()[1], value.node, self._forwarded(value.node, module))
            if result is None:
                result = self._applied(owner.functions[name].definition()[1], owner, value.node, module, depth)
            via = name
        else:
            return None
        if isinstance(result, Each):
            return Each(_Through(result.value, via, value.node if module is self.own else None), result.module, result.keyed)
        if isinstance(result, Tuple):  # the elements are found later: they keep where they came through
            return Tuple(tuple(_Through(v, via, value.node if module is self.own else None) for v in result.values), result.module, result.keys)
        if isinstance(result, Found):
            entry = value.node if module is self.own else result.entry
            return dataclasses.replace(result, via=via, entry=entry)
        return result

    def _library_registered(self, name: str, call: object, module: ModuleSummary) -> Entity | None:
        """The class `REGISTRY.get("key")` names, `REGISTRY` a registry object of the project (`registries.
        library_registrations`); None for any other call, a key not constant or filed under several."""
        table, _, method = name.rpartition(".")
        found = self.find(table) if method == "get" and isinstance(call, ast.Call) and len(call.args) == 1 else None
        if found is None or found[1] not in found[0].variables or self.index is None:
            return None
        made = found[0].variable(found[1])
        maker = self.resolve(made.callee, found[0]) if isinstance(made, Called) else None
        key = call.args[0].value if isinstance(call.args[0], ast.Constant) else None
        if not (isinstance(maker, Entity) and is_registry(self, maker.name)) or key is None:
            return None
        filed = [qualified for qualified, filed_as in library_registrations(self, table) if filed_as == key]
        return Entity(filed[0]) if len(filed) == 1 else None

    def _record(self, cls: ClassSummary, call: object, module: ModuleSummary) -> Tuple | None:
        """A dataclass or `NamedTuple` of another module built by `call` (of `module`): its fields' values by
        name, as `values` reads a record of the file itself (`TaggerOutput(scores=torch.sigmoid(z))`)."""
        home, node = cls.definition()
        fields = built_record(home, node, call) if home is not None and isinstance(call, ast.Call) else None
        ctx = self.ctx if module is self.own else self.index.context(module.name) if self.index is not None else None
        if fields is None or ctx is None:
            return None
        values = ctx.analysis(ValueKinds)
        return Tuple(tuple(values.value(v) for v in fields.values()), module, tuple(fields))

    def _reassigned(self, qualified: str, defining: ClassSummary, depth: int) -> frozenset[str] | None:
        """The `self.` attributes the project classes from `qualified` down to its base `defining` (not
        included) assign in their methods: writes a method `defining` runs for them may not see; None when
        `defining` is no base of it."""
        found = self.class_summary(qualified)
        if found is not None and found[1] is defining:
            return frozenset()
        if found is None or depth > MAX_DEPTH:
            return None
        between = [b for base in found[1].bases if (b := self._reassigned(base, defining, depth + 1)) is not None]
        return found[1].assigns.union(*between) if between else None

    def _sequence_call(self, callee: Instance, value: Called, depth: int) -> Resolved | None:
        """Calling an instance of an `nn.Sequential` subclass of the project without a `forward`: what the
        last layer its `__init__` hands `super().__init__` outputs (a project base's, when it hands none)."""
        for owner, cls in self._lineage(callee.cls):
            last = cls.passed_to_base
            if last is not None:
                found = self.resolve(last, owner, depth + 1)
                return dataclasses.replace(found, layer=False) if isinstance(found, Found) and found.layer else None  # made where the layer is
        return None

    def derives_from(self, qualified: str, library_class: str) -> bool:
        """Does the project class derive from `library_class` (`torch.nn.Sequential`), through project bases?"""
        return any(base == library_class for _, cls in self._lineage(qualified) for base in cls.bases)

    def library_base(self, qualified: str, classes) -> str | None:
        """The one library class among `classes` (a mapping by qualified name, such as the losses) the project
        class derives from when neither it nor a project base between defines `forward` (a loss subclass
        that only configures `__init__`: `super().__init__(label_smoothing=0.1)`); None otherwise."""
        lineage = self._lineage(qualified)
        if not lineage or any(cls.has_forward for _, cls in lineage):
            return None
        found = {canonical for _, cls in lineage for base in cls.bases if (canonical := canonical_class(base)) in classes}
        return found.pop() if len(found) == 1 else None

    def _lineage(self, qualified: str) -> list[tuple[ModuleSummary, ClassSummary]]:
        """The project class and its project bases, depth first (at most `MAX_DEPTH` deep)."""
        found, pending = [], [(qualified, 0)]
        while pending:
            name, depth = pending.pop(0)
            summary = self.class_summary(name) if depth <= MAX_DEPTH else None
            if summary is not None and summary not in found:
                found.append(summary)
                pending += [(base, depth + 1) for base in summary[1].bases]
        return found

    def _attribute_call(self, callee: Instance, value: Called, depth: int) -> Resolved | None:
        """Calling a layer an instance keeps (`model.head(h)`, `apply_head(model.head, h)`): what the layer its
        class assigns to `self.head` outputs; None for a method or an attribute not known."""
        found = self.class_summary(callee.cls) if callee.method not in (None, "forward") else None
        held = found[1].attribute(callee.method) if found is not None else None
        return self._call(Called(held, value.node), found[0], depth + 1) if held is not None else None

    def _applied(self, function: ast.AST | None, home: ModuleSummary, call: object, module: ModuleSummary, depth: int, made: tuple = (None, None)) -> Resolved | None:
        """What `function` returns under `call` (of `module`) when each of its returns calls a parameter it never
        rebinds (`return layer(x)` in `def forward(self, x, layer)`, or `out = layer(x)` once, `return out`), or
        a layer `__init__` keeps from its parameter (`self.layer = layer`, `return self.layer(self.drop(x))`)
        as the instance's construction in `module` passes it (`made`: the class, the construction): what
        calling the argument passed for it returns, when those agree; None otherwise (also when a return does
        more with the call). A return may join what the steps of a loop appended (`torch.stack(outputs, 1)`,
        `function` read in `home`, its module)."""
        returned = function_returns(function) if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) else None
        ctx = self.ctx if module is self.own else self.index.context(module.name) if self.index is not None else None
        if not returned or not isinstance(call, ast.Call) or ctx is None:
            return None
        first = [*function.args.posonlyargs, *function.args.args][:1]
        bound = bind_arguments(call, function, skips_first=bool(first) and first[0].arg in ("self", "cls"))
        cls, site = made
        defining = self.ctx if home is self.own else self.index.context(home.name) if self.index is not None else None
        # the construction is read where it is: beside the call, or beside the class (a builder function of its module)
        builds = [(c, m) for c, m in ((ctx, module), (defining, home)) if c is not None and isinstance(site, ast.Call) and c.scopes.parent(site) is not None]
        kept = _kept_parameters(cls) if builds else {}
        given = bind_arguments(site, own_method(cls, "__init__", ast.FunctionDef), skips_first=True) if kept else {}
        stored = [n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        once = {name: bound_value for name, bound_value in _bound_once(function) if stored.count(name) == 1}
        joined = [_joined_items(defining.analysis(ValueKinds), expr) if defining is not None else None for expr in returned]
        found = []
        for expr in [item for expr, items in zip(returned, joined) for item in items or [expr]]:
            expr, index = once.get(expr.id, (expr, None)) if isinstance(expr, ast.Name) else (expr, None)  # `out = layer(h)`; `return out`
            func = expr.func if isinstance(expr, ast.Call) else None
            if isinstance(func, ast.Name) and bound.get(func.id) is not None and func.id not in stored:
                passed, (where, summary) = bound[func.id], (ctx, module)
            elif is_self_attribute(func) and given.get(kept.get(func.attr)) is not None:
                passed, (where, summary) = given[kept[func.attr]], builds[0]
            else:
                return None
            output = self._call(Called(where.analysis(ValueKinds).value(passed), call), summary, depth + 1)
            if index is not None:  # `out, hidden = layer(h)`: the element it unpacks
                output = self.resolve(output.values[index], output.module, depth + 1) if isinstance(output, Tuple) and index < len(output.values) else None
            found.append(output)
        return _agreed(found)

    def _built_from_table(self, value: Called, module: ModuleSummary, depth: int) -> Resolved | None:
        """What calling an object built from a table entry returns (`MODELS[args.arch](n)(x)`), when the key
        leaves several entries: known when what each of them returns agrees."""
        made = value.callee
        filed = self._registered(made.callee, module, depth) if isinstance(made, Called) and isinstance(made.callee, Item | Selected) else None
        if not filed or len(filed) < 2:
            return None
        return _agreed([self._call(Called(Called(Ref(name), made.node), value.node, value.decide), module, depth + 1) for name in filed])

    def registered(self, item: Value | None) -> list[str] | None:
        """`_registered` of an item of a table the linted file reads (`MODELS["resnet"]`), else None."""
        return self._registered(item, self.own, 0) if isinstance(item, Item | Selected) else None

    def _registered(self, item: Item | Selected, module: ModuleSummary, depth: int) -> list[str] | None:
        """The classes and functions of the project that `item`, an item of a module-level table that starts
        empty (`MODELS = {}`), may be: those a registering decorator files in it under the item's key
        (`registries.registrations`), all of them for a key not known; None when the table is no such one."""
        table = self.resolve(item.value, module, depth + 1)
        filed = self._table(table.name) if isinstance(table, Entity) else None
        if filed is None:
            return None
        key = item.index if isinstance(item, Item) and isinstance(item.index, int | str) else None
        return [name for name, filed_as in filed if key is None or filed_as is None or filed_as == key] or None

    def _table(self, qualified: str) -> list[tuple[str, object]] | None:
        """(qualified name, key) of each definition the decorators of a table's module file in it, when the
        table is a module-level `{}` bound once; None otherwise. Worked out once per table."""
        if qualified not in self._tables:
            found = self.find(qualified)
            ctx = None if found is None else self.ctx if found[0] is self.own else self.index.context(found[0].name) if self.index else None
            values = [] if ctx is None else [v for n in ctx.tree.body if isinstance(n, ast.Assign) for v in _assigned_to(n, found[1])]
            empty = len(values) == 1 and isinstance(values[0], ast.Dict) and not values[0].keys
            if len(values) == 1 and not empty and ctx is not self.ctx:  # `DECODERS = {"dot": DotDecoder}` imported
                stored = any(isinstance(n.ctx, ast.Store) and self.ctx.qualified_name(n.value) == qualified for n in self.ctx.index.of_type(ast.Subscript))
                self._tables[qualified] = None if stored else _literal_table(ctx, values[0], found[1])
                return self._tables[qualified]
            stores = [(ctx, n) for n in ctx.index.of_type(ast.Subscript) if isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)] if empty else []
            stores += applied_stores(ctx, self) if empty else []
            filed = [
                (filed_name(r.home, r.definition), r.key) for home, s in stores for r in registrations(home, self, s) or ()
                if (home is ctx and s.value.id == found[1] if r.table is None else r.home.qualified_name(r.table) == qualified)
            ]  # fmt: skip
            self._tables[qualified] = filed or None
        return self._tables[qualified]

    def _plain_instance(self, value: Called, module: ModuleSummary, depth: int) -> Instance | None:
        """An object a class of the project builds that is no module (`EnsembleTrainer(...)`), for its methods."""
        callee = self.resolve(value.callee, module, depth + 1)
        found = self.find(callee.name) if isinstance(callee, Entity) else None
        return Instance(f"{found[0].name}.{found[1]}", value.node) if found is not None and found[1] in found[0].classes else None

    def _forwarded(self, call: ast.AST, module: ModuleSummary) -> bool:
        """Does `call` of `module` splat only the `**kwargs` of the function around it (`build(d, **kw)` in
        `def __init__(self, d, **kw)`): what its own callers pass, not known here?"""
        splats = [k.value for k in getattr(call, "keywords", ()) if k.arg is None]
        ctx = self.ctx if module is self.own else self.index.context(module.name) if self.index is not None else None
        function = ctx.scopes.enclosing_function(call) if splats and ctx is not None else None
        kwarg = function.args.kwarg.arg if function is not None and function.args.kwarg is not None else None
        return kwarg is not None and all(isinstance(s, ast.Name) and s.id == kwarg for s in splats)

    def _class_node(self, cls: str) -> ast.ClassDef | None:
        """A project class's definition, as its module defines it."""
        found = self.class_summary(cls)
        return found[1].definition()[1] if found is not None else None

    def _definition(self, cls: str, method: str) -> ast.AST | None:
        """The method of a project class, as its module defines it."""
        node = self._class_node(cls)
        return own_method(node, method, ast.FunctionDef) if node is not None else None

    def line_of(self, module: ModuleSummary, line: int) -> tuple[str, int]:
        """A module's line as a message shows it: (its file, the line); in a notebook, in its cell."""
        path = self.display(module)
        ctx = self.index.context(module.name) if self.index is not None and is_notebook(module.path) else None
        if ctx is None or ctx.notebook is None:
            return path, line
        cell, position = ctx.notebook.cell_position(Position(line, 1))
        return f"{path}:cell {cell}", position.line

    def display(self, module: ModuleSummary) -> str:
        """A module's file as a finding shows it ("" for the linted file itself)."""
        return "" if module is self.own else self.display_path(module.path)

    def display_path(self, path: str) -> str:
        """A file as a finding shows it: relative to the linted file's directory when below it, else to the
        working directory when below it. Worked out once per file (asked for each binding made)."""
        if path not in self._displayed:
            here = os.path.dirname(self.ctx.absolute_path)
            shown = (r for r in (os.path.relpath(path, here), os.path.relpath(path)) if not r.startswith(".."))
            self._displayed[path] = next(shown, path)
        return self._displayed[path]


def defines_module(cls: ast.ClassDef) -> bool:
    """Does a class have a `module` of its own, so that `x.module` is not the model a wrapper holds: it writes
    `self.module` (an EMA's copy), defines a `module` method or property, or registers a submodule so named?"""
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and node.attr == "module" and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "module":
            return True
        named = node.args[0] if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("add_module", "register_module") and node.args else None
        if isinstance(named, ast.Constant) and named.value == "module":
            return True
    return False


def _literal_table(ctx, literal: ast.AST, name: str) -> list[tuple[str, object]] | None:
    """(qualified name, key) of each class or function a module-level dict literal of another module files
    under a constant key (`DECODERS = {"dot": DotDecoder, "mlp": MLPDecoder}`), when every entry is one and
    nothing else writes to the table; None otherwise."""
    if not isinstance(literal, ast.Dict) or not literal.keys or ctx.module is None:
        return None
    written = any(
        isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) and n.value.id == name
        for n in ctx.index.of_type(ast.Subscript)
    )  # fmt: skip
    own = {s.name for s in ctx.tree.body if isinstance(s, ast.ClassDef | ast.FunctionDef)}
    filed = []
    for key, value in zip(literal.keys, literal.values):
        target = ctx.qualified_name(value) if isinstance(value, ast.Name | ast.Attribute) else None
        if target is None and isinstance(value, ast.Name) and value.id in own:
            target = f"{ctx.module.name}.{value.id}"
        if written or not isinstance(key, ast.Constant) or target is None:
            return None
        filed.append((target, key.value))
    return filed


def _assigned_to(assign: ast.Assign, name: str) -> list[ast.AST]:
    """What an assignment binds `name` to: `x = v`, and `a, x = u, v` item by item."""
    found = []
    for target in assign.targets:
        if isinstance(target, ast.Name) and target.id == name:
            found.append(assign.value)
        elif isinstance(target, ast.Tuple) and isinstance(assign.value, ast.Tuple) and len(target.elts) == len(assign.value.elts):
            found += [v for t, v in zip(target.elts, assign.value.elts) if isinstance(t, ast.Name) and t.id == name]
    return found


def find_definition(summary_of, qualified: str, depth: int = 0) -> tuple[ModuleSummary, str] | None:
    """The module summary that defines `qualified`, following re-exports, and the name there
    (`summary_of`: module name -> its summary or None)."""
    if depth > MAX_DEPTH or "." not in qualified:
        return None
    module, _, member = qualified.rpartition(".")
    summary = summary_of(module)
    if summary is None:
        return None
    if member in summary.classes or member in summary.functions or member in summary.variables:
        return summary, member
    target = summary.imports.get(member)
    return find_definition(summary_of, target, depth + 1) if target and target != qualified else None


def _as_called(found: Resolved | None, function: ast.AST | None, call: object, forwarded: bool = False) -> Resolved | None:
    """A layer whose class a parameter's default of `function` chose (`values.Made.defaulted`), as `call`
    builds it: unknown when the call passes that parameter (or may), the default's else. A call that splats
    only its own function's `**kwargs` (`forwarded`) leaves the question to that function's callers."""
    if not isinstance(found, Found) or not found.defaulted:
        return found
    if function is None or not isinstance(call, ast.Call):
        return None
    first = [*function.args.posonlyargs, *function.args.args][:1]
    skips = bool(first) and first[0].arg in ("self", "cls")
    if forwarded:  # the defaults stand unless the outer callers pass them by keyword
        named = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k.arg is not None])
        return None if any(name in bind_arguments(named, function, skips_first=skips) for name in found.defaulted) else found
    bound = bind_arguments(call, function, skips_first=skips)
    passed = {k.arg for k in call.keywords}
    if any(name in bound or name in passed for name in found.defaulted) or None in passed:
        return None
    return dataclasses.replace(found, defaulted=())


def _kept_parameters(cls: ast.ClassDef | None) -> dict[str, str]:
    """The attributes the class's methods set once, in its `__init__`, each to one of its parameters it never
    rebinds (`self.layer = layer`): attribute -> parameter."""
    init = own_method(cls, "__init__", ast.FunctionDef) if cls is not None else None
    if init is None:
        return {}
    names = {a.arg for a in [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs]}
    stored = [n.id for n in ast.walk(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    kept: dict[str, list[str | None]] = {}
    for node in ast.walk(cls):
        for target in node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign) else []:
            if is_self_attribute(target):
                value = node.value if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
                in_init = value is not None and init.lineno <= node.lineno <= (init.end_lineno or init.lineno)
                parameter = value.id if in_init and isinstance(value, ast.Name) and value.id in names and value.id not in stored else None
                kept.setdefault(target.attr, []).append(parameter)
    return {attr: found[0] for attr, found in kept.items() if len(found) == 1 and found[0] is not None}


def _bound_once(function: ast.AST):
    """The names a function assigns one value to, each with (that value, None) (`out = layer(h)`), or with
    (the value, the position it unpacks) (`out, hidden = layer(h, hidden)`)."""
    for node in ast.walk(function):
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name):
            yield target.id, (node.value, None)
        elif isinstance(target, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in target.elts):
            yield from ((e.id, (node.value, i)) for i, e in enumerate(target.elts) if isinstance(e, ast.Name))


def _joined_items(values: ValueKinds, expr: ast.AST) -> list[ast.AST] | None:
    """The items a returned `torch.stack(outputs, 1)` / `torch.cat(outputs)` joins, when `outputs` is a list
    filled in the function (`outputs.append(out)` at each step); None for any other return."""
    joins = isinstance(expr, ast.Call) and values.ctx.qualified_name(expr.func) in STACK_FUNCTIONS and expr.args
    return values.listed_items(expr.args[0]) if joins and isinstance(expr.args[0], ast.Name) else None


def _of_own_attribute(made: object) -> bool:
    """Is `made` an activation of an attribute of `self` (`torch.sigmoid(self.p_logit)`, `self.w.sigmoid()`)?"""
    if not isinstance(made, ast.Call):
        return False
    operand = made.args[0] if made.args else made.func.value if isinstance(made.func, ast.Attribute) else None
    return operand is not None and is_self_attribute(operand)


def _agreed(resolved: list[Resolved | None]) -> Resolved | None:
    """The value all paths agree on (same kind, or same class), else None: unknown stays unknown."""
    if not resolved or any(r is None for r in resolved):
        return None
    first = resolved[0]
    if all(isinstance(r, Tuple) and len(r.values) == len(first.values) and r.keys == first.keys for r in resolved):  # element by element
        options = zip(*(((v, r.module) for v in r.values) for r in resolved))
        return Tuple(tuple(_Either(tuple(o)) for o in options), first.module, first.keys)
    if isinstance(first, Found):
        same = all(isinstance(r, Found) and (r.kind, r.layer) == (first.kind, first.layer) for r in resolved)
        if same and any(r.mixture or r.complement for r in resolved):  # one path combines or complements them: so may the result
            last = [r for r in resolved if r.complement][-1:] or resolved[-1:]
            return dataclasses.replace(last[0], mixture=any(r.mixture for r in resolved), padded=any(r.padded for r in resolved))
    else:
        same = all(r == first for r in resolved)
    return resolved[-1] if same else None


def _placed_line(made: Made) -> int:
    """Where a layer's kind is made: its activation's line, or, for an activation built on its own and
    listed by name in a container (`nn.Sequential(self.fc, self.softmax)` in `forward`), the container's."""
    return made.node.lineno if made.listed_apart else (made.activation or made.node).lineno


def _combined(parts: list[Resolved | None]) -> Found | None:
    """A linear combination of probabilities (softmax or sigmoid output, with one-hot rows) stays one; of
    raw logits (`logits / temperature`), raw logits: not normalised by a scale."""
    if any(not isinstance(part, Found) or part.layer for part in parts):
        return None
    kinds = {part.kind for part in parts} - {Kind.ONE_HOT}
    if kinds not in ({Kind.PROBABILITIES}, {Kind.SIGMOID}, {Kind.LOGITS}):
        return None
    first = next(part for part in parts if part.kind in kinds)
    return dataclasses.replace(first, mixture=True, padded=any(part.padded for part in parts))



_BY_BASE: WeakKeyDictionary = WeakKeyDictionary()  # module summary -> {a base's last name: the classes naming it}


def _classes_by_base(summary: ModuleSummary) -> dict[str, list[ClassSummary]]:
    """A module's classes by the last part of each base's name (`_names` matches no other), indexed once:
    `subclasses` asked for each class of a module read every class of it."""
    if summary not in _BY_BASE:
        found: dict[str, list[ClassSummary]] = {}
        for cls in summary.classes.values():
            for base in dict.fromkeys(b.rpartition(".")[2] for b in cls.bases):
                found.setdefault(base, []).append(cls)
        _BY_BASE[summary] = found
    return _BY_BASE[summary]
