"""Modules, their parameters and the optimizers built over them, in the order a function writes them.

`is_module` answers whether an expression holds an `nn.Module` (not a tensor): a torch.nn layer, a module
class of the file or of the project, a model from a well-known factory, a `self.` attribute assigned one,
a loop variable over `model.modules()`/`children()`, or, when nothing says what it holds, a name such as
`model`, `self.backbone` or `text_encoder`. `optimizer_over` reads which modules an optimizer
constructor takes all the parameters of (`Adam(model.parameters())`), and which it takes filtered
(`filter(lambda p: p.requires_grad, model.parameters())`); `built_by_helper` the same for a call of a
project function that returns an optimizer built over what it is given (`build_optimizer(model, cfg)`). `adds_layer` tells an assignment of a new layer
with parameters to a module's attribute (`model.fc = nn.Linear(...)`), and `layer_owners` the modules
that get a layer (to group a scope's assignments by them).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.facets.gradients import CONTAINERS, PARAMETRISED
from mllint.analysis.values.library_models import NOT_MODULES
from mllint.analysis.values.optimizers import is_optimizer
from mllint.analysis.program.project import ProjectView
from mllint.analysis.syntax.scope_groups import dotted_prefixes
from mllint.analysis.program.summaries import returned_expressions
from mllint.analysis.values.values import ValueKinds, canonical_class

MODULE_FACTORIES = ("torchvision.models.", "timm.create_model", "torch.hub.load")
# What an object of unknown origin is called when it is a module (`self.network`, `model.text_encoder`).
MODULE_NAME = re.compile(r"(^|_)(model|net|network|backbone|encoder|decoder|head|classifier|module)$", re.IGNORECASE)
SUBMODULE_ITERATORS = frozenset({"modules", "children", "named_modules", "named_children"})
# `param.require_grad = False`: names that are not the tensor flag.
REQUIRES_GRAD_TYPOS = frozenset({"require_grad", "requires_grads", "require_grads", "requires_grad_"})
# Methods of a model that neither make parameters trainable again nor add any.
HARMLESS_MODULE_METHODS = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "double", "parameters"})


@dataclass(frozen=True)
class Optimized:
    module: ast.AST  # `model` in `model.parameters()`
    filtered: bool  # the parameters pass through `filter(...)` or a comprehension


def is_optimizer_constructor(ctx, call: ast.Call) -> bool:
    return is_optimizer(ctx.qualified_name(call.func))


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
    constructors = [values.constructor(r) for r in returned_expressions(function.body) or []]
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


def is_module(ctx, expr: ast.AST) -> bool:
    """Does `expr` hold an `nn.Module` (never a parameter or another tensor)?"""
    if isinstance(expr, ast.Name) and _iterates_submodules(ctx, expr):
        return True
    values = ctx.analysis(ValueKinds)
    constructor = values.constructor(expr)
    if constructor is not None and is_module_constructor(ctx, constructor):
        return True
    instance = _instance_class(ctx, expr)
    if instance is not None and ctx.analysis(ProjectView).is_module_class(instance):
        return True
    if isinstance(expr, ast.Attribute) and _is_submodule(ctx, expr):
        return True
    return constructor is None and instance is None and _named_like_a_module(ctx, expr)


def _named_like_a_module(ctx, expr: ast.AST) -> bool:
    """`model`, `self.backbone`, `net.text_encoder`: a parameter or attribute named like a module."""
    name = expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else ""
    if not MODULE_NAME.search(name) or ctx.qualified_name(expr) is not None:
        return False
    if isinstance(expr, ast.Name):  # only a name whose every binding is unknown (a parameter)
        return all(d.value is None for d in ctx.analysis(ValueKinds).reaching_definitions(expr))
    return True


def _instance_class(ctx, expr: ast.AST) -> str | None:
    """The project class `expr` is an instance of (`model` after `model = Net().to(device)`)."""
    value = ctx.analysis(ValueKinds).value(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    return None if value is None else ctx.analysis(ProjectView).instance_class(value)


def _is_submodule(ctx, attribute: ast.Attribute) -> bool:
    """`model.encoder` where `model`'s project class assigns `self.encoder` module constructors only."""
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
    if name in NOT_MODULES or name.startswith(("torch.nn.Parameter", "torch.nn.Buffer")):
        return False
    last = name.rsplit(".", 1)[-1]
    if name == f"torch.nn.{last}" and last[:1].isupper():
        return True
    if name.startswith(MODULE_FACTORIES) or last == "from_pretrained":
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
        iterated = loop.iter
        if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)):
            return False
        if iterated.func.attr not in SUBMODULE_ITERATORS:
            return False
    return bool(ctx.analysis(ValueKinds).reaching_definitions(name))

