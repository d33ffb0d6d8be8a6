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

from mllint.analysis.facets.detached import cut_along_chain
from mllint.analysis.facets.gradients import under_no_grad
from mllint.analysis.facets.parameters import OptimizerConstructors, Unregistered, _elements, _makes_parameters, _project_class
from mllint.analysis.objects.call_sites import built
from mllint.analysis.objects.points_to import NONE, Objects
from mllint.analysis.objects.returned import receivers
from mllint.analysis.program.callers import Callers, per_call_site
from mllint.analysis.program.calls import CallResolver, bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.project_view import ProjectView, place_in
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.values import ValueKinds, canonical_class
from mllint.source import one_line

# What may freeze, reload, or train a part some other way.
FREEZING = frozenset({"requires_grad_", "eval", "load_state_dict"})
READING = frozenset({"parameters", "named_parameters", "state_dict", "load_state_dict", "requires_grad_", "buffers"})
LOADING = re.compile(r"load_state_dict|from_pretrained|torch\.load|torch\.hub|load_checkpoint")
TRAINS = re.compile(r"backward|training_step")
PRETRAINED = re.compile(r"pretrained|weights")
COPYING = re.compile(r"load_state_dict\(\s*[\w.]+\.state_dict\(\)\s*\)")  # `target.load_state_dict(online.state_dict())`
UNTOUCHED = re.compile(r"requires_grad|no_grad|inference_mode|\.eval\(|load_state_dict|pretrained|torch\.load|weights=")
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
    runner: str = "forward"  # the method that runs it: `forward`, a learner's `step` that backpropagates


def uncovered_parts(ctx) -> list[UncoveredPart]:
    constructors = sorted(ctx.analysis(OptimizerConstructors).calls, key=lambda c: (c.lineno, c.col_offset))
    text = ctx.source.text
    if not constructors or "add_param_group" in text:
        return []
    objects = ctx.analysis(Objects)
    parts: dict[tuple, dict[str, ast.AST]] = {}  # (scope, model text) -> part -> the model node an optimizer spells
    keyed: dict[tuple, set | None] = {}  # ((scope, model), part) -> the items taken (None: the whole part)
    first: dict[tuple, ast.Call] = {}
    whole: set[tuple] = set()
    for call in constructors:
        scope = ctx.scopes.enclosing_class(call) or ctx.scopes.enclosing_function(call)  # a trainer's methods share
        for owner in objects.parameter_owners(call):
            key = None
            while isinstance(owner, (ast.Subscript, ast.Call)):  # `model.heads["cls"]`, `model.get_head()`
                key = _key(owner) if isinstance(owner, ast.Subscript) else None
                owner = owner.value if isinstance(owner, ast.Subscript) else getattr(owner.func, "value", None)
            if isinstance(owner, ast.Attribute) and not _is_part(ctx, owner):
                whole.add((scope, ctx.text(owner)))  # `self.model` of a trainer: a model, and a part of the trainer
            if isinstance(owner, ast.Attribute) and (_is_part(ctx, owner) or _learner(ctx, owner)):
                model = (scope, ctx.text(owner.value))
                parts.setdefault(model, {})[owner.attr] = owner.value
                first.setdefault(model, call)
                taken = keyed.get((model, owner.attr), set())
                keyed[(model, owner.attr)] = None if key is None or taken is None else taken | {key}
            elif owner is not None:
                whole.add((scope, ctx.text(owner)))
    found = []
    for (scope, model), taken in parts.items():
        if any(s is scope and (model == w or model.startswith(w + ".")) for s, w in whole):
            continue
        node = next(iter(taken.values()))
        home = _model_class(ctx, objects, node)
        learner = home is not None and home[1] not in home[0].analysis(ModuleClasses).modules
        if home is None or not (learner or _runs_whole(ctx, objects, model, node, scope)):
            continue
        class_ctx, cls = home
        built = _own_parts(ctx, class_ctx, cls)
        covered = set(taken) & set(built)
        if not covered:
            continue
        uses = _forward_uses(class_ctx, cls)
        for missed in built:
            use = uses.get(missed)
            items = _missed_items(class_ctx, built[missed], keyed.get(((scope, model), missed))) if missed in taken else None
            if (missed in taken and not items) or use is None or not _left_alone(ctx, class_ctx, cls, model, missed):
                continue
            if learner and not _untouched(class_ctx, built[missed]):
                continue  # a trainer's loss network (a perceptual VGG) is frozen or loaded where it is built
            alone = len(taken) == 1 and missed not in taken  # one part trained: a probe, unless it is a learner's fresh trunk
            if alone and not (_runs_after(ctx, class_ctx, cls, uses, covered, missed) or (learner and _unloaded(ctx, class_ctx, cls))):
                continue
            run = class_ctx.scopes.parent(use)
            shown = f"{class_ctx.text(use)}(...)" if isinstance(run, ast.Call) and run.func is use else class_ctx.text(use)
            where = f"`{one_line(shown, 40)}`, {place_in(ctx, class_ctx, use)}"
            name = missed + "".join(f"[{item!r}]" for item in items or ())
            shown_taken = tuple(f"{model}.{t}" + "".join(f"[{k!r}]" for k in sorted(keyed.get(((scope, model), t)) or (), key=str)) for t in taken)
            runner = "forward" if not learner else _roots(class_ctx, cls)[0].name
            found.append(UncoveredPart(first[(scope, model)], model, name, shown_taken, where, runner))
    return found


def _key(subscript: ast.Subscript):
    index = subscript.slice
    return index.value if isinstance(index, ast.Constant) and isinstance(index.value, (str, int)) else None


def _missed_items(ctx, container: ast.AST, taken: set | None) -> list:
    """The items of a `ModuleDict` (or `ModuleList`) literal the optimizers do not take, when they take
    some of them by constant key (`model.heads["cls"]`); empty when they take it whole."""
    if not taken or not isinstance(container, ast.Call) or len(container.args) != 1:
        return []
    literal = container.args[0]
    if isinstance(literal, ast.Dict) and all(isinstance(k, ast.Constant) for k in literal.keys):
        keys = [k.value for k in literal.keys]
    elif isinstance(literal, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in literal.elts):
        keys = list(range(len(literal.elts)))
    else:
        return []
    return [k for k in keys if k not in taken]


def _is_part(ctx, owner: ast.Attribute) -> bool:
    """Is `owner` a part of a model (`model.encoder`, `self.model.encoder`, `self.encoder` in a method
    of a module class), not the model itself (`self.model` of a trainer)?"""
    if not is_self_attribute(owner):
        return True
    cls = ctx.scopes.enclosing_class(owner)
    return cls is not None and cls in ctx.analysis(ModuleClasses).modules


def _learner(ctx, owner: ast.Attribute) -> bool:
    """Is `owner` a network a plain class (a learner, a trainer: no `nn.Module`) keeps on `self`?"""
    cls = ctx.scopes.enclosing_class(owner) if is_self_attribute(owner) else None
    return cls is not None and cls not in ctx.analysis(ModuleClasses).modules


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


def _runs_whole(ctx, objects: Objects, model: str, node: ast.AST, scope: ast.AST | None, follow: bool = True) -> bool:
    """Does the optimizer's scope (its class, its function, the module's top level) of a file that trains
    call the model itself (`model(x)`, `self(x)`, also under another name for the same object:
    `self.model = model`), so that its `forward` runs? A helper given the model (`def get_optimizer(model,
    lr)`) counts any such call of the file, or one where a call site passes it (`opt = make_optimizer(model)`
    beside `model(x)` in another module)."""
    held = (objects.points_to(node) or frozenset()) - {NONE}
    given = [o.name for o in held if o.kind == "parameter" and o.node is scope]
    if TRAINS.search(ctx.source.text) and _calls_whole(ctx, objects, model, held, scope, bool(given)):
        return True
    for binding in ctx.analysis(Callers).bindings(scope) if given and follow and len(given) == 1 else ():
        passed = binding.argument(given[0]) if binding.site is not None else None
        if passed is not None and isinstance(passed[1], (ast.Name, ast.Attribute)):
            home, argument = passed[0], passed[1]
            outer = home.scopes.enclosing_class(argument) or home.scopes.enclosing_function(argument)
            if _runs_whole(home, home.analysis(Objects), home.text(argument), argument, outer, follow=False):
                return True
    for home, name in receivers(ctx, held) if follow and not given else ():  # a builder's model, run by its callers
        outer = home.scopes.enclosing_class(name) or home.scopes.enclosing_function(name)
        if _runs_whole(home, objects._of(home), name.id, name, outer, follow=False):
            return True
    return False


def _calls_whole(ctx, objects: Objects, model: str, held: frozenset, scope: ast.AST | None, given: bool) -> bool:
    calls = ctx.index.of_type(ast.Call) if given or scope is None else ctx.index.within(scope, ast.Call)
    for call in calls:
        if scope is None and not given and ctx.scopes.enclosing_function(call) is not None:
            continue
        named = isinstance(call.func, ast.Name) or is_self_attribute(call.func)  # `net(x)`, `self.model(x)`, not a method
        if ctx.text(call.func) == model or (held and named and held & (objects.points_to(call.func) or frozenset())):
            return True
        if any(ctx.text(a) == model for a in call.args) and _runner(ctx, call, model):
            return True
    return False


def _runner(ctx, call: ast.Call, model: str) -> bool:
    """Does the project function `call` runs call the parameter the model is passed as (`train(net, opt)`
    with `def train(model, optimizer)` calling `model(x)`)? Not a function that builds an optimizer of its
    own (`pretrain(ae, loader)`): it runs the model for that optimizer, a stage of its own."""
    callee = CallResolver(ctx, ctx.analysis(ProjectView)).resolve(call)
    if callee is None:
        return False
    bound = bind_arguments(call, callee.function, skips_first=False)
    names = [name for name, argument in bound.items() if argument is not None and ctx.text(argument) == model]
    calls = callee.ctx.index.within(callee.function, ast.Call)
    if callee.ctx.analysis(OptimizerConstructors).calls.intersection(calls):
        return False
    return any(isinstance(c.func, ast.Name) and c.func.id in names for c in calls)


def _own_parts(linted, ctx, cls: ast.ClassDef) -> dict[str, ast.AST]:
    """The attributes `__init__` assigns only layers with parameters it builds: `self.head = nn.Linear(...)`,
    `self.proj, self.pred = mlp(d), mlp(k)` with a project function building the layers, or that every
    call site builds and passes."""
    init = own_method(cls, "__init__")
    assigned: dict[str, list[ast.AST]] = {}
    for node in ctx.index.within(cls, ast.Assign) if init is not None else ():
        for target in node.targets:
            pairs = zip(target.elts, node.value.elts) if _unpacked(target, node.value) else [(target, node.value)]
            for receiver, value in pairs:
                if is_self_attribute(receiver):
                    assigned.setdefault(receiver.attr, []).append(value)
    return {
        name: values[0] for name, values in assigned.items()
        if all(_fresh(ctx, v) or _fresh_argument(linted, ctx, init, v) for v in values)
    }  # fmt: skip


def _fresh(ctx, value: ast.AST) -> bool:
    """A layer with parameters built here, not frozen or reloaded as it is built."""
    return isinstance(value, ast.Call) and not _frozen_call(value) and _makes_parameters(ctx, value)


def _fresh_argument(linted, ctx, init: ast.AST, value: ast.AST) -> bool:
    """Is `value` a parameter of `__init__` every call site passes a fresh layer for (`Learner(encoder,
    mlp(512))`), in a file that loads no checkpoint and names no pretrained weights?"""
    if not (isinstance(value, ast.Name) and value.id in {a.arg for a in init.args.args[1:] + init.args.kwonlyargs}):
        return False
    bindings = [b for b in linted.analysis(Callers).bindings_in(ctx, init) if b.site is not None]
    for binding in bindings:
        passed = binding.argument(value.id)
        home, argument = (passed[0], passed[1]) if passed is not None else (None, None)
        if argument is None or not _fresh(home, argument) or LOADING.search(home.source.text) or PRETRAINED.search(home.text(argument)):
            return False
    return bool(bindings)


def _untouched(ctx, value: ast.AST) -> bool:
    """Does nothing that builds the layer freeze it or load weights into it: its constructor call, the
    project class it constructs, the calls a project function makes for it?"""
    if not isinstance(value, ast.Call):
        return True  # built and passed by every call site, which `_fresh_argument` read
    cls_ctx, cls = _project_class(ctx, value.func, canonical_class(ctx.qualified_name(value.func)) or "")
    texts = [ctx.text(value), *([cls_ctx.text(cls)] if cls is not None else [])]
    texts += [maker.text(call) for maker, call in built(ctx, value) or ()]
    return not any(UNTOUCHED.search(t) for t in texts)


def _frozen_call(call: ast.Call) -> bool:
    """`nn.Linear(8, 4).requires_grad_(False)`, `.eval()`: a layer frozen or reloaded as it is built."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in FREEZING for n in ast.walk(call))


def _unpacked(target: ast.AST, value: ast.AST) -> bool:
    """`a, b = x, y`: a tuple written out on both sides, element by element."""
    both = isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
    return both and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))


def _forward_uses(ctx, cls: ast.ClassDef) -> dict[str, ast.AST]:
    """Attribute -> its first read with a graph in `forward` (in a plain class: the methods that call
    `.backward()`) or the methods they call on `self`."""
    methods, seen, uses = _roots(ctx, cls), set(), {}
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
                if cut_along_chain(ctx, parent):
                    continue
            if not (under_no_grad(ctx, node) or _given_to_no_grad_method(ctx, cls, node)):
                uses.setdefault(node.attr, node)
    return uses


def _given_to_no_grad_method(ctx, cls: ast.ClassDef, node: ast.AST) -> bool:
    """Is `node` an argument of a call of the class's own method that runs under `no_grad` (a target
    network's soft update: `self.soft_update(self.online, self.target, tau)`)?"""
    call = ctx.scopes.parent(node)
    if not (isinstance(call, ast.Call) and node in call.args and is_self_attribute(call.func)):
        return False
    method = own_method(cls, call.func.attr)
    return method is not None and bool(method.body) and under_no_grad(ctx, method.body[0])


def _roots(ctx, cls: ast.ClassDef) -> list[ast.AST]:
    """`forward` of a module class; the methods of a plain class that call `.backward()`."""
    if cls in ctx.analysis(ModuleClasses).modules:
        return [m for m in [own_method(cls, "forward")] if m is not None]
    methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [m for m in methods if any(isinstance(n.func, ast.Attribute) and n.func.attr == "backward" for n in ctx.index.within(m, ast.Call))]


def _left_alone(ctx, class_ctx, cls: ast.ClassDef, model: str, missed: str) -> bool:
    """Is nothing in the linted file or the class done to the part, or to the model whole, that may freeze
    it, reload it or hand its parameters to something else (`requires_grad`, `eval()`, `.parameters()`)?"""
    for handled in (ctx.analysis(_Handled).whole, ctx.analysis(_Handled).within(class_ctx, cls)):
        flagged, frozen, words, read = handled
        if flagged or missed in words or missed in read or (frozen & {model, "self"}):
            return False
    return True


WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Handled:
    """What a file, or a class of the project, does to modules, read once: (does it set a `requires_grad`
    flag, the receivers it freezes or reloads whole, the names in those receivers but of `.eval()`, the
    names in the receivers whose parameters it reads outside an optimizer's constructor)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.whole = _handled(ctx, None)
        self._classes: dict[tuple[int, int], tuple] = {}

    def within(self, home, cls: ast.ClassDef) -> tuple:
        key = (id(home), id(cls))
        if key not in self._classes:
            self._classes[key] = _handled(home, cls)
        return self._classes[key]


def _handled(home, scope: ast.AST | None) -> tuple:
    flagged, frozen, words, read = False, set(), set(), set()
    constructors = home.analysis(OptimizerConstructors).calls
    nodes = home.index.within(scope, ast.Attribute) if scope is not None else home.index.of_type(ast.Attribute)
    for node in nodes:
        if node.attr == "requires_grad" and isinstance(node.ctx, ast.Store):
            owner = _flagged_owner(home, node)  # `for p in self.target.parameters(): p.requires_grad = False`
            flagged |= owner is None  # anything else: what it freezes is not followed
            frozen.add(home.text(owner)) if owner is not None else None
            words.update(WORD.findall(home.text(owner)) if owner is not None else ())
        parent = home.scopes.parent(node)
        if not (isinstance(parent, ast.Call) and parent.func is node):
            continue
        if _copied(home, node.value):
            continue  # `copy.deepcopy(self.projector).requires_grad_(False)`: a frozen copy (a target network)
        receiver = home.text(node.value)
        flagged |= node.attr == "requires_grad_" and isinstance(node.value, ast.Name)  # a loop's `m.requires_grad_(False)`
        if node.attr in FREEZING:
            frozen.add(receiver) if node.attr != "eval" else None
            words.update(WORD.findall(receiver))
        if node.attr in READING and not any(a in constructors for a in home.scopes.ancestors(parent)) and not _copied_into(home, parent):
            read.update(WORD.findall(receiver))
    return flagged, frozen, words, read


def _flagged_owner(ctx, node: ast.Attribute) -> ast.AST | None:
    """The module whose parameters a loop sets the flag of: `model.target` for `p.requires_grad = ...` in
    `for p in model.target.parameters():` (`for name, p in ....named_parameters():` too); None otherwise."""
    if not isinstance(node.value, ast.Name):
        return None
    for loop in ctx.scopes.ancestors(node):
        if isinstance(loop, ast.For) and node.value.id in {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}:
            iterated = loop.iter
            listed = isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr in ("parameters", "named_parameters")
            return iterated.func.value if listed and not _copied(ctx, iterated.func.value) else None
    return None


def _copied_into(ctx, read: ast.Call) -> bool:
    """`target.load_state_dict(online.state_dict())`: weights copied into another module (a target
    network), which trains nothing."""
    holder = ctx.scopes.parent(read)
    copying = isinstance(holder, ast.Call) and isinstance(holder.func, ast.Attribute) and holder.func.attr == "load_state_dict"
    return copying and read.func.attr == "state_dict" and read in holder.args


def _copied(ctx, receiver: ast.AST) -> bool:
    return isinstance(receiver, ast.Call) and ctx.qualified_name(receiver.func) == "copy.deepcopy"


def _unloaded(ctx, class_ctx, cls: ast.ClassDef) -> bool:
    """Do neither the optimizer's file nor the class load a checkpoint or pretrained weights (copying one
    module's weights into another, a target network, loads none)?"""
    texts = [COPYING.sub("", t) for t in (ctx.source.text, class_ctx.text(cls))]
    return not any(LOADING.search(t) or PRETRAINED.search(t) for t in texts)


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
    made = [obj for obj in found or () if obj.kind == "made"]
    layers = [(o.ctx, e) for o in made for e in ([o.node] if isinstance(o.node, ast.Call) else _elements(o.ctx, o.node))]
    if not made or len(made) != len(found) or not layers:
        return None  # a list literal or comprehension of layers counts by its elements: `[mlp(20, 1) for _ in range(5)]`
    return layers[0] if all(isinstance(e, ast.Call) and _makes_parameters(c, e) for c, e in layers) else None


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
