"""Which mode-dependent parts of a model one forward pass reaches (`Modes.layer` asks, for ML302/ML303).

A model of a project class whose `forward` returns a tuple (`return z, recons, mu, logvar`) and whose
call keeps some of it (`_, recon, mu, var = mvae(x)` with only `mu` read after, `model(x)[2]`) depends on
the mode only through what reaches the kept elements: the expressions they are computed from in
`forward` (through its local names, the containers it appends to, and whole the methods of `self` it
calls), their reads of `self.training` and functional dropout, and the modules of `self` they call or
iterate. A `self.training` read in a test of `forward` reaches every element.

The modules of `self` are what the class writes to them (`objects.Objects.class_field`) for that one
construction: a module built there, the items of a container (`nn.ModuleList(encoders)`), or what the
construction passes for a parameter of `__init__`, read at the construction and, when that is a parameter
of the function around it (`MVAE(encoders, ...)` in `train(encoders, ...)`), under each call site of that
function (`callers.per_call_site`), item by item for a list or tuple of models (`[MLPEncoder(...),
TSEncoder(...)]`). A call site that passes a mode-dependent module makes the part mode-dependent; a part
of anything unknown leaves the answer unknown, and the class's own answer (`ModeLayers.of_constructor`)
stands.
"""
from __future__ import annotations

import ast

from mllint.analysis.facets.layers import CONTAINERS, FUNCTIONAL_DROPOUT, NO_LAYER, Layer, combine
from mllint.analysis.objects.call_sites import under
from mllint.analysis.objects.points_to import NONE, Obj
from mllint.analysis.program.callers import per_call_site
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.scopes import own_nodes
from mllint.analysis.syntax.tree import own_method, position
from mllint.analysis.values.values import ValueKinds, canonical_class

VALUES = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.JoinedStr)
MAX_REACH_DEPTH = 4  # modules of modules, arguments of callers' callers


def kept_elements(ctx, call: ast.Call) -> tuple[set[int], int | None] | None:
    """The elements of a returned tuple a call keeps, and how many it unpacks: those unpacked into names
    read afterwards (`_, recon, mu, var = model(x)`: ({2}, 4)), or the constant index taken (`model(x)[2]`:
    ({2}, None)); None: all of it."""
    parent = ctx.scopes.parent(call)
    if isinstance(parent, ast.Subscript) and parent.value is call:
        index = parent.slice
        return ({index.value}, None) if isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0 else None
    if not (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1):
        return None
    target = parent.targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)) or any(isinstance(t, ast.Starred) for t in target.elts):
        return None
    return {i for i, t in enumerate(target.elts) if not isinstance(t, ast.Name) or _read_after(ctx, t)}, len(target.elts)


def _read_after(ctx, target: ast.Name) -> bool:
    """Is the name read later in the source, where this binding reaches?"""
    values, after = ctx.analysis(ValueKinds), position(target)
    return any(
        position(read) > after and any(d.node is target for d in values.reaching_definitions(read))
        for read in ctx.scopes.loads(target.id)
    )  # fmt: skip


class OutputReach:
    """The mode-dependent layer one call of a model reaches (`layer`), for the modes of the linted file."""

    def __init__(self, modes) -> None:
        self.modes = modes

    def layer(self, ctx, construction: ast.Call, kept: tuple[set[int], int | None] | None) -> Layer | None:
        """The layer the kept elements of a call of the model `construction` (of `ctx`) builds reach:
        NO_LAYER when none, None when unknown (not a class of the project, or a part not known). A
        batch-norm-like layer anywhere in `forward` counts whatever is kept: it updates its statistics. An
        unpacking of another size than every tuple `forward` returns fails: nothing is evaluated."""
        made = Obj("made", construction, ctx=ctx)
        found = self.modes.objects._of(ctx).class_of(made)
        if found is None or len(found[1].bases) != 1:
            return None  # a base of the project holds parts of its own
        home, cls = found
        forward = own_method(cls, "forward")
        if forward is None or canonical_class(home.qualified_name(cls.bases[0])) != "torch.nn.Module":
            return None
        fields: dict[str, Layer | None] = {}
        everything = self._layers(home, cls, made, forward, [forward], fields)
        if kept is None or _stateful(_merge(everything)):
            return _merge(everything)
        returned = [n.value for n in own_nodes(forward.body) if isinstance(n, ast.Return) and n.value is not None]
        sizes = {len(r.elts) if isinstance(r, ast.Tuple) else -1 for r in returned}
        positions, unpacked = kept
        if unpacked is not None and -1 not in sizes and unpacked not in sizes:
            return NO_LAYER
        if len(sizes) != 1 or min(sizes) <= max(positions, default=-1):
            return _merge(everything)
        reached = _merge(self._layers(home, cls, made, forward, [r.elts[i] for r in returned for i in sorted(positions)], fields))
        if reached is None and _merge(everything) not in (None, NO_LAYER):
            return NO_LAYER  # what is known to depend on the mode is thrown away; what is kept, unknown
        return reached

    def _layers(self, home, cls: ast.ClassDef, made: Obj, forward: ast.AST, roots: list, fields: dict) -> list[Layer | None]:
        """The layers `roots` reach (`_parts`), the modules of `self` they use resolved once (`fields`)."""
        layers, attributes = _parts(home, cls, forward, roots)
        layers = [self._named(layer, home, cls.name) for layer in layers]
        for name in sorted(attributes):
            if name not in fields:
                fields[name] = self._field(home, cls, made, name)
            layers.append(fields[name])
        return layers or [NO_LAYER]

    def _field(self, home, cls: ast.ClassDef, made: Obj, name: str) -> Layer | None:
        """The layer of what the class writes to `self.<name>` for the object `made`."""
        objects = self.modes.objects._of(home)
        written = objects.class_field(made, name)
        if not written:
            return None
        init = own_method(cls, "__init__")
        return _merge([self._of_object(obj, made, init, 0, cls.name) for obj in _ordered(written)])

    def _named(self, layer: Layer | None, ctx, owner: str) -> Layer | None:
        """A layer made in another module, named by its owner and place (its node is not the linted file's)."""
        if layer is None or layer.node is None or ctx is self.modes.ctx:
            return layer
        where = self.modes.ctx.analysis(ProjectView).display_path(ctx.real_path or ctx.path)
        return Layer(None, layer.what, owner, f"{where}:{layer.node.lineno}")

    def _of_object(self, obj: Obj, made: Obj, init: ast.AST | None, depth: int, owner: str) -> Layer | None:
        if depth > MAX_REACH_DEPTH or obj is NONE:
            return NO_LAYER if obj is NONE else None
        objects = self.modes.objects._of(obj.ctx) if obj.ctx is not None else self.modes.objects
        if obj.kind == "parameter" and obj.node is init and init is not None:
            return self._passed(made, init, obj.name, depth, owner)
        if obj.kind != "made":
            return None
        node = obj.node
        if isinstance(node, ast.Call) and canonical_class(obj.ctx.qualified_name(node.func)) in CONTAINERS | {"list", "tuple"}:
            items = [objects.points_to(a) for a in node.args if not isinstance(a, ast.Starred)]
            if len(items) != len(node.args) or any(i is None for i in items):
                return None
            return _merge([self._of_object(o, made, init, depth + 1, owner) for found in items for o in _ordered(found)] or [NO_LAYER])
        if isinstance(node, (ast.List, ast.Tuple)):
            items = objects.member(obj, "[]")
            return _merge([self._of_object(o, made, init, depth + 1, owner) for o in _ordered(items)]) if items else None
        if isinstance(node, ast.Call):
            return self._named(self.modes.layers_in(obj.ctx).of_constructor(node), obj.ctx, owner)
        return NO_LAYER if isinstance(node, VALUES) else None  # a number, a string: no module

    def _passed(self, made: Obj, init: ast.AST, name: str, depth: int, owner: str) -> Layer | None:
        """What the construction passes for `__init__`'s parameter `name`: read there, or under each call
        site of the function around it (a call site passing a mode-dependent module decides)."""
        ctx, construction = made.ctx, made.node
        argument = bind_arguments(construction, init, skips_first=True).get(name)
        if argument is None:
            return None
        answers = list(per_call_site(ctx, argument, lambda binding: _bound(under(ctx, argument, binding))))
        sites = [found for found, binding in answers if binding is None or binding.site is not None] or [a for a, _ in answers]
        if not sites:
            return None
        found = [_merge([self._of_object(o, made, None, depth + 1, owner) for o in _ordered(objects)] or [None]) for objects in sites]
        layer = _merge([f for f in found if f is not None and f is not NO_LAYER])
        return layer if layer is not NO_LAYER else (None if any(f is None for f in found) else NO_LAYER)


def _merge(found: list[Layer | None]) -> Layer | None:
    """`combine`, a batch-norm-like layer first: it changes the model even where its output is not kept."""
    return next((f for f in found if _stateful(f)), None) or combine(found)


def _stateful(layer: Layer | None) -> bool:
    return layer is not None and "Norm" in layer.what


def _ordered(objects) -> list[Obj]:
    """Objects in source order (a message names the first layer found the same way every run)."""
    return sorted(objects, key=lambda o: (getattr(o.node, "lineno", 0), getattr(o.node, "col_offset", 0), o.name))


def _bound(found: frozenset | None) -> frozenset | None:
    """The objects, when none is a parameter still to bind (then the call sites tell)."""
    return None if found is None or any(o.kind == "parameter" for o in found) else found


def _parts(home, cls: ast.ClassDef, forward: ast.AST, returned: list[ast.AST]) -> tuple[list[Layer | None], set[str]]:
    """The layers the returned expressions read in `forward` (`self.training`, functional dropout) and
    the attributes of `self` they use, through `forward`'s names and the methods of `self` it calls."""
    assigned: dict[str, list[ast.AST]] = {}
    for node in own_nodes(forward.body):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        assigned.setdefault(name.id, []).append(node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    assigned.setdefault(name.id, []).append(node.iter)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            assigned.setdefault(node.func.value.id, []).extend(node.args)  # `recons.append(...)`
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)) and any(_reads_training(n) for n in ast.walk(node.test)):
            returned = [*returned, node.test]
    layers: list[Layer | None] = []
    attributes: set[str] = set()
    seen: set[str] = set()
    methods: set[ast.AST] = set()
    work = list(returned)
    while work:
        for node in ast.walk(work.pop()):
            if isinstance(node, ast.Name) and node.id == "self" and not isinstance(home.index.parents.get(node), ast.Attribute):
                layers.append(None)  # `self` handed on (`getattr(self, name)`, `helper(self)`): anything may run
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in seen:
                seen.add(node.id)
                work += assigned.get(node.id, [])
            elif _reads_training(node):
                layers.append(Layer(node, "self.training"))
            elif isinstance(node, ast.Call) and home.qualified_name(node.func) in FUNCTIONAL_DROPOUT:
                layers.append(Layer(node, home.text(node.func)))
            elif is_self_attribute(node):
                method = own_method(cls, node.attr)
                if method is None:
                    attributes.add(node.attr)
                elif method not in methods:
                    methods.add(method)
                    work += [method]
    return layers, attributes


def _reads_training(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "training" and is_self_attribute(node)
