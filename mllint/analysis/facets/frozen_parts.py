"""Frozen fresh heads: a part of a model frozen for good although it holds freshly initialised weights and
runs after a part that trains (the new classifier of a linear probe frozen instead of the encoder, the
decoder just re-initialised frozen instead of the loaded encoder).

`frozen_fresh_parts(ctx)` lists, for the linted file, the freezes of a part `model.head` (its parameters'
`requires_grad` set to False in a loop with no condition, `requires_grad_(False)`, or a helper of the
project doing either to the module it is given: `freeze(model.decoder)`) when
- the part is fresh: every object it may be is a layer with parameters built by the program (`self.head =
  nn.Linear(...)` in the model's `__init__`, `model.fc = nn.Linear(...)` in a builder after it loaded the
  model's weights), built where nothing loads weights after it, and nothing in the file loads weights into
  the part or the model whole (`load_state_dict`, a helper named for loading given either); or the file
  re-initialises it before the freeze (`reset_parameters()` of the part or of the layers of a loop over
  it), loading nothing into it afterwards;
- it runs after another part of the model that the file leaves trainable: in the `forward` of the model's
  class (`self.head(self.encoder(x))`), or in the file itself (`net.head(net.encoder(x))`);
- the model's parameters reach an optimizer of the file, and the file trains (`backward`) and never sets a
  `requires_grad` flag back to True (a later unfreeze, a GAN's per-step toggle); the freeze itself runs
  once, not in a loop.
Frozen trunks under a trained head (a linear probe, even of random features), frozen loaded or pretrained
parts (a perceptual network, a teacher), and deep copies (a target network) are none of these.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mllint.analysis.facets.coverage import _flagged_owner, _forward_uses, _own_parts, _post_order
from mllint.analysis.facets.parameters import OptimizerConstructors, _makes_parameters
from mllint.analysis.objects.points_to import NONE, Objects
from mllint.analysis.program.calls import CallResolver, bind_arguments
from mllint.analysis.program.project_view import ProjectView, place_in
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.tree import own_method

LOADS = re.compile(r"load|restore|resume|checkpoint|ckpt|pretrained")  # calls that may put weights into what they get
PRETRAINED = re.compile(r"pretrained|weights|load")
UNFROZEN = re.compile(r"requires_grad\s*=(?!=)(?!\s*False)|requires_grad_\((?!\s*False)")
TRAINS = re.compile(r"\.backward\(|training_step")


@dataclass(frozen=True)
class FrozenFreshPart:
    freeze: ast.AST  # the statement or call that freezes the part
    part: str  # `net.head`
    fresh: str  # where its weights come from: `nn.Linear(64, 10)` (build.py:12), re-initialised (line 13)
    after: str  # the part that runs before it and trains: `net.encoder`
    runs: str  # where it runs after it: `self.decoder(self.encoder(x))` (factory.py:11)


def frozen_fresh_parts(ctx) -> list[FrozenFreshPart]:
    text = ctx.source.text
    if "requires_grad" not in text and "freeze" not in text.lower() or not TRAINS.search(text) or UNFROZEN.search(text):
        return []
    constructors = ctx.analysis(OptimizerConstructors).calls
    if not constructors:
        return []
    objects = ctx.analysis(Objects)
    trained = {ctx.text(owner) for call in constructors for owner in objects.parameter_owners(call)}
    freezes = list(_freezes(ctx))
    frozen = {ctx.text(part) for _, part in freezes}
    found = []
    for freeze, part in freezes:
        if not isinstance(part, ast.Attribute):
            continue  # a model frozen whole (ML412's), a copy frozen as it is made (a target network)
        model = part.value
        if ctx.text(model) not in trained or _in_loop(ctx, freeze) or _loaded(ctx, part, freeze):
            continue
        fresh = _reset(ctx, part, freeze) or _built_fresh(ctx, objects, part)
        ran = _runs_after(ctx, objects, part, frozen) if fresh else None
        if ran is not None:
            found.append(FrozenFreshPart(freeze, ctx.text(part), fresh, *ran))
    return found


def _freezes(ctx):
    """(the freeze, the part it freezes) for the file's freezes of a part of a model (`model.head`)."""
    for node in ctx.index.of_type(ast.Assign, ast.Call):
        if isinstance(node, ast.Assign):
            target = node.targets[0] if len(node.targets) == 1 else None
            flagged = isinstance(target, ast.Attribute) and target.attr == "requires_grad" and _false(node.value)
            owner = _flagged_owner(ctx, target) if flagged else None
            loop = ctx.scopes.parent(node)
            if owner is not None and isinstance(loop, ast.For) and node in loop.body:  # no condition picks some
                yield loop, owner
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" and node.args and _false(node.args[0]):
            owner = _flagged_owner(ctx, node.func) if isinstance(node.func.value, ast.Name) else node.func.value
            loop = ctx.scopes.parent(ctx.scopes.statement(node))
            if owner is not None and (owner is node.func.value or isinstance(loop, ast.For) and ctx.scopes.statement(node) in loop.body):
                yield (node if owner is node.func.value else loop), owner
        elif node.args and _freezes_argument(ctx, node):
            yield node, node.args[0]


def _false(value: ast.AST) -> bool:
    return isinstance(value, ast.Constant) and value.value is False


def _freezes_argument(ctx, call: ast.Call) -> bool:
    """Does a helper of the project freeze the module it gets first (`def freeze(module): for p in
    module.parameters(): p.requires_grad = False`)?"""
    callee = CallResolver(ctx, ctx.analysis(ProjectView)).resolve(call)
    if callee is None:
        return False
    bound = bind_arguments(call, callee.function, skips_first=False)
    names = [name for name, argument in bound.items() if argument is call.args[0]]
    home = callee.ctx
    for node in home.index.within(callee.function, ast.Assign, ast.Call):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "requires_grad":
            owner = _flagged_owner(home, node.targets[0])
            if isinstance(owner, ast.Name) and owner.id in names and _false(node.value):
                return True
        func = getattr(node, "func", None)
        if isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and isinstance(func.value, ast.Name) and node.args and _false(node.args[0]):
            owner = func.value if func.value.id in names else _flagged_owner(home, func)  # `module.requires_grad_(False)`, `p.requires_grad_(False)`
            if isinstance(owner, ast.Name) and owner.id in names:
                return True
    return False


def _in_loop(ctx, freeze: ast.AST) -> bool:
    """Does the freeze run more than once (in a loop: a per-step toggle)?"""
    return any(isinstance(a, (ast.For, ast.While)) for a in ctx.scopes.ancestors(freeze))


def _loaded(ctx, part: ast.Attribute, freeze: ast.AST) -> bool:
    """Does the file load weights, after the part's model is made, into the part or the model whole, or hand
    either to a call named for loading (`load_pretrained(model, path)`)?"""
    names = {ctx.text(part), ctx.text(part.value)}
    for call in ctx.index.of_type(ast.Call):
        func = call.func
        receiver = ctx.text(func.value) if isinstance(func, ast.Attribute) else None
        named = ctx.text(func)
        if (receiver in names or (receiver or "").startswith(ctx.text(part) + ".")) and LOADS.search(named):
            return True
        if LOADS.search(named) and any(ctx.text(a) in names for a in call.args):
            return True
    return False


def _reset(ctx, part: ast.Attribute, freeze: ast.AST) -> str | None:
    """`re-initialised (line 12)` when the freeze's scope calls `reset_parameters()` of the part, or of the
    layers a loop over it (`for layer in model.decoder`, `.modules()`, `.children()`) takes, before it."""
    scope = ctx.scopes.enclosing_function(freeze)
    wanted = ctx.text(part)
    for call in ctx.index.within(scope, ast.Call) if scope is not None else ctx.index.of_type(ast.Call):
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "reset_parameters") or call.lineno >= freeze.lineno:
            continue
        if ctx.text(func.value) == wanted or _iterates(ctx, func.value, wanted):
            return f"re-initialised (line {call.lineno})"
    return None


def _iterates(ctx, name: ast.AST, wanted: str) -> bool:
    """Is `name` the variable of a loop over the part or its modules (`for m in model.decoder.modules()`)?"""
    if not isinstance(name, ast.Name):
        return False
    for loop in ctx.scopes.ancestors(name):
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id == name.id:
            over = loop.iter
            if isinstance(over, ast.Call) and isinstance(over.func, ast.Attribute) and over.func.attr in ("modules", "children"):
                over = over.func.value
            return ctx.text(over) == wanted
    return False


def _built_fresh(ctx, objects: Objects, part: ast.Attribute) -> str | None:
    """`nn.Linear(64, 10)` (build.py:12) when every object the part may be is a layer with parameters the
    program builds and loads no weights into afterwards: written to the model by the builder that makes it
    after any loading there (`model.fc = nn.Linear(...)` after `model.load_state_dict(...)`), or, when that
    builder loads nothing, by the model's `__init__` in a class that loads nothing."""
    made = []
    for obj in objects.points_to(part) or ():
        if obj is NONE or obj.kind != "field" or obj.base is None or obj.base.kind != "made":
            return None
        base, home = obj.base, obj.base.ctx
        builder = home.scopes.enclosing_function(base.node) or home.tree
        calls = home.index.within(builder, ast.Call) if builder is not home.tree else home.index.of_type(ast.Call)
        loaded = max((c.lineno for c in calls if LOADS.search(home.text(c.func))), default=0)
        written = _written_after(home, builder, base.node, part.attr, loaded)
        if written is not None:
            made.append((home, written))
            continue
        if loaded:
            return None
        for inner in objects._of(home).held(obj) or ():
            found = (inner.ctx, inner.ctx.scopes.enclosing_class(inner.node)) if inner.kind == "made" else objects.class_of(base)
            built = _own_parts(ctx, *found).get(part.attr) if found is not None and found[1] is not None else None
            if built is None or LOADS.search(found[0].text(found[1])):
                return None  # not what the class's `__init__` builds, or a class that loads weights
            made.append((found[0], built))
    if not made or not all(isinstance(c, ast.Call) and _makes_parameters(h, c) and not PRETRAINED.search(h.text(c)) for h, c in made):
        return None
    home, call = made[0]
    return f"`{home.text(call)}` ({place_in(ctx, home, call)})"


def _written_after(home, builder: ast.AST, made: ast.AST, attribute: str, line: int) -> ast.AST | None:
    """What the builder writes to `<model>.<attribute>` after `line`, `<model>` the name it binds the model
    it makes to (`net = nn.Module()` then `net.head = nn.Linear(...)`)."""
    names = {t.id for a in home.index.within(builder, ast.Assign) if a.value is made for t in a.targets if isinstance(t, ast.Name)}
    for node in home.index.within(builder, ast.Assign):
        target = node.targets[0] if len(node.targets) == 1 else None
        if isinstance(target, ast.Attribute) and target.attr == attribute and isinstance(target.value, ast.Name):
            if target.value.id in names and node.lineno > line:
                return node.value
    return None


def _runs_after(ctx, objects: Objects, part: ast.Attribute, frozen: set[str]) -> tuple[str, str] | None:
    """(the trainable part that runs before it, where) when the model's class's `forward` runs the part after
    another one the file leaves trainable, or the file calls it on that part's output (`net.head(net.encoder(x))`)."""
    model = ctx.text(part.value)
    for call in ctx.index.of_type(ast.Call):
        if ctx.text(call.func) != ctx.text(part):
            continue
        for inner in (n for a in call.args for n in ast.walk(a)):
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and ctx.text(inner.func.value) == model:
                if inner.func.attr != part.attr and ctx.text(inner.func) not in frozen:
                    return ctx.text(inner.func), f"`{ctx.text(call)}`, line {call.lineno}"
    classes = {objects.class_of(o.base) for o in objects.points_to(part) or () if o is not NONE and o.kind == "field" and o.base is not None}
    if len(classes) != 1 or None in classes:
        return None
    home, cls = classes.pop()
    forward = own_method(cls, "forward")
    uses = _forward_uses(home, cls) if forward is not None else {}
    if part.attr not in uses:
        return None
    order = {id(node): position for position, node in enumerate(_post_order(forward))}
    missed_at = order.get(id(uses[part.attr]))
    for name, use in uses.items():
        before = order.get(id(use))
        if name != part.attr and f"{model}.{name}" not in frozen and before is not None and missed_at is not None and before < missed_at:
            if is_self_attribute(use) and _makes_parameters_attribute(home, cls, name):
                run = home.scopes.statement(uses[part.attr])
                return f"{model}.{name}", f"`{home.text(run).strip()}`, {place_in(ctx, home, run)}"
    return None


def _makes_parameters_attribute(home, cls: ast.ClassDef, name: str) -> bool:
    """Does `__init__` assign `self.<name>` something with parameters, or a module it is given?"""
    init = own_method(cls, "__init__")
    for node in home.index.within(init, ast.Assign) if init is not None else ():
        for target in node.targets:
            elements = zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) else [(target, node.value)]
            for receiver, value in elements:
                if is_self_attribute(receiver) and receiver.attr == name:
                    return isinstance(value, ast.Name) or _makes_parameters(home, value)
    return False
