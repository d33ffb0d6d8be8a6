"""What a model's class is: the two questions the mode rules (ML302, ML303) ask about a construction.

- `ModeLayers.builds_module(call)`: does the call build an nn.Module (which starts in training mode)?
- `ModeLayers.of_constructor(call)`: which layer of the model it builds behaves differently in training
  and eval mode: a `Layer` naming a Dropout/BatchNorm-like layer (or a functional dropout or a read of
  `self.training` in its class), `NO_LAYER` when the class is known and has none, None when unknown.

Both know `torch.nn` classes, the nn.Module classes of the same file and, through the project's module
summaries (`ProjectView`), those of other modules of the linted project: a class summary keeps its
`ClassLayers`, what its own file says (`class_layers`), with the classes it takes from other modules left
to resolve when a lint asks; a base class of the project that is no nn.Module (a mixin) counts with what
its own body builds, and `abc.ABC`-like bases hold nothing. `nn.Sequential(*layers)` holds what the
function put in its local list `layers`. A function of another module that returns a model as built (a
factory) is known by its modes: `modes.mode_layers` builds the file's `ModeLayers` with that question
answered. The models of well-known libraries are known by their factories (`library_models`); classes
from anywhere else are unknown.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.values.library_models import library_model
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.program.summaries import FunctionSummary
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.syntax.tree import assignment_targets
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import ValueKinds, canonical_class

CONTAINERS = {"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"}
# Methods that put modules in a list or container (`layers.append(nn.ReLU())`).
LISTING_METHODS = {"append", "extend", "insert", "add_module"}
# Bases that hold no layer: a module deriving from them is what its own body makes it.
PLAIN_BASES = {"abc.ABC", "typing.Generic", "typing.Protocol"}
# Layers with a dropout argument that is off by default.
OPTIONAL_DROPOUT = {"RNN", "LSTM", "GRU", "MultiheadAttention"}
FUNCTIONAL_DROPOUT = {
    "torch.nn.functional." + name
    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
}


@dataclass(frozen=True)
class Layer:
    node: ast.AST | None  # where the mode-dependent layer is made in the linted file (None: elsewhere, or none)
    what: str  # "Dropout", "BatchNorm2d", "F.dropout", "self.training"
    owner: str = ""  # made in another file: the class that makes it
    where: str = ""  # and where: "models.py:14"


NO_LAYER = Layer(None, "")


@dataclass(frozen=True)
class ClassLayers:
    """What a class's own file says of its mode-dependent layer, for the summaries of other modules."""

    what: str | None  # its own layer ("Dropout"), "" when it has none of its own, None when unknown
    line: int  # the line of its own layer
    imported: tuple[str, ...]  # the classes of other modules it builds or derives from (qualified)


UNKNOWN_CLASS = ClassLayers(None, 0, ())


def _is_torch_loss(name: str | None) -> bool:
    """A torch loss class or loss base (`torch.nn._WeightedLoss`): the same in training and eval mode."""
    return bool(name) and name.startswith("torch.nn.") and name.endswith("Loss")


def class_layers(ctx, node: ast.ClassDef) -> ClassLayers:
    """A class's layer from its own file, the classes it takes from other modules counted as having none
    and listed, to resolve later: kept with its module summary (`ClassSummary.fact(class_layers)`)."""
    imported: list[str] = []

    def deferred(name: str, base: bool = False) -> Layer:
        imported.append(name)
        return NO_LAYER

    own = ModeLayers.summarizing(ctx, deferred).of_class(node)
    if own is None or own is NO_LAYER:
        return ClassLayers(None if own is None else "", 0, tuple(dict.fromkeys(imported)))
    return ClassLayers(own.what, own.node.lineno, tuple(dict.fromkeys(imported)))


class ModeLayers:
    def __init__(self, ctx, returns_new_model: Callable[[FunctionSummary], bool] | None, imported=None) -> None:
        """`returns_new_model`: does a function of the project return a model as built (a factory)? The
        modes tell (`modes.mode_layers`); a summary asks no function (`summarizing`)."""
        self.ctx = ctx
        self.modules = ctx.analysis(ModuleClasses).modules
        self.by_name = {cls.name: cls for cls in self.modules}
        self._classes: dict[ast.ClassDef, Layer | None] = {}
        self._module_classes: dict[str, bool] = {}  # project classes by qualified name: nn.Modules?
        self._returns_new_model = returns_new_model
        self._deferred = imported  # not a bound method of its own: no cycle keeping the file's tree alive
        self._summarizing = imported is not None  # for a summary: classes of other modules are resolved later

    @classmethod
    def summarizing(cls, ctx, deferred=None) -> "ModeLayers":
        """For a module summary: what another module's class is stays to resolve (`deferred(name, base)`,
        a class of no layer by default), and a call of a capitalised name of another module may build a
        module (`ProjectView.instance_class` tells, when a lint asks)."""
        return cls(ctx, None, deferred or (lambda name, base=False: NO_LAYER))

    @classmethod
    def read_from(cls, ctx, linted: "ModeLayers") -> "ModeLayers":
        """For another module of the project read by `linted`'s lint (a caller's): its classes from other
        modules are resolved in the linted file's project."""
        return cls(ctx, None, linted._imported_class)

    def builds_module(self, call: ast.Call) -> bool:
        """`Net()`, `nn.Sequential(...)`, `build_model()`: a module class of this file, the project or
        `torch.nn`, or a factory function of another project module."""
        func = call.func
        if library_model(self.ctx, call) is not None:
            return True
        if isinstance(func, ast.Name) and func.id in self.by_name:
            return True
        name = canonical_class(self.ctx.qualified_name(func))
        if not (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")).lstrip("_")[:1].isupper():
            # a lower-case class of the project (`coRNN`) builds one too
            return self.factory_class(call) is not None or bool(name) and not self._summarizing and self._is_module_class(name)
        if name is not None and not name.startswith("torch.nn."):
            return self._summarizing or self._is_module_class(name)
        return bool(name and name.rsplit(".", 1)[-1][:1].isupper())

    def _is_module_class(self, name: str) -> bool:
        if name not in self._module_classes:
            self._module_classes[name] = self.ctx.analysis(ProjectView).is_module_class(name)
        return self._module_classes[name]

    def factory_class(self, call: ast.Call) -> str | None:
        """The project class whose new instance (in training mode, as built) a function of another
        project module returns: `build_model()` -> `pkg.models.Net`. A summary leaves factories out."""
        name = None if self._summarizing else self.ctx.qualified_name(call.func)
        view = self.ctx.analysis(ProjectView)
        found = view.find(name) if name and not name.startswith("torch.") else None
        if found is None or found[0] is view.own or found[1] not in found[0].functions:
            return None
        if not self._returns_new_model(found[0].functions[found[1]]):
            return None
        return view.instance_class(self.ctx.analysis(ValueKinds).value(call))

    def is_module(self, cls: ast.ClassDef) -> bool:
        """An nn.Module class of this file: its base is one (from torch, this file or the project)."""
        if cls in self.modules:
            return True
        view = self.ctx.analysis(ProjectView)
        return any(view.is_module_class(name) for name in map(self.ctx.qualified_name, cls.bases) if name)

    def of_constructor(self, call: ast.Call) -> Layer | None:
        """The mode-dependent layer of the model `call` builds: a Layer, NO_LAYER, or None (unknown)."""
        if isinstance(call.func, ast.Name) and call.func.id in self.by_name:
            return self.of_class(self.by_name[call.func.id])
        library = library_model(self.ctx, call)
        if library is not None:
            return Layer(call, library.layer) if library.layer else NO_LAYER
        name = canonical_class(self.ctx.qualified_name(call.func))
        if name is None:
            return None
        if not name.startswith("torch.nn."):
            name = self.factory_class(call) or name
            return self._deferred(name) if self._summarizing else self._imported_class(name)
        short = name.rsplit(".", 1)[-1]
        if "Dropout" in short or "BatchNorm" in short or short.startswith("Transformer"):
            return Layer(call, short)
        if short.startswith("InstanceNorm"):
            tracking = next((k.value for k in call.keywords if k.arg == "track_running_stats"), None)
            return Layer(call, short) if _truthy(tracking) else NO_LAYER
        if short in OPTIONAL_DROPOUT:
            dropout = next((k.value for k in call.keywords if k.arg == "dropout"), None)
            return Layer(call, short) if dropout is not None and _truthy(dropout) else NO_LAYER
        if name in CONTAINERS:
            return combine(self._elements(call))
        return NO_LAYER if short[:1].isupper() else None

    def of_class(self, cls: ast.ClassDef, seen: frozenset = frozenset()) -> Layer | None:
        if cls in seen:
            return NO_LAYER
        if cls not in self._classes:
            self._classes[cls] = None  # cycle guard while computing
            self._classes[cls] = self._class_layer(cls, seen | {cls})
        return self._classes[cls]

    def _class_layer(self, cls: ast.ClassDef, seen: frozenset) -> Layer | None:
        found: list[Layer | None] = []
        for base in cls.bases:
            name = canonical_class(self.ctx.qualified_name(base))
            if isinstance(base, ast.Name) and base.id in self.by_name:
                found.append(self.of_class(self.by_name[base.id], seen))
            elif name in PLAIN_BASES or _is_torch_loss(name):
                continue
            elif name is not None and not name.startswith("torch."):
                # A class of another module of the project (a mixin like `BaseModel(ABC)` too), or unknown.
                found.append(self._deferred(name, base=True) if self._summarizing else self._imported_class(name, base=True))
            elif name != "torch.nn.Module":
                found.append(None)  # an unknown base class may hold anything
        for node in self.ctx.index.within(cls, ast.Attribute, ast.Call, ast.Assign, ast.AnnAssign):
            if isinstance(node, ast.Attribute) and node.attr == "training" and isinstance(node.value, ast.Name):
                found.append(Layer(node, "self.training"))
            elif isinstance(node, ast.Call) and self.ctx.qualified_name(node.func) in FUNCTIONAL_DROPOUT:
                found.append(Layer(node, self.ctx.text(node.func)))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = assignment_targets(node)
                if any(isinstance(t, ast.Attribute) for t in targets):  # `self.body = nn.Sequential(...)`
                    calls = [c for c in ast.walk(node.value) if isinstance(c, ast.Call) and self._builds_a_class(c)]
                    found += [self.of_constructor(c) for c in calls]
                    if self._passed_in(node.value) and any(t.attr in self._called_attributes(cls) for t in targets if isinstance(t, ast.Attribute)):
                        found.append(None)  # `self.head = head`, then `self.head(x)`: a module handed in, of any class
        return combine(found)

    def _passed_in(self, value: ast.AST) -> bool:
        """Is `value` a parameter of the function it is read in (a module its caller hands in)?"""
        function = self.ctx.scopes.enclosing_function(value)
        return isinstance(value, ast.Name) and function is not None and value.id in {a.arg for a in parameters(function)}

    def _called_attributes(self, cls: ast.ClassDef) -> set[str]:
        """The attributes of `self` a class calls (`self.head(x)`)."""
        return {
            call.func.attr for call in self.ctx.index.within(cls, ast.Call)
            if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
        }  # fmt: skip

    def _elements(self, container: ast.Call) -> list[Layer | None]:
        values = [*container.args, *(k.value for k in container.keywords)]
        listed = [self._listed(v.value, container) for v in values if isinstance(v, ast.Starred)]
        values = [v for v in values if not isinstance(v, ast.Starred)] + [v for found in listed if found for v in found]
        calls = [n for v in values for n in ast.walk(v) if isinstance(n, ast.Call) and self._builds_a_class(n)]
        passed = [None for v in values if self._passed_in(v)]  # `nn.ModuleList(encoders)`: modules handed in
        return [self.of_constructor(c) for c in calls] + [None for found in listed if found is None] + passed

    def _listed(self, name: ast.AST, container: ast.Call) -> list[ast.AST] | None:
        """`nn.Sequential(*layers)`: what the function put in its local `layers` (assigned a list or a
        container, then `append`, `extend`, `insert`, `add_module`, `+=`), or `*(a, b)` itself; None when
        anything else may put something there."""
        if isinstance(name, (ast.List, ast.Tuple)):
            return [name]
        function = self.ctx.scopes.enclosing_function(container)
        if not isinstance(name, ast.Name) or function is None:
            return None
        values: list[ast.AST] = []
        for node in self.ctx.index.within(function, ast.Name):
            parent = self.ctx.scopes.parent(node)
            if node.id != name.id or node is name:
                continue
            if isinstance(node.ctx, ast.Store):
                assigned = parent.value if isinstance(parent, (ast.Assign, ast.AugAssign)) and node in assignment_targets(parent) else None
                if not (isinstance(parent, ast.AugAssign) or self._is_listing(assigned)):
                    return None
                values.append(assigned)
            elif isinstance(parent, ast.Attribute):
                call = self.ctx.scopes.parent(parent)
                if parent.attr in LISTING_METHODS and isinstance(call, ast.Call) and call.func is parent:
                    values += call.args
            elif isinstance(parent, (ast.Call, ast.keyword)) or not isinstance(node.ctx, ast.Load):
                return None  # handed to a function that may add to it, or deleted
        return values or None

    def _is_listing(self, value: ast.AST | None) -> bool:
        """`[...]`, `(...)`, `[Block(d) for d in dims]`, `list()`, `nn.Sequential(...)`"""
        if isinstance(value, (ast.List, ast.Tuple, ast.ListComp)):
            return True
        name = canonical_class(self.ctx.qualified_name(value.func)) if isinstance(value, ast.Call) else None
        return name in CONTAINERS or (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list")

    def _builds_a_class(self, call: ast.Call) -> bool:
        """`Net(...)`, `nn.Linear(...)`, `timm.models.Block(...)`: a capitalised callee that is a module
        class of this file or comes from an import (not a builtin exception, not a plain class here)."""
        func = call.func
        if isinstance(func, ast.Name):
            return func.id in self.by_name or (func.id[:1].isupper() and self.ctx.qualified_name(func) is not None)
        return isinstance(func, ast.Attribute) and func.attr[:1].isupper() and self.ctx.qualified_name(func) is not None

    def _imported_class(self, name: str, depth: int = 0, base: bool = False) -> Layer | None:
        """A module class of the project by qualified name (or, as a `base` of one, any class of the
        project): its layer, NO_LAYER, or None when it is not known to be an nn.Module (or is too deep
        to follow)."""
        if name in PLAIN_BASES:
            return NO_LAYER
        view = self.ctx.analysis(ProjectView)
        found = view.class_summary(name)
        if found is None or depth > MAX_DEPTH or not (base or view.is_module_class(name)):
            return None
        module, summary = found
        layers = summary.fact(class_layers) or UNKNOWN_CLASS
        if layers.what:
            where = f"line {layers.line}" if module is view.own else f"{view.display(module)}:{layers.line}"
            return Layer(None, layers.what, summary.name, where)
        parts = [self._imported_class(other, depth + 1) for other in layers.imported]
        return combine([*parts, NO_LAYER if layers.what == "" else None])


def combine(found: list[Layer | None]) -> Layer | None:
    """A layer if any part has one; else unknown if any part is unknown; else none."""
    layer = next((f for f in found if f is not None and f is not NO_LAYER), None)
    if layer is not None:
        return layer
    return None if any(f is None for f in found) else NO_LAYER


def _truthy(value: ast.AST | None) -> bool:
    """Is an argument set to something other than a literal False/0/None?"""
    if value is None:
        return False
    return not (isinstance(value, ast.Constant) and not value.value)
