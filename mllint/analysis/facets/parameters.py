"""Modules, their parameters and the optimizers built over them, in the order a function writes them.

`is_module` answers whether an expression holds an `nn.Module` (not a tensor): a torch.nn layer, a module
class of the file or of the project, a model from a well-known factory, a `self.` attribute assigned one,
a loop variable over `model.modules()`/`children()`, or, when nothing says what it holds, a name such as
`model`, `self.backbone` or `text_encoder`. `optimizer_over` reads which modules an optimizer
constructor takes all the parameters of (`Adam(model.parameters())`), and which it takes filtered
(`filter(lambda p: p.requires_grad, model.parameters())`); `built_by_helper` the same for a call of a
project function that returns an optimizer built over what it is given (`build_optimizer(model, cfg)`). `adds_layer` tells an assignment of a new layer
with parameters to a module's attribute (`model.fc = nn.Linear(...)`), and `layer_owners` the modules
that get a layer (to group a scope's assignments by them). `unregistered_layers` finds layers a module
class keeps in a plain list or dict attribute, where `parameters()` never looks; `unused_parameter_groups`
the parameter groups built and never handed on (to an optimizer).
"""
from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass

from mllint.analysis.objects.call_sites import built, classes_of, getattr_names, made_classes, substituted
from mllint.analysis.objects.callees import method_called
from mllint.analysis.objects.points_to import NONE, Obj, Objects
from mllint.analysis.program.callers import constructions, per_call_site
from mllint.analysis.program.calls import CallResolver, bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.hierarchy import lineage
from mllint.analysis.facets.gradients import CONTAINERS, PARAMETRISED
from mllint.analysis.values.library_models import NOT_MODULES, is_library_factory, library_model
from mllint.analysis.values.optimizers import is_optimizer
from mllint.analysis.program.project_view import ProjectView, followed_view, place_in
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.scope_groups import dotted_prefixes
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.scopes import first_parameter, parameters
from mllint.analysis.syntax.tree import assignment_targets, own_method, position
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import ValueKinds, canonical_class

# What an object of unknown origin is called when it is a module (`self.network`, `model.text_encoder`).
MODULE_NAME = re.compile(r"(^|_)(model|net|network|backbone|encoder|decoder|head|classifier|module)$", re.IGNORECASE)
# The submodules of models from torchvision, timm, the hub and transformers, by attribute (not their
# parameters: `pos_embed`, `cls_token` are tensors).
LIBRARY_SUBMODULE = re.compile(
    r"^(layer\d+|fc|conv\d*|bn\d*|features|classifier|heads?|avgpool|stem|blocks|stages|encoder|decoder|embeddings"
    r"|patch_embed|norm|pooler|bert|roberta|transformer|vision_model|text_model|lm_head|backbone|layers)$"
)
SUBMODULE_ITERATORS = frozenset({"modules", "children", "named_modules", "named_children"})
# `param.require_grad = False`: names that are not the tensor flag.
REQUIRES_GRAD_TYPOS = frozenset({"require_grad", "requires_grads", "require_grads", "requires_grad_"})
# Methods of a model that neither make parameters trainable again nor add any.
HARMLESS_MODULE_METHODS = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "double", "parameters"})


# Calls that register modules themselves (a class making any is left alone), and that only read a list.
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
REGISTERING = frozenset({"add_module", "register_module", "register_parameter", "setattr"})
LIST_READERS = frozenset({"enumerate", "zip", "len", "reversed", "range", "iter", "isinstance", "print"})
FILLING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault"})
VIEWS = frozenset({"values", "items", "copy"})  # what reads a container's layers whole
# What a part's method may do to the optimizer's view of it: give its parameters, freeze it, reload it.
PART_SETTERS = frozenset({"parameters", "named_parameters", "requires_grad_", "eval", "load_state_dict", "apply", "modules", "children"})
FREEZING_TEXT = re.compile(r"requires_grad|no_grad|inference_mode|\.eval\(|detach")
FREEZING_TEXT_BYTES = re.compile(rb".")  # a callee of any module is read for `FREEZING_TEXT`
LITERALS = (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp)
ELEMENTS = (*LITERALS, ast.GeneratorExp)  # what a container module's argument lists its layers in
DICT_CONSTRUCTORS = frozenset({"dict", "collections.OrderedDict", "collections.defaultdict"})
PLAIN_CONSTRUCTORS = DICT_CONSTRUCTORS | {"list", "tuple"}


@dataclass(frozen=True)
class Optimized:
    module: ast.AST  # `model` in `model.parameters()`
    filtered: bool  # the parameters pass through `filter(...)` or a comprehension


def is_optimizer_constructor(ctx, call: ast.Call) -> bool:
    return is_optimizer(ctx.qualified_name(call.func)) or (
        isinstance(call.func, ast.Name | ast.Subscript) and ctx.qualified_name(call.func) is None
        and is_optimizer(ctx.analysis(Objects).called_name(call.func))
    )  # `make_opt(model.parameters())` with `make_opt = partial(torch.optim.AdamW, lr=...)`


class OptimizerConstructors:
    """The optimizer constructors of a file, found once for the rules that visit every call."""

    def __init__(self, ctx) -> None:
        self.calls = frozenset(c for c in ctx.index.by_type.get(ast.Call, ()) if is_optimizer_constructor(ctx, c))


def optimizer_over(ctx, call: ast.Call) -> list[Optimized]:
    """The modules whose `parameters()` an optimizer constructor receives."""
    found = []
    for node in ast.walk(call):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parameters":
            if node is not call and not node.args and not node.keywords:
                found.append(Optimized(node.func.value, _filtered(ctx, node, call)))
    return found


def built_by_helper(ctx, call: ast.Call) -> list[str] | None:
    """For a call of a module-level project function whose every `return` is an optimizer constructor
    (`def build_optimizer(model, cfg): return AdamW(model.parameters(), ...)`), the modules it takes the
    parameters of, written as the call's arguments (`net` for `build_optimizer(net, cfg)`, `net.head` for
    a param group over `model.head.parameters()`); the modules not given by the call are left out. None
    when the call runs no such function."""
    found = optimizer_helper(ctx.analysis(ProjectView), ctx, call)
    if found is None:
        return None
    helper, function, constructors = found
    arguments = bind_arguments(call, function, skips_first=False)
    modules = []
    for constructor in constructors:
        for optimized in optimizer_over(helper, constructor):
            root, path = _root(optimized.module)
            argument = arguments.get(root.id) if root is not None and _is_parameter_of(helper, root, function) else None
            if argument is not None:
                modules.append(ctx.text(argument) + path)
    return modules


def optimizer_helper(view: ProjectView, ctx, call: ast.Call) -> tuple[object, ast.AST, list[ast.Call]] | None:
    """For a call (of `ctx`) of a project function whose every `return` is an optimizer constructor of its
    module: (that module's context, the function, the constructors); `view` finds the function."""
    qualified = ctx.qualified_name(call.func)
    found = view.function(qualified) if qualified else None
    if found is None:
        return None
    helper, function = found
    values = helper.analysis(ValueKinds)
    constructors = [values.constructor(r) for r in function_returns(function) or []]
    if not constructors or not all(c is not None and is_optimizer_constructor(helper, c) for c in constructors):
        return None
    return helper, function, constructors


def _root(expr: ast.AST) -> tuple[ast.Name | None, str]:
    """`model` and `.encoder.layer` for `model.encoder.layer`."""
    path = ""
    while isinstance(expr, ast.Attribute):
        path, expr = f".{expr.attr}{path}", expr.value
    return (expr, path) if isinstance(expr, ast.Name) else (None, "")


def _is_parameter_of(ctx, name: ast.Name, function: ast.AST) -> bool:
    definitions = ctx.analysis(ValueKinds).reaching_definitions(name)
    return bool(definitions) and all(d.node is function and d.value is None for d in definitions)


def _filtered(ctx, parameters: ast.Call, constructor: ast.Call) -> bool:
    for ancestor in ctx.scopes.ancestors(parameters):
        if ancestor is constructor:
            return False
        if isinstance(ancestor, (ast.comprehension, ast.Lambda)) or (
            isinstance(ancestor, ast.Call) and isinstance(ancestor.func, ast.Name) and ancestor.func.id == "filter"
        ):
            return True
    return False


def is_module(ctx, expr: ast.AST, depth: int = 0) -> bool:
    """Does `expr` hold an `nn.Module` (never a parameter or another tensor)? A name bound only to other
    references (`enc = self.net.encoder`, `enc, head = net.encoder, net.head`) holds what they hold."""
    aliased = ctx.analysis(ValueKinds).aliased(expr) if depth < MAX_DEPTH else None
    if aliased is not None and all(is_module(ctx, value, depth + 1) for value in aliased):
        return True
    if isinstance(expr, ast.Name) and _iterates_submodules(ctx, expr):
        return True
    named = _named_attributes(ctx, expr) if depth < MAX_DEPTH else None
    if named is not None:  # (attributes written for the question: their call sites are those of `expr`)
        return all(_is_submodule(ctx, attribute) or _module_objects(ctx, attribute, at=expr) for attribute in named)
    values = ctx.analysis(ValueKinds)
    constructor = values.constructor(expr)
    if constructor is not None and is_module_constructor(ctx, constructor):
        return True
    instance = _instance_class(ctx, expr)
    if instance is not None and ctx.analysis(ProjectView).is_module_class(instance):
        return True
    if (isinstance(expr, ast.Attribute) and _is_submodule(ctx, expr)) or _module_objects(ctx, expr):
        return True
    return constructor is None and instance is None and _named_like_a_module(ctx, expr)


def _named_attributes(ctx, expr: ast.AST) -> list[ast.Attribute] | None:
    """The attributes `getattr(obj, name)` may read (`call_sites.getattr_names`): `obj.layer1`, `obj.layer2`;
    None for any other expression, or a name not known."""
    names = getattr_names(ctx, expr)
    return [ast.copy_location(ast.Attribute(value=expr.args[0], attr=n, ctx=ast.Load()), expr) for n in sorted(names)] if names else None


def _named_like_a_module(ctx, expr: ast.AST) -> bool:
    """`model`, `self.backbone`, `net.text_encoder`: a parameter or attribute named like a module."""
    name = expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else ""
    if not MODULE_NAME.search(name) or ctx.qualified_name(expr) is not None:
        return False
    if isinstance(expr, ast.Name):  # only a name whose every binding is unknown (a parameter)
        return all(d.value is None for d in ctx.analysis(ValueKinds).reaching_definitions(expr))
    return True


def _module_objects(ctx, expr: ast.AST, at: ast.AST | None = None) -> bool:
    """Is every object `expr` may be an nn.Module, as the objects layer tells: made by a module constructor
    (here, or by a project factory: `self.model = create_model(cfg)`), or a submodule of one, however deep
    (`self.model.encoder.block3`: what the project classes write to those attributes), as the file tells
    or under a call site of the function around it (`def freeze(model): model.stem.requires_grad = False`;
    `at`: where `expr` stands, when it is not in the tree)?"""
    objects = ctx.analysis(Objects)

    def modules(binding) -> bool | None:
        found = _concrete(objects, substituted(objects, objects.points_to(expr), binding), 0)
        return (bool(found) and all(_is_module_object(objects, obj) for obj in found)) or None

    return any(per_call_site(ctx, at or expr, modules))


def _concrete(objects: Objects, found: frozenset | None, depth: int) -> frozenset | None:
    """`found` with each attribute of an object of a project class replaced by what the class writes there."""
    if not found or depth > MAX_DEPTH:
        return None
    result: set[Obj] = set()
    for obj in found - {NONE}:
        if obj.kind == "field" and obj.name == "[]":
            return None  # an item of a container nothing known fills
        if obj.kind == "field":
            bases = _concrete(objects, frozenset({obj.base}), depth + 1)
            if bases is None:
                return None
            for base in bases:
                if _library_submodule(base, obj.name):
                    result.add(Obj("field", name=obj.name, base=base, ctx=obj.ctx))
                    continue
                inner = _concrete(objects, objects.class_field(base, obj.name), depth + 1)
                if inner is None:
                    return None
                result |= inner
        else:
            result.add(obj)
    return frozenset(result)


def _library_submodule(base: Obj, name: str) -> bool:
    """`resnet.layer4`, `vit.heads` of a library model."""
    made = base.kind == "made" and isinstance(base.node, ast.Call)
    return made and bool(LIBRARY_SUBMODULE.match(name)) and library_model(base.ctx, base.node) is not None


def _is_module_object(objects: Objects, obj: Obj) -> bool:
    if obj.kind == "field":
        return _library_submodule(obj.base, obj.name)
    if obj.kind == "self":
        return obj.node in obj.ctx.analysis(ModuleClasses).modules
    if obj.kind != "made" or not isinstance(obj.node, ast.Call):
        return False
    if isinstance(obj.node.func, ast.Subscript):  # `MODELS[name](cfg)`: what the table holds there
        names = made_classes(obj.ctx, obj.node, objects.ctx)
        return bool(names) and None not in names and all(_names_module_class(obj.ctx, canonical_class(n)) for n in names)
    return is_module_constructor(obj.ctx, obj.node)


def _instance_class(ctx, expr: ast.AST) -> str | None:
    """The project class `expr` is an instance of (`model` after `model = Net().to(device)`)."""
    value = ctx.analysis(ValueKinds).value(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    return None if value is None else ctx.analysis(ProjectView).instance_class(value)


def _is_submodule(ctx, attribute: ast.Attribute) -> bool:
    """`model.encoder` where `model`'s project class assigns `self.encoder` module constructors only, or
    `model.layer4` of a library model (`torchvision.models.resnet50()`, here or in a project factory)."""
    if LIBRARY_SUBMODULE.match(attribute.attr) and any(
        library_model(built, call) is not None or is_library_factory(built.qualified_name(call.func) or "")
        for (built, call), _ in constructions(ctx, attribute.value)
    ):
        return True
    instance = _instance_class(ctx, attribute.value)
    found = ctx.analysis(ProjectView).class_summary(instance) if instance is not None else None
    class_ctx, cls = found[1].definition() if found is not None else (None, None)
    if cls is None:
        return False
    assigned = [
        node.value
        for node in class_ctx.index.within(cls, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute) and target.attr == attribute.attr
        and isinstance(target.value, ast.Name) and target.value.id == "self"
    ]  # fmt: skip
    return bool(assigned) and all(isinstance(v, ast.Call) and is_module_constructor(class_ctx, v) for v in assigned)


def is_module_constructor(ctx, call: ast.Call) -> bool:
    """`nn.Linear(...)`, `Net()` for a module class of this file, `torchvision.models.resnet18()`..."""
    name = canonical_class(ctx.qualified_name(call.func))
    if name is None:
        return isinstance(call.func, ast.Name) and call.func.id in _module_class_names(ctx)
    return _names_module_class(ctx, name)


def made_module(ctx, home, call: ast.Call) -> bool:
    """Is `call`, of the module `home` (another module of the project, read for the linted file `ctx`), the
    constructor of a module, as `ctx` knows the project's classes?"""
    name = canonical_class(home.qualified_name(call.func))
    return _names_module_class(ctx, name) if name is not None else is_module_constructor(home, call)


def _names_module_class(ctx, name: str) -> bool:
    """Is `name` (qualified) an nn.Module class, or a factory of library models?"""
    if name in NOT_MODULES or name.startswith(("torch.nn.Parameter", "torch.nn.Buffer")):
        return False
    last = name.rsplit(".", 1)[-1]
    if name == f"torch.nn.{last}" and last[:1].isupper():
        return True
    if is_library_factory(name) or last == "from_pretrained":
        return True
    return last in _module_class_names(ctx) or ctx.analysis(ProjectView).is_module_class(name)


def adds_layer(ctx, call: ast.AST) -> bool:
    """Is `call` the constructor of a layer that owns parameters (not `nn.Identity()`, not `nn.ReLU()`)?"""
    if not isinstance(call, ast.Call):
        return False
    name = canonical_class(ctx.qualified_name(call.func))
    if name in CONTAINERS:
        return any(adds_layer(ctx, argument) for argument in call.args)
    if name in PARAMETRISED:
        return True
    return not (name or "").startswith("torch.") and is_module_constructor(ctx, call)


def layer_owners(ctx, assign: ast.Assign) -> list[str]:
    """The modules an assignment adds a layer to, for `ScopeGroups`: `model` and `model.encoder` for
    `model.encoder.fc = nn.Linear(...)`."""
    dotted = [target for target in assign.targets if not isinstance(target, ast.Name)]  # a name has no owner
    owners = [owner for target in dotted for owner in dotted_prefixes(ctx.text(target))]
    return owners if owners and adds_layer(ctx, assign.value) else []


def _module_class_names(ctx) -> set[str]:
    return {cls.name for cls in ctx.analysis(ModuleClasses).modules}


def _iterates_submodules(ctx, name: ast.Name) -> bool:
    """`m` in `for m in model.modules():` (or `for _, m in model.named_children():`)."""
    for definition in ctx.analysis(ValueKinds).reaching_definitions(name):
        loop = ctx.scopes.parent(definition.node)
        if isinstance(loop, ast.Tuple):
            if loop.elts[-1] is not definition.node:
                return False
            loop = ctx.scopes.parent(loop)
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            return False
        for iterated in ctx.analysis(ValueKinds).item_sources(loop.iter) or [None]:  # also `[m for m in model.modules() if ...]`
            if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)):
                return False
            if iterated.func.attr not in SUBMODULE_ITERATORS:
                return False
    return bool(ctx.analysis(ValueKinds).reaching_definitions(name))



@dataclass(frozen=True)
class Unregistered:
    """A plain list or dict attribute of a module class that layers with parameters go into, or a plain
    object (an instance of a project class that is no `nn.Module`) that holds some."""

    container: ast.AST  # `[]` in `self.blocks = []`, `make_layers(dims)`, `AdapterBank(tasks, d)`
    attribute: str  # `blocks`
    layer: ast.Call  # the first layer that goes in
    kind: str  # "list", "dict", "tuple", "passed" (given to `__init__`), or "object" (the holder's class and where it is then in `holder`)
    where: str  # where the layer is: `line 12`, `utils.py:7`
    holder: str = ""  # `AdapterBank`; for a container a function stores on a module it is given, the module's class
    holder_at: str = ""  # where its class is: `adapters.py:4`
    receiver: str = ""  # the name the function gives the module (`model` of `model.adapters = [...]`)
    parameters: bool = False  # it holds `nn.Parameter`s made where they go in, no layers


def unregistered_layers(ctx, cls: ast.ClassDef) -> list[Unregistered]:
    """The plain list and dict attributes of an `nn.Module` class that receive layers with parameters
    (`self.blocks = []` then `self.blocks.append(nn.Linear(...))`, `self.heads = {k: nn.Linear(...)}`,
    `OrderedDict(...)` of them, a list a project function fills and returns: `self.layers =
    make_layers(dims)`), and the instances of plain project classes that hold such layers (`self.bank =
    AdapterBank(tasks, d)`), that the class reads elsewhere, when nothing registers them: every assignment
    of the attribute is one, the attribute is never handed to a call (`nn.Sequential(*self.blocks)`,
    `nn.ModuleList(self.blocks)`) and the class calls no `add_module`, `register_module` or `setattr`."""
    if cls not in ctx.analysis(ModuleClasses).modules:
        return []
    calls = ctx.index.within(cls, ast.Call)
    if any(_called(call) in REGISTERING for call in calls):
        return []
    assigned: dict[str, list[ast.AST]] = {}
    unpacked: dict[ast.AST, ast.Attribute] = {}  # item i of a builder's call -> the attribute it is unpacked into
    for node in ctx.index.within(cls, ast.Assign, ast.AnnAssign):
        for target in assignment_targets(node):
            if is_self_attribute(target) and node.value is not None:
                assigned.setdefault(target.attr, []).append(node.value)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Call) and not any(isinstance(e, ast.Starred) for e in target.elts):
                for i, element in enumerate(target.elts):  # `self.trunk, self.heads = build(d)`
                    if is_self_attribute(element):
                        item = ast.copy_location(ast.Subscript(value=node.value, slice=ast.Constant(i), ctx=ast.Load()), node.value)
                        unpacked[item] = element
                        assigned.setdefault(element.attr, []).append(item)
    found = []
    for attribute, values in assigned.items():
        held = [_container(ctx, v) or _held_by_object(ctx, v) for v in values]
        held = [(unpacked.get(h[0], h[0]), *h[1:]) if h else h for h in held]
        if not all(held) or len({kind for _, _, kind in held}) != 1:
            continue
        layers = [layer for _, local, _ in held for layer in local]
        layers += [(ctx, layer) for layer in _filled(ctx, cls, attribute, calls)]
        layers = [(home, layer) for home, layer in layers if _makes_parameters(home, layer) or _is_parameter(home, layer)]
        if layers and _read_unregistered(ctx, cls, attribute):
            home, first = min(layers, key=lambda found: (found[0] is not ctx, found[1].lineno, found[1].col_offset))
            container, _, kind = held[0]
            where = place_in(ctx, home, first)
            _, holder, holder_at = kind.split(":", 2) if kind.startswith("object:") else ("", "", "")
            only = all(_is_parameter(home, layer) for home, layer in layers)
            found.append(Unregistered(container, attribute, first, "object" if holder else kind, where, holder, holder_at, parameters=only))
    return found


def unregistered_from_outside(ctx, function: ast.AST) -> list[Unregistered]:
    """The plain containers of layers a function stores on a module it is given, outside its class
    (`model.adapters = [Adapter(d) for _ in range(n)]` in `def add_adapters(model, d, n)`), when a call
    site passes an instance of an `nn.Module` class of the project that reads the attribute unregistered
    (`unregistered_layers`' test) and sets it to nothing but None itself; `holder` names the class."""
    given = {a.arg for a in parameters(function, variadic=False)} - {first_parameter(function) if ctx.scopes.enclosing_class(function) else None}
    found = []
    for node in ctx.index.within(function, ast.Assign):
        targets = [t for t in node.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in given]
        held = _container(ctx, node.value) if targets and ctx.scopes.enclosing_function(node) is function else None
        layers = [(home, layer) for home, layer in held[1] if _makes_parameters(home, layer)] if held else []
        for target in targets if layers else ():
            for (home, cls), _ in classes_of(ctx, target.value):
                if cls in home.analysis(ModuleClasses).modules and _left_unregistered(home, cls, target.attr):
                    where = place_in(ctx, *layers[0])
                    found.append(Unregistered(held[0], target.attr, layers[0][1], held[2], where, cls.name, place_in(ctx, home, cls), target.value.id))
                    break
    return found


def _left_unregistered(ctx, cls: ast.ClassDef, attribute: str) -> bool:
    """Does a module class read `self.<attribute>` unregistered, and set it (if at all) to None or an empty
    plain container only (`self.heads = []`)?"""
    if any(_called(call) in REGISTERING for call in ctx.index.within(cls, ast.Call)):
        return False
    own = [n.value for n in ctx.index.within(cls, ast.Assign, ast.AnnAssign) for t in assignment_targets(n) if _is_attribute(t, attribute)]
    empty = [v for v in own if (isinstance(v, ast.Constant) and v.value is None) or (_plain_container(ctx, v) and not _elements(ctx, v))]
    return len(empty) == len(own) and _read_unregistered(ctx, cls, attribute)


def _container(ctx, value: ast.AST) -> tuple[ast.AST, list, str] | None:
    """The plain container an attribute is assigned, the layers that go into it (with their contexts)
    where it is written or before under a local name (`layers = []`, `layers.append(...)`, `self.layers =
    layers`) or in the project function that returns it, and its kind; None for anything else."""
    if _plain_container(ctx, value):
        return value, [(ctx, e) for e in _elements(ctx, value) if isinstance(e, ast.Call)], _kind(ctx, value)
    if isinstance(value, ast.Call | ast.Subscript):
        return _returned_container(ctx, value)
    assigned = ctx.analysis(ValueKinds).reaching_values(value) if isinstance(value, ast.Name) else None
    if assigned is None or len(assigned) != 1:
        return None
    if not _plain_container(ctx, assigned[0]):  # `dec = build_decoder(d)`, `enc, dec = build(d)`: what it returns
        only = all(use is value for use in ctx.scopes.reads(ctx.scopes.enclosing_function(value), value.id))
        return _returned_container(ctx, value) if only and isinstance(assigned[0], ast.Call | ast.Subscript) else None
    put = []
    for use in ctx.scopes.reads(ctx.scopes.enclosing_function(value), value.id):
        parent = ctx.scopes.parent(use)
        call = ctx.scopes.parent(parent)
        if isinstance(parent, ast.Attribute) and parent.attr in FILLING_METHODS and isinstance(call, ast.Call):
            put += [e for a in call.args[-1:] for e in (_elements(ctx, a) if parent.attr in ("extend", "update") else [a])]
        elif use is not value:
            return None  # handed on, read or returned: it may be registered elsewhere
    local = [e for e in _elements(ctx, assigned[0]) if isinstance(e, ast.Call)]
    local += [layer for element in put if (layer := _only_held_here(ctx, element)) is not None]
    return assigned[0], [(ctx, layer) for layer in local], _kind(ctx, assigned[0])


def _returned_container(ctx, call: ast.AST) -> tuple[ast.AST, list, str] | None:
    """`make_layers(dims)` when every object the project function returns is a plain container it makes,
    with the layers written in it or added to it there (`layers.append(nn.Linear(...))`); also an item of
    what it returns (`parts["decoder"]` of `return {"encoder": ..., "decoder": [...]}`)."""
    objects = ctx.analysis(Objects)
    found = objects.points_to(call)
    if not found or any(obj.kind != "made" or not _plain_container(obj.ctx, obj.node) or not _made_by_function(obj) for obj in found):
        return None
    layers, kinds = [], set()
    for obj in found:
        home = objects._of(obj.ctx)
        kinds.add(_kind(obj.ctx, obj.node))
        layers += [(obj.ctx, e) for e in _elements(obj.ctx, obj.node) if isinstance(e, ast.Call)]
        added = home.member(Obj(obj.kind, obj.node, obj.name, obj.base, None, obj.ctx), "[]") or ()
        layers += [(item.ctx, item.node) for item in added if item.kind == "made" and isinstance(item.node, ast.Call)]
    return (call, layers, kinds.pop()) if len(kinds) == 1 else None


def _made_by_function(obj: Obj) -> bool:
    """Was the object made by a function of the project (followed from a call site, or inside one)?"""
    return obj.site is not None or obj.ctx.scopes.enclosing_function(obj.node) is not None


def _held_by_object(ctx, value: ast.AST) -> tuple[ast.AST, list, str] | None:
    """`AdapterBank(tasks, d)`: an instance of a plain class of the project (no base class, so no
    `nn.Module`) whose `__init__` keeps layers in its attributes, directly or in plain containers."""
    if not isinstance(value, ast.Call):
        return None
    objects = ctx.analysis(Objects)
    found = objects.points_to(value)
    classes = {objects.class_of(obj) for obj in found} if found else {None}
    if len(classes) != 1 or None in classes:
        return None
    home, cls = classes.pop()
    if cls.bases or cls.keywords or cls in home.analysis(ModuleClasses).modules:
        return None
    init = own_method(cls, "__init__")
    if init is None:
        return None
    layers = []
    for node in home.index.within(init, ast.Assign):
        if any(is_self_attribute(t) for t in assignment_targets(node)):
            held = _container(home, node.value) if _plain_container(home, node.value) else None
            layers += held[1] if held else [(home, node.value)] if isinstance(node.value, ast.Call) else []
    return value, layers, f"object:{cls.name}:{place_in(ctx, home, cls)}"


def _kind(ctx, container: ast.AST) -> str:
    if isinstance(container, ast.BinOp):
        return _kind(ctx, container.left if _plain_container(ctx, container.left) else container.right)
    if isinstance(container, (ast.Dict, ast.DictComp)):
        return "dict"
    if isinstance(container, ast.Call):
        return "dict" if _constructor(ctx, container) in DICT_CONSTRUCTORS else "tuple" if _constructor(ctx, container) == "tuple" else "list"
    return "tuple" if isinstance(container, ast.Tuple) else "list"


def _is_parameter(ctx, node: ast.AST) -> bool:
    """`nn.Parameter(torch.ones(c))`: a parameter made where it is put in."""
    return isinstance(node, ast.Call) and canonical_class(ctx.qualified_name(node.func)) in PARAMETER_CLASSES


def _makes_parameters(ctx, layer: ast.AST, depth: int = 0) -> bool:
    """Does a layer own parameters, itself or what the project function it calls builds (`tower(64, d)`
    returning an `nn.Sequential` of `nn.Linear`s)?"""
    if owns_parameters(ctx, layer, depth):
        return True
    made = built(ctx, layer) if isinstance(layer, ast.Call) and depth <= MAX_DEPTH else None
    return bool(made) and all(owns_parameters(maker, call, depth + 1) for maker, call in made)


def owns_parameters(ctx, call: ast.AST, depth: int = 0) -> bool:
    """Does what a constructor builds own parameters: a parametrised torch layer or a container of one, a
    library model, or a module class of the project whose body builds one or an `nn.Parameter`?"""
    if not isinstance(call, ast.Call) or depth > MAX_DEPTH:
        return False
    name = canonical_class(ctx.qualified_name(call.func)) or ""
    if name in CONTAINERS or name == "torch.nn.ModuleDict":  # `nn.Sequential(*layers)`, `nn.ModuleList([Block(d) for _ in range(n)])`, a dict of them
        items = [e for a in call.args for e in ([a.value if isinstance(a, ast.Starred) else a] if not isinstance(a, ELEMENTS) else _elements(ctx, a))]
        for listed in (a.value for a in call.args if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)):
            filled = ctx.analysis(ValueKinds).listed_layers(listed, call)  # `nn.Sequential(*layers)` of a list filled before
            items += [i for i in filled[0] if i is not None] if filled is not None else []
        return any(_makes_parameters(ctx, item, depth + 1) for item in items)
    if name in PARAMETRISED or is_library_factory(name) or name.endswith(".from_pretrained"):
        return True
    if name.startswith("torch."):
        return False
    cls_ctx, cls = _project_class(ctx, call.func, name)
    return cls is not None and any(
        owns_parameters(cls_ctx, c, depth + 1) or cls_ctx.qualified_name(c.func) == "torch.nn.Parameter"
        for c in cls_ctx.index.within(cls, ast.Call)
    )


def _project_class(ctx, func: ast.AST, name: str):
    """(its module's context, its node) for a module class of the file or the project; (None, None) else."""
    if isinstance(func, ast.Name) and func.id in ctx.analysis(ModuleClasses).by_name:
        return ctx, ctx.analysis(ModuleClasses).by_name[func.id]
    found = ctx.analysis(ProjectView).class_summary(name) if name else None
    return found[1].definition() if found is not None else (None, None)


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _plain_container(ctx, value: ast.AST) -> bool:
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):  # `[nn.Linear(4, 4)] * n`
        return _plain_container(ctx, value.left) or _plain_container(ctx, value.right)
    if isinstance(value, ast.Call):  # `list()`, `dict(a=...)`, `OrderedDict((k, layer) for ...)`, `list(gen)`
        arguments = [*value.args, *(k.value for k in value.keywords if k.arg is None)]
        return _constructor(ctx, value) in PLAIN_CONSTRUCTORS and len(arguments) <= 1 and all(
            isinstance(a, (*LITERALS, ast.GeneratorExp)) for a in arguments
        )
    return isinstance(value, LITERALS)


def _constructor(ctx, call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name) and call.func.id in ("list", "dict", "tuple") and ctx.qualified_name(call.func) is None:
        return call.func.id
    return ctx.qualified_name(call.func)


def _elements(ctx, value: ast.AST) -> list[ast.AST]:
    """The elements a container expression is written with (a dict's values: the second of the pairs
    `dict(...)` / `OrderedDict(...)` is given)."""
    if isinstance(value, ast.BinOp):
        return _elements(ctx, value.left) + _elements(ctx, value.right)
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return list(value.elts)
    if isinstance(value, ast.Dict):
        return list(value.values)
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return [value.elt]
    if isinstance(value, ast.DictComp):
        return [value.value]
    if isinstance(value, ast.Call):
        items = [e for a in value.args for e in _elements(ctx, a)]
        if _constructor(ctx, value) in DICT_CONSTRUCTORS:
            items = [e.elts[1] for e in items if isinstance(e, ast.Tuple) and len(e.elts) == 2]
        return items + [k.value for k in value.keywords if k.arg is not None]
    return []


def _filled(ctx, cls: ast.ClassDef, attribute: str, calls: list[ast.Call]) -> list[ast.AST]:
    """What the class puts into `self.<attribute>`: `append`, `extend`, `insert`, `update`, `x[k] = ...`;
    a name only when nothing else holds the layer it was assigned."""
    put: list[ast.AST] = []
    for call in calls:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in FILLING_METHODS and _is_attribute(func.value, attribute):
            for argument in call.args[-1:]:
                put += _elements(ctx, argument) if func.attr in ("extend", "update") else [argument]
    for node in ctx.index.within(cls, ast.Assign, ast.AugAssign):
        for target in assignment_targets(node):
            if isinstance(node, ast.AugAssign) and _is_attribute(target, attribute):
                put += _elements(ctx, node.value)  # `self.layers += [nn.Linear(...)]`
            elif isinstance(target, ast.Subscript) and _is_attribute(target.value, attribute):
                put.append(node.value)
    return [layer for element in put if (layer := _only_held_here(ctx, element)) is not None]


def _only_held_here(ctx, element: ast.AST) -> ast.Call | None:
    if isinstance(element, ast.Call):
        return element
    if not isinstance(element, ast.Name):
        return None
    constructor = ctx.analysis(ValueKinds).constructor(element)
    function = ctx.scopes.enclosing_function(element)
    uses = [n for n in ctx.scopes.reads(function, element.id) if n is not element]
    return constructor if constructor is not None and not uses else None


def _is_attribute(node: ast.AST, attribute: str) -> bool:
    return is_self_attribute(node) and node.attr == attribute


def _read_unregistered(ctx, cls: ast.ClassDef, attribute: str) -> bool:
    """Is `self.<attribute>` read (its layers called), and never handed to a call that may register it or
    to an optimizer?"""
    read, optimizers = False, ctx.analysis(OptimizerConstructors).calls
    for node in ctx.index.within(cls, ast.Attribute):
        if not (_is_attribute(node, attribute) and isinstance(node.ctx, ast.Load)):
            continue
        parent = ctx.scopes.parent(node)
        if isinstance(parent, ast.Attribute) and parent.attr in VIEWS and isinstance(ctx.scopes.parent(parent), ast.Call):
            node = ctx.scopes.parent(parent)  # `self.convs.values()`, handed on as the container would be
            parent = ctx.scopes.parent(node)
        if isinstance(parent, ast.Starred):
            parent = ctx.scopes.parent(parent)
        if isinstance(parent, ast.keyword) or (isinstance(parent, ast.Call) and node is not parent.func):
            call = ctx.scopes.parent(parent) if isinstance(parent, ast.keyword) else parent
            if _called(call) not in LIST_READERS:
                return False
        if any(a in optimizers for a in ctx.scopes.ancestors(node)):
            return False  # handed to an optimizer itself: `Adam([*self.parameters(), *self.scales])`
        filling = isinstance(parent, ast.Attribute) and parent.attr in FILLING_METHODS
        read |= not filling and not (isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store))
    return read


@dataclass(frozen=True)
class UnusedGroup:
    """A parameter group (`{"params": model.head.parameters(), ...}`) nothing hands to an optimizer."""

    node: ast.AST  # where it is left: the unread name, or the value at the unread key
    name: str  # `head_group`, `self.groups["projector"]`
    params: str  # the text of what its "params" holds


def unused_parameter_groups(ctx) -> list[UnusedGroup]:
    """Parameter groups built and never read again: a name bound to one (itself, or unpacked from what a
    project function returns: `decay, no_decay = split_decay(model)`) that its scope never reads, and the
    groups of a dict of groups kept in a `self.` attribute (`self.groups = {"encoder": {...}, ...}`) at a
    key the class never reads, when it reads the attribute only at constant keys. What points-to says
    the name or the key holds decides."""
    objects, found = ctx.analysis(Objects), []
    for node in ctx.index.of_type(ast.Assign):
        for target in (t for whole in node.targets for t in _unpacked_targets(whole)):
            filled = _only_filled(ctx, target) if isinstance(target, ast.Name) else None
            if filled is not None:
                found += _unread_container(ctx, objects, target, filled)
            elif isinstance(target, ast.Name) and not _read(ctx, target):
                group = _group(objects.points_to(target))
                if group is not None:
                    found.append(UnusedGroup(target, target.id, group))
                else:
                    found += _unread_container(ctx, objects, target, [])
            elif isinstance(target, ast.Name) and len(node.targets) == 1 and node.targets[0] is target and _indexed_only(ctx, target):
                held = objects.points_to(target)
                literal = next(iter(held)) if held and len(held) == 1 else None
                if literal is not None and literal.kind == "made" and isinstance(literal.node, ast.Dict | ast.List | ast.Tuple):
                    reads = _reads_of(ctx, target)
                    if reads is not None:
                        found += _unread_items(ctx, target.id, reads, literal.node, literal.ctx, at_read=True)
            elif is_self_attribute(target) and isinstance(node.value, ast.Dict):
                found += _unread_items(ctx, f"self.{target.attr}", own_attribute_reads(ctx, target), node.value, ctx)
    return found


def _unread_container(ctx, objects: Objects, target: ast.Name, added: list[ast.AST]) -> list[UnusedGroup]:
    """The groups of a list, tuple or dict of groups bound to a name its scope never reads, written in it
    (`groups = [{"params": model.backbone.parameters()}, {"params": model.head.parameters()}]`) or
    `added` to it (`groups.append({...})`), whose parameters no optimizer of the same function gets
    otherwise (`AdamW(model.parameters())` takes them all); each reported at the group."""
    held = objects.points_to(target)
    literal = next(iter(held)).node if held and len(held) == 1 and next(iter(held)).kind == "made" else None
    if not isinstance(literal, ast.List | ast.Tuple | ast.Dict) or next(iter(held)).ctx is not ctx:
        return []
    items = list(zip(literal.keys, literal.values)) if isinstance(literal, ast.Dict) else list(enumerate(literal.elts))
    items += [(len(items) + i, value) for i, value in enumerate(added)]
    groups = [(key, value, _group(frozenset({Obj("made", value, ctx=ctx)}))) for key, value in items]
    if not groups or any(params is None for _, _, params in groups):
        return []
    function = ctx.scopes.enclosing_function(target)
    calls = [c for c in ctx.analysis(OptimizerConstructors).calls if ctx.scopes.enclosing_function(c) is function]
    optimized = {ctx.text(o) for c in calls for o in objects.parameter_owners(c)}
    found = []
    for key, value, params in groups:
        owners = [ctx.text(n.func.value) for n in ast.walk(value) if isinstance(n, ast.Call) and _called(n) == "parameters" and isinstance(n.func, ast.Attribute)]
        if owners and not any(o == t or o.startswith(t + ".") for o in owners for t in optimized):
            index = ctx.text(key) if isinstance(key, ast.AST) else key
            found.append(UnusedGroup(value, f"{target.id}[{index}]", params))
    return found


def _only_filled(ctx, target: ast.Name) -> list[ast.AST] | None:
    """What `append` adds to the name, when its scope reads it only so (`groups.append({...})`); None when
    it is read any other way or never filled."""
    added = []
    for read in ctx.scopes.reads(ctx.scopes.enclosing_function(target), target.id):
        method, call = ctx.scopes.parent(read), ctx.scopes.parent(ctx.scopes.parent(read))
        if not (isinstance(method, ast.Attribute) and method.attr == "append" and isinstance(call, ast.Call) and len(call.args) == 1):
            return None
        added.append(call.args[0])
    return added or None


def _unpacked_targets(target: ast.AST):
    """`a`, `b` of `a, b = ...`; the target itself otherwise."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _unpacked_targets(element)
    else:
        yield target


def _read(ctx, name: ast.Name) -> bool:
    function = ctx.scopes.enclosing_function(name)
    return bool(ctx.scopes.reads(function, name.id) if function is not None else ctx.scopes.loads(name.id))


def _group(objects: frozenset | None) -> str | None:
    """The text of the "params" of the one parameter group (a dict literal) `objects` holds."""
    if not objects or len(objects) != 1:
        return None
    obj = next(iter(objects))
    literal = obj.node if obj.kind == "made" else None
    if not isinstance(literal, ast.Dict):
        return None
    params = next((v for k, v in zip(literal.keys, literal.values) if isinstance(k, ast.Constant) and k.value == "params"), None)
    return obj.ctx.text(params) if params is not None else None


def _groups(ctx, value: ast.AST) -> str | None:
    """`_group` of an item of a dict or list of groups (of `ctx`), or the "params" of each group of a list or
    tuple of them the item is (`"body": [decay_group, {"params": no_decay, ...}]`), joined; names read
    through points-to."""
    def held(node: ast.AST) -> frozenset | None:
        return ctx.analysis(Objects).points_to(node) if isinstance(node, ast.Name) else frozenset({Obj("made", node, ctx=ctx)})

    found = held(value)
    single = _group(found)
    listed = next(iter(found)).node if single is None and found and len(found) == 1 and next(iter(found)).kind == "made" else None
    if not isinstance(listed, ast.List | ast.Tuple) or not listed.elts:
        return single
    groups = [_group(held(e)) for e in listed.elts]
    return None if None in groups else ", ".join(groups)


def own_setting(ctx, target: ast.Attribute, value: ast.AST) -> bool:
    """Is `self.requires_grad = value` a module's setting of its own rather than a freeze: a stored
    argument (`= requires_grad`), or a flag its methods read back (`if self.requires_grad:`)?"""
    return is_self_attribute(target) and (not isinstance(value, ast.Constant) or bool(own_attribute_reads(ctx, target)))


def own_attribute_reads(ctx, target: ast.Attribute) -> list[ast.Attribute]:
    """Where the methods of the class holding `self.<name> = ...` read `self.<name>` back (empty for
    another receiver)."""
    cls = ctx.scopes.enclosing_class(target) if is_self_attribute(target) else None
    return [n for n in ctx.index.within(cls, ast.Attribute) if is_self_attribute(n) and n.attr == target.attr and isinstance(n.ctx, ast.Load)] if cls else []


def _unread_items(ctx, name: str, reads: list[ast.AST], groups: ast.AST, home, at_read: bool = False) -> list[UnusedGroup]:
    """The groups of a dict or list literal of groups (`groups`, written in `home`) at a key or place that
    no read takes, when every read takes constant keys, indices or slices (`groups[:1]`, `groups["head"]`):
    reported at the value (in the linted file), or at the last read (`at_read`: a builder's literal)."""
    items = (
        [(k.value if isinstance(k, ast.Constant) else None, v) for k, v in zip(groups.keys, groups.values)]
        if isinstance(groups, ast.Dict) else list(enumerate(groups.elts))
    )  # fmt: skip
    taken = set()
    for read in reads:
        index = ctx.scopes.parent(read)
        if not (isinstance(index, ast.Subscript) and index.value is read):
            return []  # read whole
        taken |= _taken(index.slice, len(items)) or {None}
        if None in taken:
            return []  # at a key or place not known
    found = []
    for key, value in items:
        if key is None or key in taken or any(isinstance(v, ast.Starred) for _, v in items):
            continue
        params = _groups(home, value)
        if params is not None:
            found.append(UnusedGroup(reads[-1] if at_read else value, f"{name}[{key!r}]", params))
    return found if reads else []


def _taken(index: ast.AST, length: int) -> set | None:
    """The keys or places a constant index or slice takes (`"head"`, `0`, `:1`); None when not constant."""
    if isinstance(index, ast.Constant) and isinstance(index.value, int | str) and not isinstance(index.value, bool):
        return {index.value % length if isinstance(index.value, int) and length else index.value}
    if isinstance(index, ast.Slice) and index.step is None:
        bounds = [b.value if isinstance(b, ast.Constant) else b for b in (index.lower, index.upper)]
        if all(b is None or type(b) is int for b in bounds):
            return set(range(length)[slice(*bounds)])
    return None


def _indexed_only(ctx, target: ast.Name) -> bool:
    """Is the name read, in its function, only at constant keys, indices or slices (`groups[:1]`)?"""
    reads = ctx.scopes.reads(ctx.scopes.enclosing_function(target), target.id)
    for read in reads:
        index = ctx.scopes.parent(read)
        if not (isinstance(index, ast.Subscript) and index.value is read and _taken(index.slice, 1) is not None):
            return False
    return bool(reads)


def _reads_of(ctx, target: ast.Name) -> list[ast.Name] | None:
    """The reads of the value `target` binds; None when one of them may read another value too."""
    values, reads = ctx.analysis(ValueKinds), []
    for read in ctx.scopes.reads(ctx.scopes.enclosing_function(target), target.id):
        definitions = [d.node for d in values.reaching_definitions(read)]
        if target in definitions:
            if len(definitions) > 1:
                return None
            reads.append(read)
    return reads


@dataclass(frozen=True)
class UnoptimizedLossModule:
    """A loss module with parameters of its own that the loss depends on, which no optimizer gets."""

    optimizer: ast.AST  # the optimizer constructed in the file, or the one a call site passes (its `step()` here)
    loss: ast.AST  # `criterion` in `criterion(out, y)`
    holder: str  # its class: `MultiTaskLoss`
    parameter: str  # the attribute its `nn.Parameter` is kept in: `log_vars`
    where: str  # where that parameter is made: `line 9`, `losses.py:9`
    built: str | None = None  # where a passed optimizer is constructed: `builder.py:28`


def unoptimized_loss_modules(ctx) -> list[UnoptimizedLossModule]:
    """Loss modules of the project with learnable parameters of their own (`self.log_vars =
    nn.Parameter(...)`, uncertainty weights, a learnable temperature, an ArcFace weight) that the file
    calls while it backpropagates, when an optimizer constructed in the same function (or, for a method, in
    any method of its class: a trainer's `__init__` builds it, its `fit` calls `self.criterion`), or else
    the one optimizer whose `step()` it calls there as its call sites pass it (built by a builder in
    another module), does not get their parameters (`Adam(model.parameters())` only) and nothing else
    could: the loss object is not a part of an optimized model and is handed to no other call (a trainer
    that builds its own optimizer, `add_param_group`), in the file or where it is made."""
    objects = ctx.analysis(Objects)
    by_scope: dict[ast.AST | None, list[tuple[Objects, ast.Call, ast.AST]]] = {}
    for call in ctx.analysis(OptimizerConstructors).calls:
        if objects.trained_by(call):
            by_scope.setdefault(_trainer_scope(ctx, ctx.scopes.enclosing_function(call)), []).append((objects, call, call))
    constructed = set(by_scope)
    for step, home, call in _passed_optimizers(ctx, objects):
        group = _trainer_scope(ctx, ctx.scopes.enclosing_function(step))
        if group not in constructed and not any(c is call for _, c, _ in by_scope.get(group, ())):
            by_scope.setdefault(group, []).append((home, call, step))
    found, seen = [], set()
    for call in ctx.index.of_type(ast.Call) if by_scope else ():
        loss, scope = call.func, ctx.scopes.enclosing_function(call)
        group = _trainer_scope(ctx, scope)
        if not (isinstance(loss, ast.Name) or is_self_attribute(loss) or _constant_item(loss)) or group not in by_scope:
            continue
        if isinstance(loss, ast.Attribute) and group in ctx.analysis(ModuleClasses).modules:
            continue  # a submodule of a LightningModule: `self.parameters()` holds it
        if (group, ctx.text(loss)) in seen:
            continue
        seen.add((group, ctx.text(loss)))
        optimized = {obj for home, c, _ in by_scope[group] for owner in home.trained_by(c) for obj in home.points_to(owner) or ()}
        raw = objects.points_to(loss)
        if not raw or raw & optimized or not _backpropagates(ctx, scope):
            continue
        sites = [found for found, _ in per_call_site(ctx, loss, lambda b: _made(substituted(objects, raw, b)))]
        held = sites[0] if sites and (by_scope[group][0][2] is by_scope[group][0][1] or len(set(sites)) == 1) else None
        if not held or len(held) != 1 or _unsited(held) & _unsited(optimized):  # one object, made here or by the call site: `Trainer(model, ClipLoss())`
            continue
        learnable = _learnable_parameter(objects, next(iter(held)))
        if learnable is None or _handed_on(ctx, objects, held | raw) or _handed_on_where_made(ctx, held, by_scope[group]):
            continue
        home, cls, attribute, made = learnable
        optimizer_home, constructor, shown = by_scope[group][0]
        built = place_in(ctx, optimizer_home.ctx, constructor) if shown is not constructor else None
        found.append(UnoptimizedLossModule(shown, loss, cls.name, attribute, place_in(ctx, home, made), built))
    return found


def _passed_optimizers(ctx, objects: Objects) -> list[tuple[ast.Call, Objects, ast.Call]]:
    """(the `step()` call, the objects of the constructor's module, the constructor) for each optimizer the file
    steps (`self.optimizer.step()`) that its call sites pass in or a builder returns, built elsewhere (one
    construction each)."""
    found = []
    for step in ctx.index.of_type(ast.Call):
        receiver = step.func.value if isinstance(step.func, ast.Attribute) and step.func.attr == "step" and not step.args else None
        if receiver is None or not (isinstance(receiver, ast.Name) or is_self_attribute(receiver)):
            continue
        raw = objects.points_to(receiver)
        if not raw or not all(o.kind == "parameter" or (o.kind == "field" and o.root().kind == "parameter") or _returned_by_builder(ctx, o) for o in raw):
            continue
        made = {m for m, _ in per_call_site(ctx, receiver, lambda b: _made(substituted(objects, raw, b)))}
        obj = next(iter(next(iter(made)))) if len(made) == 1 and len(next(iter(made))) == 1 else None  # the same at every call site
        home = objects._of(obj.ctx) if obj is not None and obj.kind == "made" and obj.ctx is not None else None
        if home is not None and isinstance(obj.node, ast.Call) and home.trained_by(obj.node):
            found.append((step, home, obj.node))
    return found


def _constant_item(node: ast.AST) -> bool:
    """`losses["arc"]`: an item at a constant key of a name or a `self` attribute (points-to reads it)."""
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and (isinstance(node.value, ast.Name) or is_self_attribute(node.value))


def _returned_by_builder(ctx, obj) -> bool:
    """Is `obj` made by a function of the project and returned to this file (`model, opt = build(cfg)`)?"""
    return obj.kind == "made" and isinstance(obj.node, ast.Call) and (obj.ctx is not ctx or obj.site is not None)


def _handed_on_where_made(ctx, held: frozenset, optimizers: list) -> bool:
    """`_handed_on` in the other modules where the loss object or the optimizer is made (a builder that also
    calls `add_param_group`, or gives the loss module to a second optimizer)."""
    homes = {o.ctx for o in held if o.ctx is not None and o.ctx is not ctx} | {h.ctx for h, c, shown in optimizers if shown is not c}
    return any(_handed_on(home, home.analysis(Objects), held, returned=True) for home in homes)


def _unsited(objs) -> frozenset:
    """The objects as their own module names them, not by the call site that reached them."""
    return frozenset(dataclasses.replace(o, site=None) for o in objs)


def _made(found: frozenset | None) -> frozenset | None:
    """`found` when no object of it is a parameter still (a call site fills it), else None."""
    return found if found and all(obj.kind != "parameter" for obj in found) else None


def _trainer_scope(ctx, scope: ast.AST | None) -> ast.AST | None:
    """The class of a method (its optimizer and its loss module may live in different methods), else `scope`."""
    cls = ctx.scopes.enclosing_class(scope) if scope is not None else None
    return cls if cls is not None and ctx.scopes.enclosing_scope(scope) is cls else scope


def _backpropagates(ctx, scope: ast.AST | None) -> bool:
    return scope in ctx.analysis(_Backpropagating).scopes


class _Backpropagating:
    """The nodes whose code calls `backward`, their nested functions' included (None: the module does
    anywhere), found in one pass instead of a walk of each function per loss module it calls."""

    def __init__(self, ctx) -> None:
        calls = [c for c in ctx.index.of_type(ast.Call) if _called(c) == "backward"]
        self.scopes: set[ast.AST | None] = {None} if calls else set()
        for call in calls:
            self.scopes.update(ctx.scopes.ancestors(call))


def _learnable_parameter(objects: Objects, obj: Obj):
    """(its module's context, its class, the attribute, the `nn.Parameter(...)` call) for an object of a
    module class of the project whose `__init__` makes a trainable `nn.Parameter` of its own; None for
    anything else, a class that freezes anything (`requires_grad = False`, `requires_grad_(False)`), or one
    that builds an optimizer over its own parameters (a temperature scaler's `fit`)."""
    found = objects.class_of(obj)
    if found is None:
        return None
    home, cls = found
    init = own_method(cls, "__init__")
    if init is None or cls not in home.analysis(ModuleClasses).modules:
        return None
    if _fits_itself(home, cls):
        return None
    for node in home.index.within(cls, ast.Call, ast.Assign, ast.keyword):
        if isinstance(node, ast.keyword) and node.arg == "requires_grad" and not _true(node.value):
            return None
        if isinstance(node, ast.Call) and _called(node) == "requires_grad_" and not (node.args and _true(node.args[0])):
            return None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets):
            return None
    for node in home.index.within(init, ast.Assign):
        value = node.value
        if isinstance(value, ast.Call) and home.qualified_name(value.func) == "torch.nn.Parameter":
            target = next((t for t in node.targets if is_self_attribute(t)), None)
            if target is not None:
                return home, cls, target.attr, value
    return None


def _fits_itself(home, cls: ast.ClassDef) -> bool:
    """Does the class (or a base of the project) build an optimizer over its own parameters (a temperature
    scaler's `fit`: `LBFGS([self.log_t])`, `Adam(self.parameters())`)?"""
    for ctx, found in lineage(home, cls, home.analysis(ProjectView)):
        calls = ctx.analysis(OptimizerConstructors).calls
        if any(c in calls and any(isinstance(a, ast.Name) and a.id == "self" for a in ast.walk(c)) for c in ctx.index.within(found, ast.Call)):
            return True
    return False


def _true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _handed_on(ctx, objects: Objects, held: frozenset, returned: bool = False) -> bool:
    """Is the object passed to a call (`Trainer(model, criterion)`, `Engine(self.criterion)`), or its
    parameters read anywhere? With `returned`, a tuple a builder returns does not hand it on (its caller
    is where it goes)."""
    for name in ctx.index.of_type(ast.Name, ast.Attribute):
        if not isinstance(name.ctx, ast.Load) or (isinstance(name, ast.Attribute) and not is_self_attribute(name)):
            continue
        parent = ctx.scopes.parent(name)
        passed = isinstance(parent, ast.keyword) or (isinstance(parent, (ast.Call, ast.Starred, ast.List, ast.Tuple)) and getattr(parent, "func", None) is not name)
        passed &= not _unpacked_in_place(ctx, parent) and not (returned and isinstance(ctx.scopes.parent(parent), ast.Return))
        reads_parameters = isinstance(parent, ast.Attribute) and parent.attr in ("parameters", "named_parameters", "state_dict")
        if (passed or reads_parameters) and _unsited(objects.points_to(name) or ()) & _unsited(held):
            return True
    return False


def _unpacked_in_place(ctx, value: ast.AST) -> bool:
    """Is `value` a tuple an assignment unpacks element by element (`self.net, self.loss = net, loss`)?"""
    assign = ctx.scopes.parent(value)
    return (
        isinstance(value, ast.Tuple) and isinstance(assign, ast.Assign) and assign.value is value
        and all(isinstance(t, ast.Tuple) and len(t.elts) == len(value.elts) for t in assign.targets)
    )  # fmt: skip


@dataclass(frozen=True)
class AddedThroughMethod:
    """A call of a model's method that adds a layer with parameters, after an optimizer took the model's."""

    call: ast.Call  # `self.model.add_head(name, n_out)`
    optimizer: ast.Call  # `torch.optim.Adam(model.parameters(), lr=lr)`
    layer: str  # what the method adds, and where: `nn.Linear(...)` (model.py:12)


def layers_added_through_methods(ctx) -> list[AddedThroughMethod]:
    """`model.add_head(...)` (a method of the model's class that puts a new layer with parameters in
    `self`: an attribute, an item of a container, `append`, `add_module`) called on a model an optimizer
    constructed earlier in the same function got the parameters of, or in another method of the class
    whose `__init__` built that optimizer; unless the function tells the optimizer (`add_param_group`) or
    builds one again."""
    objects = ctx.analysis(Objects)
    optimizers = [c for c in ctx.analysis(OptimizerConstructors).calls if objects.trained_by(c)]
    by_home: dict[ast.AST | None, list[ast.Call]] = {}
    for optimizer in optimizers:
        by_home.setdefault(ctx.scopes.enclosing_function(optimizer), []).append(optimizer)
    told = _scopes_telling_optimizers(ctx)
    earlier_in: dict[ast.AST | None, list[ast.Call]] = {}  # a scope -> the optimizers built before its untold calls
    built_at = {(o.lineno, o.col_offset) for o in optimizers}
    found = []
    for call in ctx.index.of_type(ast.Call) if optimizers else ():
        if not isinstance(call.func, ast.Attribute) or _called(call) in HARMLESS_MODULE_METHODS:
            continue
        scope = ctx.scopes.enclosing_function(call)
        if told(scope, call):
            continue
        if scope not in earlier_in:
            earlier_in[scope] = _built_before(ctx, by_home, scope)
        position = (call.lineno, call.col_offset)  # `Adam(...).zero_grad()` starts where its optimizer does
        earlier = [o for o in earlier_in[scope] if (o.lineno, o.col_offset) != position] if position in built_at else earlier_in[scope]
        if not earlier:
            continue
        receiver = objects.points_to(call.func.value)
        optimizer = next((o for o in earlier if receiver and receiver & _optimized_objects(objects, o)), None)
        method = next(per_call_site(ctx, call.func.value, lambda b: method_called(ctx, call, b)), None) if optimizer else None
        added = _adds_layer(method[0].ctx, method[0].function) if method is not None else None
        if added is not None:
            home, layer = added
            found.append(AddedThroughMethod(call, optimizer, f"`{ast.unparse(layer.func)}(...)` ({place_in(ctx, home, layer)})"))
    return found


def _built_before(ctx, by_home: dict, scope: ast.AST | None) -> list[ast.Call]:
    """The optimizers (`by_home`: by the function that builds them) built before a call of `scope` that no
    optimizer of its function is built after (`told` is false; worked out once per scope): all of the
    function's (but one starting where the call does), and those of `__init__` of the class whose other
    method makes the call."""
    earlier = list(by_home.get(scope, ()))
    cls = ctx.scopes.parent(scope) if scope is not None else None
    if isinstance(cls, ast.ClassDef):
        inits = [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__" and f is not scope]
        earlier += [o for init in inits for o in by_home.get(init, ())]
    return sorted(earlier, key=lambda o: (o.lineno, o.col_offset))


def _scopes_telling_optimizers(ctx):
    """Does the function of a call (the whole file at module level) give an optimizer new parameters
    (`add_param_group`) or build one after the call? Each function's facts worked out once: whether it
    calls `add_param_group`, and where it last builds an optimizer."""
    constructors = ctx.analysis(OptimizerConstructors).calls
    facts: dict[ast.AST | None, tuple[bool, tuple[int, int]]] = {}

    def told(scope: ast.AST | None, call: ast.Call) -> bool:
        if scope not in facts:
            calls = ctx.index.within(scope, ast.Call) if scope is not None else ctx.index.of_type(ast.Call)
            built = [(c.lineno, c.col_offset) for c in calls if c in constructors]
            facts[scope] = (any(_called(c) == "add_param_group" for c in calls), max(built, default=(0, -1)))
        adds, last = facts[scope]
        return adds or last > (call.lineno, call.col_offset)

    return told


def _optimized_objects(objects: Objects, optimizer: ast.Call) -> frozenset:
    return frozenset(obj for owner in objects.trained_by(optimizer) for obj in objects.points_to(owner) or ())


def _adds_layer(home, method: ast.AST) -> tuple[object, ast.Call] | None:
    """The layer with parameters a method of a module class puts into `self` (`self.heads[name] =
    nn.Linear(...)`, `self.blocks.append(Block())`, `self.fc = nn.Linear(...)`, `self.add_module(...)`)."""
    cls = home.scopes.parent(method)
    if not isinstance(cls, ast.ClassDef) or cls not in home.analysis(ModuleClasses).modules or method.name == "__init__":
        return None
    if any(_called(c) in ("add_param_group",) for c in home.index.within(method, ast.Call)):
        return None
    for node in home.index.within(method, ast.Assign, ast.Call):
        if isinstance(node, ast.Assign):
            into_self = any(
                is_self_attribute(t) or (isinstance(t, ast.Subscript) and is_self_attribute(t.value)) for t in node.targets
            )
            added = node.value if into_self else None
        else:
            func = node.func
            into_self = isinstance(func, ast.Attribute) and (
                (func.attr in ("append", "insert") and is_self_attribute(func.value))
                or (func.attr == "add_module" and isinstance(func.value, ast.Name) and func.value.id == "self")
            )
            added = node.args[-1] if into_self and node.args else None
        if isinstance(added, ast.Call) and owns_parameters(home, added):
            return home, added
    return None


@dataclass(frozen=True)
class MissedPart:
    """A part of a dict of parts that the optimizers take other items of, and the training step runs."""

    optimizer: ast.Call  # the first optimizer over an item of the dict
    missed: str  # `parts["bottleneck"]`
    taken: str  # `parts["encoder"]`, `parts["decoder"]`
    used: ast.AST  # where a step that backpropagates runs it: `autoencode(parts, xb)`


def missed_parts(ctx) -> list[MissedPart]:
    """Items of a dict literal of modules (`return {"encoder": ..., "bottleneck": ..., "decoder": ...}` of
    a builder) when the file's optimizers get the parameters of some items (`parts["encoder"].parameters()`)
    and of neither this one nor the whole, while a function that backpropagates runs it: calls the item or
    hands the whole dict to a call. The dict read any other way (`.values()`, `parts["x"].eval()`, a loop)
    may freeze or optimize the rest: nothing is reported."""
    objects = ctx.analysis(Objects)
    taken: dict[Obj, dict[object, str]] = {}
    takers: dict[Obj, dict[object, ast.Call]] = {}  # container -> key -> the optimizer that takes the item
    named: dict[Obj, str] = {}  # container -> the text naming it
    whole: set[Obj] = set()
    for call in sorted(ctx.analysis(OptimizerConstructors).calls, key=position):
        for owner in objects.parameter_owners(call) if objects.trained_by(call) else ():
            item = _item_read(ctx, owner)  # `parts["g"]`, or `g` bound to it
            key = _constant_key(item) if item is not None else None
            containers = objects.points_to(item.value) if key is not None else None
            if containers and len(containers) == 1:
                container = next(iter(containers))
                taken.setdefault(container, {})[key] = ctx.text(owner)
                takers.setdefault(container, {}).setdefault(key, call)
                named.setdefault(container, ctx.text(item.value))
            whole |= objects.points_to(owner) or frozenset()
    found = []
    for container, keys in taken.items():
        literal = container.node if container.kind == "made" else None
        if not isinstance(literal, ast.Dict) or container in whole:
            continue
        home = objects._of(container.ctx)
        builder = container.ctx.scopes.enclosing_function(literal)
        if builder is not None and FREEZING_TEXT.search(container.ctx.text(builder)):
            continue  # the builder may freeze a part (a teacher, a pretrained encoder)
        for key, value in zip(literal.keys, literal.values):
            if _constant_key_of(key) is None or key.value in keys:  # `**other` or a taken item
                continue
            parts = home.points_to(value)
            made = [p for p in parts or () if p.kind == "made" and isinstance(p.node, ast.Call)]
            if not parts or len(made) != len(parts) or any(_sited(p, container) in whole or not adds_layer(p.ctx, p.node) for p in made):
                continue
            used = _run_in_training(ctx, objects, container, key.value)
            if used is not None:
                consumer = _consumer_key(ctx, objects, container, used)  # `g(m(z))`: the optimizer of `g` misses `m`
                optimizer = takers[container].get(consumer) or next(iter(takers[container].values()))
                missed = f"{named[container]}[{container.ctx.text(key)}]"
                own = [text for k, text in keys.items() if takers[container][k] is optimizer]
                found.append(MissedPart(optimizer, missed, ", ".join(f"`{t}`" for t in own), used))
    return found


def _sited(item: Obj, container: Obj) -> Obj:
    """An item a builder makes, as the call that made `container` made it (`points_to` tells them apart by it)."""
    return dataclasses.replace(item, site=container.site) if item.site is None and container.site is not None else item


def _consumer_key(ctx, objects: Objects, container: Obj, run: ast.Call):
    """The key of the item of `container` whose call takes `run`'s output (`g` of `g(m(z))`); None when none does."""
    for ancestor in ctx.scopes.ancestors(run):
        if isinstance(ancestor, ast.stmt):
            return None
        item = _item_read(ctx, ancestor.func) if isinstance(ancestor, ast.Call) else None
        if item is not None and container in (objects.points_to(item.value) or ()):
            return _constant_key(item)
    return None


def _item_read(ctx, node: ast.AST) -> ast.Subscript | None:
    """The item at a constant key `node` reads: itself (`parts["g"]`), or the one item a name is bound to
    (`m, g = parts["m"], parts["g"]`)."""
    if isinstance(node, ast.Subscript):
        return node
    aliased = ctx.analysis(ValueKinds).aliased(node)
    if not aliased or len(aliased) != 1 or not isinstance(aliased[0], ast.Subscript) or not isinstance(aliased[0].value, ast.Name):
        return _unpacked_item(ctx, node)
    return aliased[0]


def _unpacked_item(ctx, name: ast.AST) -> ast.Subscript | None:
    """`parts["b"]` for `b` of `(_, a), (_, b) = parts.items()`: a dict literal's items unpacked in order."""
    definitions = ctx.analysis(ValueKinds).reaching_definitions(name) if isinstance(name, ast.Name) else []
    pair = ctx.scopes.parent(definitions[0].node) if len(definitions) == 1 else None
    outer = ctx.scopes.parent(pair) if isinstance(pair, ast.Tuple) and len(pair.elts) == 2 and pair.elts[1] is definitions[0].node else None
    assign = ctx.scopes.parent(outer) if isinstance(outer, ast.Tuple) else None
    call = assign.value if isinstance(assign, ast.Assign) and assign.targets == [outer] else None
    items = isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "items" and not call.args
    found = ctx.analysis(Objects).points_to(call.func.value) if items and isinstance(call.func.value, ast.Name) else None
    literal = next(iter(found)).node if found and len(found) == 1 else None
    keys = [_constant_key_of(k) for k in literal.keys] if isinstance(literal, ast.Dict) else []
    if not keys or None in keys or len(keys) != len(outer.elts):
        return None
    return ast.copy_location(ast.Subscript(value=call.func.value, slice=ast.Constant(keys[outer.elts.index(pair)]), ctx=ast.Load()), name)


def _constant_key(node: ast.AST):
    """`"encoder"` of `parts["encoder"]`; None for anything else."""
    return _constant_key_of(node.slice) if isinstance(node, ast.Subscript) else None


def _constant_key_of(node: ast.AST | None):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) else None


def _run_in_training(ctx, objects: Objects, container: Obj, key) -> ast.AST | None:
    """Where a function that backpropagates runs item `key` of `container`: `parts[key](x)`, or the whole
    dict handed to a call (`autoencode(parts, x)`); None when nothing does, or the dict is read otherwise."""
    used = None
    for name in ctx.index.of_type(ast.Name):
        if not isinstance(name.ctx, ast.Load):
            continue
        parent = ctx.scopes.parent(name)
        pointed = objects.points_to(name) or ()
        item = read = None
        if isinstance(parent, ast.Subscript) and _constant_key(parent) is not None and container in pointed:
            if _binds_alias(ctx, parent):
                continue  # `m, g = parts["m"], parts["g"]`: where `m` and `g` are read counts
            item = read = parent
        elif container in pointed and _unpacks_items(ctx, parent):
            continue  # `(_, m), (_, g) = parts.items()`: the same
        elif (alias := _item_read(ctx, name)) is not None and container in (objects.points_to(alias.value) or ()):
            item, read = alias, name  # `g(z)` with `g = parts["g"]`: as `parts["g"](z)`
        elif container not in pointed:
            continue
        if item is not None:
            holder = ctx.scopes.parent(read)
            if _constant_key(item) != key:
                continue
            if isinstance(holder, ast.Attribute) and holder.attr not in PART_SETTERS:
                continue  # `parts["bottleneck"].weight`, `.to(device)`
            if not (isinstance(holder, ast.Call) and holder.func is read):
                return None  # `.parameters()`, `.requires_grad_(False)`, `.eval()`, handed to a call: unknown
            run = holder
        elif isinstance(parent, ast.Call) and name in parent.args:
            run = parent
        else:
            return None
        if used is None and _backpropagates(ctx, ctx.scopes.enclosing_function(run)) and not _may_freeze(ctx, run):
            used = run
    return used


def _unpacks_items(ctx, method: ast.AST) -> bool:
    """Is `method` the `.items()` of a dict whose pairs an assignment unpacks into names (`(_, m), (_, g) = parts.items()`)?"""
    call = ctx.scopes.parent(method)
    assign = ctx.scopes.parent(call) if isinstance(method, ast.Attribute) and method.attr == "items" and isinstance(call, ast.Call) else None
    return isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Tuple) and all(
        isinstance(pair, ast.Tuple) and len(pair.elts) == 2 and isinstance(pair.elts[1], ast.Name) for pair in assign.targets[0].elts
    )


def _binds_alias(ctx, item: ast.Subscript) -> bool:
    """Is the item bound to a name, alone or in a tuple (`g = parts["g"]`, `m, g = parts["m"], parts["g"]`)?"""
    holder = ctx.scopes.parent(item)
    if isinstance(holder, ast.Tuple):
        holder = ctx.scopes.parent(holder)
    return isinstance(holder, ast.Assign) and all(isinstance(t, ast.Name | ast.Tuple) for t in holder.targets)


def _may_freeze(ctx, run: ast.Call) -> bool:
    """Is the call under `torch.no_grad()`, or a project function that may freeze or cut what it is given?"""
    for ancestor in ctx.scopes.ancestors(run):
        if isinstance(ancestor, (ast.With, ast.AsyncWith)) and any(FREEZING_TEXT.search(ctx.text(i.context_expr)) for i in ancestor.items):
            return True
    view = followed_view(ctx)
    resolver = CallResolver(ctx, view if view.index is not None else None)
    callee = resolver.resolve(run, followed=FREEZING_TEXT_BYTES) if isinstance(run.func, ast.Name) else None
    return callee is not None and bool(FREEZING_TEXT.search(callee.ctx.text(callee.function)))
