"""Shape analysis: an abstract interpretation of one function at a time that gives tensor values shapes of
known rank, whose dimensions are ints, symbols or unknown (see `dims`).

Shapes come from literal constructor sizes (`torch.randn(8, 1)`), layers whose sizes the file shows
(`self.head = nn.Linear(h, 1)`, `nn.Sequential(...)`, a module class of the file whose `forward` is
interpreted with the argument's shape, a model passed in as a parameter: what the first call site that
tells passes, as the objects layer tells; loops over a `ModuleList` of listed layers, unrolled), the
NumPy and torch functions of `vocabulary`, data (datasets and loaders: see `data_shapes`; a
LightningModule's steps get the batches `trainer.fit` passes), library image models (timm, torchvision)
by their factory and a classifier put in their place, helper functions and dataset classes of the file
or of other modules of the project run with their arguments, a function's parameters as the first call
site of another module that tells passes them (one call site's arguments, never mixed; `call_site` says
which), and shape operations (`view`, `unsqueeze`, indexing, reductions, broadcasting, ...). `squeeze()`
takes a symbolic size (a batch) for more than one: `(B, 1)` gives `(B,)`. A tensor of unknown rank may still have known ends
(`(B, ..., 1)`). Names are followed in statement order; where paths join, a name keeps its value only
if every path agrees. Anything else is unknown: the analysis never guesses.

It is lazy: a function is interpreted the first time a rule asks about one of its expressions. The
interpreter that runs a function is `shape_interpreter`'s; `Shapes` starts it and keeps what it records.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import itertools

from mllint.analysis.objects.call_sites import built, made_classes, makers, possible_constants
from mllint.analysis.objects.points_to import WRAPPERS, Objects
from mllint.analysis.program.callers import LIBRARY_TRAINERS, Callers, call_sites, signature_passage
from mllint.analysis.program.calls import bind_values
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.hierarchy import made_runner, project_class, self_classes
from mllint.analysis.facets.data_shapes import as_dataset, collate, full_batches, full_or_even, through_outer
from mllint.analysis.facets.dims import Dim, Shape, Sym, floor_divide, format_ends, format_shape, multiply, same_shape
from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.facets.layer_shapes import (
    CONVOLUTIONS, LINEAR, POOLS, LOSSES, SHAPE_PRESERVING, batched_convolution, batched_recurrent, constructor_dim, head_features, library_model_output, library_part_output, loss_output,
    spatial_symbols, torch_layer_ends, torch_layer_output, torch_layer_outputs, truncated_children, truncated_resnet,
)
from mllint.analysis.syntax.names import Names, call_argument, is_self_attribute
from mllint.analysis.values.library_classifiers import CLASSIFIER_HEADS, is_library_model
from mllint.analysis.values.library_models import architecture
from mllint.analysis.program.project_view import ProjectView, followed_view
from mllint.analysis.syntax.scopes import FUNCTION_NODES, first_parameter, parameter_defaults, parameters
from mllint.analysis.facets.operations import PARAMETERS, SIZED_CONSTRUCTORS
from mllint.analysis.facets.shape_interpreter import (
    CONFLICT, Interpreter, MAX_CALL_DEPTH, MAX_ITEMS, _ACTIVE_CLASSES, _LINTED, _ends_of, _float_defaults, _informative,
    _none_defaults, registered,
)
from mllint.analysis.facets.tensor_values import (
    MORE, NONE, NUMBER, Batches, Fields, Items, Keyword, Listed, Number, Samples, Tensor, value_shape,
)
from mllint.analysis.syntax.tree import assignment_targets, bound_receivers, module_statements, own_method, same_expression
from mllint.analysis.values.runners import handed_back
from mllint.analysis.values.values import SEQUENTIAL, ValueKinds, canonical_class, built_record, describe_passage
from mllint.findings import Related

_CALLER_CHAIN: list[ast.AST] = []  # the functions whose parameters are being taken from a call site, across modules
NUMPY_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"})
TENSOR_ATTRIBUTES = PARAMETERS | SIZED_CONSTRUCTORS  # built once in `__init__`
INFORMATIVE_ATTRIBUTES = frozenset({"shape", "T", "mT", "data", "values", "iloc"})  # of a tensor or frame

MODULE_LIST = "torch.nn.ModuleList"
MODULE_DICT = "torch.nn.ModuleDict"
GRAPH_CONVOLUTIONS = frozenset(f"torch_geometric.nn.{conv}" for conv in ("GCNConv", "SAGEConv", "GraphConv", "GATConv", "GATv2Conv", "TransformerConv"))
LIGHTNING_MODULES = frozenset(
    {"lightning.LightningModule", "lightning.pytorch.LightningModule", "pytorch_lightning.LightningModule"}
)
# A LightningModule's step -> where `trainer.fit(module, ...)` passes the loader of its batches.
LIGHTNING_STEPS = {"training_step": (1, "train_dataloaders"), "validation_step": (2, "val_dataloaders")}
MODULE_COPIES = frozenset({"copy.deepcopy"})  # a copy of a module (a target network) runs as the module does
MOVES = frozenset({"to", "cuda", "cpu", "float", "double", "half"})  # a module's methods that return it


class Shapes:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.values = ctx.analysis(ValueKinds)
        self.modules = ctx.analysis(ModuleClasses)
        self.recorded: dict[ast.AST, object] = {}
        self.turned: dict[tuple[ast.AST, object], object] = {}  # (node, key) -> its value in that key's turn of a loop over a dict
        self.view_targets: dict[ast.Call, Shape] = {}
        self.view_sources: dict[ast.Call, Shape] = {}  # a source of unknown rank, as its view's target names it
        self.helper_values: dict[ast.Call, dict[ast.AST, object]] = {}
        self._analysed: set[ast.AST] = set()
        self._summaries: dict[tuple, object] = {}
        self._attributes: dict[object, dict[str, list[ast.AST]]] = {}  # by class, and by ("unpacked", class)
        self._attribute_sizes: dict[tuple[ast.ClassDef | None, str], object | None] = {}
        self._stored: dict[ast.ClassDef, dict[str, object]] = {}  # what `__init__` leaves in `self.x`
        self._stores: dict[ast.ClassDef, dict[str, int]] = {}
        self._heads: dict[ast.Call, list | None] = {}  # a library model -> what is put in place of its classifier
        self._foreign: list = []  # the other modules' contexts whose classes were interpreted
        self._definitions: dict[str, ast.AST] | None = None
        self._view: ProjectView | None = None
        self.passed: dict[ast.Call, str] = {}  # a call of a model passed in -> "`model` passed at main.py:12"
        self.sites: dict[ast.Call, tuple[Related, ...]] = {}  # ... -> its call sites (`callers.call_sites`)
        self.bindings: dict[ast.AST, object] = {}  # a function -> the call site its parameters' values come from

    @property
    def view(self) -> ProjectView:
        """The project as this file sees it; a module read for another file's lint (no project of its own)
        sees the project it was read for, so its helpers' calls of further modules are followed too."""
        if self._view is None:
            self._view = followed_view(self.ctx)
        return self._view

    # Queries.
    def value(self, expr: ast.AST) -> object | None:
        self._analyse_scope_of(expr)
        value = self.recorded.get(expr)
        return None if value is CONFLICT else value

    def value_in_turn(self, expr: ast.AST, key) -> object | None:
        """`value` of `expr` in the turn of `key` of the loop over a dict around it (`turns.turns`)."""
        self._analyse_scope_of(expr)
        value = self.turned.get((expr, key))
        return None if value is CONFLICT else value

    def item_value(self, expr: ast.AST) -> object | None:
        """`value`, also of an item of a value a name is unpacked from (`loader, net, opt = build(data)`: the
        reaching-values layer gives `loader` as item 0 of the call, a node of no tree): that item of it."""
        index = expr.slice.value if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) else None
        if type(index) is not int or expr in self.ctx.index.parents:
            return self.value(expr)
        whole = self.item_value(expr.value)
        return whole.values[index] if isinstance(whole, Items) and 0 <= index < len(whole.values) else None

    def call_site(self, expr: ast.AST):
        """The call site (a `callers.Binding`) whose arguments the values around `expr` were worked out
        with, when its function's parameters took them from one."""
        self._analyse_scope_of(expr)
        return self.bindings.get(self.ctx.scopes.enclosing_function(expr))

    def argument(self, call: ast.Call, position: int, keyword: str) -> tuple[ast.AST | None, object | None]:
        """The argument of `call` at `position` or `keyword` and its value; through `*pair` of a tuple or
        `**inputs` of a dict the analysis knows (then with no node of its own)."""
        node = call_argument(call, position, keyword)
        if node is not None:
            return node, self.value(node)
        spread: list[tuple[ast.AST | None, object | None]] = []
        for argument in call.args:
            items = self.value(argument.value) if isinstance(argument, ast.Starred) else None
            if isinstance(argument, ast.Starred) and not isinstance(items, Items):
                break  # how many it spreads is not known: no later position is
            spread += [(None, v) for v in items.values] if items is not None else [(argument, self.value(argument))]
            if len(spread) > position:
                return spread[position]
        for unpacked in (k.value for k in call.keywords if k.arg is None):
            fields = self.value(unpacked)
            if isinstance(fields, Fields) and fields.get(keyword) is not None:
                return None, fields.get(keyword)
        return None, None

    def constants(self, expr: ast.AST) -> frozenset | None:
        """Every constant `expr` may be, under every call site of the function around it that the linted
        file's project shows (`call_sites.possible_constants`); None when unknown, or no linted file is known."""
        linted = self.ctx if self.ctx.project is not None else (_LINTED[-1].ctx if _LINTED else None)
        return possible_constants(self.ctx, expr, linted) if linted is not None else None

    def is_fresh(self, expr: ast.AST) -> bool:
        """Is `expr` a tensor or parameter an attribute is made as in `__init__` (`nn.Parameter(torch.empty(
        d, h))`)? Its values are whatever training makes of them: a view lays them out, it reorders nothing."""
        value = self.value(expr)
        return isinstance(value, Tensor) and value.fresh

    def shape(self, expr: ast.AST) -> Shape | None:
        value = self.value(expr)
        return value.shape if isinstance(value, Tensor) else None

    def unbatched(self, expr: ast.AST) -> tuple | None:
        """(its module's context, the call) of a dim-less `squeeze()` that dropped the batch dimension of a
        batch of one on the way to the value of `expr` (a model's `forward` run on a loader's one-sample
        batch); None otherwise. A cheap test first: `squeeze(` is called in this file or the project."""
        project = self.ctx.project
        if "squeeze(" not in self.ctx.source.text and (project is None or not project.modules_calling("squeeze")):
            return None
        value = self.value(expr)
        return value.unbatched_at if isinstance(value, Tensor) else None

    def dim_size(self, expr: ast.AST, dim: int) -> tuple[Dim, str] | None:
        """The size of dimension `dim` of `expr` (negative: from the end) and the shape it is read from
        (`(B, T, 1)`, or the known ends of a tensor of unknown rank: `(..., 1)`); None when not known."""
        value = self.value(expr)
        if not isinstance(value, Tensor):
            return None
        if value.shape is not None:
            inside = -len(value.shape) <= dim < len(value.shape)
            return (value.shape[dim], format_shape(value.shape)) if inside else None
        head, tail = value.ends or ((), ())
        size = head[dim] if 0 <= dim < len(head) else tail[dim] if -len(tail) <= dim < 0 else None
        return (size, format_ends(value.ends)) if size is not None else None

    def values_in_helper(self, call: ast.Call) -> dict[ast.AST, object] | None:
        """The values the expressions of a helper function of this file take when `call` calls it
        (`pinball_loss(model(x), y)`): its run with the call's arguments, if the arguments say anything."""
        self._analyse_scope_of(call)
        return self.helper_values.get(call)

    def helper_output(self, function: ast.FunctionDef, arguments: dict[str, object], rebound: frozenset | None = None) -> tuple[object | None, dict] | None:
        """What a helper function of this file returns given `arguments`, with its expressions' values; a
        method run for an instance (`rebound` given) reads the `self.` attributes its class's `__init__`
        stores, but those `rebound` (stored again by other methods of the instance's class)."""

        def run() -> tuple[object | None, dict]:
            interpreter = Interpreter(self, function, arguments, record=False)
            interpreter.reads_stored, interpreter.rebound = rebound is not None, rebound or frozenset()
            return interpreter.run(), interpreter.seen

        return self._summarised((function, rebound, tuple(sorted(arguments.items(), key=lambda item: item[0]))), function, run)

    def _summarised(self, key: tuple, owner: ast.AST, compute):
        """`compute()`, memoized by `key`, run with `owner` (a function or class) among the active
        summaries: None while it runs (recursion) and past `MAX_CALL_DEPTH` nested summaries."""
        if owner in _ACTIVE_CLASSES or len(_ACTIVE_CLASSES) >= MAX_CALL_DEPTH:
            return None
        if key not in self._summaries:
            self._summaries[key] = None
            _ACTIVE_CLASSES.append(owner)
            try:
                self._summaries[key] = compute()
            finally:
                _ACTIVE_CLASSES.pop()
        return self._summaries[key]

    def own_function(self, func: ast.AST) -> ast.FunctionDef | None:
        """The function of this module `func` names (defined at its top level, or by a `def` in a function)."""
        function = self._definition(func)
        if function is None and isinstance(func, ast.Name):
            return self.values.local_function(func)
        return function if isinstance(function, ast.FunctionDef) else None

    def own_method(self, func: ast.AST) -> ast.FunctionDef | None:
        """The method of the class around `func` that `self.name` calls inside another of its methods
        (`self._score(p, q, bias)`, `self.collect(n)`): a plain `def` (not `forward`, nor decorated), of
        the class or a class of this file it derives from, that no `self.name = ...` replaces and no subclass
        of the project overrides (`self` may be one: a template method's hook)."""
        if not (is_self_attribute(func) and func.attr != "forward"):
            return None
        cls = self.ctx.scopes.enclosing_class(func)
        method = self._methods(cls).get(func.attr) if cls is not None else None
        if method is None or method.decorator_list or func.attr in self._attribute_values(cls):
            return None
        subclasses = [derived for _, derived in self_classes(self.ctx, cls, self.view)[1:]]
        if any(isinstance(f, ast.FunctionDef) and f.name == func.attr for derived in subclasses for f in derived.body):
            return None
        return method if first_parameter(method) == "self" else None

    def _definition(self, func: ast.AST) -> ast.AST | None:
        """The class or function defined at this module's top level that `func` names."""
        if self._definitions is None:
            self._definitions = {
                d.name: d for d in module_statements(self.ctx.tree) if isinstance(d, (ast.FunctionDef, ast.ClassDef))
            }  # fmt: skip
        definition = self._definitions.get(func.id) if isinstance(func, ast.Name) else None
        return definition if definition is not None and self.ctx.analysis(Names).is_own_or_local(func) else None

    def batch_never_one(self, node: ast.AST) -> bool:
        """Is the function around `node` (a module's `forward`) never given a batch of one: the call site its
        values were worked out under (if any) runs on full batches (or a call its arguments came through does),
        or every call of the model does (`data_shapes.full_or_even`)?"""
        binding = self.call_site(node)
        if binding is not None and binding.call is not None and through_outer(binding, lambda ctx, call, _: full_batches(ctx, call)):
            return True
        sites = self.ctx.analysis(Callers).instance_bindings(self.ctx, self.ctx.scopes.enclosing_function(node))
        return bool(sites) and all(through_outer(site, lambda ctx, call, outer: full_or_even(ctx, call, outer, _shape_in)) for site in sites)

    def view_target(self, call: ast.Call) -> Shape | None:
        """The shape a `view`/`reshape` call asks for, as the analysis evaluated its arguments."""
        self._analyse_scope_of(call)
        return self.view_targets.get(call)

    def view_source(self, call: ast.Call) -> Shape | None:
        """The shape a `view`/`reshape` call's receiver has: the analysis's, or as the target names its sizes."""
        self._analyse_scope_of(call)
        return self.shape(call.func.value) or self.view_sources.get(call)

    def constant_view_target(self, call: ast.Call) -> Shape | None:
        """The shape a `view`/`reshape` call asks for, each size the code names (`self.n_feat`, `d_model`)
        that is one int under every construction and call site (`possible_constants`) put in as that int;
        None unless the sizes are given one by one."""
        target = self.view_target(call)
        if target is None or len(call.args) != len(target) or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        sizes = []
        for argument, dim in zip(call.args, target):
            constants = self.constants(argument) if not isinstance(dim, int) else None
            fixed = next(iter(constants)) if constants and len(constants) == 1 else None
            sizes.append(fixed if type(fixed) is int else dim)
        return tuple(sizes)

    def _analyse_scope_of(self, expr: ast.AST) -> None:
        scope = self.ctx.scopes.enclosing_function(expr) or self.ctx.tree
        if scope not in self._analysed and not isinstance(scope, ast.Lambda):
            self._analysed.add(scope)
            try:
                Interpreter(self, scope, self.passed_arguments(scope), record=True).run()
            except RecursionError:  # absurdly nested code: what was recorded so far stands
                pass

    def passed_arguments(self, function: ast.AST) -> dict[str, object]:
        """What the first call site of `function` that tells passes for its parameters: the values its
        caller's analysis gives the arguments (of that one call site, never mixed with another's)."""
        if not isinstance(function, FUNCTION_NODES) or function in _CALLER_CHAIN or len(_CALLER_CHAIN) >= MAX_CALL_DEPTH:
            return {}
        # A module read for another file's lint (no project of its own) finds its call sites as that file does.
        callers = self.ctx.analysis(Callers) if self.ctx.project is not None or not _LINTED else _LINTED[-1]
        _CALLER_CHAIN.append(function)
        _LINTED.append(callers)
        try:
            forward = function.name == "forward" and self.modules.method_of_module(function, self.ctx) is not None
            probe = None  # a site passing only tensors of literal sizes (`assert net(torch.randn(8, 3)).shape == ...`)
            for binding in callers.instance_bindings(self.ctx, function) if forward else callers.bindings_in(self.ctx, function):
                values = {}
                for name, (ctx, argument, passage) in binding.arguments.items() if binding.site is not None and _site_kept(binding) else ():
                    value = None if passage.default or passage.annotated else ctx.analysis(Shapes).value(argument)
                    value = NONE if passage.default and isinstance(argument, ast.Constant) and argument.value is None else value
                    if _informative(value) or value in (NUMBER, NONE):  # (a Python number: no tensor, `gamma=0.99`)
                        values[name] = value
                        self._foreign.append(ctx)
                for name, caller, starred, position in binding.unpacked:  # `fit(model, *make_loaders())`
                    elements = caller.analysis(Shapes).value(starred.value)
                    if isinstance(elements, Items) and position < len(elements.values) and _informative(elements.values[position]):
                        values[name] = elements.values[position]
                if any(_informative(v) for v in values.values()) and not (forward and _fixed(values)):
                    self.bindings[function] = binding
                    return values
                probe = probe or ((binding, values) if any(_informative(v) for v in values.values()) else None)
            if probe is not None:  # a model's `forward` is read under a site of its training batches first
                self.bindings[function] = probe[0]
                return probe[1]
            return self._library_batch(function) or self._lightning_batch(function)
        finally:
            _CALLER_CHAIN.pop()
            _LINTED.pop()

    def _library_batch(self, function: ast.AST) -> dict[str, object]:
        """`compute_loss(self, model, inputs)` of a `transformers.Trainer` subclass of the file: `inputs` is
        a batch of the `train_dataset` a construction of the class passes, collated by default (no
        `data_collator` given)."""
        cls = self.ctx.scopes.parent(function)
        named = [a.arg for a in function.args.posonlyargs + function.args.args]
        if function.name != "compute_loss" or len(named) < 3 or not isinstance(cls, ast.ClassDef):
            return {}
        if not any(canonical_class(self.ctx.qualified_name(b)) in LIBRARY_TRAINERS for b in cls.bases):
            return {}
        for caller, call in itertools.islice(self.ctx.analysis(Callers).constructions(cls), MAX_CALL_DEPTH):
            dataset = call_argument(call, 3, "train_dataset") if call_argument(call, 2, "data_collator") is None else None
            samples = as_dataset(caller.analysis(Shapes).value(dataset)) if dataset is not None else None
            batch = collate(samples.item, Sym(("batch", id(call)), "batch")) if isinstance(samples, Samples) else None
            if _informative(batch):
                self._foreign.append(caller)
                return {named[2]: batch}
        return {}

    def _lightning_batch(self, function: ast.AST) -> dict[str, object]:
        """`training_step(self, batch, batch_idx)` (or `validation_step`) of a LightningModule subclass of the
        file: `batch` is a batch of the loader that `trainer.fit(module, loader)` of a construction of the
        class passes (the module built in the call, or bound to a name once)."""
        cls, where = self.ctx.scopes.parent(function), LIGHTNING_STEPS.get(getattr(function, "name", ""))
        named = [a.arg for a in function.args.posonlyargs + function.args.args]
        if where is None or len(named) < 2 or not isinstance(cls, ast.ClassDef):
            return {}
        if not any(canonical_class(self.ctx.qualified_name(b)) in LIGHTNING_MODULES for b in cls.bases):
            return {}
        for caller, call in itertools.islice(self.ctx.analysis(Callers).constructions(cls), MAX_CALL_DEPTH):
            fit = _fit_call(caller, call)
            loader = call_argument(fit, *where) if fit is not None else None
            batches = caller.analysis(Shapes).value(loader) if loader is not None else None
            if isinstance(batches, Batches) and _informative(batches.item):
                self._foreign.append(caller)
                return {named[1]: batches.item}
        return {}

    # Module summaries.
    def module_output(self, constructor: ast.Call, arguments: list) -> object | None:
        """The value a module returns when called with `arguments` (abstract values), from the call that
        built it: `torch.nn` layers, `nn.Sequential`, and the module classes of this file and of the
        project (their `forward` interpreted in their own module, with these arguments)."""
        name = canonical_class(self.ctx.qualified_name(constructor.func))
        first = arguments[0] if arguments and not isinstance(arguments[0], Keyword) else None
        if (name in WRAPPERS or name in MODULE_COPIES) and constructor.args:  # `DataParallel(Net())`, `deepcopy(model)`: runs the net
            wrapped = (self.ctx, constructor.args[0]) if isinstance(constructor.args[0], ast.Call) else self.constructor(constructor.args[0])
            if wrapped is None:
                return None  # (a parameter: its call sites)
            with self.as_linted():
                return wrapped[0].analysis(Shapes).module_output(wrapped[1], arguments)
        if name == SEQUENTIAL:  # its layers in turn; a list unpacked among them (`*layers, nn.Linear(h, 1)`) too
            value = first
            for layer in constructor.args:
                truncated = self._truncated_output(layer.value, value) if isinstance(layer, ast.Starred) else None
                if truncated is None and not isinstance(value, Tensor):
                    return None
                if isinstance(layer, ast.Starred):
                    value = truncated or self._listed_output(layer.value, constructor, value) or self._repeated_output(layer.value, value)
                elif isinstance(layer, ast.Call):
                    value = self.module_output(layer, [value])
                else:  # `nn.Sequential(backbone, head)`: a module built before, once
                    value = self._built_module_output(layer, [value])
            return value
        name = name or self._chosen_layer(constructor)
        own_class = isinstance(constructor.func, ast.Name) and self.ctx.analysis(Names).is_own_or_local(constructor.func)
        key = ("call", id(constructor), first.key if isinstance(first, Tensor) else None)
        if name in LOSSES and not own_class:
            target = arguments[1] if len(arguments) > 1 and first is not None else None
            return Tensor(loss_output(name, constructor, value_shape(first), value_shape(target)), key)
        if name is not None and name.startswith("torch.") and not own_class:
            return _carried(first, self._torch_layer_output(name, constructor, arguments, first, key))
        if name in GRAPH_CONVOLUTIONS and isinstance(first, Tensor) and len(constructor.args) <= 2 and not own_class and not any(k.arg == "heads" for k in constructor.keywords):
            if first.shape is not None and len(first.shape) != 2:
                return None
            nodes = first.shape[0] if first.shape is not None else Sym(("size", first.key, 0), f"{first.label}.size(0)")
            return Tensor((nodes, self.static_dim(call_argument(constructor, 1, "out_channels"))), key)  # node features `(N, F)` in, `(N, out)` out
        if name and not own_class and is_library_model(name):
            head, batch = self._replaced_head(constructor), _image_batch(first)
            if head is not None and batch not in (1, None):  # `model.fc = nn.Linear(model.fc.in_features, 1)`, `nn.Identity()`
                return self.module_output(head, [Tensor((batch, head_features(name)), key)])
            library = library_model_output(name, constructor, batch, self.static_dim, self._head_kept(constructor)) if head is None else None
            if library is not None:  # `timm.create_model(..., num_classes=1)`, `features_only=True`
                return Listed(Tensor(library[0], key), None) if library[1] else Tensor(library[0], key)
        cls = self._module_class(constructor.func)
        if cls is not None:
            return self.class_output(cls, arguments)
        output = self._project_class_output(constructor, arguments)
        if output is None and name is not None and not own_class:  # a module of unknown output: a tensor
            return Tensor(None, key)
        return output

    def _built_module_output(self, module: ast.AST, arguments: list) -> object | None:
        """The output of the module `module` names (built once, as `constructor` tells), run on `arguments`."""
        made = self.constructor(module) if isinstance(module, (ast.Name, ast.Attribute)) else None
        if made is None:
            return None
        with self.as_linted():
            return made[0].analysis(Shapes).module_output(made[1], arguments)

    def _torch_layer_output(self, name: str, constructor: ast.Call, arguments: list, first: object | None, key: tuple) -> object:
        outputs = torch_layer_outputs(name, constructor, [value_shape(a) for a in arguments], self.static_dim)
        if outputs is not None:
            return _outputs(outputs, key)
        recurrent = batched_recurrent(name, constructor, first.ends[0][0], key, self.static_dim) if isinstance(first, Tensor) and first.shape is None and first.ends and first.ends[0] else None
        if recurrent is not None:  # `out, _ = self.lstm(x)` of a loader's batch of unknown rank
            return _outputs(recurrent, key)
        if isinstance(first, Tensor) and first.shape is None:
            batched = batched_convolution(name, constructor, _ends_of(first), self.static_dim)  # (its batch: what `x.size(0)` names)
            if batched is not None:
                return Tensor(spatial_symbols(name, batched, key), key)
            ends = torch_layer_ends(name, constructor, first.ends or ((), ()), self.static_dim)  # `Linear(h, 1)` of any input: `(..., 1)`
            return Tensor(None, key, ends=ends if ends != ((), ()) else None)
        return Tensor(spatial_symbols(name, torch_layer_output(name, constructor, value_shape(first), self.static_dim), key), key)

    def _chosen_layer(self, constructor: ast.Call) -> str | None:
        """The `torch.nn` layer a configured class name builds (`getattr(nn, act)()` with `act="GELU"` under every
        call site, as `call_sites.made_classes` tells): the one class, or `Identity` when all keep the shape."""
        func = constructor.func
        if isinstance(func, ast.Name):  # `act = getattr(nn, cfg.act)`, then `act()`
            values = self.values.reaching_values(func)
            func = values[0] if values and len(values) == 1 else None
        if not (isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr"):
            return None
        linted = _LINTED[-1].ctx if self.ctx.project is None and _LINTED else None
        classes = {canonical_class(n) for n in made_classes(self.ctx, ast.Call(func=func, args=[], keywords=[]), linted) or {None}}
        if None in classes or not all(n.startswith("torch.nn.") for n in classes):
            return None
        return classes.pop() if len(classes) == 1 else "torch.nn.Identity" if classes <= SHAPE_PRESERVING else None

    def _replaced_head(self, constructor: ast.Call) -> ast.Call | None:
        """The module a statement of this file puts in place of the classifier of the library model
        `constructor` builds (`model.fc = nn.Linear(model.fc.in_features, 1)`, `net.classifier[-1] = ...`),
        when one statement alone does."""
        found = self._head_assignments(constructor) or []
        return found[0] if len(found) == 1 and isinstance(found[0], ast.Call) else None

    def _head_kept(self, constructor: ast.Call) -> bool:
        """Does the library model `constructor` builds keep its classifier: every statement of this file that
        replaces a classifier replaces another model's, and no other module of the project replaces one
        (`model = build(); model.fc = ...` in the script a builder's module serves)?"""
        if self._head_assignments(constructor) != []:
            return False
        index, own = self.ctx.project or self.ctx.read_for, self.ctx.module.name if self.ctx.module else None
        return index is None or all(module == own for head in CLASSIFIER_HEADS for module in index.modules_storing(head))

    def _head_assignments(self, constructor: ast.Call) -> list[ast.AST] | None:
        """What the statements of this file assigning a classifier put in place of the one of the model
        `constructor` builds; None when such a statement may replace it, of a model not known (worked out
        once per model)."""
        if constructor not in self._heads:
            found = []
            for statement in self.ctx.index.within(self.ctx.tree, ast.Assign):
                target = statement.targets[0] if len(statement.targets) == 1 else None
                if isinstance(target, ast.Subscript) and int_literal(target.slice) == -1:
                    target = target.value
                if isinstance(target, ast.Attribute) and target.attr in CLASSIFIER_HEADS and not is_self_attribute(target):
                    made = built(self.ctx, target.value)  # (`self.fc = ...`: a layer of the project's own module)
                    if not made or len(made) != 1:
                        found = None
                        break
                    found += [statement.value] if made[0][1] is constructor else []
            self._heads[constructor] = found
        return self._heads[constructor]

    def _truncated_output(self, layers: ast.AST, first: object | None) -> Tensor | None:
        """`nn.Sequential(*list(base.children())[:-2])` of a torchvision ResNet `base` run on a batch (its
        BatchNorm takes nothing else): of the batch's size when known, else of a size of its own, `x.size(0)`."""
        cut = truncated_children(layers)
        built = self.constructor(cut[0]) if cut is not None else None
        if built is None:
            return None
        images = first if isinstance(first, Tensor) else None
        key = ("call", id(layers), images.key if images is not None else None)
        batch = _image_batch(images) or Sym(("size", images.key if images is not None else key, 0), "batch")
        shape = truncated_resnet(built[0].qualified_name(built[1].func), cut[1], batch)
        return Tensor(_named_maps(shape, key), key) if shape is not None else None

    def _listed_output(self, listed: ast.AST, constructor: ast.Call, first: object | None) -> Tensor | None:
        """`nn.Sequential(*layers)` of a list of `Linear` and shape-keeping layers filled in a loop, ending in
        a `Linear`: that `Linear`'s output (an MLP builder's); ending otherwise, in a layer the loop adds
        last, or a slice of the list (`*layers[:-1]`, dropping a last activation): the input's rank, its last
        size unknown."""
        sliced = isinstance(listed, ast.Subscript) and isinstance(listed.slice, ast.Slice)
        layers = self.values.listed_layers(listed.value if sliced else listed, constructor) if isinstance(first, Tensor) else None
        if layers is None:
            return None
        names = [self.values.layer_class(i) or self._chosen_layer(i) if isinstance(i, ast.Call) else None for i in layers[0]]
        key = ("call", id(constructor), first.key)
        kinds = {n for n in names if n in CONVOLUTIONS}
        if len(kinds) == 1 and all(n in CONVOLUTIONS or n in SHAPE_PRESERVING or POOLS.get(n) == CONVOLUTIONS[min(kinds)] for n in names):
            return self._convolved(first, [i for i, n in zip(layers[0], names) if n in kinds], CONVOLUTIONS[kinds.pop()], key)
        if not all(n == LINEAR or n in SHAPE_PRESERVING for n in names) or LINEAR not in names:
            return None
        last = self._width_layer(layers[1]) if isinstance(layers[1], ast.Call) and not sliced else None
        if last is None:
            # `layers += [nn.Linear(d, w), nn.SiLU()]` in a loop: the rank is kept, which Linear's width comes last is not known
            return Tensor(first.shape[:-1] + (None,), key) if first.shape else None
        if first.shape is None and first.ends is not None:
            return Tensor(None, key, ends=torch_layer_ends(LINEAR, last, first.ends, self.static_dim))
        shape = torch_layer_output(LINEAR, last, first.shape, self.static_dim)
        return Tensor(shape, key) if shape is not None else None

    def _width_layer(self, last: ast.Call) -> ast.Call | None:
        """The `Linear` that gives a listed stack its last size: its last layer, or the one listed before
        the shape-keeping layers that end the same list display (`layers += [nn.Linear(d, 1), nn.Sigmoid()]`)
        out of any loop (in one, the list may end otherwise when the loop does not run)."""
        display = self.ctx.scopes.parent(last)
        listed = display.elts if isinstance(display, ast.List) and not any(
            isinstance(a, (ast.For, ast.AsyncFor, ast.While)) for a in self.ctx.scopes.ancestors(display)) else [last]
        for layer in reversed(listed[: next(i for i, e in enumerate(listed) if e is last) + 1]):
            name = self.values.layer_class(layer) if isinstance(layer, ast.Call) else None
            if name == LINEAR:
                return layer
            if name not in SHAPE_PRESERVING:
                return None
        return None

    def _convolved(self, first: Tensor, convolutions: list[ast.Call], spatial: int, key: tuple) -> Tensor | None:
        """A stack of one kind of convolution (and its pools) filled in a loop (`layers += [nn.Conv1d(c,
        channels, k, dilation=d), nn.ReLU()]`): `(batch, channels, ...)` for a batch of the convolution's
        rank, the channels those every convolution makes (else not known), its sizes along the signal not known."""
        made = [call_argument(c, 1, "out_channels") for c in convolutions]
        channels = self.static_dim(made[0]) if all(same_expression(m, made[0]) for m in made) else None
        head = first.ends[0] if first.shape is None and first.ends else ()
        if head and head[0] not in (1, None):  # a batch of unknown rank (`(B, ...)`; unbatched, B would be the channels)
            return Tensor(None, key, ends=((head[0], channels) if channels is not None else head[:1], ()))
        if first.shape is None or len(first.shape) != spatial + 2:
            return None
        return Tensor((first.shape[0], channels) + (None,) * spatial, key)

    def _repeated_output(self, listed: ast.AST, first: Tensor) -> Tensor | None:
        """`nn.Sequential(*[Block(d) for _ in range(depth)])`: a block that gives back the shape it is given
        (a residual block) gives it back however many are stacked; None for any other block."""
        if not (isinstance(listed, ast.ListComp) and isinstance(listed.elt, ast.Call) and len(listed.generators) == 1 and not listed.generators[0].ifs):
            return None
        if first.shape is None or any(isinstance(n, ast.Name) and n.id in _names(listed.generators[0].target) for n in ast.walk(listed.elt)):
            return None  # (a block built from the loop's variable may differ from one to the next)
        once = self.module_output(listed.elt, [first])
        return first if isinstance(once, Tensor) and once.shape == first.shape else None

    def passed_module_output(self, call: ast.Call, arguments: list) -> object | None:
        """`model(x)` with `model` a parameter (or `self.model` set from one): the output of the module
        the first call site that tells passes (built there, by a builder, moved or wrapped: as the objects
        layer tells), interpreted in the module that built it."""
        func = call.func
        linted = _LINTED[-1].ctx if self.ctx.project is None and _LINTED else None  # a module read for another file's lint
        if (self.ctx.project is None and linted is None) or not self._may_be_passed(func):
            return None
        for made, binding in makers(self.ctx, func, linted):
            if binding is None or not made or len(made) != 1:
                continue  # what the file tells, `constructor` answers
            ctx, constructor = made[0]
            if ctx is not self.ctx:
                self._foreign.append(ctx)
            with self.as_linted():
                output = ctx.analysis(Shapes).module_output(constructor, arguments)
            if _informative(output):  # `(B, ..., 1)` too, and a tuple or dict of outputs
                own = signature_passage(binding, func)
                passed = f"`{self.ctx.text(func)}` is `{ctx.text(constructor)}` passed at {binding.place}"
                self.passed[call] = describe_passage(own) if own is not None else passed
                self.sites[call] = call_sites(binding)
                return output
        return None

    def _may_be_passed(self, func: ast.AST) -> bool:
        """A cheap test before looking for call sites: a parameter of the function around it, or a
        `self.` attribute its class assigns a bare name (`self.model = model`, `model.to(device)`) or a
        call of the project given one (`self.model = wrap(model, device)`, `self.model, self.opt =
        setup(model)`), also through a local alias of it (`net = self.model`)."""
        if isinstance(func, ast.Name):
            function = self.ctx.scopes.enclosing_function(func)
            if function is not None and func.id in {a.arg for a in parameters(function, variadic=False)}:
                return True
            values = self.values.reaching_values(func) if function is not None else None
            return bool(values) and len(values) == 1 and is_self_attribute(values[0]) and self._may_be_passed(values[0])
        if not is_self_attribute(func):
            return False
        cls = self.ctx.scopes.enclosing_class(func)
        assigned = self._attribute_values(cls).get(func.attr, [])
        if any(isinstance(self._unwrapped(value), ast.Name) or self._given_a_name(value) for value in assigned):
            return True
        return any(self._given_a_name(value) for value in self._unpacked_attributes(cls).get(func.attr, []))

    def _given_a_name(self, value: ast.AST) -> bool:
        """A call of a function of the project (not of a library) with a bare name among its arguments:
        what it returns may be what it was given (`wrap(model, device)`)."""
        value = self._unwrapped(value)
        if not isinstance(value, ast.Call):
            return False
        name = self.ctx.qualified_name(value.func)
        if self.own_function(value.func) is None and (name is None or self.project_function(name) is None):
            return False
        return any(isinstance(a, ast.Name) for a in [*value.args, *(k.value for k in value.keywords)])

    def _unpacked_attributes(self, cls: ast.ClassDef | None) -> dict[str, list[ast.AST]]:
        """The calls whose results a class unpacks into `self.` attributes (`self.model, self.opt = setup(model)`)."""
        if cls is None:
            return {}
        key = ("unpacked", cls)
        if key not in self._attributes:
            self._attributes[key] = {}
            for node in self.ctx.index.within(cls, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Call):
                        for element in target.elts:
                            if is_self_attribute(element):
                                self._attributes[key].setdefault(element.attr, []).append(node.value)
        return self._attributes[key]

    def _unwrapped(self, value: ast.AST) -> ast.AST:
        """The module a move or a wrapper returns or runs: `model` of `nn.DataParallel(model).to(device)`."""
        value = _moved(value)
        while isinstance(value, ast.Call) and value.args and canonical_class(self.ctx.qualified_name(value.func)) in WRAPPERS:
            value = _moved(value.args[0])
        return value

    def called_self(self, func: ast.AST) -> ast.ClassDef | None:
        """The module class of the file whose method calls its own instance, `self(x)` (a Lightning-like
        `training_step`): that instance runs the class's `forward`."""
        method = self.ctx.scopes.enclosing_function(func) if isinstance(func, ast.Name) and func.id == "self" else None
        cls = self.modules.method_of_module(method, self.ctx) if method is not None else None
        first = method.args.posonlyargs + method.args.args if cls is not None else []
        if not first or first[0].arg != "self" or method.decorator_list:
            return None
        return cls if all(d.node is method for d in self.values.reaching_definitions(func)) else None

    def class_output(self, cls: ast.ClassDef, arguments: list) -> object | None:
        """What a module class of this file returns when called with `arguments`: its `forward` run."""

        def run() -> object | None:
            forward = own_method(cls, "forward", ast.FunctionDef)
            return None if forward is None else Interpreter(self, forward, _bind(forward, arguments), record=False).run()

        return self._summarised((cls, tuple(arguments)), cls, run)

    def _project_class_output(self, constructor: ast.Call, arguments: list) -> object | None:
        """A module class of another module of the project (`Net(...)`, or built by a factory
        `build_model()`): its `forward` run by that module's own analysis."""
        view = self.view
        if view.index is None:
            return None
        name = canonical_class(self.ctx.qualified_name(constructor.func))
        if not (name and view.is_module_class(name)):
            name = view.instance_class(self.values.value(constructor))
        return self._project_class_named(name, arguments)

    def _project_class_named(self, name: str | None, arguments: list) -> object | None:
        """What a module class of another module of the project returns: its `forward` run there."""
        view = self.view
        found = view.forward_of(name) if name else None
        if found is None or found[0] is view.own:
            return None
        ctx, cls = project_class(view, f"{found[0].name}.{found[1].name}") or (None, None)
        if cls is None:
            return None
        self._foreign.append(ctx)  # kept for this lint: its nodes' ids are in the symbols it returns
        with self.as_linted():
            return ctx.analysis(Shapes).class_output(cls, arguments)

    @contextlib.contextmanager
    def as_linted(self):
        """Another module's analysis run meanwhile finds its call sites (and so the constants its
        parameters hold) as the linted file does, whichever file asks first."""
        linted = [self.ctx.analysis(Callers)] if self.ctx.project is not None else _LINTED[-1:]
        _LINTED.extend(linted)
        try:
            yield
        finally:
            del _LINTED[len(_LINTED) - len(linted):]

    def numpy_generator(self, expr: ast.AST) -> bool:
        """Is `expr` a NumPy random generator (`rng = np.random.default_rng(seed)`, or `self.rng` its class
        assigns that once)?"""
        if isinstance(expr, ast.Name):
            values = self.values.reaching_values(expr)
            expr = values[0] if values and len(values) == 1 else None
        elif is_self_attribute(expr):
            values = self._attribute_values(self.ctx.scopes.enclosing_class(expr)).get(expr.attr, [])
            expr = values[0] if len(values) == 1 else None
        return isinstance(expr, ast.Call) and self.ctx.qualified_name(expr.func) in NUMPY_GENERATORS

    def project_function(self, name: str) -> tuple[object, ast.FunctionDef] | None:
        """(its module's context, its node) for a function of another module of the project."""
        view = self.view
        module = name.rpartition(".")[0]
        if view.index is None or not module or module == view.own_name or view.index.locate(module) is None:
            return None
        found = view.function(name)
        if found is None or not isinstance(found[1], ast.FunctionDef):
            return None
        self._foreign.append(found[0])
        return found

    def dataset(self, func: ast.AST, arguments: list) -> Samples | None:
        """A dataset class of this file (or of another module of the project) built with `arguments`: its
        `__getitem__` run on what its `__init__` stored (None when it has no `__getitem__` or the sample
        is unknown)."""
        cls = self._own_class(func)
        if cls is None:
            found = self._project_class(func)
            if found is None:
                return None
            with self.as_linted():
                return found[0].analysis(Shapes).dataset_of(found[1], arguments)
        return self.dataset_of(cls, arguments)

    def record_fields(self, call: ast.Call, name: str | None) -> dict[str, ast.AST] | None:
        """Field name -> value of a call that builds a record (`values.record_fields`), also of a dataclass
        or `NamedTuple` class of another module of the project (`RegOut(pred=p, emb=h)` imported)."""
        fields = self.values.record_fields(call, name)
        if fields is not None or name is None:
            return fields
        found = project_class(self.view, name)
        return built_record(*found, call) if found is not None else None

    def _project_class(self, func: ast.AST) -> tuple[object, ast.ClassDef] | None:
        view = self.view
        name = self.ctx.qualified_name(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
        found = view.class_summary(name) if name and view.index is not None else None
        if found is None or found[0] is view.own:
            return None
        ctx, cls = project_class(view, name) or (None, None)
        if cls is None:
            return None
        self._foreign.append(ctx)
        return ctx, cls

    def dataset_of(self, cls: ast.ClassDef, arguments: list) -> Samples | None:
        methods = self._methods(cls)
        if "__getitem__" not in methods:
            return None
        return self._summarised((cls, "__getitem__", tuple(arguments)), cls, lambda: self._sample(methods, arguments))

    def _sample(self, methods: dict[str, ast.FunctionDef], arguments: list) -> Samples | None:
        stored: dict[str, object] = {}
        if "__init__" in methods:
            init = Interpreter(self, methods["__init__"], _bind(methods["__init__"], arguments), record=False)
            init.tracks_self = True
            init.run()
            stored = {name: value for name, value in init.env.items() if name.startswith("self.")}
        getitem = methods["__getitem__"]
        index = bind_values(getitem, [Number(None)], (), skips_first=True)  # `dataset[i]`
        reader = Interpreter(self, getitem, index, record=False)
        reader.env.update(stored)
        item = reader.run()
        return Samples(item) if item is not None else None

    def static_dim(self, expr: ast.AST | None) -> Dim:
        """A size given to a layer's constructor: as its class spells it, the length of a collection of
        constants (`len(C["targets"])` of a config dict, wherever it is), else the argument's own symbol."""
        spelled = self._spelled_dim(expr)
        if spelled is None and isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "len":
            lengths = self.constants(expr)
            spelled = next(iter(lengths)) if lengths and len(lengths) == 1 else None
        return spelled if spelled is not None else constructor_dim(expr)

    def _spelled_dim(self, expr: ast.AST | None, depth: int = 0) -> Dim:
        """A size as a class's code spells it: an int, a parameter of the function it is in (`dim` of
        `__init__(self, dim, heads)`), an attribute assigned once from such sizes (`self.d = dim // heads`),
        or their products and floor quotients. None for anything else."""
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return expr.value
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.FloorDiv)):
            combine = multiply if isinstance(expr.op, ast.Mult) else floor_divide
            return combine(self._spelled_dim(expr.left, depth), self._spelled_dim(expr.right, depth))
        if is_self_attribute(expr) and depth < MAX_CALL_DEPTH:
            assigned = self._attribute_values(self.ctx.scopes.enclosing_class(expr)).get(expr.attr, [])
            return self._spelled_dim(assigned[0], depth + 1) if len(assigned) == 1 else None
        if isinstance(expr, ast.Attribute) and depth < MAX_CALL_DEPTH:  # `cfg.hidden`, `self.cfg.hidden` of a config `__init__` is given
            owner = expr.value
            if is_self_attribute(owner):
                assigned = self._attribute_values(self.ctx.scopes.enclosing_class(owner)).get(owner.attr, [])
                owner = assigned[0] if len(assigned) == 1 else None
            given = self._parameter_symbol(owner)
            return Sym(("field", *given.key[1:], expr.attr), f"{given.label}.{expr.attr}") if given is not None else None
        symbol = self._parameter_symbol(expr)
        return (self._column_size(expr) if symbol is not None else None) or symbol

    def _column_size(self, parameter: ast.Name) -> int | None:
        """A size parameter (`d_out=1`, `n_out`) that every call site of its function passes 1 as or leaves
        to its default 1: 1 (`nn.Linear(d, d_out)` of an `MLP(8)` or of `Net(8, 1)` is a column). None when a
        call unpacks `*args`/`**kwargs` or passes anything else, or no call site is found."""
        function = self.ctx.scopes.enclosing_function(parameter)  # (a file of no known module: its calls are not searched)
        if function is None or self.ctx.module is None:
            return None
        default = parameter_defaults(function).get(parameter.id)
        if default is not None and int_literal(default) is None:
            return None
        sizes = set()
        callers = self.ctx.analysis(Callers) if self.ctx.project is not None or not _LINTED else _LINTED[-1]  # (as `passed_arguments`)
        for binding in callers.bindings_in(self.ctx, function):
            call = binding.call
            if call is not None and (any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)):
                return None
            passed = binding.argument(parameter.id)
            if passed is not None or call is not None:  # (the signature's own defaults: none for this parameter)
                sizes.add(int_literal(passed[1]) if passed is not None else None)
        return 1 if sizes == {1} else None  # other sizes keep their symbol: it names what moves in a view (ML603)

    def attribute_size(self, node: ast.Attribute) -> object | None:
        """`self.heads` or `self.head_dim` assigned once from the sizes `__init__` is given: the size; a
        tensor or parameter built once with known sizes: that tensor (worked out once per class and
        attribute)."""
        key = (self.ctx.scopes.enclosing_class(node), node.attr)
        if key not in self._attribute_sizes:
            self._attribute_sizes[key] = self._attribute_size(*key)
        return self._attribute_sizes[key]

    def _attribute_size(self, cls: ast.ClassDef | None, attribute: str) -> object | None:
        assigned = self._attribute_values(cls).get(attribute, [])
        if len(assigned) != 1:
            return None
        value = assigned[0]
        if isinstance(value, ast.Name):
            symbol = self._parameter_symbol(value)
            if symbol is not None and value.id in _float_defaults(self.ctx.scopes.enclosing_function(value)):
                return NUMBER  # `self.mu = global_mean` of `global_mean=3.5`: a scalar
            return Tensor(None, symbol.key, symbol.label) if symbol is not None else None
        if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.FloorDiv)):
            dim = self._spelled_dim(value)
            return Number(dim) if dim is not None else None
        if isinstance(value, ast.Call) and canonical_class(self.ctx.qualified_name(value.func)) in TENSOR_ATTRIBUTES:
            method = self.ctx.scopes.enclosing_function(value)  # `self.query = nn.Parameter(torch.randn(1, 1, d))`
            tensor = Interpreter(self, method, {}, record=False).eval(value) if method is not None else None
            return Tensor(tensor.shape, tensor.key, tensor.label, fresh=True) if isinstance(tensor, Tensor) and tensor.shape is not None else None
        return None

    def stored_attribute(self, node: ast.Attribute) -> object | None:
        """`self.loader` read in a method of a class whose `__init__` assigns it: what `__init__` run
        with what its first call site that tells passes leaves there (`self.loader = DataLoader(dataset,
        ...)` of a `Trainer(model, dataset)`), if every other method storing it stores a tensor of the same
        known shape (`self.weights = torch.sigmoid(-z)` of a `z` made from other `(N, 1)` state)."""
        cls = self.ctx.scopes.enclosing_class(node)
        init = own_method(cls, "__init__", ast.FunctionDef) if cls is not None else None
        if init is None or self.ctx.scopes.enclosing_function(node) is init or self._never_informative(cls, node.attr):
            return None  # (before searching the class's constructions for what `__init__` is passed)
        if cls not in self._stored:
            self._stored[cls] = {}  # a class whose `__init__` reads its own attributes finds nothing
            interpreter = Interpreter(self, init, self.passed_arguments(init), record=False)
            interpreter.tracks_self = True
            interpreter.run()
            elsewhere: dict[str, list[ast.AST | None]] = {}  # what other methods store (None: not known)
            for statement in self.ctx.index.within(cls, ast.Assign, ast.AnnAssign, ast.AugAssign):
                if self.ctx.scopes.enclosing_function(statement) is init:
                    continue
                augmented = isinstance(statement, ast.AugAssign)
                targets = [statement.target] if augmented else assignment_targets(statement)
                for target in [statement.target] if augmented else bound_receivers(statement):
                    if is_self_attribute(target):  # (`self.ema += x` keeps a tensor's shape: the statement itself)
                        plain = augmented or (targets == [target] and statement.value is not None)
                        elsewhere.setdefault(target.attr, []).append((statement if augmented else statement.value) if plain else None)
            stored = {name[len("self."):]: value for name, value in interpreter.env.items() if name.startswith("self.")}
            self._stored[cls] = {name: value for name, value in stored.items() if name not in elsewhere}
            runs: dict[ast.AST, Interpreter] = {}
            for name, values in elsewhere.items():  # (their values read the state decided so far)
                if name in stored and all(self._same_shape_stored(cls, stored[name], value, runs) for value in values):
                    self._stored[cls][name] = stored[name]
        return self._stored[cls].get(node.attr)

    def _same_shape_stored(self, cls: ast.ClassDef, stored: object, value: ast.AST | None, runs: dict[ast.AST, Interpreter]) -> bool:
        """Is what a method other than `__init__` stores in an attribute a tensor of the known shape `__init__`
        stores there (the method run once, apart: it may be the one being analysed)?"""
        if not isinstance(stored, Tensor) or stored.shape is None or value is None:
            return False
        if isinstance(value, ast.AugAssign):
            return True  # an in-place update keeps a tensor's shape
        method = self.ctx.scopes.enclosing_function(value)
        if method not in runs:
            runs[method] = Interpreter(self, method, self.passed_arguments(method), record=False)
            runs[method].tracks_self = True
            runs[method].env.update({f"self.{name}": held for name, held in self._stored[cls].items()})
            runs[method].run()
        other = runs[method].seen.get(value)
        return isinstance(other, Tensor) and same_shape(stored.shape, other.shape)

    def _never_informative(self, cls: ast.ClassDef, attribute: str) -> bool:
        """Is every store of `self.<attribute>` in the class (none: a base class or a framework sets it) a
        plain assignment of a value that says nothing whatever `__init__` is passed: a constant other
        than an int, an attribute of another object than `self` other than a shape or a frame's array
        (`config.hidden_size`), a `torch.nn` layer (`nn.Linear(d, h)`)?"""
        values = self._attribute_values(cls).get(attribute, [])
        stores = self._attribute_stores(cls).get(attribute, 0)
        return len(values) == stores and all(self._says_nothing(v) for v in values)  # none at all: set elsewhere

    def _says_nothing(self, value: ast.AST) -> bool:
        if isinstance(value, ast.Constant):
            return type(value.value) is not int
        if isinstance(value, ast.Attribute):  # (`self.head_dim` may be a size `__init__` sets)
            return not is_self_attribute(value) and value.attr not in INFORMATIVE_ATTRIBUTES
        if isinstance(value, ast.Call):
            name = canonical_class(self.ctx.qualified_name(value.func)) or ""
            return name.startswith("torch.nn.") and name.rpartition(".")[2][:1].isupper() and name not in PARAMETERS
        return False

    def _attribute_stores(self, cls: ast.ClassDef) -> dict[str, int]:
        """How many times the class stores each `self.<attribute>`, in whatever statement (built once per class)."""
        if cls not in self._stores:
            counts: dict[str, int] = {}
            for node in self.ctx.index.within(cls, ast.Attribute):
                if isinstance(node.ctx, ast.Store) and is_self_attribute(node):
                    counts[node.attr] = counts.get(node.attr, 0) + 1
            self._stores[cls] = counts
        return self._stores[cls]

    def _parameter_symbol(self, expr: ast.AST | None) -> Sym | None:
        """The symbol for a parameter read where no assignment has replaced it."""
        if not isinstance(expr, ast.Name):
            return None
        function = self.ctx.scopes.enclosing_function(expr)
        if function is None or expr.id not in {a.arg for a in parameters(function)}:
            return None
        definitions = self.values.reaching_definitions(expr)
        if not definitions or not all(d.node is function for d in definitions):
            return None
        return Sym(("parameter", id(function), expr.id), expr.id)

    def _methods(self, cls: ast.ClassDef, depth: int = 0) -> dict[str, ast.FunctionDef]:
        """A class's methods, with those it inherits from classes of this file."""
        methods: dict[str, ast.FunctionDef] = {}
        for base in cls.bases if depth < MAX_CALL_DEPTH else []:
            inherited = self._own_class(base)
            methods.update(self._methods(inherited, depth + 1) if inherited is not None else {})
        methods.update({f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)})
        return methods

    def _own_class(self, func: ast.AST) -> ast.ClassDef | None:
        cls = self._definition(func)
        return cls if isinstance(cls, ast.ClassDef) else None

    def _attribute_values(self, cls: ast.ClassDef | None) -> dict[str, list[ast.AST]]:
        """What each `self.attribute` of a class is assigned anywhere in it (built once per class)."""
        if cls is None:
            return {}
        if cls not in self._attributes:
            values: dict[str, list[ast.AST]] = {}
            for node in self.ctx.index.within(cls, ast.Assign, ast.AnnAssign, ast.AugAssign):
                for target in assignment_targets(node):
                    pairs = [(target, node.value)]
                    given = node.value.elts if isinstance(node.value, ast.Tuple) else self._handed_back(node.value)
                    if isinstance(target, ast.Tuple) and given is not None and len(target.elts) == len(given):
                        pairs = list(zip(target.elts, given))  # `self.model, self.loader = model, DataLoader(...)`, `= accelerator.prepare(model, loader)`
                    for element, value in pairs:
                        if is_self_attribute(element):
                            values.setdefault(element.attr, []).append(value)
            for call in self.ctx.index.within(cls, ast.Call):
                name, value = registered(call)
                if name is not None:
                    values.setdefault(name, []).append(value)  # `self.register_buffer("w", torch.ones(n, 1))`
            self._attributes[cls] = values
        return self._attributes[cls]

    def _handed_back(self, value: ast.AST) -> list[ast.expr] | None:
        """The arguments a runner's call hands back (`accelerator.prepare(model, opt)`), if it is one."""
        if not isinstance(value, ast.Call):
            return None
        return handed_back(value, lambda receiver: [made_runner(c, m, self.view) for c, m in built(self.ctx, receiver) or ()])

    def _module_class(self, func: ast.AST) -> ast.ClassDef | None:
        """The module class of this file `func` names: one of the module's, or one a builder function defines
        and calls (`def resmlp(d): class ResMLP(nn.Module): ...; return ResMLP()`, its sizes read from the closure)."""
        if not isinstance(func, ast.Name):
            return None
        scope = self.ctx.scopes.enclosing_function(func)
        return next((c for c in self.modules.modules if c.name == func.id and (
            isinstance(self.ctx.scopes.parent(c), ast.Module) or scope is not None and self.ctx.scopes.parent(c) is scope)), None)

    def constructor(self, func: ast.AST) -> tuple[object, ast.Call] | None:
        """The call (with its module's context) that built the module `func` refers to, as the objects
        layer tells: `nn.Linear(...)(x)`, a name or `self.` attribute bound to it, moved, wrapped, built by
        a factory of the project; None unless it is exactly one."""
        if isinstance(func, ast.Call):
            return self.ctx, func
        if isinstance(func, ast.Subscript) and int_literal(func.slice) is not None:  # `self.layers[0]`
            layers, index = self.listed_modules(func.value), int_literal(func.slice)
            return layers[index] if layers and -len(layers) <= index < len(layers) else None
        if isinstance(func, ast.Subscript) and isinstance(func.slice, ast.Constant) and isinstance(func.slice.value, str):
            return self._keyed_module(func.value, func.slice.value)  # `self.parts["embed"]`
        made = built(self.ctx, func)
        if not made or len(made) != 1:
            return None
        if made[0][0] is not self.ctx:
            self._foreign.append(made[0][0])
        return made[0]


    def library_part_output(self, func: ast.AST, arguments: list) -> Tensor | None:
        """The output of a part of a library image model called on a batch (`self.features(x)` with
        `self.features = torchvision.models.vgg16().features`, `self.backbone.forward_features(x)` of a timm
        CNN, its `avgpool`), as `layer_shapes.library_part_output` knows it."""
        objects = self.ctx.analysis(Objects)
        found = objects.points_to(func)
        part = next(iter(found)) if found and len(found) == 1 else None
        if part is not None and part.kind == "field" and part.base is not None and part.base.kind != "made":
            held = objects.held(part)  # `self.features`, what `__init__` puts there
            part = next(iter(held - {NONE})) if held and len(held - {NONE}) == 1 else None
        model = part.base if part is not None and part.kind == "field" else None
        first = arguments[0] if len(arguments) == 1 and isinstance(arguments[0], Tensor) else None
        if model is None or model.kind != "made" or not isinstance(model.node, ast.Call) or first is None:
            return None
        batch = _image_batch(first) if first.shape is None else None
        images = first.shape if first.shape is not None else (batch, None, None, None) if batch is not None else None
        shape, key = library_part_output(*architecture(model.ctx, model.node), part.name, images), ("call", id(func), first.key)
        if shape is None:
            return None
        return Tensor(_named_maps(shape, key), key)

    def _keyed_module(self, expr: ast.AST, key: str) -> tuple[object, ast.Call] | None:
        """The layer an `nn.ModuleDict({...})` literal (`expr` built once) holds under `key`, with its module's context."""
        made = self.constructor(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        if made is None or canonical_class(made[0].qualified_name(made[1].func)) != MODULE_DICT or len(made[1].args) != 1:
            return None
        given = made[1].args[0]
        pairs = zip(given.keys, given.values) if isinstance(given, ast.Dict) else []
        found = [v for k, v in pairs if isinstance(k, ast.Constant) and k.value == key]
        return (made[0], found[0]) if len(found) == 1 and isinstance(found[0], ast.Call) else None

    def keyed_modules(self, expr: ast.AST) -> list[tuple[str, tuple[object, ast.Call]]] | None:
        """(key, layer) for each layer of the `nn.ModuleDict({...})` literal `expr` is (built once), its keys
        constant strings, in order; None for any other (for `self.heads.items()` taken one key at a time)."""
        made = self.constructor(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        given = made[1].args[0] if made is not None and len(made[1].args) == 1 else None
        if not isinstance(given, ast.Dict) or canonical_class(made[0].qualified_name(made[1].func)) != MODULE_DICT or len(given.keys) > MAX_ITEMS:
            return None
        keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None for k in given.keys]
        if None in keys or len(set(keys)) != len(keys) or not all(isinstance(v, ast.Call) for v in given.values):
            return None
        return [(key, (made[0], layer)) for key, layer in zip(keys, given.values)]

    def listed_modules(self, expr: ast.AST) -> list[tuple[object, ast.Call]] | None:
        """The layers of the `nn.ModuleList([...])` or `nn.Sequential(...)` `expr` is, when it is built from
        layers listed one by one (with their module's context); a slice of them (`self.layers[:-1]`)."""
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice) and expr.slice.step is None:
            lower, upper = expr.slice.lower, expr.slice.upper
            bounds = [int_literal(b) if b is not None else None for b in (lower, upper)]
            if (lower is not None and bounds[0] is None) or (upper is not None and bounds[1] is None):
                return None
            layers = self.listed_modules(expr.value)
            return (layers[bounds[0] : bounds[1]] or None) if layers else None
        made = self.constructor(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        if made is None:
            return None
        ctx, call = made
        name = canonical_class(ctx.qualified_name(call.func))
        if name == MODULE_LIST and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], (ast.List, ast.Tuple)):
            elements = call.args[0].elts
        else:
            elements = call.args if name == SEQUENTIAL else []
        if not elements or len(elements) > MAX_ITEMS or not all(isinstance(e, ast.Call) for e in elements):
            return None
        return [(ctx, e) for e in elements]

    def repeated_module(self, expr: ast.AST) -> tuple[object, ast.Call] | None:
        """The one layer call an `nn.ModuleList` built from a comprehension repeats (`nn.ModuleList(Block(d)
        for _ in range(n))`), with its module's context: every layer it holds is built by that call."""
        made = self.constructor(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        if made is None:
            return None
        ctx, call = made
        comprehension = call.args[0] if len(call.args) == 1 and not call.keywords else None
        if canonical_class(ctx.qualified_name(call.func)) != MODULE_LIST or not isinstance(comprehension, (ast.ListComp, ast.GeneratorExp)):
            return None
        return (ctx, comprehension.elt) if len(comprehension.generators) == 1 and isinstance(comprehension.elt, ast.Call) else None


def _fit_call(ctx, made: ast.Call) -> ast.Call | None:
    """The `trainer.fit(module, ...)` the module built by `made` is given to: in the call itself, or through
    the name it is assigned to (when that name holds it alone where `fit` reads it)."""
    parent = ctx.scopes.parent(made)
    if isinstance(parent, ast.Call) and _is_fit(parent) and call_argument(parent, 0, "model") is made:
        return parent
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return None
    for use in ctx.scopes.uses(ctx.scopes.enclosing_scope(made), parent.targets[0].id):
        call = ctx.scopes.parent(use)
        if isinstance(call, ast.Call) and _is_fit(call) and call_argument(call, 0, "model") is use:
            if ctx.analysis(ValueKinds).reaching_values(use) == [made]:
                return call
    return None


def _is_fit(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "fit"


def _outputs(structure: tuple | Shape | None, key: tuple) -> object:
    """Nested tuples of shapes (a layer's outputs) as values: `(output, (h_n, c_n))`."""
    if isinstance(structure, tuple) and any(isinstance(s, tuple) for s in structure):
        return Items(tuple(_outputs(s, (*key, i)) for i, s in enumerate(structure)))
    return Tensor(structure, key)


def _carried(first: object | None, output: object) -> object:
    """A layer's output keeps what its input lost on the way (a batch dimension dropped by `squeeze()`)."""
    unbatched = first.unbatched_at if isinstance(first, Tensor) else None
    return dataclasses.replace(output, unbatched_at=unbatched) if unbatched and isinstance(output, Tensor) else output


def _named_maps(maps: Shape, key: tuple) -> Shape:
    """Feature maps `(B, C, H, W)` with each size not known named as a size of the value `key`."""
    return tuple(Sym(("size", key, i), name) if d is None else d for i, (d, name) in enumerate(zip(maps, "BCHW")))


def _image_batch(images: object | None) -> Dim:
    """The batch dimension of a batch of images `(B, C, H, W)` (or of unknown rank, its first known)."""
    if isinstance(images, Tensor) and images.shape is not None:
        return images.shape[0] if len(images.shape) == 4 else None
    return images.ends[0][0] if isinstance(images, Tensor) and images.ends and images.ends[0] else None



def _moved(value: ast.AST) -> ast.AST:
    """`model` of `model.to(device)`, `model.cuda()`: the module a move returns."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in MOVES:
        value = value.func.value
    return value



def _bind(method: ast.FunctionDef, arguments: list) -> dict[str, object]:
    """The known abstract values of a method's parameters, called with `arguments` (after `self`; by
    name when a `Keyword`); `NONE` for one the call leaves to a default of None, unless it may pass `MORE`."""
    positional = [a for a in arguments if not isinstance(a, Keyword)]
    keywords = [(a.name, a.value) for a in arguments if isinstance(a, Keyword) and a != MORE]
    bound = bind_values(method, positional, keywords, skips_first=True)
    known = {name: value for name, value in bound.items() if value is not None}
    return known if MORE in arguments else {**_none_defaults(method, bound), **known}



def _shape_in(ctx, expr: ast.AST) -> Shape | None:
    return ctx.analysis(Shapes).shape(expr)


def _fixed(values: dict[str, object]) -> bool:
    """Are the tensors a call site passes all of literal sizes (a probe, not a loader's batch)?"""
    tensors = [v for v in values.values() if isinstance(v, Tensor)]
    return bool(tensors) and len(tensors) == len(values) and all(v.shape is not None and all(isinstance(d, int) for d in v.shape) for v in tensors)



def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}



def _site_kept(binding) -> bool:
    """Were the values around a call of `binding` worked out under its outer call site (`net(x)` in `fit(net,
    loader)`, under the `fit(...)` that passed this `net`), when the caller's own analysis took one?"""
    outer, caller = binding.outer, binding.caller
    used = caller.analysis(Shapes).bindings.get(outer.function) if outer is not None and outer.call is not None and caller is not None else None
    return used is None or used.call is outer.call
