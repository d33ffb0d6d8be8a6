"""Parameter coverage: which parts of a model of the project its `forward` runs, and which of them the
file's optimizers get the parameters of.

`uncovered_parts(ctx)` answers, for the optimizers constructed in the linted file over parts of a model
(`Adam(itertools.chain(model.encoder.parameters(), model.decoder.parameters()))`, lists, groups,
`filter(...)`, through names), which other part of that model its class's `forward` runs (`self.x(...)`,
a loop over a `ModuleList`, an item of a `ModuleDict`, in `forward` or a method of the class it calls)
with a graph (not under `torch.no_grad()`, not cut by `.detach()`) while no optimizer of the file gets its
parameters. A part is one the class builds itself in `__init__` with parameters (a layer passed in may
be pretrained and frozen elsewhere). Nothing is reported when the file tells an optimizer more
(`add_param_group`), freezes or reloads anything it cannot place (a `requires_grad` flag, `eval()`,
`load_state_dict` on the part or on the whole model), reads the part's parameters anywhere (an EMA
teacher, a second optimizer built elsewhere), or never runs the model whole (a stage that calls its parts).
An optimizer over a single part is reported only for a part that `forward` runs after it (the fresh head
on top of the trained trunk, never the trunk under a trained head: a linear probe) and when nothing in
the files loads a checkpoint.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mllint.analysis.facets.gradients import under_no_grad
from mllint.analysis.facets.parameters import OptimizerConstructors, Unregistered, _makes_parameters, owns_parameters
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.program.callers import Callers, per_call_site
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.project import ProjectView, place_in
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.values import ValueKinds
from mllint.source import one_line

# What may freeze, reload, or train a part some other way.
FREEZING = frozenset({"requires_grad_", "eval", "load_state_dict", "apply", "zero_grad"})
READING = frozenset({"parameters", "named_parameters", "state_dict", "load_state_dict", "requires_grad_", "buffers"})
LOADING = re.compile(r"load_state_dict|from_pretrained|torch\.load|torch\.hub|load_checkpoint")
FROZEN_TEXT = re.compile(r"requires_grad|load_state_dict|deepcopy")
MAX_HELPERS = 16  # methods of the class followed from `forward`


@dataclass(frozen=True)
class UncoveredPart:
    """A part of a model its `forward` runs that the optimizers over its other parts do not get."""

    optimizer: ast.Call  # the first optimizer over a part of the model
    model: str  # the model as the optimizer spells it: `model`, `self.model`
    missed: str  # the part's attribute: `bottleneck`
    taken: tuple[str, ...]  # the parts the optimizers get: `model.encoder`, `model.decoder`
    used: str  # where `forward` runs it: `self.bottleneck(...)` (autoencoder.py:12)


def uncovered_parts(ctx) -> list[UncoveredPart]:
    constructors = sorted(ctx.analysis(OptimizerConstructors).calls, key=lambda c: (c.lineno, c.col_offset))
    text = ctx.source.text
    if not constructors or "add_param_group" in text or not ("backward" in text or "training_step" in text):
        return []
    objects = ctx.analysis(Objects)
    parts: dict[str, dict[str, ast.AST]] = {}  # model text -> part -> the model node an optimizer spells
    first: dict[str, ast.Call] = {}
    whole: set[str] = set()
    for call in constructors:
        for owner in objects.parameter_owners(call):
            while isinstance(owner, (ast.Subscript, ast.Call)):  # `model.blocks[0]`, `model.get_head()`
                owner = owner.value if isinstance(owner, ast.Subscript) else getattr(owner.func, "value", None)
            if isinstance(owner, ast.Attribute) and _is_part(ctx, owner):
                model = ctx.text(owner.value)
                parts.setdefault(model, {})[owner.attr] = owner.value
                first.setdefault(model, call)
            elif owner is not None:
                whole.add(ctx.text(owner))
    found = []
    for model, taken in parts.items():
        if model in whole or any(model.startswith(w + ".") for w in whole):
            continue
        node = next(iter(taken.values()))
        home = _model_class(ctx, objects, node)
        if home is None or not _runs_whole(ctx, model):
            continue
        class_ctx, cls = home
        built = _own_parts(class_ctx, cls)
        covered = set(taken) & set(built)
        if not covered:
            continue
        uses = _forward_uses(class_ctx, cls)
        for missed in built:
            use = uses.get(missed)
            if missed in taken or use is None or not _left_alone(ctx, class_ctx, cls, model, missed):
                continue
            if len(covered) == 1 and not _runs_after(ctx, class_ctx, cls, uses, covered, missed):
                continue
            run = class_ctx.scopes.parent(use)
            shown = f"{class_ctx.text(use)}(...)" if isinstance(run, ast.Call) and run.func is use else class_ctx.text(use)
            where = f"`{one_line(shown, 40)}`, {place_in(ctx, class_ctx, use)}"
            found.append(UncoveredPart(first[model], model, missed, tuple(f"{model}.{t}" for t in taken), where))
    return found


def _is_part(ctx, owner: ast.Attribute) -> bool:
    """Is `owner` a part of a model (`model.encoder`, `self.model.encoder`, `self.encoder` in a method
    of a module class), not the model itself (`self.model` of a trainer)?"""
    if not is_self_attribute(owner):
        return True
    cls = ctx.scopes.enclosing_class(owner)
    return cls is not None and cls in ctx.analysis(ModuleClasses).modules


def _model_class(ctx, objects: Objects, expr: ast.AST) -> tuple[object, ast.ClassDef] | None:
    """The module class of the project the model is an instance of (its module's context with it), as the
    objects layer tells or, for a parameter, as the call sites pass it."""
    if isinstance(expr, ast.Name) and expr.id == "self":
        cls = ctx.scopes.enclosing_class(expr)
        return (ctx, cls) if cls is not None else None
    found = objects.points_to(expr)
    classes = {objects.class_of(obj) for obj in found} if found else {None}
    if len(classes) == 1 and None not in classes:
        home, cls = classes.pop()
        return (home, cls) if cls in home.analysis(ModuleClasses).modules else None
    if not isinstance(expr, (ast.Name, ast.Attribute)):
        return None
    values, view = ctx.analysis(ValueKinds), ctx.analysis(ProjectView)
    named = {q for q, _ in per_call_site(ctx, expr, lambda binding: view.instance_class(values.value(expr, binding=binding)))}
    summary = view.class_summary(named.pop()) if len(named) == 1 else None
    home, cls = summary[1].definition() if summary is not None else (None, None)
    return (home, cls) if cls is not None and cls in home.analysis(ModuleClasses).modules else None


def _runs_whole(ctx, model: str) -> bool:
    """Does the file call the model itself (`model(x)`, `self.model(x)`, `self(x)`), so that its `forward` runs?"""
    return any(ctx.text(call.func) == model for call in ctx.index.of_type(ast.Call))


def _own_parts(ctx, cls: ast.ClassDef) -> dict[str, ast.Call]:
    """The attributes `__init__` assigns only layers with parameters it builds: `self.head = nn.Linear(...)`."""
    init = own_method(cls, "__init__")
    assigned: dict[str, list[ast.AST]] = {}
    for node in ctx.index.within(cls, ast.Assign) if init is not None else ():
        for target in node.targets:
            if is_self_attribute(target):
                assigned.setdefault(target.attr, []).append(node.value)
    return {
        name: values[0] for name, values in assigned.items()
        if all(isinstance(v, ast.Call) and owns_parameters(ctx, v) for v in values)
    }  # fmt: skip


def _forward_uses(ctx, cls: ast.ClassDef) -> dict[str, ast.AST]:
    """Attribute -> its first read with a graph in `forward` or the methods it calls on `self`."""
    forward = own_method(cls, "forward")
    methods, seen, uses = [forward] if forward is not None else [], set(), {}
    while methods and len(seen) < MAX_HELPERS:
        method = methods.pop()
        if method in seen:
            continue
        seen.add(method)
        for node in ctx.index.within(method, ast.Attribute):
            if not (is_self_attribute(node) and isinstance(node.ctx, ast.Load)):
                continue
            parent = ctx.scopes.parent(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                helper = own_method(cls, node.attr)
                if helper is not None:
                    methods.append(helper)
                    continue
                if _cut(ctx, parent):
                    continue
            if not under_no_grad(ctx, node):
                uses.setdefault(node.attr, node)
    return uses


def _cut(ctx, call: ast.Call) -> bool:
    holder = ctx.scopes.parent(call)
    return isinstance(holder, ast.Attribute) and holder.attr in ("detach", "data")


def _left_alone(ctx, class_ctx, cls: ast.ClassDef, model: str, missed: str) -> bool:
    """Is nothing in the linted file or the class done to the part, or to the model whole, that may freeze
    it, reload it or hand its parameters to something else (`requires_grad`, `eval()`, `.parameters()`)?"""
    name = re.compile(rf"\b{re.escape(missed)}\b")
    for home, scope in ((ctx, None), (class_ctx, cls)):
        nodes = home.index.within(scope, ast.Attribute) if scope is not None else home.index.of_type(ast.Attribute)
        for node in nodes:
            if node.attr == "requires_grad" and isinstance(node.ctx, ast.Store):
                return False  # a flag set anywhere: what it freezes is not followed
            parent = home.scopes.parent(node)
            if not (isinstance(parent, ast.Call) and parent.func is node):
                continue
            receiver = home.text(node.value)
            if node.attr in FREEZING and (receiver in (model, "self") or name.search(receiver)):
                if node.attr != "eval" or name.search(receiver):
                    return False
            if node.attr in READING and name.search(receiver):
                return False
    return True


def _runs_after(ctx, class_ctx, cls: ast.ClassDef, uses: dict, taken: set[str], missed: str) -> bool:
    """Does `forward` itself run the missed part after the taken one (`self.head(self.backbone(x))`), and
    no file involved load a checkpoint (a pretrained part left as it is on purpose)?"""
    forward = own_method(cls, "forward")
    if forward is None or LOADING.search(ctx.source.text) or LOADING.search(class_ctx.text(cls)):
        return False
    order = {id(node): position for position, node in enumerate(_post_order(forward))}
    missed_at = order.get(id(uses[missed]))
    taken_at = [order.get(id(uses[t])) for t in taken if t in uses]
    return missed_at is not None and bool(taken_at) and all(t is not None and t < missed_at for t in taken_at)


def _post_order(node: ast.AST):
    """The nodes of a function in the order they finish running: a called layer after its arguments."""
    children = [*node.args, *node.keywords, node.func] if isinstance(node, ast.Call) else ast.iter_child_nodes(node)
    for child in children:
        yield from _post_order(child)
    yield node


def passed_lists(ctx, cls: ast.ClassDef) -> list[Unregistered]:
    """The attributes of a module class that keep the modules `__init__` is given in a plain list
    (`self.members = list(members)`, `tuple(...)`, `[*members]`, `[m for m in members]`) and that its
    methods read outside `torch.no_grad()`, when a call site of the class passes modules with parameters
    (an `nn.ModuleList` a project function builds) and its file builds an optimizer over the parameters of
    the model it constructs, not over those modules: `parameters()` of the model never reaches them."""
    init = own_method(cls, "__init__")
    if init is None or cls not in ctx.analysis(ModuleClasses).modules:
        return []
    names = {a.arg for a in init.args.args[1:] + init.args.kwonlyargs}
    found = []
    for node in ctx.index.within(init, ast.Assign):
        target = node.targets[0] if len(node.targets) == 1 else None
        name = _listed_parameter(node.value)
        if not (target is not None and is_self_attribute(target) and name in names and _read_with_graph(ctx, cls, target.attr)):
            continue
        for binding in ctx.analysis(Callers).bindings(init):
            passed = binding.argument(name)
            layer = _passed_modules(passed[0], passed[1]) if passed is not None and binding.site is not None else None
            if layer is not None and _optimized_whole(passed[0], cls, passed[1]):
                home, call = layer
                found.append(Unregistered(node.value, target.attr, call, "passed", f"{place_in(ctx, home, call)}, passed at {binding.place}"))
                break
    return found


def _listed_parameter(value: ast.AST) -> str | None:
    """`members` of `list(members)`, `tuple(members)`, `[*members]`, `[m for m in members]`."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple") and len(value.args) == 1:
        inner = value.args[0]
    elif isinstance(value, ast.List) and len(value.elts) == 1 and isinstance(value.elts[0], ast.Starred):
        inner = value.elts[0].value
    elif isinstance(value, ast.ListComp) and len(value.generators) == 1 and not value.generators[0].ifs:
        inner = value.generators[0].iter
    else:
        return None
    return inner.id if isinstance(inner, ast.Name) else None


def _read_with_graph(ctx, cls: ast.ClassDef, attribute: str) -> bool:
    """Does a method of the class other than `__init__` read `self.<attribute>` outside `no_grad`?"""
    return any(
        is_self_attribute(n) and n.attr == attribute and isinstance(n.ctx, ast.Load)
        and getattr(ctx.scopes.enclosing_function(n), "name", "") != "__init__" and not under_no_grad(ctx, n)
        for n in ctx.index.within(cls, ast.Attribute)
    )  # fmt: skip


def _passed_modules(home, argument: ast.AST) -> tuple[object, ast.Call] | None:
    """The module container with parameters a call site passes (`make_members(5)` returning an
    `nn.ModuleList` of layers), as the objects layer of the call site's file tells."""
    found = home.analysis(Objects).points_to(argument)
    made = [obj for obj in found or () if obj.kind == "made" and isinstance(obj.node, ast.Call)]
    if not made or len(made) != len(found):
        return None
    obj = made[0]
    return (obj.ctx, obj.node) if all(_makes_parameters(o.ctx, o.node) for o in made) else None


def _optimized_whole(home, cls: ast.ClassDef, argument: ast.AST) -> bool:
    """Does the call site's file build an optimizer over the parameters of an instance of `cls` (its
    `parameters()` whole), and nothing read the parameters of what it passes, freeze, or reload anything?"""
    if FROZEN_TEXT.search(home.source.text):
        return False
    objects = home.analysis(Objects)
    passed = objects.points_to(argument) or frozenset()
    held = [obj for call in home.analysis(OptimizerConstructors).calls for o in objects.parameter_owners(call) for obj in objects.points_to(o) or ()]
    if passed & set(held):
        return False
    classes = [objects.class_of(obj) for obj in held]  # the class as the call site's file reads it (its own parse)
    return any(found is not None and (found[1].name, found[1].lineno) == (cls.name, cls.lineno) for found in classes)
