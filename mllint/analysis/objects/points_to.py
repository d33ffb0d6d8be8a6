"""Abstract objects and points-to: which objects an expression can be, wherever the code takes them.

An object is named by where it is made (`Obj`): a call (`Net()`, `nn.CrossEntropyLoss()`,
`torchvision.models.resnet18()`, `AutoModel.from_pretrained(...)`, any call whose result is not followed
further), a literal container (`[a, b]`, `{"ce": loss}`), a parameter of a function, the instance a
method's `self` is, an attribute of an object that nothing known writes (`trainer.model`), or `None`.
`Objects(ctx).points_to(expr)` is the may-set of objects an expression can be anywhere in its scope
(flow-insensitive: every binding of a name counts, so an arm that assigns `None` adds `None`), following:

- assignments and aliases (`model = self.model`), tuple packing and unpacking, also through the `return
  a, b, c` of a function of the file or of another module of the project (`opt, sched = build(cfg)`);
- calls that return their receiver (`.to()`, `.cuda()`, `.train()`, `.eval()`, `.requires_grad_()`, ...)
  and wrappers that return what they get (`DataParallel`, `DistributedDataParallel`, `torch.compile`,
  `accelerator.prepare`), and `.module`;
- containers: literals, `append`/`extend`/`add_module`, `nn.ModuleList`/`nn.ModuleDict`/`nn.Sequential`
  of a literal, indexing with constants, loops over them; a table of classes a decorator fills
  (`@register("resnet")` putting the class in `MODELS`), for what `MODELS[name](cfg)` constructs;
- attributes: `self.x` is what any method of the class (a setter too), any other code of the file
  (`trainer.model = model`) or of another module of the project (`annotator.net = build()` in `serve.py`)
  writes to `x` of an object of that class; module globals;
- calls of project functions (`@staticmethod` and `@classmethod` ones too): only the returns the
  constants of the call leave open (`build_scheduler("step", opt)`), a table read at a parameter every
  call site fills with one constant (`SCHEDULES[name]`), `functools.partial(Cls, ...)` naming `Cls`; a
  nested `def` is an object of its function (a closure a builder returns).

The objects a project function makes are told apart by the call site that runs it (one level of call
site: `student = build()` and `teacher = build()` are two objects), so summaries stay per call site.

Budget (one for the layer): `MAX_OBJECTS` objects per expression, `MAX_CALL_DEPTH` calls followed into
functions that return what they make, `MAX_WORK` evaluations per file, `MAX_FIELD_CHAIN` attributes of
attributes, `MAX_KEYED_SITES` call sites a write through a parameter key is split over (past them it is
at every key); past any of the others the answer is None (unknown). Each name's objects in each scope are computed
once (a fixed point over the bindings that reach it, so the cost is linear in the file's bindings and
polynomial overall).

`optimized()` answers the question the mode rules ask of a model nothing trains: which objects' parameters
an optimizer constructed in the file gets (`AdamW(model.parameters())`, through variables, `filter`, groups).
"""
from __future__ import annotations

import ast
import builtins
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from mllint.analysis.objects.constants import call_constants, declared_default, field_constants, passes_self, reachable_returns, site_constants, stored_in_project, stored_names as _stored_names
from mllint.analysis.objects.options import ParserOptions
from mllint.analysis.program.hydra_configs import builds_target, composed_by_call, composed_config
from mllint.analysis.program.registries import applied_stores, filed_name, identity_decorator, is_registry, library_registrations, registrations
from mllint.analysis.program.callers import MAX_CALLER_DEPTH, MAX_SITES, Callers
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.hierarchy import made_runner, dispatched_method, dispatched_methods, inherited_method, lineage, project_class, self_classes
from mllint.analysis.values.optimizers import is_optimizer
from mllint.analysis.values.runners import handed_back
from mllint.analysis.program.project_view import ProjectView, defines_module
from mllint.analysis.syntax.folding import arms, existence_test, runs, tested_key
from mllint.analysis.syntax.names import Names, call_argument, is_self_attribute, module_scope_imports, partial_target
from mllint.analysis.syntax.scopes import first_parameter, parameter_defaults, parameters
from mllint.analysis.syntax.yaml_subset import Mapping, parse_json, parse_yaml, read_json, read_yaml
from mllint.analysis.program.summaries import function_returns, returns_receiver
from mllint.analysis.values.values import RETURNS_RECEIVER, SEQUENTIAL, canonical_class, keyed_loop
from mllint.analysis.syntax.tree import module_statements, own_method

MAX_OBJECTS = 8  # objects per expression
MAX_CALL_DEPTH = 3  # functions followed into, for what they return
MAX_WORK = 50_000  # evaluations per file
MAX_NESTING = 60  # evaluations waiting on one another (a chain of names bound to names)
MAX_FIELD_CHAIN = 6  # attributes or items of attributes of ... one object (`a.b[0].c`); deeper is unknown
MAX_KEYED_SITES = 8  # call sites a write through a parameter key is split over, one key each; past them, every key
_NO_CUT = 1 << 30

WRAPPERS = {
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
    "torch.compile", "torch.nn.SyncBatchNorm.convert_sync_batchnorm",
}  # fmt: skip
DEFAULTDICT = "collections.defaultdict"
INSTANTIATORS = frozenset({"hydra.utils.instantiate", "hydra.utils.call"})  # build what a config's `_target_` names
LOADERS = {
    "yaml.safe_load": ("yaml", False), "yaml.load": ("yaml", False), "yaml.full_load": ("yaml", False),
    "json.load": ("json", False), "json.loads": ("json", False),
    "omegaconf.OmegaConf.create": ("yaml", False), "omegaconf.OmegaConf.load": ("yaml", True),
}  # a configuration document's loader -> (its language, is it given a path rather than the document or an open file)
ATTRIBUTE_DICTS = frozenset({
    "easydict.EasyDict", "omegaconf.OmegaConf.create", "munch.Munch", "munch.munchify", "addict.Dict",
    "ml_collections.ConfigDict", "ml_collections.config_dict.ConfigDict", "box.Box",
})  # dicts whose items are read by attribute too (`cfg.optim.lr`), made of a dict
CONTAINER_CLASSES = {"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential", "list", "tuple", "dict"}
BUILTIN_CONTAINERS = frozenset(c for c in CONTAINER_CLASSES if "." not in c)
COPIED = (ast.Name, ast.BoolOp, ast.IfExp)  # what `list(...)` copies the items of: a name, or names with a fallback
KEYED_READS = frozenset({"get", "pop"})  # dict methods that read an item at a key
ADDING = {"append": 0, "add_module": 1, "insert": 1}  # method -> the argument it adds
PLAIN_DECORATORS = {"staticmethod", "classmethod"}  # decorators that leave what a function returns as it is
OPTIMIZER = re.compile(r"optim|Adam|SGD|RMSprop|Adagrad|Adafactor|Lion|LAMB", re.IGNORECASE)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (*FUNCTIONS, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class Obj:
    """An abstract object. `kind`: "made" (by `node`, a call or literal, in `ctx`; `site`: the call of the
    function that made it, when that was followed), "parameter" (`name` of the function `node`), "self"
    (an instance of the class `node`), "field" (attribute `name` of `base` nothing known writes), "none"."""

    kind: str
    node: ast.AST | None = None
    name: str = ""
    base: "Obj | None" = None
    site: ast.AST | None = None
    ctx: object = None

    def root(self) -> "Obj":
        """The object an attribute (or item) of an attribute ... of this one is read from."""
        return self.base.root() if self.kind == "field" else self

    def path(self) -> list[str]:
        """The attributes (and items) read from `root()` to reach this object, in order."""
        return [*self.base.path(), self.name] if self.kind == "field" else []

    def key(self) -> str:
        """A name for the object, the same wherever it is reached from; an object a function makes, told
        apart by the call site of the function, is its unsited key followed by `@` and the site."""
        if self.kind == "field":
            return f"{self.base.key()}.{self.name}"
        return f"@{self.kind}:{id(self.node)}:{self.name}" + (f"@{id(self.site)}" if self.site is not None else "")


NONE = Obj("none")


class Objects:
    """Points-to for one file (`ctx.analysis(Objects)`)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.view = ctx.analysis(ProjectView) if ctx.project is not None else None
        if self.view is None and getattr(ctx, "read_for", None) is not None:  # a module read for the project
            self.view = ProjectView(ctx, ctx.read_for)
        self.module_classes = ctx.analysis(ModuleClasses).modules
        self.linted = ctx  # the file whose callers layer finds the call sites of this module's functions
        self.classes = {node.name: node for node in module_statements(ctx.tree) if isinstance(node, ast.ClassDef)}
        self.functions = {node.name: node for node in module_statements(ctx.tree) if isinstance(node, FUNCTIONS)}
        self._names: dict[tuple[ast.AST, str], frozenset | None] = {}
        self._exprs: dict[ast.AST, frozenset | None] = {}
        self._fields: dict[tuple[Obj, str], frozenset | None] = {}
        self._stored: dict[ast.ClassDef, frozenset[str]] = {}  # class -> the attribute names its body stores
        self._written: dict[tuple[Obj, str], frozenset | None] = {}
        self._stored_by_others: dict[tuple[ast.ClassDef, str], frozenset | None] = {}  # `_stored_elsewhere`'s answers
        self._nesting = 0
        self._bindings: dict[ast.AST, dict[str, list[tuple[ast.AST, ast.AST]]]] = {}
        self._writes: dict[str, list[tuple[ast.AST, ast.AST | None, ast.AST]]] | None = None
        self._pending: dict[int, tuple[ast.AST, ast.AST]] | None = None  # additions whose receivers are not indexed
        self._adding: dict[Obj, list[tuple[int, ast.AST]]] = {}  # object -> (number, what is added to it)
        self._added_keys: dict[ast.AST, object] = {}  # what `c[k] = x` adds -> its constant key
        self._through_keys: dict[ast.AST, tuple[ast.AST | None, ast.Name]] = {}  # what is added at a parameter key -> (`c` of `c[k].append(x)`, `k`)
        self._site_writes: dict[ast.AST, list[tuple[object, ast.AST]] | None] = {}  # `_keyed_writes`' answers
        self._returns: dict[tuple[ast.AST, ast.AST | None, int], frozenset | None] = {}
        self._open: dict = {}  # keys being computed -> their depth among them
        self._reentered: set = set()  # names read again while being evaluated
        self._partial: dict = {}  # what those hold so far
        self._low = _NO_CUT  # the lowest depth of an open key cut short since the current evaluation began
        self._work = 0
        self._optimized: list[ast.AST] | None = None
        self._generators: dict[ast.AST, bool] = {}
        self._imports: dict[str, str] | None = None  # name -> what the module imports under it
        self._owners: dict[ast.Call, list[ast.AST]] = {}  # optimizer construction -> what holds its parameters
        self._added: dict[ast.AST, dict[str, list[ast.AST]]] = {}  # scope -> list name -> what it adds to it
        self._registered: dict[Obj, frozenset[str]] = {}  # a table -> the classes a decorator puts in it
        self._filings: dict[ast.AST, list | None] = {}  # a store in a decorator -> what it files (`registrations`)
        self._tables: dict[Obj, list] = {}  # a table -> what the decorators of this module file in it
        self._site_constants: dict[ast.AST, dict[str, object]] = {}  # function -> what all its call sites pass
        self._copying: set[Obj] = set()  # containers whose copied items are being read (`list(x)`)
        self._spreading: set[ast.AST] = set()  # `**` entries being read (`_spread_item`)
        self._defaults: dict[tuple[ast.AST, object], ast.Call] = {}  # (factory, key) -> the call that makes the item
        self._targets: dict[ast.Call, tuple[str, bool] | None] = {}  # `instantiate(node)` -> what it builds (`instantiated`)
        self._gets: dict[ast.Call, ast.Subscript] = {}  # `TABLE.get(name)` -> `TABLE[name]` (`read_by_get`)
        self._option_tests: dict[ast.AST, bool | None] = {}  # a test -> what the options' defaults make it (`_option_test`)
        self._configs: dict[tuple[ast.AST, str], ast.AST | None] = {}  # (`yaml.safe_load` call, path) or (`@hydra.main` function, "") -> the document

    # The answer.
    def points_to(self, expr: ast.AST) -> frozenset | None:
        """The objects `expr` may be anywhere in its scope; None: unknown (past the budget)."""
        return self._eval(expr, 0)

    def kept_values(self, container: ast.AST) -> list[tuple[object, ast.AST]] | None:
        """What a list or dict kept in an attribute may hold (`self.losses`, `self.stats.values`), with the file
        each is written in: the items of the literals the attribute's writes make, and what `append`, `insert`,
        `c[k] = v` and `extend` (its argument, whole) add to them in the literal's file or this one (a method
        of another module filling `self.values`). None when `container` may be anything but such a literal."""
        found = self.points_to(container)
        if not found:
            return None
        kept = []
        for obj in found:
            literal = obj.node if obj.kind == "made" else None
            if not isinstance(literal, ast.List | ast.Dict) or obj.ctx is None:
                return None
            kept += [(obj.ctx, e) for e in (literal.elts if isinstance(literal, ast.List) else literal.values)]
            for home in dict.fromkeys([self._of(obj.ctx), self]):
                kept += [(home.ctx, added) for added in home._added_to(obj, 0)]
                kept += [(home.ctx, added) for receiver, added in home._extensions if obj in (home.points_to(receiver) or ())]
        return kept

    @cached_property
    def _extensions(self) -> list[tuple[ast.AST, ast.AST]]:
        """(container, the list it is extended with) for every `c.extend(xs)` of the file."""
        calls = self.ctx.index.of_type(ast.Call)
        return [(c.func.value, c.args[0]) for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr == "extend" and len(c.args) == 1]

    def item_at(self, container: ast.AST, key) -> frozenset | None:
        """The objects at the constant `key` of what `container` may be (`criteria["ce"]`)."""
        return self._item(container, key, 0)

    def items_at(self, container: ast.AST, key) -> frozenset | None:
        """The items of what `container` holds at the constant `key` (`fn` of `for fn in self.events["batch_end"]`):
        none of an empty list literal that nothing adds to (`{"batch_end": [], "epoch_end": []}`, no hook at a key)."""
        found = self.item_at(container, key)
        if found is None:
            return None
        items: frozenset | None = frozenset()
        for base in found - {NONE}:
            held = self._elements(base, None, 0)
            empty = base.kind == "made" and isinstance(base.node, ast.List) and not base.node.elts and held == self._field_of(base, "[]")
            items = union(items, frozenset() if empty else held)
        return items

    def dict_keys(self, container: ast.AST) -> tuple | None:
        """The constant keys of the dicts `container` may be, when each is known and they agree (`_dict_keys`); an
        attribute of a module that points-to keeps as itself (`self.criteria` of an `nn.Module`) is what its writes
        put there (`held`)."""
        found = [self.held(o) or {o} if o.kind == "field" else {o} for o in self.points_to(container) or {NONE}]
        keys = {self._dict_keys(obj, 0) for obj in union(*found) or {NONE}}
        return keys.pop() if len(keys) == 1 and None not in keys else None

    def _dict_keys(self, obj: Obj, depth: int) -> tuple | None:
        """The keys of a dict literal (an `nn.ModuleDict` of one too) nothing adds to, or of a comprehension
        that keeps the keys of a tuple or such a dict (`values.keyed_loop`); of an empty dict literal, the
        keys every store into it names (`d["ce"] = ...`, `if name == "bce": d[name] = ...`), each a key it
        may hold."""
        home = self._of(obj.ctx) if obj.kind == "made" else None
        if home is None or depth > MAX_CALL_DEPTH:
            return None
        literal = _table_literal(obj)
        stored = [m._added_keys.get(a) for m in dict.fromkeys((self, home)) for a in m._added_to(obj, depth)]
        if stored:
            empty = isinstance(literal, ast.Dict) and not literal.keys
            return tuple(dict.fromkeys(stored)) if empty and None not in stored else None
        if isinstance(literal, ast.Dict):
            keys = tuple(_constant(k) if k is not None else None for k in literal.keys)
            return keys if None not in keys and len(set(keys)) == len(keys) else None
        if not isinstance(literal, ast.DictComp) or keyed_loop(literal) is None:
            return None
        if _comprehension_keys(literal):
            return tuple(dict.fromkeys(_comprehension_keys(literal)))
        iterable = literal.generators[0].iter
        source = iterable.func.value if isinstance(iterable, ast.Call) else iterable  # `d.items()`, `d.keys()`: `d`
        keys = {home._dict_keys(o, depth + 1) for o in home._eval(source, depth + 1) or {NONE}}
        return keys.pop() if len(keys) == 1 and None not in keys else None

    def key(self, expr: ast.AST, scope: ast.AST | None) -> str | None:
        """One name for what `expr` is, seen from `scope` (a function or the module): `model` for a
        parameter of `scope` (its callers say what it is), `self` for its instance, `self.x` for an
        attribute of an nn.Module's `self` (which `self.eval()` switches too), an object's own key else;
        None when unknown or past the budget."""
        return self.key_of(self.points_to(expr), scope)

    def key_of(self, found: frozenset | None, scope: ast.AST | None) -> str | None:
        """`key` of the objects `found` (a may-set)."""
        if not found:
            return None
        found = found - {NONE} or found
        keys = {self._key(obj, scope) for obj in found}
        if None in keys:
            return None
        return joined(keys)

    def _key(self, obj: Obj, scope: ast.AST | None) -> str | None:
        if obj.kind == "parameter" and obj.node is scope:
            return obj.name
        if obj.kind == "self":
            return first_parameter(scope) if isinstance(scope, FUNCTIONS) and self._class_of(scope) is obj.node else obj.key()
        if obj.kind == "field":
            base = self._key(obj.base, scope)
            if obj.name == "module":  # `model.module` of a model passed in: the model, or what it wraps
                return base
            return None if base is None else f"{base}.{obj.name}"
        return obj.key()

    def made(self, expr: ast.AST) -> list[tuple[object, ast.Call]] | None:
        """The calls that made what `expr` may be (their contexts with them); None when one of the objects
        is not made by a call (a parameter, an attribute of one) or unknown."""
        found = self.points_to(expr)
        if not found or any(obj.kind != "made" or not isinstance(obj.node, ast.Call) for obj in found - {NONE}):
            return None
        return [(obj.ctx, obj.node) for obj in found - {NONE}]

    def classes_of(self, found: frozenset | None, depth: int = 0) -> list[tuple[object, ast.ClassDef]]:
        """The project classes (with their modules' contexts) the objects `found` (a may-set of this file's)
        are instances of: a callback of a list kept on `self` (`for cb in self.callbacks:`), built in the class
        or passed to its `__init__`; for an object a parameter holds (`trainer` of `on_epoch_end(self,
        trainer)`, `callbacks[i]` of `callbacks`), what each call site of its function passes (`self`,
        `Trainer(model, callbacks=[...])`), through callers' own parameters up to `MAX_CALLER_DEPTH`."""
        classes = {}
        for obj in (found or frozenset()) - {NONE}:
            root = obj.root()
            if root.kind != "parameter" or not isinstance(root.node, FUNCTIONS):
                cls = self.class_of(obj)
                classes.update({id(cls[1]): cls} if cls is not None else {})
                continue
            if depth >= MAX_CALLER_DEPTH:
                continue
            bindings = [b for b in self.linted.analysis(Callers).bindings_in(root.ctx, root.node) if b.site is not None]
            for ctx, argument, _ in (b.argument(root.name) for b in bindings if b.argument(root.name) is not None):
                classes.update({id(cls[1]): cls for cls in self._of(ctx).classes_of(self._passed(obj, ctx, argument), depth + 1)})
        return list(classes.values())

    def _passed(self, obj: Obj, ctx, argument: ast.AST) -> frozenset | None:
        """The objects `obj`, reached from a parameter (`callbacks[i]` of `callbacks`), is at a call site
        passing `argument` (of `ctx`) for that parameter."""
        home = self._of(ctx)
        found = home.points_to(argument)
        for name in obj.path():
            found = union(*(home.member(base, name) for base in found - {NONE})) if found else None
        return found

    def optimized(self) -> list[ast.AST]:
        """What an optimizer constructed in this file gets the parameters of (`trained_by`)."""
        if self._optimized is None:
            self._optimized = [owner for call in self.ctx.index.of_type(ast.Call) for owner in self.trained_by(call)]
        return self._optimized

    def trained_by(self, call: ast.Call) -> list[ast.AST]:
        """What an optimizer constructor call gets the parameters of (`model` in `AdamW(model.parameters())`,
        through variables, `filter`, groups), with what that is a part of (training `model.fc`,
        `encoder.get_input_embeddings()` or `encoder[0]` trains `model`, `encoder`); empty for any other call."""
        found: list[ast.AST] = []
        for owner in self.parameter_owners(call) if self._makes_optimizer(call) else ():
            while isinstance(owner, (ast.Attribute, ast.Name, ast.Call, ast.Subscript)):
                if isinstance(owner, ast.Call):  # a method returning a part of its module
                    owner = owner.func.value if isinstance(owner.func, ast.Attribute) else None
                    continue
                if isinstance(owner, ast.Subscript):  # an item of a container module
                    owner = owner.value
                    continue
                found.append(owner)
                owner = owner.value if isinstance(owner, ast.Attribute) else None
        return found

    def trained_objects(self, optimizer: Obj) -> frozenset:
        """The objects an optimizer object gets the parameters of (`trained_by`), as the call site that made it
        sees them: made by a builder (`model, opt = build()`), the module it makes is told apart by that site as
        the caller's `model` is; a parameter of the builder (`opt = build_optim(cfg, model)`) is what the site
        passes, when the site is in this file."""
        home = self._of(optimizer.ctx) if optimizer.kind == "made" and optimizer.ctx is not None else None
        if home is None or not isinstance(optimizer.node, ast.Call) or not home.trained_by(optimizer.node):
            return frozenset()
        found = frozenset(obj for owner in home.parameter_owners(optimizer.node) for obj in home.points_to(owner) or ())
        site = optimizer.site
        if site is None:
            return found
        found = frozenset(_made_at(obj, site) for obj in found)
        passed = self._passed_back(site, found, 0) if isinstance(site, ast.Call) and site in self.ctx.index.parents else None
        return found if passed is None else passed

    def _makes_optimizer(self, call: ast.Call) -> bool:
        """An optimizer of torch's table, or a class or factory named like one (`Lion(...)`, `optim.AdamW`)."""
        return is_optimizer(canonical_class(self.called_name(call.func))) or bool(OPTIMIZER.search(self.ctx.text(call.func)))

    def called_name(self, func: ast.AST) -> str | None:
        """The one name of `called_names` (`make_opt = partial(torch.optim.AdamW, lr=...)`, `opt_cls = optim.SGD`,
        `OPTIMIZERS["adamw"]`)."""
        names = self.called_names(func)
        return next(iter(names)) if names is not None and len(names) == 1 else None

    def called_names(self, func: ast.AST, found: Callable[[], frozenset | None] | None = None) -> frozenset[str] | None:
        """The qualified names of what a called value is: what the call spells (`torch.optim.AdamW`), or what
        the objects a name, attribute or item may be name (`names`): its points-to, or what `found` gives
        (under a call site's binding); None when one of them names nothing, or unknown."""
        name = self.library_name(func)
        if name is not None or not isinstance(func, ast.Name | ast.Attribute | ast.Subscript):
            return frozenset({name}) if name is not None else None
        return self.names(found() if found is not None else self.points_to(func))

    def library_name(self, func: ast.AST) -> str | None:
        """The qualified name `func` spells when it names no module of the project (`torch.optim.AdamW`): a
        class attribute or variable of the project (`Config.loss`, `config.bc_loss`) is followed instead."""
        name = self.ctx.qualified_name(func)
        top = name.split(".")[0] if name is not None else None
        own = self.ctx.module is not None and top == self.ctx.module.name.split(".")[0]
        return None if own or (top is not None and self.ctx.project is not None and self.ctx.project.locate(top)) else name

    def parameter_owners(self, call: ast.Call) -> list[ast.AST]:
        """`model` for `AdamW(model.parameters())`, through names bound to what holds the parameters."""
        if call not in self._owners:
            self._owners[call] = self._parameter_owners_of(call)
        return self._owners[call]

    def _parameter_owners_of(self, call: ast.Call) -> list[ast.AST]:
        owners, seen, stack = [], set(), [*call.args, *(k.value for k in call.keywords)]
        while stack:
            node = stack.pop()
            stack += self._kept_parameters(node, seen)
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
                    if inner.func.attr in ("parameters", "named_parameters"):
                        owners += self._iterated_over(inner.func.value)
                    stack += [a for a in inner.args if isinstance(a, ast.Attribute)]  # `chain(self.a_params, ...)`
                elif isinstance(inner, ast.List | ast.Tuple | ast.Set | ast.Dict):
                    stack += [e for e in (inner.values if isinstance(inner, ast.Dict) else inner.elts) if isinstance(e, ast.Attribute)]
                elif isinstance(inner, ast.Starred) and isinstance(inner.value, ast.Attribute):
                    stack.append(inner.value)
                elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load) and inner.id not in seen:
                    seen.add(inner.id)
                    scope = self._comprehension_binding(inner) or self.ctx.scopes.enclosing_function(inner) or self.ctx.tree
                    stack += [value for _, value in self._bindings_of(scope).get(inner.id, ()) if value is not None]
                    stack += self._added_parameters(scope, inner.id)
        return owners

    def _kept_parameters(self, node: ast.AST, seen: set) -> list[ast.AST]:
        """What the class of this module writes to the attribute `node` reads (`self.q_params = list(chain(
        self.q1.parameters(), self.q2.parameters()))` for `self.q_params`), each attribute read once."""
        if not is_self_attribute(node) or ("self", node.attr) in seen:
            return []
        seen.add(("self", node.attr))
        writes = self.written_in_class(self.points_to(node.value), node.attr) or ()
        return [value for home, _, _, value in writes if home is self.ctx and value is not None and not isinstance(value, ast.Tuple)]

    def _added_parameters(self, scope: ast.AST, name: str) -> list[ast.AST]:
        """What a scope adds to a list of parameters it names: `params += list(m.parameters())`,
        `params.extend(...)`, `params.append(...)` (read once per scope)."""
        if scope not in self._added:
            added: dict[str, list[ast.AST]] = {}
            for node in self.ctx.index.within(scope, ast.AugAssign):
                if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
                    added.setdefault(node.target.id, []).append(node.value)
            for call in self.ctx.index.within(scope, ast.Call):
                func = call.func
                if isinstance(func, ast.Attribute) and func.attr in ("extend", "append") and isinstance(func.value, ast.Name):
                    added.setdefault(func.value.id, []).extend(call.args)
            self._added[scope] = added
        return self._added[scope].get(name, [])

    def _iterated_over(self, receiver: ast.AST) -> list[ast.AST]:
        """The modules a container built on the spot holds (`nn.ModuleList([model.encoder, model.decoder])`),
        and what a loop variable runs over when the loop iterates a list written out (`model.encoder`,
        `model.decoder` for `m` of `for m in [model.encoder, model.decoder]`, also through one name bound to
        the list: `parts = [...]`); the receiver itself for anything else."""
        if isinstance(receiver, ast.Call) and canonical_class(self.ctx.qualified_name(receiver.func)) in ("torch.nn.ModuleList", SEQUENTIAL):
            listed = receiver.args[0].elts if len(receiver.args) == 1 and isinstance(receiver.args[0], ast.List | ast.Tuple) else receiver.args
            return list(listed) if listed and not any(isinstance(e, ast.Starred) for e in listed) else [receiver]  # `nn.ModuleList([model.a, model.b])`
        if not isinstance(receiver, ast.Name):
            return [receiver]
        scope = self._comprehension_binding(receiver) or self.ctx.scopes.enclosing_function(receiver) or self.ctx.tree
        bound = self._bindings_of(scope).get(receiver.id, ())
        iterated = bound[0][1].iterable if len(bound) == 1 and isinstance(bound[0][1], _Iterated) else None
        if isinstance(iterated, ast.Name):
            named = self._bindings_of(self.ctx.scopes.enclosing_function(iterated) or self.ctx.tree).get(iterated.id, ())
            iterated = named[0][1] if len(named) == 1 else None
        if isinstance(iterated, ast.List | ast.Tuple) and iterated.elts and not any(isinstance(e, ast.Starred) for e in iterated.elts):
            return list(iterated.elts)
        return [receiver]

    def each_item(self, name: ast.AST) -> bool:
        """Is `name` bound only as the variable of loops or comprehensions (`fn` of `for fn, w in
        losses.values()`): what it is called on, each item of what they iterate is called on in turn, not
        one item chosen among them."""
        if not isinstance(name, ast.Name):
            return False
        bound = self._bindings_of(self._scope_binding(name)).get(name.id, ())
        return bool(bound) and all(isinstance(value, _Iterated) for _, value in bound)

    def member(self, base: Obj, name: str, depth: int = 0) -> frozenset | None:
        """The objects of attribute `name` of `base`, or any of its items for "[]". `.module` of a model
        (made by a call or a literal, its class not one that sets `module` itself) is the model: wrappers
        here are what they wrap."""
        if name == "[]":
            return self._elements(base, None, depth)
        if name.startswith("["):  # an item at a constant key of a parameter (`cfg["act_inplace"]`), read where it is passed
            return self._elements(base, _written_constant(name[1:-1]), depth)
        if name.startswith("get("):  # `cfg.get("inplace", True)` of a parameter, read where it is passed
            key, default = _written_constant(name[3:])
            return self._keyed_item(base, key, ast.Constant(default), depth)
        if name == "module" and base.kind != "parameter" and not self._sets_module(base):
            return frozenset({base})
        return self._field(base, name, depth)

    def _sets_module(self, obj: Obj) -> bool:
        """Is `obj` an instance of a class of the project that has a `module` of its own (`defines_module`)?"""
        found = self.class_of(obj)
        return found is not None and defines_module(found[1])

    def class_of(self, obj: Obj) -> tuple[object, ast.ClassDef] | None:
        """The class of the project an object is an instance of, with the context of its module: `self` of
        its methods, or made by `Engine(...)` of this file or of another module (`from engine import Engine`),
        also when a builder of the project returns it."""
        if obj.kind == "self":
            return obj.ctx, obj.node
        if obj.kind != "made" or not isinstance(obj.node, ast.Call):
            return None
        local = self._of(obj.ctx).instance_class(obj)
        if local is not None:
            return obj.ctx, local
        func = obj.node.func  # a class is called by its name or from a table (`MODELS["net"](cfg)`): no flow to follow
        names = self.constructed(obj.ctx, obj.node) if isinstance(func, ast.Subscript) else {self._of(obj.ctx).called_class(obj.node)}
        name = next(iter(names)) if names and len(names) == 1 else None
        return project_class(self.view, name)

    def constructed(self, ctx, call: ast.Call, keys: frozenset | None = None) -> frozenset | None:
        """The qualified names of what a call of `ctx` constructs: its function's, or those of every object
        (`qualified`) the function may be when it is not named: an item of a table (`LOSSES[args.loss]()`,
        `ACTIVATIONS[name]()` with a dict literal of classes or of lambdas that build one) for every key
        it may take (`keys`: the keys its index may be, when the caller knows them), with the classes a
        registering decorator puts there (`registered`), a variable (`act = nn.ReLU`); None when unknown."""
        func = call.func
        name = ctx.qualified_name(func) if not isinstance(func, ast.Subscript) else None
        if name is not None and self._of(ctx)._instantiates(call):
            target = self._of(ctx).instantiated(call)
            return frozenset({target}) if target is not None else None
        if name is not None:
            return frozenset({name})
        home = self._of(ctx)
        keys = frozenset(k for k in keys or () if isinstance(k, int | str) and not isinstance(k, bool)) or None
        filed = home.filed_in_registry(home.points_to(func.value), keys or {home._key_of(func.slice)}) if isinstance(func, ast.Subscript) else None
        if filed is not None:  # `LOSSES.get(name)()` of a registry object
            return filed
        found = self.called_objects(ctx, call, keys)
        if found is None:
            return None
        names = set()
        if isinstance(func, ast.Subscript):  # a key the literal lacks: the classes decorators register too
            for key in keys or {home._key_of(func.slice)}:
                for table in home.points_to(func.value) or ():
                    if table.kind == "made" and isinstance(table.node, ast.Dict) and key not in [_constant(k) for k in table.node.keys if k is not None]:
                        names |= self._of(table.ctx).registered_at(table, key)
        if names:  # what the decorator stores (`MODELS[name] = cls`) is named by `registered`
            found = frozenset(obj for obj in found if obj.kind != "parameter")
        names |= {self.qualified(obj) for obj in found}
        return frozenset(names) if len(names) <= MAX_OBJECTS else None

    def called_objects(self, ctx, call: ast.Call, keys: frozenset | None = None) -> frozenset | None:
        """The objects a call of `ctx` calls: what its function may be, an item of a table at each of `keys`
        (`ACTIVATIONS[name]()` with `keys` the constants `name` may be: `partial(nn.LeakyReLU, inplace=True)`)."""
        func, home = call.func, self._of(ctx)
        if keys is None or not isinstance(func, ast.Subscript):
            return home.points_to(func)
        return union(*(home._item(func.value, key, 0) for key in keys))

    def read_by_get(self, call: ast.AST) -> ast.Subscript | None:
        """`TABLE[name]` for a call `TABLE.get(name)` of this file whose key is not a constant (one that is
        is read by `_keyed_read`): the same table read; None for any other expression."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "get" and len(call.args) == 1):
            return None
        if call.keywords or _constant(call.args[0]) is not None or isinstance(call.args[0], ast.Starred):
            return None
        if call not in self._gets:
            self._gets[call] = ast.copy_location(ast.Subscript(value=call.func.value, slice=call.args[0], ctx=ast.Load()), call)
        return self._gets[call]

    def called_class(self, call: ast.Call) -> str | None:
        """The dotted name of what a call of this file calls as it spells it (`torch.nn.NLLLoss`), or the
        class Hydra's `instantiate(cfg.loss)` (or the project's own) builds (`instantiated`)."""
        return self.instantiated(call) if self._instantiates(call) else self.ctx.qualified_name(call.func)

    def _instantiates(self, call: ast.Call) -> bool:
        """Is `call` Hydra's `instantiate(node, ...)` (`INSTANTIATORS`), or a function of the project that does
        what it does (`builds_target`)?"""
        name = self.ctx.qualified_name(call.func)
        if name in INSTANTIATORS:
            return True
        found = self.view.function(name) if self.view is not None and name and "." in name else None
        return found is not None and builds_target(found[1])

    def instantiated(self, call: ast.Call, partial: bool = False) -> str | None:
        """The dotted name of the class (or function) a Hydra `instantiate(node, ...)` of this file (or the
        project's own, `_instantiates`) builds: the `_target_` every config node `node` may be names, as a dict
        literal or a configuration document holds it; with `partial`, the one a `_partial_: true` node makes a
        factory of. None for any other call, a target not one known constant, or a node that is partial when
        `partial` is not asked (or not, when it is)."""
        if not call.args or not self._instantiates(call):
            return None
        if call not in self._targets:
            self._targets[call] = None  # while it is read (`module = instantiate(module)`: not known)
            self._targets[call] = self._target(call)
        target, flag = self._targets[call] or (None, None)
        return target if flag is partial else None

    def _target(self, call: ast.Call) -> tuple[str, bool] | None:
        """(the `_target_`, the `_partial_` flag) of the config node an `instantiate(node)` is given."""
        nodes = self.points_to(call.args[0])
        target = self._item_key(nodes, "_target_", ast.Constant(None), 0)
        if not isinstance(target, str):
            return None
        passed = next((k.value for k in call.keywords if k.arg == "_partial_"), None)
        flag = _flag(passed) if passed is not None else self._item_key(nodes, "_partial_", ast.Constant(False), 0, _flag)
        return (target, flag) if flag is not None else None

    def filed_in_registry(self, found: frozenset | None, keys) -> frozenset[str] | None:
        """The classes the registry object that a table read's objects `found` are files under each of `keys`
        (a module-level `HEADS = Registry("heads")` of a library or of the project, filled by its registering
        method: `registries.library_registrations`), all it files for a key not known; None when it is no
        such object, or a key is filed under no class (the lookup would fail)."""
        obj = next(iter(found)) if found and len(found) == 1 else None
        if obj is None or obj.kind != "made" or not isinstance(obj.node, ast.Call) or self.view is None or self.view.index is None:
            return None
        name = _module_variable(obj.ctx, obj.node)
        if name is None or not is_registry(self.view, obj.ctx.qualified_name(obj.node.func)):
            return None
        filed = library_registrations(self.view, name)
        if None in keys:
            return frozenset(n for n, _ in filed) or None
        if not all(any(k in (key, None) for _, k in filed) for key in keys):
            return None
        return frozenset(n for n, k in filed if k is None or k in keys)

    def registered(self, table: Obj) -> frozenset[str]:
        """The classes of the project a decorator of this module puts in a table of it (`MODELS[name] = cls`
        in `def register(name): def deco(cls): ...`, used as `@register("resnet")`), by qualified name."""
        if table not in self._registered:
            self._registered[table] = frozenset()  # while it is read
            self._registered[table] = self._registered_in(table)
        return self._registered[table]

    def registered_at(self, table: Obj, key) -> frozenset[str]:
        """`registered`, only those filed under `key` (all for a key not known, or filed under one not known)."""
        if key is None or key == "*":
            return self.registered(table)
        at = {filed_name(home, d) for home, d, filed in self._registrations(table) if filed in (None, key)}
        return self.registered(table) & at

    def _registered_in(self, table: Obj) -> frozenset[str]:
        found = {
            filed_name(home, definition) for home, definition, _ in self._registrations(table)
            if isinstance(definition, ast.ClassDef | ast.expr)
        }  # fmt: skip
        return frozenset(found - {None})

    def _registrations(self, table: Obj) -> list[tuple[object, ast.AST, object]]:
        """(module, definition, key) for what the decorators of this module put in `table` (see `registries`)."""
        if table not in self._tables:
            self._tables[table] = []  # (while it is read)
            stores = [(self, n) for n in self.ctx.index.of_type(ast.Subscript) if isinstance(n.ctx, ast.Store)]
            stores += [(self._of(home), n) for home, n in applied_stores(self.ctx, self.view)] if self.view is not None and self.view.index is not None else []
            self._tables[table] = [
                r[:3] for home, n in stores for r in home._filed(n) or () if table in (home._filed_table(n, r) or ())
            ]  # fmt: skip
        return self._tables[table]

    def _filed_table(self, store: ast.Subscript, filing) -> frozenset | None:
        """The table a decorator's store files a definition in: the one it names, or the one the decorator's
        call passes for its parameter (`@register(HEADS, "mlp")`)."""
        return self.points_to(store.value) if filing.table is None else self._of(filing.home).points_to(filing.table)

    def _filed(self, store: ast.Subscript) -> list[tuple[object, ast.AST, object]] | None:
        """`registries.registrations` of a store of this file, once."""
        if store not in self._filings:
            self._filings[store] = registrations(self.ctx, self.view, store)
        return self._filings[store]

    def _registered_items(self, table: Obj, index) -> frozenset:
        """The definitions the decorators of the table's module file in it under `index` (any for None or
        "*"): each as its module's name for it."""
        home, found = self._of(table.ctx), set()
        for ctx, definition, key in home._registrations(table):
            if index in (None, "*") or key is None or key == index:
                named = self._of(ctx).points_to(definition) if isinstance(definition, ast.expr) else {Obj("made", ctx.tree, definition.name, ctx=ctx)}
                found |= named or set()
        return frozenset(found)

    def qualified(self, obj: Obj) -> str | None:
        """The dotted name an object names, as its module imports or defines it: `torch.nn.ReLU` for `nn.ReLU`
        held in a table, `models.Net` for a class of the project, what a lambda without parameters builds
        (`lambda: nn.CrossEntropyLoss()`) or one that hands its first parameter on first or configures a class with
        its parameters (`lambda w: nn.NLLLoss(weight=w)`); None for any other
        object."""
        if obj.kind == "field" and obj.base is not None:
            base = self.qualified(obj.base)
            return None if base is None else f"{base}.{obj.name}"
        if obj.kind != "made":
            return None
        node = obj.node
        if node is obj.ctx.tree:  # an import, a builtin, a class or function of the module
            return obj.ctx.analysis(Names).module_level(obj.name)
        if isinstance(node, ast.Lambda) and isinstance(node.body, ast.Call) and (not node.args.args or _forwards_first(node) or _configures(obj.ctx, node)):
            node = node.body.func  # `lambda params, lr: torch.optim.Adam(params, lr=lr)` constructs `Adam` of its first argument
        node = partial_target(obj.ctx, node) or node  # `partial(OneCycleLR, pct_start=0.3)`: what it constructs when called
        if isinstance(node, ast.Call):  # `instantiate(cfg.loss)` of a `_partial_: true` node: a factory of its target
            return self._of(obj.ctx).instantiated(node, partial=True)
        return obj.ctx.qualified_name(node) if isinstance(node, ast.Attribute | ast.Name) else None

    def names(self, found: frozenset | None) -> frozenset[str] | None:
        """The qualified names the objects `found` all name (`qualified`), wherever each was bound; None when
        one of them names nothing, or unknown."""
        names = {self._of(obj.ctx).qualified(obj) for obj in found - {NONE}} if found else {None}
        return None if None in names or not names else frozenset(names)

    def class_field(self, obj: Obj, name: str) -> frozenset | None:
        """What the methods of the project class `obj` is an instance of write to its attribute `name`
        (`written_in_class`), read in the class's module: `Encoder(...)` for `.encoder` of a `Net()` made
        anywhere (`self.encoder = Encoder(d)`); None when `obj` is of no project class, nothing there writes
        it, or unknown."""
        writes = self.written_in_class(frozenset({obj}), name)
        if not writes:
            return None
        home, cls = self.class_of(obj)
        instance = Obj("self", cls, ctx=home)
        written = union(*(self._of(home)._bound(target, value, 0) for _, _, target, value in writes))
        return None if not written or any(o.kind == "field" and o.base == instance for o in written) else written

    def written_in_class(self, found: frozenset | None, name: str) -> list[tuple[object, ast.AST, ast.AST, ast.AST | None]] | None:
        """What the methods of the one project class the objects `found` are instances of write to
        `self.<name>`: (the class's context, the method, the target, the value its statement binds: the
        whole right-hand side, for a target in a tuple too) for each write; None when the class is not
        one, or unknown."""
        classes = {self.class_of(obj) for obj in found - {NONE}} if found else {None}
        if len(classes) != 1 or None in classes:
            return None
        home, cls = classes.pop()
        objects, written = self._of(home), []
        for target, value, _ in objects._attribute_writes().get(name, ()):
            function = home.scopes.enclosing_function(target)
            receiver = objects.points_to(target.value) if function is not None else None
            if receiver and any(o.kind == "self" and o.node is cls for o in receiver):
                written.append((home, function, target, value))
        return written or None

    def method(self, call: ast.Call) -> tuple[object, ast.AST] | None:
        """The method of a project class that `obj.name(...)` runs (with the context of its module), when
        every object `obj` may be is an instance of that one class: `engine.run_epoch(...)` with `engine =
        Engine(...)` of another module, `trainer.fit()` with a trainer a builder returns. A method a base
        class of the same module defines counts."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        found = self.points_to(func.value)
        classes = {self.class_of(obj) for obj in found - {NONE}} if found else {None}
        if len(classes) != 1 or None in classes:
            return None
        ctx, cls = classes.pop()
        lookup = dispatched_method if all(o.kind == "self" for o in found - {NONE}) else inherited_method
        return lookup(ctx, cls, func.attr, self.view)

    def calls_stored(self, call: ast.Call) -> bool:
        """Does `obj.name(...)` call what the one project class `obj` is an instance of stores in `self.name`
        (`learner.actor(x)` with `self.actor = Actor(...)`), not a method acting on `obj`?"""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return False
        found = self.points_to(func.value)
        return bool(self.written_in_class(found, func.attr)) and self.method(call) is None

    def methods(self, call: ast.Call) -> list[tuple[object, ast.AST]]:
        """Each method of a project class `obj.name(...)` may run when `obj` may be an instance of several
        classes (a builder returning one of them on each branch) or is `self` of a class whose method its
        subclasses override (a base's loop calling `self.train_step(batch)`: the base's and each override):
        one per distinct method, all known; empty when one is not (or none is)."""
        func = call.func
        found = self.points_to(func.value) if isinstance(func, ast.Attribute) else None
        classes = {self.class_of(obj) for obj in found - {NONE}} if found else {None}
        if None in classes:
            return []
        selves = all(o.kind == "self" for o in found - {NONE})
        methods = {}
        for ctx, cls in sorted(classes, key=lambda c: (c[1].lineno, c[1].name)):
            caller = self.ctx.scopes.enclosing_function(call)
            each = dispatched_methods(ctx, cls, func.attr, self.view, caller) if selves else [inherited_method(ctx, cls, func.attr, self.view)]
            if not each or None in each:
                return []
            methods.update({id(m[1]): m for m in each})
        return list(methods.values())

    def _of(self, ctx) -> "Objects":
        """The points-to of another module of the project, which follows its own imports through this
        file's project view (a module read for the project has none of its own)."""
        if ctx is self.ctx:
            return self
        objects = ctx.analysis(Objects)
        if objects.view is None:
            objects.view = self.view
        if objects.linted is objects.ctx and ctx.project is None:  # a module read for the project: its call sites are found from here
            objects.linted = self.linted
        return objects

    # Evaluation.
    def _eval(self, expr: ast.AST, depth: int, site: ast.AST | None = None) -> frozenset | None:
        """`site`: the call of the function `expr` is returned by: what the function makes is told apart
        by it."""
        if site is not None:
            found = self._eval(expr, depth)
            return None if found is None else frozenset(_made_at(obj, site) for obj in found)
        if expr in self._exprs:
            return self._exprs[expr]
        self._work += 1
        if self._work > MAX_WORK or self._nesting > MAX_NESTING:
            return None
        start, outer, self._low = len(self._open), self._low, _NO_CUT
        self._nesting += 1
        try:
            found = self._evaluate(expr, depth)
        finally:
            self._nesting -= 1
            low, self._low = self._low, min(outer, self._low)
        if found is not None and len(found) > MAX_OBJECTS:
            found = None
        if low >= start:  # no key open before it was cut short: the answer is whole
            self._exprs[expr] = found
        return found

    def _evaluate(self, expr: ast.AST, depth: int) -> frozenset | None:
        if isinstance(expr, ast.Constant) and expr.value is None:
            return frozenset({NONE})
        if isinstance(expr, ast.Name):
            return self._name(expr, depth)
        if isinstance(expr, _ParameterValue):
            document = self._composed(expr.function) if expr.name == first_parameter(expr.function) else None
            return frozenset({document or self.parameter(expr.function, expr.name)})
        if isinstance(expr, _Iterated):
            return self._item(expr.iterable, None, depth)
        if isinstance(expr, _SiteWrite):
            return self._site_write(expr, depth)
        if isinstance(expr, ast.NamedExpr):
            return self._eval(expr.value, depth)
        if isinstance(expr, ast.IfExp):
            held = self._option_test(expr.test, depth)
            return union(*(self._eval(arm, depth) for arm, taken in ((expr.body, True), (expr.orelse, False)) if held in (None, taken)))
        if isinstance(expr, ast.BoolOp):
            return union(*(self._eval(value, depth) for value in expr.values))
        if isinstance(expr, ast.Attribute):
            return self._attribute(expr, depth)
        if isinstance(expr, ast.Subscript):
            return self._item(expr.value, expr.slice, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        return frozenset({Obj("made", expr, ctx=self.ctx)})

    def _key_of(self, index: ast.AST, depth: int = 0):
        """The constant an index is: a literal, or a parameter every call site of its function fills with
        the same constant (`SCHEDULES[name]` with `make_schedule("onecycle", ...)`); None when not known."""
        found = _constant(index)
        read = _dict_read(index)
        if read is not None:  # `LOSSES[cfg["loss"]]`, `cfg.get("loss", "ce")`: read afresh, whatever the depth here
            return self._item_key(self.points_to(read[0]), *read[1:], 0)
        if isinstance(index, ast.Attribute) and found is None:  # `LOSSES[args.loss]`: the option's default
            default = self._option_default(index, depth)
            return _constant(default) if default is not None else None
        if found is not None or not isinstance(index, ast.Name):
            return found
        function = self._scope_binding(index)
        if not isinstance(function, FUNCTIONS) or index.id not in {p.arg for p in parameters(function, variadic=False)}:
            return None
        if function not in self._site_constants:
            self._site_constants[function] = site_constants(self.ctx, function, self.linted)
        found = self._site_constants[function].get(index.id)
        if found is None and depth < MAX_CALL_DEPTH and index.id not in _stored_names(function):
            found = self._sites_key(function, index.id, depth)
        return found if isinstance(found, int | str) and not isinstance(found, bool) else None

    def _option_default(self, read: ast.Attribute, depth: int) -> ast.Constant | None:
        """The default of the command-line option `read` reads (`args.loss`, `parser.parse_args().config`) as a
        constant node, when every object its receiver may be agrees on one; None otherwise."""
        bases = self._eval(read.value, depth)
        defaults = {argparse_default(Obj("field", name=read.attr, base=b)) for b in bases} if bases else {None}
        default = defaults.pop() if len(defaults) == 1 else None
        return default.node if default is not None else None

    def _option_test(self, test: ast.AST, depth: int) -> bool | None:
        """The truth of a test of whether a command-line option with no default was given (`args.config`, `opts.config
        is not None`, no code of the project setting it): False, the path the program takes when the command line
        leaves it out (the configuration file it names not read); None for any other test (the tests of an
        option's value are the configuration's choices, `call_sites.decided`)."""
        if test not in self._option_tests:
            self._option_tests[test] = None  # (asked again while being worked out)
            tested = existence_test(test)
            read = tested[0] if tested is not None else None
            absent = isinstance(read, ast.Attribute) and not stored_in_project(self.ctx, read.attr) and self._option_default(read, depth)
            self._option_tests[test] = (not tested[1]) if absent and absent.value is None else None
        return self._option_tests[test]

    def _option_constants(self, call: ast.Call, function: ast.AST, depth: int) -> dict[str, object]:
        """The parameters of `function` that `call` fills with a command-line option no code of the project
        sets, and the function never rebinds: the option's default (`get_config(args.config)` with
        `add_argument("--config")`: None), the path the program takes when the command line says nothing."""
        found = {}
        for name, argument in bind_arguments(call, function, passes_self(call, function)).items():
            if isinstance(argument, ast.Attribute) and name not in _stored_names(function) and not stored_in_project(self.ctx, argument.attr):
                default = self._option_default(argument, depth)
                found.update({name: default.value} if default is not None else {})
        return found

    def _sites_key(self, function: ast.AST, name: str, depth: int):
        """The key every call site of `function` gives its parameter `name`, each argument read as a key in
        its caller's module (`LitModel(head=args.head)` with the option's default); None when one differs or
        is not known."""
        sites = [b for b in self.linted.analysis(Callers).bindings_in(self.ctx, function) if b.site is not None]
        keys = set()
        for binding in sites[:MAX_SITES]:
            passed = binding.argument(name)
            if passed is None or passed[2].default:
                return None
            keys.add(self._of(passed[0])._key_of(passed[1], depth + 1))
        return keys.pop() if len(keys) == 1 else None

    def _name(self, name: ast.Name, depth: int) -> frozenset | None:
        scope = self._scope_binding(name)
        return self._fixed(self._names, (scope, name.id), lambda: self._name_objects(scope, name.id, depth))

    def _fixed(self, memo: dict, key: tuple, compute) -> frozenset | None:
        """`compute()` once per key; a key asked again while it is computed (a cycle of bindings: `x =
        x.inner`, `self.a = self.a.cuda()`) gives what it holds so far, and the key is computed again from
        that until it holds no more (a fixed point). An answer is kept unless it depended on a key open
        outside its computation (Tarjan's low link: a cut of the key itself or of one opened within it is
        closed when it ends)."""
        if key in memo:
            return memo[key]
        if key in self._open:
            self._low = min(self._low, self._open[key])
            self._reentered.add(key)
            return self._partial.get(key, frozenset())
        position, outer, self._low = len(self._open), self._low, _NO_CUT
        self._open[key] = position
        try:
            found = compute()
            while key in self._reentered and found is not None and found != self._partial.get(key):
                self._reentered.discard(key)  # once more from what it holds so far
                self._partial[key] = found
                found = compute()
                found = None if found is not None and len(found) > MAX_OBJECTS else found
        finally:
            del self._open[key]
            self._reentered.discard(key)
            self._partial.pop(key, None)
            low, self._low = self._low, min(outer, self._low)
        if low >= position:
            memo[key] = found
        return found

    def _scope_binding(self, name: ast.Name) -> ast.AST:
        """The comprehension, function (or the module) whose binding of the name a read sees: a
        comprehension's variables are its own (`c` of `sum(c(x) for c in a)` is not the `c` of a later `for c
        in b:`)."""
        scopes = self.ctx.scopes
        comprehension = self._comprehension_binding(name)
        if comprehension is not None:
            return comprehension
        scope = scopes.enclosing_function(name)
        while scope is not None and name.id not in scopes.local_bindings(scope):
            scope = scopes.enclosing_function(scope)
        return scope if scope is not None else self.ctx.tree

    def _comprehension_binding(self, name: ast.Name) -> ast.AST | None:
        """The innermost comprehension around `name` (within its function) that binds it as a variable."""
        for ancestor in self.ctx.scopes.ancestors(name):
            if isinstance(ancestor, (*SCOPES, ast.ClassDef)):
                return None
            if isinstance(ancestor, COMPREHENSIONS) and any(
                isinstance(t, ast.Name) and t.id == name.id for g in ancestor.generators for t in ast.walk(g.target)
            ):
                return ancestor
        return None

    def _name_objects(self, scope: ast.AST, name: str, depth: int) -> frozenset | None:
        bindings = self._bindings_of(scope).get(name)
        if not bindings:
            if isinstance(scope, SCOPES):
                return frozenset({self.parameter(scope, name)})
            imported = self._imported(name, depth)
            if imported is not None:
                return imported
            return frozenset({Obj("made", self.ctx.tree, name, ctx=self.ctx)})  # an import, a builtin: one object each
        found: frozenset | None = frozenset()
        taken = [(t, v) for t, v in bindings if runs(arms(self.ctx.scopes.ancestors(t), t), lambda branch: self._option_test(branch.test, depth))]
        for target, value in taken or bindings:
            found = union(found, self._bound(target, value, depth))
            if found is None:
                return None
        return found

    def _imported(self, name: str, depth: int) -> frozenset | None:
        """What a module-level variable of another module of the project is, for a name this module
        imports (`from losses import LOSSES`), and the module itself for an imported module of the project
        (`from tagger import settings`: `settings.MODEL` is that variable); None for any other import."""
        if self.view is None or self.view.index is None or depth >= MAX_CALL_DEPTH:
            return None
        if self._imports is None:
            self._imports = module_scope_imports(self.ctx)
        qualified = self._imports.get(name)
        module = self.view.index.context(qualified) if qualified else None
        if module is not None and module is not self.ctx:  # `from tagger import settings`: the module, its variables read there
            return frozenset({Obj("made", module.tree, ctx=module)})
        found = self.view.find(qualified) if qualified else None
        if found is None and qualified:  # a variable its module writes attributes of too (`RECIPE = Munch()`, `RECIPE.optim = ...`)
            module, _, name = qualified.rpartition(".")
            home = self.view.index.context(module) if module else None
            if home is None or home is self.ctx or not self._of(home)._bindings_of(home.tree).get(name):
                return None
        elif found is None or (found[1] not in found[0].variables and found[1] not in found[0].classes):
            return None
        else:
            home, name = self.view.index.context(found[0].name), found[1]
        if home is None or home is self.ctx:
            return None
        objects = self._of(home)
        if name in objects.classes:  # the class itself (`from config import CFG`), read as its module reads it
            return frozenset({Obj("made", home.tree, name, ctx=home)})
        return objects._fixed(objects._names, (home.tree, name), lambda: objects._name_objects(home.tree, name, depth + 1))

    def _composed(self, function: ast.AST) -> Obj | None:
        """The configuration Hydra hands the first parameter of a `@hydra.main(...)` function (`composed_config`),
        as a literal made there; None for any other function."""
        if not getattr(function, "decorator_list", None):
            return None
        key = (function, "")
        if key not in self._configs:
            self._configs[key] = composed_config(self.ctx, function, function)
        return Obj("made", self._configs[key], ctx=self.ctx) if self._configs[key] is not None else None

    def _composed_by_call(self, call: ast.Call) -> frozenset | None:
        """The configuration Hydra's `compose(...)` gives (`composed_by_call`), as a literal made there; None for any other call."""
        key = (call, "")
        if key not in self._configs:
            self._configs[key] = composed_by_call(self.ctx, call) if isinstance(call.func, ast.Name | ast.Attribute) else None
        return frozenset({Obj("made", self._configs[key], ctx=self.ctx)}) if self._configs[key] is not None else None

    def parameter(self, function: ast.AST, name: str) -> Obj:
        """The object a parameter of a function is: the instance for a method's `self`."""
        cls = self._class_of(function)
        if cls is not None and name == first_parameter(function) and not _is_static(function):
            return Obj("self", cls, ctx=self.ctx)
        return Obj("parameter", function, name, ctx=self.ctx)

    def _bound(self, target: ast.AST, value: ast.AST | None, depth: int) -> frozenset | None:
        """What a binding gives the name `target` (a node inside the binding statement's target)."""
        if value is None:  # a loop variable over anything, a `with ... as`, an augmented assignment
            return frozenset({Obj("made", target, ctx=self.ctx)})
        path = _path_in(self.ctx.scopes, target)
        if isinstance(value, _Iterated) and path is not None:
            value, path = _item_source(self.ctx, value, path)
        if path is None:
            return frozenset({Obj("made", target, ctx=self.ctx)})
        found = self._eval(value, depth) if not path else self._unpacked(value, path, depth)
        return frozenset({Obj("made", target, ctx=self.ctx)}) if found is None and isinstance(value, _Iterated) else found

    def _unpacked(self, value: ast.AST, path: list, depth: int) -> frozenset | None:
        """`a` in `(a, b), c = value` (path [0, 0]), `x` in `for x in value` (path ["*"])."""
        index, rest = path[0], path[1:]
        items = self._items(value, index, depth)
        if items is None:
            return self._parameter_item(value, index, depth) if not rest else None
        found: frozenset | None = frozenset()
        for item, ctx, site in items:
            objects = self._of(ctx)
            inner = objects._unpacked(item, rest, depth + 1) if rest else objects._eval(item, depth + 1, site)
            if site is value and not rest:  # `model, opt = setup(model)` returning `model, ...`: the model passed
                inner = self._passed_back(value, inner, depth)
            found = union(found, inner)
        return found

    def _parameter_item(self, value: ast.AST, index, depth: int) -> frozenset | None:
        """`sched` in `opt, sched = pair` of a parameter `pair` (or a field of one): its item at `index`, as
        `pair[1]` is, which each call site answers (`Trainer(model, build_optim(model, cfg))`)."""
        found = self._eval(value, depth) if isinstance(value, ast.Name | ast.Attribute | _Iterated) and isinstance(index, int) else None
        if not found or not all(_of_parameter(o) for o in found):
            return None
        return self._item(value, index, depth)

    def _items(self, value: ast.AST, index, depth: int) -> list[tuple[ast.AST, object, ast.AST | None]] | None:
        """The expressions at `index` ("*": any) of what `value` is, with the context they are read in and
        the call of the function that returns them (None: this scope's own)."""
        if isinstance(value, ast.Tuple | ast.List | ast.Set):
            if any(isinstance(e, ast.Starred) for e in value.elts):
                return None
            if index == "*":
                return [(e, self.ctx, None) for e in value.elts]
            return _nth(value.elts, index, self.ctx)
        if isinstance(value, ast.Call):
            returns = self._returned(value, depth)
            if returns is not None:
                items: list = []
                for returned, ctx in returns:
                    inner = self._of(ctx)._items(returned, index, depth + 1)
                    if inner is None:
                        return None
                    items += [(item, home, site or value) for item, home, site in inner]
                return items
            handed = self.handed_back(value)
            if handed is not None:
                return [(a, self.ctx, None) for a in handed] if index == "*" else _nth(handed, index, self.ctx)
            return None
        return self._tuple_items(value, index, depth)

    def _tuple_items(self, value: ast.AST, index, depth: int) -> list[tuple[ast.AST, object, ast.AST | None]] | None:
        """The items at `index` of the tuples written out that `value` may be (`critic, gen = PAIRS[name]`,
        `for name, (fn, w) in terms.items()`); None when it may be anything else."""
        found = self._eval(value, depth) if isinstance(value, ast.Name | ast.Attribute | ast.Subscript | _Iterated) else None
        if not found or NONE in found:
            return None
        items: list = []
        for obj in found:
            if obj.kind != "made" or not isinstance(obj.node, ast.Tuple):
                return None
            inner = self._of(obj.ctx)._items(obj.node, index, depth + 1)
            if inner is None:
                return None
            items += [(item, home, site or obj.site) for item, home, site in inner]
        return items

    def _attribute(self, expr: ast.Attribute, depth: int) -> frozenset | None:
        bases = self._eval(expr.value, depth)
        if bases is None:
            return None
        found: frozenset | None = frozenset()
        for base in bases - {NONE}:
            found = union(found, self.member(base, expr.attr, depth))
            if found is None:
                return None
        return found or frozenset({NONE})

    def _field(self, base: Obj, attribute: str, depth: int) -> frozenset | None:
        return self._fixed(self._fields, (base, attribute), lambda: self._field_objects(base, attribute, depth))

    def _field_objects(self, base: Obj, attribute: str, depth: int) -> frozenset | None:
        if base.kind == "made" and isinstance(base.node, Mapping):  # `cfg.loss` of a configuration document: its item
            return self._elements(base, attribute, depth)
        if base.kind == "made" and attribute in _literal_keys(base):  # `cfg.loss` of a dict an attribute-dict wraps (`EasyDict({...})`)
            return None if stored_in_project(self.ctx, attribute) else self._elements(base, attribute, depth)
        if base.kind == "made" and base.ctx is not None and base.node is base.ctx.tree and not base.name:  # a module's variable
            home = self._of(base.ctx)
            return home._fixed(home._names, (home.ctx.tree, attribute), lambda: home._name_objects(home.ctx.tree, attribute, depth + 1))
        if base.kind == "made" and base.ctx is not self.ctx and base.ctx is not None and base.node is base.ctx.tree:
            # a class another module defines (`CFG.epochs`), read there, unless code of the project may store the field
            return None if stored_in_project(self.ctx, attribute) else self._of(base.ctx)._field(base, attribute, depth)
        if self.instance_class(base) in self.module_classes:  # a submodule: switched with its module
            return self._field_of(base, attribute)
        return self._written_objects(base, attribute, depth)

    def _field_of(self, base: Obj, name: str) -> frozenset | None:
        """The attribute or item `name` of `base` that nothing known writes; unknown past `MAX_FIELD_CHAIN`
        (a container filled with its own items would otherwise nest without end)."""
        length, inner = 0, base
        while inner is not None and inner.kind == "field":
            length, inner = length + 1, inner.base
        return frozenset({Obj("field", name=name, base=base, ctx=self.ctx)}) if length < MAX_FIELD_CHAIN else None

    def held(self, field: Obj) -> frozenset | None:
        """What the writes to a module's attribute put there (the loss a setter installs in `self.loss_op`),
        where the points-to answer keeps the attribute itself, switched with its module; for an item of
        one (`block` of `for block in self.blocks`), the items of what is written there."""
        if field.name.startswith("[") and field.base is not None and field.base.kind == "field":
            containers = self.held(field.base)
            index = _written_constant(field.name[1:-1]) if field.name != "[]" else None  # `self.cfg["inplace"]`: that item
            return None if containers is None else union(*(self._elements(c, index, 0) for c in containers - {NONE}))
        key = (field.base, field.name)
        written = self._fixed(self._written, key, lambda: self._written_objects(field.base, field.name, 0))
        if written != {field} or field.base is None or field.base.kind != "field":
            return written
        containers = self.held(field.base)  # nothing writes it: that attribute of what is held there (`self.cfg.inplace`)
        if not containers or field.base in containers:
            return written
        return union(*(self.member(c, field.name) for c in containers - {NONE}))

    def _written_objects(self, base: Obj, attribute: str, depth: int) -> frozenset | None:
        written = self._writes_of(base, attribute, depth)
        instance = self.instance_class(base)
        cls = instance or (self.classes.get(base.name) if base.kind == "made" and base.node is self.ctx.tree else None)
        if not written and cls is not None:  # a class attribute, read through `self` or the class (`Cfg.loss`)
            body = [s for s in cls.body if not (instance and isinstance(s, ast.AnnAssign))]  # an instance's fields: its construction's
            written = [(t, value) for t, value in class_bindings(body) if isinstance(t, ast.Name) and t.id == attribute]
        if not written and base.kind == "self" and (inherited := self._inherited_field(base.node, attribute, depth)):
            return inherited
        derived = self_classes(self.ctx, base.node, self.view)[1:] if not written and base.kind == "self" else []
        if derived:  # a mixin's (or a base's) `self.encoder`: that of the classes deriving from it
            return union(*(self._of(home)._field(Obj("self", c, ctx=home), attribute, depth) for home, c in derived))
        elsewhere = self._constructed_field(base, attribute) if cls is None else self._stored_elsewhere(cls, attribute, depth)
        if not written:
            return elsewhere or self._declared_field(base, attribute, depth) or self._field_of(base, attribute)
        found: frozenset | None = elsewhere or frozenset()
        for target, value in written:
            found = union(found, self._bound(target, value, depth))
        return self._passed_back(base.node, found, depth) if instance is not None and base.kind == "made" else found

    def _stored_elsewhere(self, cls: ast.ClassDef, attribute: str, depth: int) -> frozenset | None:
        """What other modules of the project store in `attribute` of an instance of the class `cls` of this file
        (`annotator.net = build_segmenter(...)` in `serve.py`, for `self.net` of `Annotator`); empty when none does."""
        if (cls, attribute) in self._stored_by_others:
            return self._stored_by_others[(cls, attribute)]
        self._stored_by_others[(cls, attribute)] = frozenset()  # (asked again while being worked out)
        index = self.view.index if self.view is not None else None
        found: frozenset | None = frozenset()
        for module in index.modules_storing(attribute, named=True) if index is not None else ():
            other = index.context(module)
            if other is None or other.real_file == self.ctx.real_file:
                continue
            objects = self._of(other)
            for target, value, _ in objects._attribute_writes().get(attribute, ()):
                receivers = None if is_self_attribute(target) else objects._eval(target.value, depth)
                if any(_is_class(objects.class_of(r), cls, self.ctx) for r in receivers or ()):
                    found = union(found, objects._bound(target, value, depth))
        self._stored_by_others[(cls, attribute)] = found
        return found

    def stored_attributes(self, cls: ast.ClassDef) -> frozenset[str]:
        """The attribute names a class of this module stores anywhere in its body (`x.name = ...`), once per class."""
        if cls not in self._stored:
            self._stored[cls] = frozenset(n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store))
        return self._stored[cls]

    def _writes_of(self, base: Obj, attribute: str, depth: int) -> list[tuple[ast.AST, ast.AST]]:
        """(target, value) of the file's writes of `attribute` on `base` (`self.model = model`)."""
        return [
            (target, value) for target, value, _ in self._attribute_writes().get(attribute, ())
            if any(self._same_instance(base, receiver) for receiver in self._eval(target.value, depth) or ())
        ]  # fmt: skip

    def _inherited_field(self, cls: ast.ClassDef, attribute: str, depth: int) -> frozenset | None:
        """An attribute of `self` that the class's methods never write and its project bases' do (`self.model`
        of a subclass's `validate`, written by `BaseTrainer.__init__`, of this module or another): what
        those writes bind; empty when none writes it."""
        found: frozenset | None = frozenset()
        for home, ancestor in list(lineage(self.ctx, cls, self.view))[1:]:
            owner = self._of(home)
            for target, value in owner._writes_of(Obj("self", ancestor, ctx=home), attribute, depth):
                found = union(found, owner._bound(target, value, depth))
        return found

    def _declared_field(self, base: Obj, attribute: str, depth: int) -> frozenset | None:
        """What a field of an object that nothing writes holds as its construction declares it: the keyword a
        `SimpleNamespace(...)` is made with; for a class whose fields make its constructor (a dataclass: no
        `__init__`, not a module), what the construction passes for the field, else the field's default
        (`sched_kwargs: dict = field(default_factory=lambda: {"step_size": 30})`: that dict). None when unknown,
        or when code of the project may store the field on an object it does not follow (`stored_in_project`)."""
        call = base.node if base.kind == "made" and isinstance(base.node, ast.Call) and base.ctx is not None else None
        if call is None or stored_in_project(base.ctx, attribute) or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        made = self._of(base.ctx)
        passed = next((k.value for k in call.keywords if k.arg == attribute), None)
        if base.ctx.qualified_name(call.func) in NAMESPACES:
            return made._eval(passed, depth) if passed is not None and not call.args else None
        found = self.class_of(base)
        if found is None or found[1] in self._of(found[0]).module_classes or own_method(found[1], "__init__") is not None:
            return None
        fields = {s.target.id: s.value for s in found[1].body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
        if attribute not in fields or len(call.args) > len(fields):
            return None
        passed = passed or dict(zip(fields, call.args)).get(attribute)
        if passed is not None:
            return made._eval(passed, depth)
        default = declared_default(found[0], fields[attribute])
        return self._of(found[0])._eval(default, depth) if default is not None else None

    def _constructed_field(self, base: Obj, attribute: str) -> frozenset | None:
        """An attribute of an instance this file makes of a project class of another module (no module: its
        parts are switched with it), as the class's methods write it, with what the construction passes
        for `__init__`'s parameters (`loop.callbacks` of `loop = Loop(model, cfg, [])`: that list)."""
        found = self.class_of(base) if base.kind == "made" and isinstance(base.node, ast.Call) else None
        if found is None or found[0] is self.ctx or self.view is None:
            return None
        qualified = f"{found[0].module.name}.{found[1].name}" if found[0].module is not None else None
        if qualified is None or self.view.is_module_class(qualified):
            return None
        written = self.class_field(base, attribute)
        return self._passed_back(base.node, written, 0) if written else None

    def _same_instance(self, obj: Obj, other: Obj) -> bool:
        """The same object (one a function makes, written there before it is returned: `args.flag = True` on what
        `parse()` returns to each caller), or an object of a class of the file and the `self` of that class's methods."""
        if obj == other or (obj.kind == other.kind == "made" and obj.node is other.node and None in (obj.site, other.site)):
            return True
        if "self" not in (obj.kind, other.kind):
            return False
        return self.instance_class(obj) is not None and self.instance_class(obj) is self.instance_class(other)

    def instance_class(self, obj: Obj) -> ast.ClassDef | None:
        """The class of the file an object is an instance of (`self` of its methods, or built by `Net()`)."""
        if obj.kind == "self":
            return obj.node
        call = obj.node if obj.kind == "made" and obj.ctx is self.ctx else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in self.classes:
            return self.classes[call.func.id] if self._scope_binding(call.func) is self.ctx.tree else None
        return None

    def written_elsewhere(self, member: ast.Attribute) -> bool:
        """May code of the file write the attribute `member` reads (`model.head`) from outside the object's
        class: on an object it may be (`model.head = ...`), or on a parameter it may be passed as (`def
        swap(m): m.head = ...`), or on an object not known? Passed to a function of another module of the
        project (`calibrate(model)`), it may be written there."""
        held = self.points_to(member.value)
        for target, _, _ in () if held is None else self._attribute_writes().get(member.attr, ()):
            receivers = None if is_self_attribute(target) else self.points_to(target.value)
            if not is_self_attribute(target) and (receivers is None or receivers & held or any(r.kind == "parameter" for r in receivers)):
                return True
        for call in () if held is None else self.ctx.index.of_type(ast.Call):
            if isinstance(call.func, ast.Name) and call.func.id not in self.functions and not hasattr(builtins, call.func.id) and self.library_name(call.func) is None:
                if any((self.points_to(a) or frozenset()) & held for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name | ast.Attribute)):
                    return True
        return held is None

    def replaced_by_call(self, made: ast.Call) -> bool:
        """Is the object the call `made` of this file makes handed to a function that replaces a part of what
        it is given (`def swap(m, n): m.fc = nn.Linear(512, n)`, then `swap(model, 3)`), of this file or
        imported? What calling it returns is then not what its class says."""
        for call in self.ctx.index.of_type(ast.Call):
            name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
            imported = self.view.function(self.ctx.qualified_name(call.func) or "") if self.view is not None and name not in self._replacing else None
            replacing = self._of(imported[0])._replacing if imported is not None else self._replacing
            for parameter in replacing.get(name, ()):
                passed = self._argument(call, parameter)
                if passed is not None and any(o.node is made for o in self.points_to(passed) or ()):
                    return True
        return False

    @cached_property
    def _replacing(self) -> dict[str, list[Obj]]:
        """Function name -> its parameters whose attributes it assigns a value that may be a module (`m.fc =
        nn.Linear(...)`), for the file's functions and methods."""
        found: dict[str, list[Obj]] = {}
        for writes in self._attribute_writes().values():
            for target, value, _ in writes:
                function = self.ctx.scopes.enclosing_function(target)
                if not isinstance(target.value, ast.Name) or not isinstance(value, ast.Call) or not isinstance(function, FUNCTIONS):
                    continue  # `m.fc = nn.Linear(...)`, `m.head = make_head(n)`: not `m.name = name`
                if target.value.id in {a.arg for a in parameters(function)}:
                    parameter = self.parameter(function, target.value.id)
                    if parameter.kind == "parameter" and parameter not in found.get(function.name, []):
                        found.setdefault(function.name, []).append(parameter)
        return found

    def _attribute_writes(self) -> dict[str, list[tuple[ast.AST, ast.AST | None, ast.AST]]]:
        """Attribute name -> (the attribute target, the value bound to it, the statement), for every
        `obj.x = value` of the file (in tuple targets too)."""
        if self._writes is None:
            self._writes = {}
            for node in self.ctx.index.of_type(ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With):
                for target, value in _statement_bindings(node):
                    for inner in _targets_in(target):
                        if isinstance(inner, ast.Attribute):
                            self._writes.setdefault(inner.attr, []).append((inner, value, node))
        return self._writes

    def _item(self, container: ast.AST, index, depth: int) -> frozenset | None:
        """`losses["ce"]`, `models[0]`: the objects at a constant index (or at the index node `index` is, read
        by `_key_of` for a table literal only) of what `container` may be, with those added to it
        (`append`); any item when the index is not a constant."""
        bases = self._eval(container, depth)
        if bases is None:
            return None
        if isinstance(index, ast.AST):
            tables = any(b.kind == "made" and isinstance(_table_literal(b), ast.Dict) for b in bases)
            index = self._key_of(index, depth) if tables else _constant(index)
        found: frozenset | None = frozenset()
        for base in bases - {NONE}:
            found = union(found, self._elements(base, index, depth))
            if found is None:
                return None
        return found

    def _elements(self, base: Obj, index, depth: int) -> frozenset | None:
        literal = base.node if base.kind == "made" else None
        if isinstance(index, str) and isinstance(literal, ast.Call) and _namespace(base):  # `vars(args)["loss"]`: `args.loss`
            updated = base.node in self._updated or (base.ctx is not None and base.node in self._of(base.ctx)._updated)
            return None if updated else self.member(base, index, depth)
        if isinstance(literal, ast.Call) and _makes_container(base.ctx, literal):
            literal = _container_literal(literal)
        found: frozenset | None = frozenset()
        home = self._of(base.ctx) if base.ctx is not None else self  # the file the literal is written in
        if isinstance(literal, ast.Dict):
            keys = [_constant(k) if k is not None else None for k in literal.keys]
            later = []  # the `**spread` entries after the key's last entry, which may replace its value
            if index in keys:
                at = [i for i, k in enumerate(keys) if k == index]
                at = at if index is None else at[-1:]  # a constant key: its last entry wins
                values = [literal.values[i] for i in at]
                later = [] if index is None else [v for k, v in zip(literal.keys[at[-1] + 1 :], literal.values[at[-1] + 1 :]) if k is None]
            else:  # any item for an unknown key or a literal with keys not constant; none for a key it lacks
                unknown = any(k is not None and c is None for k, c in zip(literal.keys, keys))
                values = literal.values if index in (None, "*") or unknown else []
            registered = self._registered_items(base, index) if index not in keys else frozenset()
            found = union(registered, *(home._eval(value, depth, base.site) for value in values))  # a builder's call's own items
            if index not in keys and index not in (None, "*"):  # `{**build_optim(cfg), "model": m}`: the spread dict's item
                for spread in (v for k, v in zip(literal.keys, literal.values) if k is None):
                    found = union(found, home._spread_item(spread, index, depth))
            if any(home._spread_item(spread, index, depth) != frozenset() for spread in later):
                found = None  # `{"scheduler": StepLR(opt), **overrides}`: what `overrides` may hold at the key
        elif isinstance(literal, ast.Tuple | ast.List):
            items = home._items(literal, index if isinstance(index, int) else "*", depth)
            if items is None and isinstance(literal, ast.List):  # an index past the literal: what was appended
                items = home._items(literal, "*", depth)
            found = None if items is None else union(*(home._of(c)._eval(item, depth) for item, c, _ in items))
        elif isinstance(literal, ast.ListComp | ast.GeneratorExp):  # `nn.ModuleList([Block(c) for c in chs])`
            found = home._eval(literal.elt, depth)
        elif isinstance(literal, ast.DictComp):  # `{k: Adam(nets[k].parameters()) for k in ("G", "D")}`
            found = home._eval(literal.value, depth)
            if found is not None and index in _comprehension_keys(literal):  # each key's own object
                found = frozenset(_keyed(o, index, literal.value) for o in found)
        elif isinstance(literal, COPIED) and base in self._copying:  # `x = list(x)`: read once
            found = frozenset()
        elif isinstance(literal, COPIED):  # `list(callbacks)`, `list(callbacks or [])`: the items of what it copies
            copied = home._eval(literal, depth)
            self._copying.add(base)
            try:
                found = None if copied is None else union(*(self._elements(c, index, depth) for c in copied - {NONE, base}))
            finally:
                self._copying.discard(base)
        elif isinstance(literal, ast.Call) and self._default_item(base, index) is not None:
            found = self._default_item(base, index)  # `meters["loss"]` of `defaultdict(AverageMeter)`
        elif isinstance(literal, ast.Call) and self._missing_item(base, depth) is not None:
            found = self._missing_item(base, depth)  # `meters["loss"]` of a dict whose `__missing__` makes one
        elif base.ctx is self.ctx and isinstance(literal, ast.Call):
            found = frozenset()  # a container built empty, filled by `append`
        else:
            keyed = isinstance(index, int | str) and (_of_parameter(base) or base.root().kind == "self")  # `self.cfg["inplace"]` too
            return self._field_of(base, f"[{index!r}]" if keyed else "[]")
        fillers = (self,) if home is self else (home, self)  # the file that makes it fills it too (`d["bce"] = ...` in a builder)
        for filler, added in ((f, a) for f in fillers for a in f._added_to(base, depth)) if found is not None else ():
            key = filler._added_keys.get(added)
            if isinstance(index, int | str) and key is not None and key != index:
                continue  # `parts["optim"] = ...` puts nothing at `parts["model"]`
            found = union(found, filler._eval(added, depth))
            if found is None:
                break
        if found is not None and not found and not (isinstance(literal, ast.Call) and literal.args == []) and not _fallback(base):
            return found if self._filled_by_decorators(base) else self._field_of(base, "[]")
        return found

    @cached_property
    def _updated(self) -> frozenset:
        """What made the objects the file's `x.update(...)` calls may change (`vars(args).update(json.load(f))`)."""
        calls = [c for c in self.ctx.index.of_type(ast.Call) if isinstance(c.func, ast.Attribute) and c.func.attr == "update"]
        return frozenset(o.node for c in calls for o in self.points_to(c.func.value) or () if o.kind == "made")

    def _filled_by_decorators(self, table: Obj) -> bool:
        """Does a registering decorator fill the dict `table` (`_registrations`)? Then a key none files it
        under is no item of it (a registry without the configured name raises `KeyError`)."""
        return table.kind == "made" and isinstance(table.node, ast.Dict) and bool(self._of(table.ctx)._registrations(table))

    def _spread_item(self, spread: ast.AST, index, depth: int) -> frozenset | None:
        """The item at `index` of what a `**spread` entry unpacks: nothing from a dict literal without the key."""
        bases = self._eval(spread, depth) if spread not in self._spreading else None  # (a dict spread into itself: unknown)
        if bases is None:
            return None
        found: frozenset | None = frozenset()
        self._spreading.add(spread)
        try:
            for base in bases - {NONE}:
                literal = _table_literal(base) if base.kind == "made" else None
                if isinstance(literal, ast.Dict) and all(isinstance(k, ast.Constant) for k in literal.keys) and index not in [k.value for k in literal.keys]:
                    continue
                found = union(found, self._elements(base, index, depth))
        finally:
            self._spreading.discard(spread)
        return found

    def _default_item(self, base: Obj, index) -> frozenset | None:
        """The item a `defaultdict` of a project class makes at a key it lacks (`defaultdict(AverageMeter)`, or a
        subclass whose `__init__` passes the factory: `super().__init__(AverageMeter)`): an instance of the
        factory, one per constant key; None for any other object."""
        found = _default_factory(base.ctx, base.node) if base.ctx.qualified_name(base.node.func) == DEFAULTDICT else None
        if found is None:
            cls = self.class_of(base)
            found = _default_factory(cls[0], _passed_factory(cls[1])) if cls is not None and _derives(cls[0], cls[1], DEFAULTDICT) else None
        if found is None:
            return None
        ctx, factory = found
        if project_class(self.view, ctx.qualified_name(factory)) is None and not (ctx is self.ctx and isinstance(factory, ast.Name) and factory.id in self.classes):
            return None
        key = (factory, index if isinstance(index, int | str) else None)
        if key not in self._defaults:
            self._defaults[key] = ast.copy_location(ast.Call(func=factory, args=[], keywords=[]), factory)
        return frozenset({Obj("made", self._defaults[key], ctx=ctx)})

    def _missing_item(self, base: Obj, depth: int) -> frozenset | None:
        """The items a dict subclass of the project makes in `__missing__` for a key it lacks (`self[key] =
        AverageMeter(key)`, `return self.setdefault(key, Meter())`, `return Meter()`): what it stores into
        `self[...]` or returns made there; None for a class without one."""
        cls = self.class_of(base)
        method = inherited_method(*cls, "__missing__", self.view) if cls is not None else None
        if method is None:
            return None
        home, function = method
        made = []
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) and _on_self(t) for t in node.targets):
                made.append(node.value)  # `self[key] = AverageMeter(key)`
            elif isinstance(node, ast.Call) and _on_self(node.func) and node.func.attr == "setdefault" and len(node.args) == 2:
                made.append(node.args[1])
        made += [n for n in function_returns(function) or () if isinstance(n, ast.Call) and not _on_self(n.func)]
        found = [self._of(home)._eval(value, depth + 1) for value in made]
        return union(*found) if found and None not in found else None

    def _added_to(self, base: Obj, depth: int) -> list[ast.AST]:
        """What `c.append(x)`, `c.add_module(name, x)`, `c[k] = x` of the file add to `base`, in the file's
        order. A receiver whose objects are known whole is indexed by them once; one whose answer hung on
        a cut is evaluated again at the next question."""
        if self._pending is None:
            self._pending = dict(enumerate(self._additions()))
        twin = _unkeyed(base)  # an item a comprehension makes per key: also what is written through a parameter key
        made = _unsited(base)  # what a function fills before it returns it (`d = {}`, `d["bce"] = ...`): each call's
        matched = []
        for number, (receiver, added) in list(self._pending.items()):
            if number not in self._pending:  # indexed meanwhile, by a question its receiver asked
                continue
            objects = self._held_too(self._eval(receiver, depth))
            if receiver in self._exprs:
                if self._pending.pop(number, None) is not None:  # not indexed by a question it asked
                    for obj in objects or ():
                        self._adding.setdefault(obj, []).append((number, added))
            elif base in (objects or ()) or made in (objects or ()) or (twin in (objects or ()) and added in self._through_keys):
                matched.append((number, added))
        shared = [pair for pair in self._adding.get(twin, []) if pair[1] in self._through_keys] if twin is not None else []
        own = self._adding.get(made, []) if made is not None else []
        ordered = [added for _, added in sorted(dict.fromkeys(matched + self._adding.get(base, []) + own + shared), key=lambda pair: pair[0])]
        return [write for added in ordered for write in self._per_site(base, added, depth)]

    def _per_site(self, base: Obj, added: ast.AST, depth: int) -> list[ast.AST]:
        """What `added` puts into `base`: itself, or, written through a parameter key, what each call site
        of its function puts there (`_keyed_writes`): at the site's key into a dict (`d[name] = x`, the key
        kept as `_added_keys`), into the item at the site's key (`d[event].append(fn)`); a site whose key is
        not a constant puts its value at every key."""
        through = self._through_keys.get(added)
        writes = self._keyed_writes(added, through[1], depth) if through is not None else None
        if writes is None:
            return [added]
        kept = []
        for key, write in writes:
            if through[0] is None and key is not None:
                self._added_keys[write] = key
            items = self._item(through[0], key, depth) if through[0] is not None and key is not None else None
            if items is None or base in items:
                kept.append(write)
        return kept

    def _keyed_writes(self, added: ast.AST, key: ast.Name, depth: int) -> list[tuple[object, ast.AST]] | None:
        """A write through a parameter `key` of its function (`self.events[event].append(fn)` in `def
        on(self, event, fn)`), once per call site: (the constant key the site passes, or None; what it adds
        there, `_SiteWrite`). None when `key` is no parameter, its function is called nowhere, or at more
        than `MAX_KEYED_SITES` sites."""
        if added not in self._site_writes:
            self._site_writes[added] = None
            function = self._scope_binding(key)
            if isinstance(function, FUNCTIONS) and key.id in {p.arg for p in parameters(function, variadic=False)} and key.id not in _stored_names(function):
                sites = [b for b in self.linted.analysis(Callers).bindings_in(self.ctx, function) if b.site is not None]
                if 0 < len(sites) <= MAX_KEYED_SITES:
                    self._site_writes[added] = [(self._site_key(b, key.id, depth), _SiteWrite(added, function, b)) for b in sites]
        return self._site_writes[added]

    def _site_key(self, binding, name: str, depth: int):
        """The constant key a call site passes for the parameter `name`; None when not a constant."""
        passed = binding.argument(name)
        return None if passed is None else self._of(passed[0])._key_of(passed[1], depth + 1)

    def _site_write(self, write: "_SiteWrite", depth: int) -> frozenset | None:
        """What one call site writes: the value, a parameter of the function read as the site's argument
        (unless that is a parameter of the caller's: then the writer's parameter, which its call sites fill)."""
        value, function = write.value, write.function
        if isinstance(value, ast.Name) and self._scope_binding(value) is function and value.id not in _stored_names(function):
            passed = write.binding.argument(value.id)
            if value.id in {p.arg for p in parameters(function, variadic=False)} and passed is not None:
                found = self._of(passed[0])._eval(passed[1], depth + 1)
                if found is None or not any(o.root().kind == "parameter" for o in found):
                    return found
        return self._eval(value, depth)

    def _held_too(self, objects: frozenset | None) -> frozenset | None:
        """`objects` with what is written to those of them that are a module's attribute, kept as itself
        (`held`): `self.blocks.append(Block(c))` adds to the `nn.ModuleList()` written to `self.blocks`."""
        fields = [o for o in objects or () if o.kind == "field" and o.base is not None and o.base.kind == "self"]
        return union(objects, *(self.held(o) or frozenset() for o in fields)) if fields else objects

    def _additions(self) -> list[tuple[ast.AST, ast.AST]]:
        """(container, what is added) for every `c.append(x)`, `c.add_module(name, x)`, `c[k] = x`."""
        added = []
        for call in self.ctx.index.of_type(ast.Call):
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in ADDING and len(call.args) > ADDING[func.attr]:
                added.append((func.value, call.args[ADDING[func.attr]]))
                receiver = func.value
                if isinstance(receiver, ast.Subscript) and isinstance(receiver.slice, ast.Name):  # `d[event].append(fn)`
                    self._through_keys[call.args[ADDING[func.attr]]] = (receiver.value, receiver.slice)
        for node in self.ctx.index.of_type(ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and self._filed(target) is None:  # (a decorator's: `_registered_items`)
                    added.append((target.value, node.value))
                    key = _constant(target.slice) if len(node.targets) == 1 else None
                    key = key if key is not None else tested_key(self.ctx.scopes, target)  # `if name == "bce": d[name] = ...`
                    if key is not None:
                        self._added_keys[node.value] = key
                    elif isinstance(target.slice, ast.Name) and len(node.targets) == 1:  # `d[name] = x`
                        self._through_keys[node.value] = (None, target.slice)
        return added

    def _call(self, call: ast.Call, depth: int) -> frozenset | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in RETURNS_RECEIVER:
            return self._eval(func.value, depth)
        receiver = self._fluent_receiver(func, depth) if isinstance(func, ast.Attribute) else None
        if receiver is not None:
            return receiver
        named = _constant(call.args[1]) if isinstance(func, ast.Name) and func.id == "getattr" and len(call.args) in (2, 3) else None
        if isinstance(named, str) and self.ctx.qualified_name(func) in (None, "getattr", "builtins.getattr"):
            read = self._attribute(ast.copy_location(ast.Attribute(value=call.args[0], attr=named, ctx=ast.Load()), call), depth)
            return union(read, *(self._eval(default, depth) for default in call.args[2:]))  # `getattr(model, "module", model)`
        keyed = isinstance(func, ast.Attribute) and func.attr in KEYED_READS and 1 <= len(call.args) <= 2 and _constant(call.args[0]) is not None
        if keyed and self.method(call) is None:  # (a project class's own `get`: what it returns)
            return self._keyed_read(func.value, call.args, depth)
        handed = self.handed_back(call)
        if handed is not None and len(handed) == 1:
            return self._eval(handed[0], depth)
        loaded = self._loaded_config(call, depth) or self._composed_by_call(call)
        if loaded is not None:
            return loaded
        viewed = isinstance(func, ast.Name) and func.id == "vars" and func.id not in self.ctx.scopes.bound_anywhere()
        if (viewed or self.ctx.qualified_name(func) in ATTRIBUTE_DICTS) and len(call.args) == 1 and not call.keywords:
            return self._eval(call.args[0], depth)  # `EasyDict(cfg)`: the dict, its items read by attribute too; `vars(args)`
        target = self.instantiated(call)
        if target is not None:  # `instantiate(cfg.model)`: the class the config names made here, what a function it names returns
            return self._target_returns(call, target, depth)
        returns = self._returned(call, depth)
        if returns is None and isinstance(func, ast.Subscript | ast.Name):
            returns = self._returned_by_value(func, depth)
        if returns is None:
            return frozenset({Obj("made", call, ctx=self.ctx)})
        found: frozenset | None = frozenset()
        for returned, ctx in returns:
            objects = self._keyed_return(call, returned, ctx, depth)
            objects = objects if objects is not None else self._of(ctx)._eval(returned, depth + 1, call)
            found = union(found, self._passed_back(call, objects, depth))
        return found

    def _target_returns(self, call: ast.Call, target: str, depth: int) -> frozenset | None:
        """What `instantiate(node)` gives for the `target` its node names: what a function of the project of
        that name returns (`_target_: models.build_segmenter`), else an object made by the call."""
        found = self.view.function(target) if self.view is not None and "." in target and depth < MAX_CALL_DEPTH else None
        returned = function_returns(found[1]) if found is not None and not self._of(found[0]).is_generator(found[1]) else None
        if not returned:
            return frozenset({Obj("made", call, ctx=self.ctx)})
        return union(*(self._of(found[0])._eval(r, depth + 1, call) for r in returned))

    def _loaded_config(self, call: ast.Call, depth: int) -> frozenset | None:
        """A configuration document a loader reads (`LOADERS`: `yaml.safe_load`, `json.load(s)`, `OmegaConf.load`
        and `.create`): of a string of the program (`yaml.safe_load(DEFAULTS)`, a module's constant), or of a
        file of the project at a constant path, opened (`open("config.yaml")`, also through `with open(path) as
        f` and a parameter's constant) or named (`OmegaConf.load("conf/train.yaml")`): the document
        `yaml_subset` reads, as a literal made where it is loaded; None for any other call, or a document it
        does not read."""
        loader = LOADERS.get(self.ctx.qualified_name(call.func) or "")
        if loader is None or not call.args or len(call.args) > 1 + (loader[0] == "yaml" and not loader[1]) or self.ctx.real_path is None:
            return None
        parse, read = (parse_json, read_json) if loader[0] == "json" else (parse_yaml, read_yaml)
        argument = self._opened_as(call.args[0])
        made = [o for o in self._eval(argument, depth) or () if o.kind == "made"]
        text = made[0].node.value if len(made) == 1 and isinstance(made[0].node, ast.Constant) and isinstance(made[0].node.value, str) else None
        if text is not None and not loader[1]:  # the document itself
            key = (call, text)
            if key not in self._configs:
                self._configs[key] = parse(text, call)
            return frozenset({Obj("made", self._configs[key], ctx=self.ctx)}) if self._configs[key] is not None else None
        path = text if loader[1] else self._opened_path(made, depth)
        if not isinstance(path, str) or os.path.isabs(path):
            return None
        key = (call, path)
        path = os.path.join(os.path.dirname(os.path.abspath(self.ctx.real_path)), path)
        if self.ctx.project is not None:
            self.ctx.project.read_file(path)  # each lint that reads it depends on it (the result cache)
        if key not in self._configs:
            self._configs[key] = read(path, call)
        return frozenset({Obj("made", self._configs[key], ctx=self.ctx)}) if self._configs[key] is not None else None

    def _opened_path(self, made: list[Obj], depth: int) -> str | None:
        """The constant path of the one `open(path)` call (the builtin, in this file) the objects `made` are; None otherwise."""
        opened = made[0].node if len(made) == 1 and made[0].ctx is self.ctx else None
        func = opened.func if isinstance(opened, ast.Call) and opened.args else None
        if not (isinstance(func, ast.Name) and func.id == "open" and func.id not in self.ctx.scopes.bound_anywhere()):
            return None
        return self._key_of(opened.args[0], depth)

    def _opened_as(self, name: ast.AST) -> ast.AST:
        """The `open(...)` call a name is bound to by the one `with open(...) as f` of its scope that binds it."""
        if not isinstance(name, ast.Name):
            return name
        scope = self.ctx.scopes.enclosing_function(name)
        items = [
            item.context_expr for statement in self.ctx.index.of_type(ast.With) for item in statement.items
            if isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == name.id and self.ctx.scopes.enclosing_function(statement) is scope
        ]  # fmt: skip
        return items[0] if len(items) == 1 else name

    def _fluent_receiver(self, func: ast.Attribute, depth: int) -> frozenset | None:
        """The receiver of `obj.fit(x)` when every object it may be is of one project class whose method
        returns `self` on every path (`pre = Prep().fit(train)` is the `Prep`); None otherwise."""
        found = self._eval(func.value, depth)
        classes = {self.class_of(obj) for obj in found - {NONE}} if found else {None}
        if len(classes) != 1 or None in classes:
            return None
        home, cls = classes.pop()
        method = inherited_method(home, cls, func.attr, self.view)
        return found if method is not None and returns_receiver(method[1]) else None

    def _keyed_return(self, call: ast.Call, returned: ast.AST, ctx, depth: int) -> frozenset | None:
        """What `return MODELS[name](**kw)` gives for the key `call` passes (`build("convnet")`): the functions
        of the table at that key run; what `return self.parts[name]` gives, the item at that key; None when the
        return is no such read or the call passes no constant."""
        func = returned.func if isinstance(returned, ast.Call) else returned
        if not isinstance(func, ast.Subscript):
            return None
        home = self._of(ctx)
        function = ctx.scopes.enclosing_function(returned)
        if function is None:
            return None
        if isinstance(func.slice, ast.Name):
            key = self._passed_key(call, function, func.slice.id, depth)
        else:  # `LOSSES[opts["loss"]](opts)`, `opts.get("loss", "ce")`: the item of what the call passes
            key = self._passed_item(call, function, func.slice, ctx, depth)
        if not isinstance(key, int | str) or isinstance(key, bool):
            return None
        if func is returned:
            return home._item(func.value, key, depth)
        returns = home._functions_returns(home._item(func.value, key, depth), depth)
        if returns is None:
            return None
        return union(*(self._of(c)._eval(r, depth + 2, call) for r, c in returns))

    def _passed_key(self, call: ast.Call, function: ast.AST, name: str, depth: int):
        """The constant `call` (of this file) gives `function`'s parameter `name`: a literal or default
        (`call_constants`), else what its argument is as a key (`_key_of`: `build(args.arch)` with the option's
        default, a parameter every call site fills alike); None when not known or the function rebinds it."""
        constants = call_constants(call, function)
        if name in constants or name in _stored_names(function):
            return constants.get(name)
        argument = bind_arguments(call, function, passes_self(call, function)).get(name)
        return self._key_of(argument, depth) if argument is not None else None

    def _passed_item(self, call: ast.Call, function: ast.AST, read: ast.AST, ctx, depth: int):
        """The constant at a key of a dict `call` (of this file) passes for a parameter of `function` that
        `read` reads (`opts["loss"]`, `opts.get("loss", "ce")`) and the function never rebinds; None when not
        one known constant."""
        found = _dict_read(read)
        if found is None:
            return None
        if not isinstance(found[0], ast.Name):
            return self._of(ctx)._key_of(read, depth + 1)
        if found[0].id in _stored_names(function):  # `cfg = dict(cfg)` first: as every call site fills it
            return self._of(ctx)._key_of(read, depth + 1)
        argument = bind_arguments(call, function, passes_self(call, function)).get(found[0].id)
        return self._item_key(self.points_to(argument), *found[1:], 0) if argument is not None else None

    def _item_key(self, bases: frozenset | None, key, default: ast.AST, depth: int, constant: Callable = None):
        """The one constant the dicts `bases` hold at `key` (else `default`); for a parameter, what each of
        its function's call sites passes holds there (the signature's default standing for a call that passes
        none: `def main(cfg=CONFIG)`); None when not one known constant. `constant`: what a literal reads as
        (`_constant`: a key, not a flag)."""
        constant = constant or _constant
        if not bases or NONE in bases:
            return None
        keys: set = set()
        for base in bases:
            if base.kind == "parameter" and isinstance(base.node, FUNCTIONS) and depth < MAX_CALL_DEPTH:
                bindings = self.linted.analysis(Callers).bindings_in(base.ctx, base.node)
                sites = ([b for b in bindings if b.site is not None] or bindings)[:MAX_SITES]  # its callers, else its signature
                passed = [b.argument(base.name) for b in sites]
                if not passed or None in passed:
                    return None
                keys |= {self._of(c)._item_key(self._of(c).points_to(a), key, default, depth + 1, constant) for c, a, _ in passed}
                continue
            if base.kind == "field" and base.root().kind == "parameter" and depth < MAX_CALL_DEPTH:  # `cfg["head"]` of a parameter
                keys.add(self._item_key(self._passed_field(base, depth), key, default, depth + 1, constant))
                continue
            copied = _copied(base)
            if copied is not None and key not in {k.arg for k in base.node.keywords}:  # `cfg = dict(cfg)`: the copied dict's
                if base not in self._copying:
                    self._copying.add(base)
                    try:
                        keys.add(self._of(base.ctx)._item_key(self._of(base.ctx).points_to(copied), key, default, depth, constant))
                    finally:
                        self._copying.discard(base)
                continue
            found = self._keyed_item(base, key, default, depth)
            keys |= {constant(_option_value(o).node) if _option_value(o) is not None else None for o in found or {NONE}}
        return keys.pop() if len(keys) == 1 else None

    def _passed_field(self, field: Obj, depth: int) -> frozenset | None:
        """The objects an attribute or item of a parameter (`cfg["head"]`) is where the parameter's function is
        called: the field read from what each call site (else the signature's default) passes."""
        root = field.root()
        if not isinstance(root.node, FUNCTIONS):
            return None
        bindings = self.linted.analysis(Callers).bindings_in(root.ctx, root.node)
        passed = [b.argument(root.name) for b in ([b for b in bindings if b.site is not None] or bindings)[:MAX_SITES]]
        if not passed or None in passed:
            return None
        found: frozenset | None = frozenset()
        for ctx, argument, _ in passed:
            home = self._of(ctx)
            objects = home.points_to(argument)
            for name in field.path():
                objects = union(*(home.member(o, name, depth + 1) or {NONE} for o in objects)) if objects else None
            found = union(found, objects)
        return found

    def _passed_back(self, call: ast.Call, found: frozenset | None, depth: int) -> frozenset | None:
        """What `call`'s function returns (`found`), each parameter of it (and an attribute or item of one)
        replaced by what `call` passes for it: `model = freeze(model)` is the model passed, `enc =
        encoder_of(model)` returning `model.encoder` is its encoder."""
        if not found:
            return found
        result: set[Obj] = set()
        for obj in found:
            parameter = obj.root()
            argument = self._argument(call, parameter) if parameter.kind == "parameter" else None
            if argument is None and obj is parameter and self._left_as_none(call, parameter):
                result.add(NONE)  # `def prepare(df, scaler=None)` called without one: that parameter is None
                continue
            if argument is None:
                result.add(obj)
                continue
            inner = self._eval(argument, depth + 1)
            for name in obj.path():
                inner = union(*(self.member(base, name, depth + 1) for base in inner - {NONE})) if inner else inner
            if inner is None:
                return None
            result |= inner
        return frozenset(result)

    def _argument(self, call: ast.Call, parameter: Obj) -> ast.AST | None:
        """What `call` passes for `parameter` when the parameter is one of the function it calls; None when
        it passes nothing (the default stands) or calls another function."""
        position = self._position(call, parameter)
        return call_argument(call, position, parameter.name) if position is not None else None

    def _left_as_none(self, call: ast.Call, parameter: Obj) -> bool:
        """Does `call`, a call of the function of `parameter`, leave it to its default `None` (no splat may fill it)?"""
        position = self._position(call, parameter)
        if position is None or call_argument(call, position, parameter.name) is not None:
            return False
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return False
        default = parameter_defaults(parameter.node).get(parameter.name)
        return isinstance(default, ast.Constant) and default.value is None

    def _position(self, call: ast.Call, parameter: Obj) -> int | None:
        """The position `call` passes `parameter` at (past its positional arguments: by keyword only), when
        it calls the function of the parameter; None when it calls another one."""
        function = parameter.node
        if not isinstance(function, FUNCTIONS) or isinstance(call.func, ast.Subscript):
            return None
        cls = self._of(parameter.ctx)._class_of(function)
        called = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
        if called != function.name and (self.ctx.qualified_name(call.func) or "").rpartition(".")[2] == function.name:
            called = function.name  # imported under another name (`from devices import setup2 as setup`)
        if called != function.name and not (function.name == "__init__" and cls is not None and called == cls.name):
            return None  # `Loop(model, cfg, [])` calls `Loop.__init__`
        positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        if cls is not None and not _is_static(function):
            positional = positional[1:]  # `self` (or `cls`) is the receiver
        return positional.index(parameter.name) if parameter.name in positional else len(call.args)  # by keyword only

    def _keyed_read(self, container: ast.AST, arguments: list[ast.AST], depth: int) -> frozenset | None:
        """`cfg.get("lr", 0.1)`, `kw.pop("name")`: for each object `container` may be, `_keyed_item`."""
        key, bases = _constant(arguments[0]), self._eval(container, depth)
        default = arguments[1] if len(arguments) == 2 else ast.Constant(None)
        found: frozenset | None = frozenset() if bases is not None else None
        for base in (bases or frozenset()) - {NONE}:
            found = union(found, self._keyed_item(base, key, default, depth))
            if found is None:
                return None
        return found

    def _keyed_item(self, base: Obj, key, default: ast.AST, depth: int) -> frozenset | None:
        """The item at `key` of a dict literal that has it, else `default`; of a parameter (or an attribute
        of one), that item read where it is passed (its default a constant: `cfg.get("inplace", True)` of a
        `CONFIG` that lacks the key is True); of anything else, the item or the default."""
        literal = base.node if base.kind == "made" else None
        copied = _copied(base)
        if copied is not None:  # `dict(cfg, lr=0.1)`, `cfg.copy()`: the item set there, else the copied dict's
            overrides = {k.arg: k.value for k in literal.keywords if k.arg is not None}
            home = self._of(base.ctx)
            if key in overrides:
                return home._eval(overrides[key], depth + 1)
            if base in home._copying:  # `cfg = dict(cfg)`: the copy read again adds nothing new
                return frozenset()
            home._copying.add(base)
            try:
                return home._keyed_read(copied, [ast.Constant(key), default], depth + 1)
            finally:
                home._copying.discard(base)
        if isinstance(literal, ast.Call) and _makes_container(base.ctx, literal):  # `dict(width=64, inplace=True)`
            literal = _container_literal(literal)
        literal = literal if isinstance(literal, ast.Dict) else None
        keys = [_constant(k) if k is not None else None for k in literal.keys] if literal is not None else []
        if literal is not None and None not in literal.keys:
            return self._elements(base, key, depth) if key in keys else self._eval(default, depth)
        if literal is None and _of_parameter(base) and isinstance(default, ast.Constant):
            return self._field_of(base, f"get{(key, default.value)!r}")
        return union(self._elements(base, key, depth), self._eval(default, depth))

    def handed_back(self, call: ast.Call) -> list[ast.expr] | None:
        """The arguments a call gives back, in order (`runners.handed_back`): a runner's method
        (`accelerator.prepare(model, optimizer)`, `fabric.setup(model, opt)`, `accelerator.unwrap_model(model)`),
        or the first argument of a wrapper that returns what it gets (`DataParallel(model)`)."""
        func = call.func
        if canonical_class(self.ctx.qualified_name(func)) in WRAPPERS or (isinstance(func, ast.Name) and func.id in PLAIN_DECORATORS):
            return [call.args[0]] if call.args and not isinstance(call.args[0], ast.Starred) else None  # also `staticmethod(F.cross_entropy)`
        return handed_back(call, lambda receiver: [made_runner(c, m, self.view) for c, m in self.made(receiver) or ()])

    def _returned(self, call: ast.Call, depth: int) -> list[tuple[ast.AST, object]] | None:
        """The expressions a function of the project that `call` runs returns (with their context): a
        function of the file by name, a method of `self`'s class, a function of another module."""
        if depth >= MAX_CALL_DEPTH:
            return None
        func, function, ctx = call.func, None, self.ctx
        if isinstance(func, ast.Name) and func.id in self.functions and self._scope_binding(func) is self.ctx.tree:
            function = self.functions[func.id]
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = self.ctx.scopes.enclosing_class(call)
            function = next((n for n in cls.body if isinstance(n, FUNCTIONS) and n.name == func.attr), None) if cls else None
        elif self.view is not None and isinstance(func, ast.Name | ast.Attribute):
            name = self.ctx.qualified_name(func)
            found = self.view.function(name) if name and "." in name and not name.startswith("torch.") else None
            if found is not None:
                ctx, function = found
        fields: dict[str, object] = {}
        if function is None and isinstance(func, ast.Attribute):
            ctx, function, fields = self._plain_method(func, depth) or (ctx, None, {})
        decorated = function is not None and not all(
            (isinstance(d, ast.Name) and d.id in PLAIN_DECORATORS) or identity_decorator(ctx, self.view, d) for d in function.decorator_list
        )  # fmt: skip
        if function is None or decorated or (ctx.analysis(Objects) if ctx is not self.ctx else self).is_generator(function):
            return None
        returned = function_returns(function)
        constants = {**self._option_constants(call, function, depth), **call_constants(call, function), **fields} if returned and len(returned) > 1 else None
        if constants:  # the returns the constants the call passes leave open (`make("onecycle", ...)`)
            reached = reachable_returns(function, constants)
            returned = [r for r in returned if any(r is other for other in reached)] or returned
        return [(r, ctx) for r in returned] if returned else None

    def _plain_method(self, func: ast.Attribute, depth: int) -> tuple[object, ast.AST, dict[str, object]] | None:
        """(its context, the method, the constants its `self` holds) `obj.method` runs when `obj` may be only
        one instance of a plain class of the project (a configuration, a registry: not a module, whose calls
        the layers follow) that defines or inherits it: `build_criterion` of `cfg.build_criterion()` with
        `cfg = Config()`, and `{"self.loss": "ce"}` for its field `loss: str = "ce"` (`field_constants`)."""
        receivers = (self._eval(func.value, depth) or frozenset()) - {NONE}
        receiver = next(iter(receivers)) if len(receivers) == 1 else None
        found = self.class_of(receiver) if receiver is not None else None
        if found is None or found[1] in self._of(found[0]).module_classes or self._runner(receiver):
            return None  # (a runner's methods are its table's: `runners.HANDING_BACK`, in accelerate's own code too)
        method = inherited_method(found[0], found[1], func.attr, self.view)
        receiver = receiver.node
        fields = field_constants(receiver, found[1], found[0]) if isinstance(receiver, ast.Call) and method and method[1] in found[1].body else {}
        return (*method, fields) if method is not None else None

    def _runner(self, obj: Obj) -> bool:
        """Is `obj` made by a runner class (`accelerate.Accelerator`, a class of the project deriving from one)?"""
        return obj.kind == "made" and isinstance(obj.node, ast.Call) and made_runner(obj.ctx, obj.node, self.view) is not None

    def _returned_by_value(self, func: ast.AST, depth: int) -> list[tuple[ast.AST, object]] | None:
        """What a call of a value that may be only module-level functions of the project returns (`MODELS[name]`
        of a table a decorator fills with builders, `build = BUILDERS[arch]`): every return of each."""
        if depth >= MAX_CALL_DEPTH or (isinstance(func, ast.Name) and self._scope_binding(func) is self.ctx.tree):
            return None  # a module-level name: `_returned`'s
        return self._functions_returns(self._eval(func, depth), depth)

    def _functions_returns(self, found: frozenset | None, depth: int) -> list[tuple[ast.AST, object]] | None:
        """Every return (with its context) of the module-level functions (or lambdas: their body) `found` all
        are; None when one is not."""
        if not found or depth >= MAX_CALL_DEPTH:
            return None
        returned = []
        for obj in found:
            found_function = self.function_of(obj)
            if found_function is not None and isinstance(found_function[1], ast.Lambda):
                returned.append((found_function[1].body, found_function[0]))
                continue
            if found_function is None or not isinstance(found_function[1], FUNCTIONS) or found_function[0].scopes.parent(found_function[1]) is not found_function[0].tree:
                return None
            ctx, function = found_function
            home = self._of(ctx)
            if home.is_generator(function):
                return None
            if not all((isinstance(d, ast.Name) and d.id in PLAIN_DECORATORS) or identity_decorator(ctx, home.view, d) for d in function.decorator_list):
                return None
            returned += [(r, ctx) for r in function_returns(function) or ()]
        return returned or None

    def function_of(self, obj: Obj) -> tuple[object, ast.AST] | None:
        """(its context, its node) for an object that is a function of the project: a closure or lambda
        made, a module-level function of its module, or one that module imports from the project."""
        if obj.kind != "made" or obj.ctx is None:
            return None
        if isinstance(obj.node, SCOPES):
            return obj.ctx, obj.node
        if obj.node is not obj.ctx.tree or not obj.name:
            return None
        home = self._of(obj.ctx)
        if obj.name in home.functions:
            return obj.ctx, home.functions[obj.name]
        if home.view is None:
            return None
        if home._imports is None:
            home._imports = module_scope_imports(home.ctx)
        qualified = home._imports.get(obj.name)
        return home.view.function(qualified) if qualified and "." in qualified else None

    def is_generator(self, function: ast.AST) -> bool:
        if function not in self._generators:
            self._generators[function] = bool(self.ctx.index.within(function, ast.Yield, ast.YieldFrom))
        return self._generators[function]

    # Bindings.
    def _bindings_of(self, scope: ast.AST) -> dict[str, list[tuple[ast.AST, ast.AST | None]]]:
        """Name -> (the target node, the value bound: None when unknown) for each binding of `scope`."""
        if scope not in self._bindings:
            found: dict[str, list[tuple[ast.AST, ast.AST | None]]] = {}
            stores = self.ctx.index.within(scope, ast.Name)
            for name in stores:
                if not isinstance(name.ctx, ast.Store) or self._scope_binding(name) is not scope:
                    continue
                if isinstance(self.ctx.scopes.enclosing_scope(name), ast.ClassDef):
                    continue  # a class body's `model: str = "mlp"` binds an attribute, not the module's `model`
                statement = self.ctx.scopes.parent(name)
                while statement is not None and not isinstance(statement, ast.stmt | ast.comprehension | ast.NamedExpr):
                    statement = self.ctx.scopes.parent(statement)
                value = _value_for(statement, name)
                found.setdefault(name.id, []).append((name, value))
            if isinstance(scope, SCOPES):
                for parameter in parameters(scope):
                    found.setdefault(parameter.arg, []).append((parameter, _ParameterValue(scope, parameter.arg)))
                for definition in self.ctx.index.within(scope, *FUNCTIONS, ast.ClassDef):  # a closure it returns
                    if self.ctx.scopes.parent(definition) is not None and self._defining_scope(definition) is scope:
                        found.setdefault(definition.name, []).append((definition, definition))
            self._bindings[scope] = found
        return self._bindings[scope]

    def _defining_scope(self, definition: ast.AST) -> ast.AST | None:
        """The function whose local name a nested `def` or `class` binds."""
        parent = self.ctx.scopes.parent(definition)
        while parent is not None and not isinstance(parent, (*SCOPES, ast.ClassDef, ast.Module)):
            parent = self.ctx.scopes.parent(parent)
        return parent

    def _class_of(self, function: ast.AST | None) -> ast.ClassDef | None:
        parent = self.ctx.scopes.parent(function) if function is not None else None
        return parent if isinstance(parent, ast.ClassDef) else None


class _ParameterValue(ast.expr):
    """Stands for what a parameter receives: evaluated as the parameter's object."""

    _fields = ()

    def __init__(self, function: ast.AST, name: str) -> None:
        super().__init__()
        self.function, self.name = function, name


def class_bindings(body: list[ast.stmt]) -> list[tuple[ast.AST, ast.AST | None]]:
    """(target, value) of the plain assignments of a class body."""
    return [(target, value) for statement in body if isinstance(statement, ast.Assign | ast.AnnAssign) for target, value in _statement_bindings(statement)]


def _statement_bindings(node: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    if isinstance(node, ast.Assign):
        return [(t, node.value) for t in node.targets]
    if isinstance(node, ast.AnnAssign):
        return [(node.target, node.value)] if node.value is not None else []
    if isinstance(node, ast.For | ast.AsyncFor):
        return [(node.target, _Iterated(node.iter))]
    if isinstance(node, ast.With):
        return [(item.optional_vars, None) for item in node.items if item.optional_vars is not None]
    return []


class _SiteWrite(ast.expr):
    """Stands for what one call site (`binding`) of `function` writes into a container through a parameter key."""

    _fields = ()

    def __init__(self, value: ast.AST, function: ast.AST, binding) -> None:
        super().__init__()
        self.value, self.function, self.binding = value, function, binding


class _Iterated(ast.expr):
    """Stands for one item of what a loop iterates."""

    _fields = ()

    def __init__(self, iterable: ast.AST) -> None:
        super().__init__()
        self.iterable = iterable


def _item_source(ctx, value: "_Iterated", path: list) -> tuple["_Iterated", list]:
    """A loop over a dict's values (`for m in metrics.values()`, `for k, m in metrics.items()`), over `zip`
    of iterables (`for head, crit in zip(heads, losses)`) or over `enumerate` as a loop over the items of
    the one iterable the name takes its item from: (what is iterated, where the name is in one item)."""
    call = value.iterable
    method = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and not call.args else None
    if method == "values":  # `for fn, w in terms.values()`: an item of the dict, unpacked as the target says
        return _Iterated(call.func.value), path
    if method == "items" and path[:1] == [1]:
        return _Iterated(call.func.value), path[1:]
    builtin = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and ctx.qualified_name(call.func) is None else None
    plain = builtin in ("zip", "enumerate") and not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args)
    if plain and builtin == "zip" and path and isinstance(path[0], int) and path[0] < len(call.args):
        return _Iterated(call.args[path[0]]), path[1:]
    if plain and builtin == "enumerate" and len(call.args) == 1 and path[:1] == [1]:
        return _Iterated(call.args[0]), path[1:]
    return value, path


def _value_for(statement: ast.AST | None, name: ast.Name) -> ast.AST | None:
    """The value a binding statement binds (the whole target's: `_path_in` says where the name is in it)."""
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.NamedExpr):
        return statement.value
    if isinstance(statement, ast.For | ast.AsyncFor | ast.comprehension):
        return _Iterated(statement.iter)
    return None


def _targets_in(target: ast.AST):
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _targets_in(element)
    elif isinstance(target, ast.Starred):
        yield from _targets_in(target.value)
    else:
        yield target


def _path_in(scopes, target: ast.AST) -> list | None:
    """Where a bound name or attribute sits in its statement's target: [] for the whole, [1] for `b` in
    `a, b = ...`; None under a starred target."""
    path: list = []
    node = target
    while True:
        parent = scopes.parent(node)
        if isinstance(parent, ast.Starred):
            return None
        if not isinstance(parent, ast.Tuple | ast.List) or node not in parent.elts:
            return path
        if any(isinstance(e, ast.Starred) for e in parent.elts):
            return None
        path.insert(0, parent.elts.index(node))
        node = parent


def argparse_default(field: Obj) -> Obj | None:
    """What an option of `args = parser.parse_args()` holds when the command line does not set it: the
    `default=` of its `parser.add_argument("--inplace-act", ...)` (dest `inplace_act`), else False for a
    `store_true` flag and True for a `store_false` one (the file's `ParserOptions`)."""
    call, ctx = field.base.node, field.base.ctx
    func = call.func if isinstance(call, ast.Call) else None
    if not (isinstance(func, ast.Attribute) and func.attr == "parse_args"):
        return None
    if isinstance(func.value, ast.Name):
        default = ctx.analysis(ParserOptions).default(func.value.id, field.name)
        if default is not None:
            return Obj("made", default, ctx=ctx)
    parser = _parser_binding(ctx, func.value)
    default = parser[0].analysis(ParserOptions).default(parser[1], field.name) if parser is not None else None
    return Obj("made", default, ctx=parser[0]) if default is not None else None


def _parser_binding(ctx, receiver: ast.AST) -> tuple[object, str] | None:
    """(its module's context, the name) of the one `name = argparse.ArgumentParser(...)` the receiver of
    `parse_args()` may be, wherever it was built: `get_parser().parse_args()` with `get_parser` of another
    module returning the parser its `add_argument` calls fill."""
    found = ctx.analysis(Objects).points_to(receiver)
    made = next(iter(found)) if found and len(found) == 1 else None
    if made is None or made.kind != "made" or not isinstance(made.node, ast.Call):
        return None
    if made.ctx.qualified_name(made.node.func) != "argparse.ArgumentParser":
        return None
    statement = made.ctx.scopes.parent(made.node)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return None
    return made.ctx, statement.targets[0].id


def _comprehension_keys(comprehension: ast.DictComp) -> list:
    """The constant keys of `{k: ... for k in ("a", "b")}`; empty for any other comprehension."""
    [generator, *more] = comprehension.generators
    if more or generator.ifs or not isinstance(generator.iter, ast.Tuple | ast.List):
        return []
    if not (isinstance(generator.target, ast.Name) and isinstance(comprehension.key, ast.Name) and generator.target.id == comprehension.key.id):
        return []
    keys = [_constant(e) for e in generator.iter.elts]
    return keys if None not in keys else []


def _keyed(obj: Obj, key, value: ast.AST) -> Obj:
    """An object a comprehension's value makes, told apart by the key it is made for."""
    made_here = obj.kind == "made" and obj.site is None and not obj.name and any(n is obj.node for n in ast.walk(value))
    return Obj(obj.kind, obj.node, f"[{key!r}]", obj.base, obj.site, obj.ctx) if made_here else obj


def _unkeyed(obj: Obj) -> Obj | None:
    """The object a comprehension's value is read at no one key, for one it makes at a key (`_keyed`); None for any other."""
    return Obj(obj.kind, obj.node, "", obj.base, obj.site, obj.ctx) if obj.kind == "made" and obj.name.startswith("[") else None


def _unsited(obj: Obj) -> Obj | None:
    """An object a function makes, as the function itself sees it (no call site), for one a caller reaches
    through a call site (`_made_at`); None for any other."""
    return Obj(obj.kind, obj.node, obj.name, obj.base, None, obj.ctx) if obj.kind == "made" and obj.site is not None else None


def _made_at(obj: Obj, site: ast.AST) -> Obj:
    """An object a function makes (not a module-level one), told apart by the call `site` of the function."""
    if obj.kind != "made" or obj.site is not None or obj.ctx.scopes.enclosing_function(obj.node) is None:
        return obj
    return Obj(obj.kind, obj.node, obj.name, obj.base, site, obj.ctx)


def joined(keys) -> str:
    """One key for what may be any of the objects `keys` name (`@{ema_model,model}`); `either` reads it."""
    keys = sorted({part for key in keys for part in either(key)})
    return keys[0] if len(keys) == 1 else "@{" + ",".join(keys) + "}"


def either(key: str) -> list[str]:
    """The keys of the objects a key of several (`joined`) stands for; a key of one object alone."""
    return key[2:-1].split(",") if key.startswith("@{") else [key]


def union(*sets: frozenset | None) -> frozenset | None:
    """The union of may-sets; None (unknown) when one of them is."""
    if any(s is None for s in sets):
        return None
    return frozenset().union(*sets)


def _dict_read(read: ast.AST) -> tuple[ast.expr, object, ast.AST] | None:
    """(the dict read, the constant key, the default) of a read of an item of a name (or of a constant item
    or attribute of one: `cfg["model"]["name"]`): `cfg["loss"]` (default None), `cfg.get("loss", "ce")`,
    `cfg.pop("loss")`; None for anything else."""
    if isinstance(read, ast.Call) and isinstance(read.func, ast.Attribute) and read.func.attr in KEYED_READS and 1 <= len(read.args) <= 2 and not read.keywords:
        container, key, default = read.func.value, read.args[0], read.args[1] if len(read.args) == 2 else ast.Constant(None)
    elif isinstance(read, ast.Subscript):
        container, key, default = read.value, read.slice, ast.Constant(None)
    else:
        return None
    return (container, _constant(key), default) if _is_read_path(container) and _constant(key) is not None else None


def _is_read_path(node: ast.AST) -> bool:
    """A name, or a constant item or attribute of one however deep (`cfg["model"]`, `cfg.model`)."""
    while isinstance(node, ast.Subscript | ast.Attribute):
        if isinstance(node, ast.Subscript) and _constant(node.slice) is None:
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _constant(node: ast.AST):
    if isinstance(node, ast.Constant) and isinstance(node.value, int | str) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value if isinstance(node.operand.value, int) else None
    return None


def _written_constant(text: str):
    """The constant `repr` wrote (`'inplace'`, `('inplace', True)`, `-1`); `ast.literal_eval` would leave
    garbage cycles (its nested functions) behind."""
    return _constant_value(ast.parse(text, mode="eval").body)


def _module_variable(ctx, made: ast.AST) -> str | None:
    """`registry.HEADS` for the value of `HEADS = Registry("heads")` at the top of the module `registry`."""
    if ctx.module is None:
        return None
    names = [t.id for s in module_statements(ctx.tree) if isinstance(s, ast.Assign) and s.value is made for t in s.targets if isinstance(t, ast.Name)]
    return f"{ctx.module.name}.{names[0]}" if len(names) == 1 else None


def _flag(node: ast.AST) -> bool | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None


def _constant_value(node: ast.AST):
    if isinstance(node, ast.Tuple):
        return tuple(_constant_value(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_constant_value(node.operand)
    return node.value if isinstance(node, ast.Constant) else None


NAMESPACES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})  # objects whose attributes are their keywords


def _default_factory(ctx, call: ast.AST | None) -> tuple[object, ast.AST] | None:
    """(context, factory) of `defaultdict(Factory)` (a name or attribute, no other argument)."""
    if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Name | ast.Attribute):
        return None
    return ctx, call.args[0]


def _passed_factory(cls: ast.ClassDef) -> ast.Call | None:
    """The `super().__init__(Factory)` call of a class's own `__init__`, when it has one."""
    init = next((n for n in cls.body if isinstance(n, FUNCTIONS) and n.name == "__init__"), None)
    calls = [
        n for n in ast.walk(init) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
        and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name) and n.func.value.func.id == "super"
    ] if init is not None else []  # fmt: skip
    return calls[0] if len(calls) == 1 else None


def _on_self(node: ast.AST) -> bool:
    """`self[key]` or `self.setdefault`: an item of the object a method runs on."""
    return isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _derives(ctx, cls: ast.ClassDef, name: str) -> bool:
    """Does the class name `name` (qualified) among its bases?"""
    return any(ctx.qualified_name(b) == name for b in cls.bases)


def _copied(obj: Obj) -> ast.AST | None:
    """The dict a made object copies: `x` of `dict(x)`, `dict(x, k=v)` (the keywords set over it) or
    `x.copy()`; None for any other object."""
    call = obj.node if obj.kind == "made" else None
    if not isinstance(call, ast.Call) or isinstance(call.func, ast.Attribute) and call.func.attr == "copy" and not call.args and not call.keywords:
        return call.func.value if isinstance(call, ast.Call) else None
    named = isinstance(call.func, ast.Name) and call.func.id == "dict" and "dict" not in obj.ctx.scopes.bound_anywhere()
    return call.args[0] if named and len(call.args) == 1 and all(k.arg is not None for k in call.keywords) else None


def _makes_container(ctx, call: ast.Call) -> bool:
    """`nn.ModuleList(...)`, `dict(...)`, `list(...)` (builtins the module does not rebind), and an
    attribute-dict made of keywords (`EasyDict(lr=0.1)`: the dict of its keywords)."""
    func = call.func
    if call.keywords and not call.args and ctx.qualified_name(func) in ATTRIBUTE_DICTS:
        return True
    if isinstance(func, ast.Name) and func.id in BUILTIN_CONTAINERS:
        return func.id not in ctx.scopes.bound_anywhere()
    return canonical_class(ctx.qualified_name(func)) in CONTAINER_CLASSES


def _is_class(found: tuple | None, cls: ast.ClassDef, ctx) -> bool:
    """Is `found` (`class_of`'s answer) the class `cls` of the module `ctx`, however that module was read?"""
    return found is not None and found[1].name == cls.name and found[1].lineno == cls.lineno and found[0].real_file == ctx.real_file


def _fallback(obj: Obj) -> bool:
    """Is the object an empty list or tuple written as the fallback of `or` (`callbacks or []`): empty,
    unless something is added to it?"""
    literal = obj.node if obj.kind == "made" else None
    if not isinstance(literal, ast.List | ast.Tuple) or literal.elts or obj.ctx is None:
        return False
    parent = obj.ctx.scopes.parent(literal)
    return isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.Or) and parent.values[-1] is literal


def _forwards_first(function: ast.Lambda) -> bool:
    """Does a lambda's call pass the lambda's first parameter as its own first argument?"""
    body, first = function.body, function.args.args[0].arg
    return bool(body.args) and isinstance(body.args[0], ast.Name) and body.args[0].id == first


def _configures(ctx, function: ast.Lambda) -> bool:
    """Does a lambda construct a class (a capitalised name, not a function: `F.relu(x)`) with arguments made
    only of constants, its own parameters and imported names (`lambda w: nn.NLLLoss(weight=w, ignore_index=255)`,
    `lambda cfg: nn.BCEWithLogitsLoss(pos_weight=torch.tensor(cfg.get("pw", 1.0)))`)?"""
    body, own = function.body, {a.arg for a in function.args.args}
    name = body.func.attr if isinstance(body.func, ast.Attribute) else body.func.id if isinstance(body.func, ast.Name) else ""
    passed = [*body.args, *(k.value for k in body.keywords)]
    names = [n for a in passed for n in ast.walk(a) if isinstance(n, ast.Name)]
    return name[:1].isupper() and not any(isinstance(n, ast.Lambda | ast.NamedExpr) for a in passed for n in ast.walk(a)) and all(
        n.id in own or ctx.qualified_name(n) is not None for n in names
    )


def _table_literal(obj: Obj) -> ast.AST:
    """The literal a made container is written as: `{...}`, or the dict `dict(adam=..., sgd=...)` holds."""
    node = obj.node
    return _container_literal(node) if isinstance(node, ast.Call) and _makes_container(obj.ctx, node) else node


def _container_literal(call: ast.Call) -> ast.AST:
    """What a container's constructor holds: its one argument, its arguments as a tuple, or a dict of its
    keywords (`dict(growth=12, inplace=True)`)."""
    if call.keywords and all(k.arg is not None for k in call.keywords) and not call.args:
        return ast.Dict(keys=[ast.Constant(k.arg) for k in call.keywords], values=[k.value for k in call.keywords])
    return call.args[0] if len(call.args) == 1 else ast.Tuple(elts=call.args)


def _namespace(obj: Obj) -> bool:
    """Is `obj` made by `parse_args()` or a namespace class (`SimpleNamespace(...)`): its attributes are its items to `vars`?"""
    func = obj.node.func
    return (isinstance(func, ast.Attribute) and func.attr == "parse_args") or obj.ctx.qualified_name(func) in NAMESPACES


def _option_value(obj: Obj) -> Obj | None:
    """A made object, or the default of the command-line option a field is (`argparse_default`); None otherwise."""
    if obj.kind == "made":
        return obj
    return argparse_default(obj) if obj.kind == "field" and obj.base is not None and obj.base.kind == "made" else None


def _literal_keys(obj: Obj) -> list:
    """The constant keys of the dict literal (or `dict(k=v)`, `EasyDict(k=v)` call) that made `obj`; empty for anything else."""
    literal = obj.node
    if isinstance(literal, ast.Call) and _makes_container(obj.ctx, literal):
        literal = _container_literal(literal)
    return [_constant(k) for k in literal.keys if k is not None] if isinstance(literal, ast.Dict) else []


def _of_parameter(obj: Obj) -> bool:
    """Is `obj` a parameter, or an attribute or item of one (`cfg`, `cfg.model`)?"""
    while obj.kind == "field":
        obj = obj.base
    return obj.kind == "parameter"


def _nth(values: list, index, ctx) -> list | None:
    return [(values[index], ctx, None)] if isinstance(index, int) and -len(values) <= index < len(values) else None


def _is_static(function: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in function.decorator_list)


def _receiver_classes(linted, caller, receiver: ast.AST) -> list[tuple[object, ast.ClassDef]]:
    """`Objects.classes_of` what `receiver` (of `caller`) may be, the call sites found from `linted`."""
    objects = linted.analysis(Objects)._of(caller)
    return objects.classes_of(objects.points_to(receiver))


def _called_functions(linted, caller, call: ast.Call) -> list[tuple[object, ast.AST]]:
    """The project functions (context, node) the value `call` calls (of `caller`) may be, the call sites
    found from `linted`: `loss_fn(pred, y)` with `loss_fn = get_loss("rmse")`; empty when unknown."""
    objects = linted.analysis(Objects)._of(caller)
    found = objects.points_to(call.func)
    functions = [objects.function_of(obj) for obj in found - {NONE}] if found else []
    return [f for f in functions if f is not None]


Callers.receiver_classes = staticmethod(_receiver_classes)  # the callers layer below asks points-to through it
Callers.called_functions = staticmethod(_called_functions)
