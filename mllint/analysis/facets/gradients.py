"""Gradient flow: does an expression carry an autograd graph from a model, and where is it cut?

Each expression gets a state: GRAPH (it certainly carries a graph: a module with parameters, or a
tensor created with `requires_grad=True`, reaches it), NONE (it certainly carries none: constants, data
from a loader, values computed under `torch.no_grad()`, or every path is cut by `.detach()`, `.item()`,
`torch.tensor(...)`...) or UNKNOWN. A value computed under `no_grad` that would carry a graph with grad
enabled (`GradEnabledFlow`) is cut there, at the `torch.no_grad()` that makes it (`no_grad_region`). Operands combine (any GRAPH gives GRAPH); the alternative values a
name may hold (reaching definitions) must all agree, otherwise the state is unknown: unknown stays unknown.
A method of an object of unknown kind given NumPy values taken out of a tensor (`scaler.inverse_transform(
pred.detach().numpy())`) is no tensor or module: it carries what it is given. A dict filled in its function
only by item stores (`logs[k] = loss.detach()`) holds what is stored, as a list filled by `append` does.
A parameter is unknown, unless the flow is asked under a call site's `Binding` (`callers.per_call_site`):
it then carries what that call site passes, read in the caller's file (`holder` tells where a cut is).
A name whose value the code does not show (bound nowhere in view, a parameter no call site tells) is a module
with parameters when its function trains it: calls it outside `no_grad` into a loss it backpropagates and reads
what only a module has (`net.parameters()`, `net.head.weight`, `penalty(net.decoder)`; not a loss's `weight`).
A call of a value that may be one of several functions of the project (`LOSSES[name](pred, y)` of a table a
decorator fills) carries a graph when each of them returns one given the call's arguments. A model wrapper
(`nn.DataParallel(net)`, `torch.compile(net)`) carries what it wraps, and a container of modules
(`nn.ModuleList(Block(d) for _ in range(n))`) is a module with parameters. Parameters of a module iterated over (`for p in model.parameters()`, also in a comprehension) carry one, as
do `.weight`/`.bias` of a module or of a part of one (`net.proj.weight`, `net = self.net`). An attribute of
an object of a project class (`layer.aux_loss`, also of an item of a `ModuleList` it iterates) carries what
the class's methods write to it (`self.aux_loss = x.item()`: cut). `managed_losses` lists the losses a
library backpropagates: returned by a Lightning-style `training_step` or an HF `compute_loss` override.
A call of a function of the project, or of an instance of a project class (its `forward`, its
`__call__`), whose every return is cut (`pred.argmax(1)` in a loss's `forward`) cuts the call, and one
whose returns carry no graph whatever it is given (it runs under `torch.no_grad()`) carries none: its
returns are worked out in the callee's own file, its parameters holding the flows of the call's
arguments (`Given`), once per callee and flows (`returned`); `callee_cuts` tells where the callee cuts.
A method of the project whose returns stay unknown carries what its object carries, never its arguments'
graph as a tensor method would (`self.batch_value(pred, y)` may cut `pred`); given the class of the object
a method runs on (`Given.instance`), `self.name(...)` in it runs that class's own or inherited `name`.
An element of a tuple (`loss, acc = step(x)`, read as `step(x)[1]`) has its own flow where it is known:
a tuple written out, what the callee returns in that place, the indices of `x.max(dim)`; otherwise the
parts of a value share its flow.

Assignments around a loop depend on each other (`loss += a` then `loss += b`: each reads the other's
value from the previous iteration). A definition met again while its flow is being computed contributes
what is assumed of it so far, starting from nothing. The definitions of one cycle are computed once per
round, in the order they are met, each from what the others were assumed to be, until a round changes
none: a fixed point over loop-carried values, whose cost is the cycle's size times the rounds (the few
steps a flow can rise), never the number of paths around it. A definition's flow, once settled, is
kept for the rest of the question.
"""
from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass
from functools import cached_property

from mllint.analysis.objects.call_sites import built, constant_everywhere, made_by_runner
from mllint.analysis.objects.callees import function_called, functions_called, method_called
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.program.callers import per_call_site
from mllint.analysis.program.calls import ANY_MODULE, Callee, CallResolver, bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.hierarchy import inherited_method, self_classes
from mllint.analysis.syntax.names import Names, call_argument, is_self_attribute
from mllint.analysis.syntax.scopes import parameter_defaults
from mllint.analysis.syntax.tree import assignment_targets
from mllint.analysis.program.project_view import ProjectView, followed_view
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.facets.data_shapes import DATA_LOADERS
from mllint.analysis.facets.vocabulary import INDEXED
from mllint.analysis.values.library_models import is_library_factory
from mllint.analysis.values.values import MODEL_WRAPPERS, ValueKinds, canonical_class, is_parameter
from mllint.budget import check as check_budget
from mllint.source import one_line

BUDGET = 2000  # expressions visited per question, beyond which the answer is unknown
MAX_DEPTH = 40  # how deep one expression is followed, through sub-expressions and assignments

NO_GRAD = {"torch.no_grad", "torch.inference_mode"}
# In-place methods that change a tensor's values (not flag changes such as `requires_grad_`, `detach_`).
VALUE_CHANGING = frozenset({
    "add_", "sub_", "mul_", "div_", "pow_", "sqrt_", "exp_", "neg_", "abs_", "clamp_", "clamp_min_",
    "clamp_max_", "copy_", "zero_", "fill_", "normal_", "uniform_", "addcmul_", "addcdiv_", "lerp_",
    "masked_fill_", "index_add_", "scatter_", "fmod_", "remainder_", "round_", "sign_", "sigmoid_",
    "tanh_", "relu_", "log_", "reciprocal_", "floor_", "ceil_", "index_fill_", "masked_scatter_",
})  # fmt: skip

# Cuts: the value they make has no graph back to their input.
VALUE_CUTS = frozenset({"detach", "item", "numpy", "tolist"})  # a tensor's numbers; they take no positional argument
INDEX_CUTS = frozenset({"argmax", "argmin", "argsort"})
CUT_METHODS = VALUE_CUTS | INDEX_CUTS
LEAVING_TORCH = frozenset({"numpy", "tolist", "item"})  # what they give is a NumPy array or Python numbers
CUT_ATTRIBUTES = frozenset({"data"})
CUT_FUNCTIONS = frozenset({
    "torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.from_numpy", "torch.argmax", "torch.argmin", "torch.argsort",
    "numpy.array", "numpy.asarray",
    # the legacy wrapper: `Variable(x)` is `x.detach()`, `Variable(x, requires_grad=True)` a fresh leaf
    "torch.autograd.Variable", "torch.autograd.variable.Variable",
})  # fmt: skip
# Given a tensor they return it (its graph kept); given a list of tensors, a new tensor of their numbers.
LISTING_FUNCTIONS = frozenset({"torch.as_tensor", "torch.asarray"})
LISTED = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)
CUT_BUILTINS = frozenset({"float", "int", "bool"})
NO_GRAPH_BUILTINS = frozenset({"len", "range", "isinstance"})
SUMMING_BUILTINS = frozenset({"sum", "abs", "list", "tuple", "dict", "zip"})  # a value computed from their arguments, or holding them
NO_GRAPH_FUNCTIONS = frozenset(
    f"torch.{name}_like" for name in ("zeros", "ones", "empty", "full", "rand", "randn", "randint")
)
# Collectives of distributed training that autograd runs through: `hvd.allreduce(loss)` keeps the graph.
DIFFERENTIABLE_COLLECTIVES = frozenset({"horovod.torch.allreduce", "horovod.torch.allgather", "horovod.torch.broadcast"})
NO_GRAPH_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "grad_fn"})
PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})
MODULE_ITERATORS, NAMED_MODULE_ITERATORS = ("modules", "children"), ("named_modules", "named_children")
OPTION_KEYWORDS = frozenset({"dtype", "device", "layout", "memory_format", "non_blocking", "pin_memory"})  # carry no graph
NO_GRAPH_METHODS = frozenset({"size", "dim", "numel", "nelement", "element_size", "data_ptr", "__len__"})
CONTAINER_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})
FILLING = frozenset({"append", "extend", "insert"})  # what they add is the list's items (or holds them)
FLAG_METHODS = frozenset({"requires_grad_", "share_memory_"})  # in place, but the values stay
ITERATION_HELPERS = frozenset({"enumerate", "zip", "tqdm", "iter", "islice"})
DATA_WORDS = ("loader", "data", "batch")

# torch.nn modules that own parameters: calling one makes a graph.
PARAMETRISED = frozenset(
    "torch.nn." + name
    for name in (
        "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
        "ConvTranspose3d", "Embedding", "EmbeddingBag", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell",
        "GRUCell", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "MultiheadAttention",
        "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
        "TransformerDecoderLayer", "PReLU", "LazyConv1d", "LazyConv2d", "LazyConv3d", "SyncBatchNorm", "RMSNorm",
    )
)  # fmt: skip
CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList"})


class State(enum.Enum):
    GRAPH = "carries a graph"
    NONE = "carries no graph"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Flow:
    state: State
    cuts: tuple[ast.AST, ...] = ()  # where paths that could have carried a graph were cut (state NONE)


@dataclass(frozen=True)
class CalleeCut:
    """Where a called function of the project cuts what it returns."""

    callee: str  # `ImageGradientLoss.forward`
    cut: ast.AST  # the cut, in the callee's file
    path: str  # that file as findings show it ("" for the linted file)
    carried: bool = False  # what it cut carried a graph there (`float(self.fc1.weight.abs().sum())`)
    home: object = None  # the context of the callee's file

    @property
    def place(self) -> str:
        return f"{self.path}:{self.cut.lineno}" if self.path else f"line {self.cut.lineno}"


@dataclass(eq=False)
class Given:
    """What a call gives the parameters of the function it runs, as flows worked out at the call: the
    binding a callee's returns are read under (`GradientFlow.returned`), where `binding.argument` is asked."""

    function: ast.AST
    flows: dict[str, Flow]
    instance: tuple | None = None  # (context, class) of the object `self` is, when the call knows it
    listed: frozenset[str] = frozenset()  # the parameters the call passes a list or tuple (`total([ce, reg])`)

    def argument(self, name: str) -> tuple[None, Flow, None] | None:
        flow = self.flows.get(name)
        return None if flow is None else (None, flow, None)

    def of(self, function: ast.AST) -> "Given | None":
        return self if self.function is function else None


# What a module of the project must mention for its functions to be read: for cuts in what they return,
# for the elements of the tuples they return (a return); `calls.ANY_MODULE` for anything.
CUT_WORDS = re.compile(rb"detach|\.item\(|argm|\.data\b|numpy|tolist|ensor\(|float\(|no_grad|inference_mode")
RETURN_WORDS = re.compile(rb"\breturn\b")
GRAPH, UNKNOWN = Flow(State.GRAPH), Flow(State.UNKNOWN)
OPAQUE = Flow(State.UNKNOWN, ())  # a callee of the project whose returns are unknown (`_from_callee`), told apart by identity
MODULE_CALLS = frozenset({"forward", "__call__"})  # what calling a module object runs: its kind decides when they are unknown
NONE = Flow(State.NONE)


def operands(flows: list[Flow | None]) -> Flow | None:
    """The flow of a value computed from all of `flows` (None: not known yet, inside a loop's fixed point)."""
    flows = [f for f in flows if f is not None]
    if not flows:
        return None
    if any(f.state is State.GRAPH for f in flows):
        return GRAPH
    if any(f.state is State.UNKNOWN for f in flows):
        return UNKNOWN
    return Flow(State.NONE, _unique(c for f in flows for c in f.cuts))


def alternatives(flows: list[Flow | None]) -> Flow | None:
    """The flow of a value that is one of `flows`, we cannot know which."""
    flows = [f for f in flows if f is not None]
    if not flows:
        return None
    states = {f.state for f in flows}
    if len(states) != 1:
        return UNKNOWN
    return operands(flows)


def _unique(nodes) -> tuple[ast.AST, ...]:
    return tuple(dict.fromkeys(nodes))


class GradientFlow:
    grad_everywhere = False  # `GradEnabledFlow`: as if no `no_grad` region cut anything

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.values: ValueKinds = ctx.analysis(ValueKinds)
        self.module_classes = {cls.name for cls in ctx.analysis(ModuleClasses).modules}
        self._budget = 0
        self._mutated: dict[str, set[ast.AST | None]] | None = None  # name -> the functions changing it
        self._flagged: set[str] | None = None
        # The fixed point of one question, by (definition, binding): definitions being computed (their
        # place on the stack), what is assumed of those in a cycle, the flows computed in this round of
        # their cycle (with the lowest place they read) and the settled ones.
        self._stack: dict[tuple, int] = {}
        self._assumed: dict[tuple, Flow | None] = {}
        self._round: dict[tuple, tuple[Flow | None, int]] = {}
        self._settled: dict[tuple, Flow | None] = {}
        self._low = 0  # the lowest place on the stack read by the definition being computed
        self._changed = False  # did a flow of the cycle being computed change in this round?
        self._binding = None  # the call site the parameters are read under
        # Answers by (expression, binding), with the functions whose parameters they needed unbound
        # (`values.unbound`): ML404 and ML413 ask about the same losses.
        self._answers: dict[tuple[ast.AST, object], tuple[Flow, list[ast.AST]]] = {}
        self._returns: dict[tuple, Flow] = {}  # what the file's functions return, by (function, given flows)
        self.callee_cuts: dict[ast.Call, CalleeCut] = {}  # calls cut by their callee, and where
        self._settings: dict[tuple, bool] = {}  # (class, attribute) -> is `self.attribute` a constant
        self._writes: dict[ast.Attribute, Flow | None] = {}  # `_written`'s and `_assigned`'s answers
        self._kept_flows: dict[ast.Attribute, Flow | None] = {}  # `_kept`'s answers
        self._trained: dict[tuple, bool] = {}  # `_trained_out_of_view`'s answers, by (function, name)
        self._module_uses: dict[tuple, tuple] = {}  # `_module_uses`'s answers, by (function, name)
        self._losses_of: dict[ast.AST | None, list[ast.AST]] = {}  # the losses each function backpropagates

    def flow(self, expr: ast.AST, binding=None) -> Flow:
        """The flow of `expr`; under `binding` (a `callers.Binding`), its function's parameters hold what
        that call site passes, evaluated in the caller."""
        if self._stack:  # asked through a caller while a flow is worked out here: no whole answer to keep
            return self._answer(expr, binding)
        key = (expr, binding)
        if key not in self._answers:
            recording, self.values.unbound = self.values.unbound, []
            try:
                self._answers[key] = (self._answer(expr, binding), self.values.unbound)
            finally:
                self.values.unbound = recording
                self._assumed, self._round, self._settled = {}, {}, {}
        flow, unbound = self._answers[key]
        if self.values.unbound is not None:
            self.values.unbound += [f for f in unbound if f not in self.values.unbound]
        return flow

    def _answer(self, expr: ast.AST, binding) -> Flow:
        self._budget = BUDGET
        outer, self._binding = self._binding, binding
        try:
            return self._flow(expr, 0) or UNKNOWN
        finally:
            self._binding = outer

    def _flow(self, expr: ast.AST, depth: int) -> Flow | None:
        check_budget()
        self._budget -= 1
        if depth > MAX_DEPTH or self._budget < 0:
            return UNKNOWN
        if isinstance(expr, (ast.Constant, ast.JoinedStr)):
            return NONE
        if isinstance(expr, ast.Compare):  # no graph; the cuts of what it compares (`p1.argmax(1) != p2`) kept
            compared = [self._flow(e, depth + 1) for e in (expr.left, *expr.comparators)]
            cut = (expr,) if any(f is not None and f.state is State.GRAPH for f in compared) else ()  # `pred[i] in allowed`
            return Flow(State.NONE, _unique([*cut, *(c for f in compared if f is not None and f.state is State.NONE for c in f.cuts)]))
        if not self.grad_everywhere and not isinstance(expr, ast.Name) and under_no_grad(self.ctx, expr):
            return self._under_no_grad(expr)  # computed there; a name read there holds what its bindings made
        if isinstance(expr, ast.Name):
            return self._name(expr, depth)
        if isinstance(expr, ast.Attribute):
            if expr.attr in CUT_ATTRIBUTES:
                return self._cut(expr, expr.value, depth)
            if expr.attr in NO_GRAPH_ATTRIBUTES:
                return NONE
            if expr.attr in PARAMETER_ATTRIBUTES and self._of_module(expr.value):
                return GRAPH  # `self.proj.weight`, `net.proj.weight` of `net = self.net`
            if is_self_attribute(expr) and isinstance(expr.ctx, ast.Load) and self._own_parameter(expr):
                return GRAPH  # `self.mu` of `self.mu = nn.Parameter(...)`
            kept = self._kept(expr) if isinstance(expr.ctx, ast.Load) else None
            if kept is not None:  # `self.losses` that another method appends `loss.item()` to
                return kept
            if is_self_attribute(expr) and isinstance(expr.ctx, ast.Load) and self._setting(expr):
                return NONE  # `self.p_loss`, set from a constant (a hyperparameter, as every call site passes it)
            if is_self_attribute(expr) and isinstance(expr.ctx, ast.Load) and self._holds_module(expr):
                return GRAPH  # `self.model` of `self.model = Net().to(device)`, handed to a helper that calls it
            written = self._written(expr) if not is_self_attribute(expr) and isinstance(expr.ctx, ast.Load) else None
            stored = self._stored_names(expr) if written is None else None
            if stored:  # `self.model` of `self.model = model` in `__init__`: what the construction passes
                return alternatives([self._flow(name, depth + 1) for name in stored])
            assigned = self._assigned(expr) if written is None and is_self_attribute(expr) and isinstance(expr.ctx, ast.Load) else None
            if written is None and assigned is None and isinstance(expr.value, ast.Name) and self._unseen_trained(expr.value):
                return GRAPH if self._module_part(expr) else UNKNOWN  # `net.decoder`, not `net.acc`
            return written or assigned or self._flow(expr.value, depth + 1)
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and type(expr.slice.value) is int:
            element = self._element(expr.value, expr.slice.value, depth)  # `loss, acc = step(x)`: `step(x)[1]`
            if element is not None:
                return element
        key = expr.slice.value if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) else None
        stored = self.values.stored_items(expr.value, key) if isinstance(key, str) and isinstance(expr.value, ast.Name) else None
        if stored:  # `logs["kl"]` of `logs["kl"] = kl.item()`: what is stored there
            return alternatives([self._flow(value, depth + 1) for value in stored])
        if isinstance(key, str) and isinstance(expr.value, ast.Name) and self._kept_entry(expr.value, key):
            return alternatives([self._loop_carried(d, depth) for d in self.values.reaching_definitions(expr.value)])
        if isinstance(expr, (ast.Subscript, ast.Starred, ast.NamedExpr)):
            return self._flow(expr.value, depth + 1)  # the parts of a value share its flow
        if isinstance(expr, ast.BinOp):
            return operands([self._flow(expr.left, depth + 1), self._flow(expr.right, depth + 1)])
        if isinstance(expr, ast.UnaryOp):
            return self._flow(expr.operand, depth + 1)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return operands([self._flow(e, depth + 1) for e in expr.elts])
        if isinstance(expr, ast.Dict):  # a record of values: `{"dice": dice, "n": len(x)}`
            return operands([self._flow(v, depth + 1) for v in expr.values])
        if isinstance(expr, ast.IfExp):
            return alternatives([self._flow(expr.body, depth + 1), self._flow(expr.orelse, depth + 1)])
        if isinstance(expr, ast.BoolOp):
            return alternatives([self._flow(v, depth + 1) for v in expr.values])
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        if isinstance(expr, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):  # `p.pow(2).sum() for p in ...`: its elements
            return self._flow(expr.elt, depth + 1)
        if isinstance(expr, ast.DictComp):  # `{k: v.item() for k, v in losses.items()}`: its values
            return self._flow(expr.value, depth + 1)
        return UNKNOWN

    def _stored_names(self, attribute: ast.Attribute) -> list[ast.Name] | None:
        """The names a `self.` attribute read is assigned from in its class (`self.model = model`), when it is
        assigned from names only."""
        cls = self.ctx.scopes.enclosing_class(attribute) if is_self_attribute(attribute) and isinstance(attribute.ctx, ast.Load) else None
        if cls is None:
            return None
        assigned = []
        for node in self.ctx.index.within(cls, ast.Assign, ast.AnnAssign, ast.AugAssign):
            for target in assignment_targets(node):
                pairs = zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) else [(target, node.value)]
                assigned += [value for store, value in pairs if is_self_attribute(store) and store.attr == attribute.attr]
        return assigned if assigned and all(isinstance(value, ast.Name) for value in assigned) else None

    def _holds_module(self, attribute: ast.Attribute) -> bool:
        """Is a `self.` attribute only ever a module with parameters, as the objects layer tells (made by
        `nn.Sequential(...)`, `Net().to(device)`, a builder of the project)?"""
        made = self.ctx.analysis(Objects).made(attribute)
        if made is None:  # `self.model = model` in `__init__`: what each construction of the class passes
            found = [m for m, _ in per_call_site(self.ctx, attribute, lambda binding: built(self.ctx, attribute, binding))]
            made = [call for m in found for call in m] if found else None
        return bool(made) and all(home.analysis(GradientFlow)._is_module_constructor(call) for home, call in made)

    def _own_parameter(self, attribute: ast.Attribute) -> bool:
        constructor = self.values.constructor(attribute)
        return constructor is not None and canonical_class(self.ctx.qualified_name(constructor.func)) == "torch.nn.Parameter"

    def _of_module(self, owner: ast.AST) -> bool:
        """Is `owner` (of `owner.weight`) a module with parameters, a part of one (`net.proj`, `self.net.proj`,
        `model[0]`), one a loop over `model.modules()` takes, or a `torch.nn` module wherever it was made
        (`model = self.model`, a builder's `nn.Sequential`)?"""
        while isinstance(owner, (ast.Attribute, ast.Subscript)):
            if self.module_kind(owner) is State.GRAPH:
                return True
            owner = owner.value
        if not isinstance(owner, ast.Name):
            return False
        found = self.ctx.analysis(Objects).points_to(owner) or ()
        made = [o.ctx.qualified_name(o.node.func) for o in found if o.kind == "made" and isinstance(o.node, ast.Call)]
        if found and len(made) == len(found) and all(_is_module_class(canonical_class(name)) for name in made):
            return True
        bound = self._comprehension_target(owner) or next(
            (d.node for d in self.values.reaching_definitions(owner) if isinstance(d.node, ast.Name)), None
        )  # `m` of `for m in model.modules()`
        return self.module_kind(owner) is State.GRAPH or (bound is not None and self._iterates(bound, MODULE_ITERATORS, NAMED_MODULE_ITERATORS))

    def _written(self, attribute: ast.Attribute) -> Flow | None:
        """`layer.aux_loss` of an object of a project class: what its methods write to `self.aux_loss`,
        each worked out in the method (its parameters unknown); None when the class or a write is not known."""
        if attribute not in self._writes:
            self._writes[attribute] = None
            objects = self.ctx.analysis(Objects)
            found = objects.points_to(attribute.value)
            if found and all(o.kind == "field" for o in found):  # `layer` of `for layer in self.layers`: what is put there
                held = [objects._of(o.ctx).held(o) for o in found]
                found = frozenset().union(*held) if all(held) else None
            written = objects.written_in_class(found, attribute.attr)
            if written and all(isinstance(home.scopes.parent(target), ast.Assign) for home, _, target, _ in written):
                flows = [home.analysis(GradientFlow).returned_flow(function, value, {}) for home, function, _, value in written]
                self._writes[attribute] = alternatives(flows)
        return self._writes[attribute]

    def _assigned(self, attribute: ast.Attribute) -> Flow | None:
        """`self.penalty` of `self.penalty = code.abs().mean().detach()` in another method of the class: what
        its methods assign, each worked out in its method (its parameters unknown); None when one is unknown."""
        if attribute not in self._writes:
            self._writes[attribute] = None  # (read again while being worked out: not known)
            values = self.values.assigned_values(attribute)
            scope = self.ctx.scopes.enclosing_function
            flows = [self.returned_flow(scope(v), v, {}) for v in values or ()]
            self._writes[attribute] = alternatives(flows) if flows and all(f.state is not State.UNKNOWN for f in flows) else None
            if values and self._flagged_attribute(attribute):
                self._writes[attribute] = GRAPH  # `self.log_alpha` made to require grad: a leaf that learns
        return self._writes[attribute]

    def _flagged_attribute(self, attribute: ast.Attribute) -> bool:
        """Does the class make `self.<attribute>` require grad (`self.log_alpha.requires_grad = True`, `requires_grad_()`)?"""
        cls = self.ctx.scopes.enclosing_class(attribute)
        return cls is not None and any(
            node.attr in ("requires_grad", "requires_grad_") and is_self_attribute(node.value) and node.value.attr == attribute.attr
            for node in self.ctx.index.within(cls, ast.Attribute)
        )  # fmt: skip

    def _kept(self, attribute: ast.Attribute) -> Flow | None:
        """A list or dict kept in an attribute and filled anywhere (`self.losses.append(loss.item())` in another
        method, `self.stats.values` a hook of another module appends to): what its items carry, each worked out
        in its function (its parameters unknown); a cut made in another file is named at this read
        (`callee_cuts`). None when the container or its items are not known."""
        if attribute not in self._kept_flows:
            self._kept_flows[attribute] = None  # (read again while being worked out: not known)
            kept = self.ctx.analysis(Objects).kept_values(attribute)
            items = dict.fromkeys(kept or ())  # (an item both files add)
            self._kept_flows[attribute] = operands([self._kept_item(home, value, attribute) for home, value in items])
        return self._kept_flows[attribute]

    def _kept_item(self, home, value: ast.AST, read: ast.Attribute) -> Flow:
        """The flow of an item `home` puts in a kept container; a cut there is named at the `read` of this file."""
        function, flows = home.scopes.enclosing_function(value), home.analysis(GradientFlow)
        flow = flows.returned_flow(function, value, {})
        if home is self.ctx or flow.state is not State.NONE or not flow.cuts:
            return flow
        cls = home.scopes.enclosing_class(function) if function is not None else None
        name = f"{cls.name}.{function.name}" if cls is not None else getattr(function, "name", "<module>")
        path = self.ctx.analysis(ProjectView).display_path(home.real_path or home.path)
        source = cut_input(home, flow.cuts[0])
        carried = source is not None and flows.returned_flow(function, source, {}).state is State.GRAPH
        self.callee_cuts.setdefault(read, CalleeCut(name, flow.cuts[0], path, carried, home))
        return Flow(State.NONE, (read,))

    def _setting(self, attribute: ast.Attribute) -> bool:
        """Is `self.x` a constant, as its class sets it and its constructions pass it (asked once per attribute)?"""
        key = (self.ctx.scopes.enclosing_class(attribute), attribute.attr)
        if key not in self._settings:
            self._settings[key] = key[0] is not None and constant_everywhere(self.ctx, attribute)
        return self._settings[key]

    def _cut(self, cut: ast.AST, value: ast.AST | None, depth: int) -> Flow | None:
        """A cut of `value`: it matters only when `value` could have carried a graph."""
        before = self._flow(value, depth + 1) if value is not None else NONE
        if before is None or before.state is State.NONE:
            return before
        return Flow(State.NONE, (cut,))

    def _name(self, name: ast.Name, depth: int) -> Flow | None:
        if depth > MAX_DEPTH:  # a chain of `x += ...` is followed without `_flow`, which checks the depth
            return UNKNOWN
        bound = self._comprehension_target(name)
        if bound is not None:  # `p` of `... for p in model.parameters()`; `a` of `... for a in aux_outputs`
            return GRAPH if self._parameter_target(bound) else self._iterated(bound, depth)
        definitions = self.values.reaching_definitions(name)
        if self._unseen_trained(name, definitions):
            return GRAPH  # a model of unknown origin that its function trains (`net` of `train(net, ...)`)
        if not definitions:
            return UNKNOWN
        if self._mutated_here(name):
            return self._filled(name, definitions, depth)
        flows = [self._loop_carried(d, depth) for d in definitions]
        flow = GRAPH if self._accumulates_graph(name, definitions, flows) else alternatives(flows)
        return _new_leaf(self.ctx, flow) if flow is not None and name.id in self.flagged_names() else flow

    def _unseen_trained(self, name: ast.Name, definitions=None) -> bool:
        """Is `name` bound nowhere in view or a parameter no call site tells, and a model its function trains?"""
        definitions = self.values.reaching_definitions(name) if definitions is None else definitions
        unseen = all(is_parameter(d) and self.values.argument(d, self._binding) is None for d in definitions)
        return unseen and self._trained_out_of_view(name)

    def _module_part(self, attribute: ast.Attribute) -> bool:
        """Is `attribute` (`net.decoder`) read as a part of the module its name is (see `_module_uses`)?"""
        function = self.ctx.scopes.enclosing_function(attribute)
        return any(part is attribute for part in self._uses(function, attribute.value.id)[1])

    def _uses(self, function: ast.AST | None, name: str) -> tuple[list[ast.Call], list[ast.Attribute]]:
        if (function, name) not in self._module_uses:
            self._module_uses[function, name] = _module_uses(self.ctx, function, name)
        return self._module_uses[function, name]

    def _trained_out_of_view(self, name: ast.Name) -> bool:
        """Is `name`, whose value the code does not show (bound nowhere in view, or a parameter no call site
        tells), a model its function trains? So it is when the function calls it outside `no_grad`, the call's
        output reaches a loss the function backpropagates, and the function reads a part of it or its
        parameters (`net.head`, `net.parameters()`), as only a module has: a loss function is called and
        backpropagated too, but no part of it is read."""
        function = self.ctx.scopes.enclosing_function(name)
        key = (function, name.id)
        if key not in self._trained:
            self._trained[key] = False  # (asked again while being worked out: not known)
            calls, parts = self._uses(function, name.id)
            self._trained[key] = bool(parts) and any(
                not under_no_grad(self.ctx, call) and self._backpropagated_from(function, call) for call in calls
            )  # fmt: skip
        return self._trained[key]

    def _backpropagated_from(self, function: ast.AST | None, call: ast.Call) -> bool:
        """Does a loss `function` backpropagates contain `call`, or a name bound from a value containing it?"""
        statement = self.ctx.scopes.statement(call)
        targets = {n for t in assignment_targets(statement) for n in ast.walk(t) if isinstance(n, ast.Name)} if isinstance(statement, ast.Assign | ast.AugAssign) else set()
        for loss in self._backpropagated(function):
            if any(node is call for node in ast.walk(loss)) or (targets and self._depends(loss, targets, 0, set())):
                return True
        return False

    def _backpropagated(self, function: ast.AST | None) -> list[ast.AST]:
        """The losses `function` (None: the module's own statements) runs backward from."""
        if function not in self._losses_of:
            calls = self.ctx.index.within(function or self.ctx.tree, ast.Call)
            found = [(call, backward_loss(self.ctx, call)) for call in calls]
            self._losses_of[function] = [loss for call, loss in found if loss is not None and self.ctx.scopes.enclosing_function(call) is function]
        return self._losses_of[function]

    def _accumulates_graph(self, name: ast.Name, definitions, flows: list[Flow | None]) -> bool:
        """A sum seeded by a number and updated with a graph (`penalty = 0.0`, then `penalty = penalty +
        p.norm()` or `penalty += ...` in a loop): it carries the graph once the loop has run. The seeds
        carry none and cut nothing; every update that carries one reads the name itself."""
        if not any(f is not None and f.state is State.GRAPH for f in flows):
            return False
        for definition, flow in zip(definitions, flows):
            if flow is None or (flow.state is State.NONE and not flow.cuts and definition.value is not None):
                continue
            if flow.state is not State.GRAPH:
                return False
            update = self.ctx.scopes.parent(definition.node)
            reads = isinstance(update, ast.AugAssign) or (
                definition.value is not None and any(isinstance(n, ast.Name) and n.id == name.id for n in ast.walk(definition.value))
            )
            if not reads:
                return False
        return True

    def _loop_carried(self, definition, depth: int) -> Flow | None:
        """The flow of a definition, as a fixed point over the cycle it is in when it reaches itself."""
        key = (definition.node, definition.name, self._binding)  # parameters share their function as node
        if key in self._settled:
            return self._settled[key]
        if key in self._stack:
            self._low = min(self._low, self._stack[key])
            return self._assumed.get(key)
        if key in self._round:
            flow, low = self._round[key]
            self._low = min(self._low, low)
            return flow
        place = self._stack[key] = len(self._stack)
        outer_low, outer_changed, computed = self._low, self._changed, len(self._round)
        try:
            while True:
                self._low, self._changed = place + 1, False
                flow = self._definition(definition, depth)
                changed = self._changed or flow != self._assumed.get(key)
                self._assumed[key] = flow
                if self._low < place:  # in the cycle of a definition below: settled with it
                    self._round[key] = (flow, self._low)
                    self._changed = outer_changed or changed
                    return flow
                this_round = list(self._round)[computed:]
                if self._low > place or not changed or self._budget < 0:  # settled, and the cycle with it
                    for other in this_round:
                        self._settled[other] = self._round.pop(other)[0]
                    self._settled[key] = flow
                    self._changed = outer_changed
                    return flow
                for other in this_round:  # another round
                    del self._round[other]
        finally:
            del self._stack[key]
            self._low = min(outer_low, self._low)

    def flagged_names(self) -> set[str]:
        """Names made to require grad somewhere in the file: `x.requires_grad_()`, `x.requires_grad = True`."""
        if self._flagged is None:
            self._flagged = set()
            for node in self.ctx.index.of_type(ast.Attribute):
                if node.attr not in ("requires_grad", "requires_grad_") or not isinstance(node.value, ast.Name):
                    continue
                parent = self.ctx.scopes.parent(node)
                if isinstance(node.ctx, ast.Store) and isinstance(parent, ast.Assign):
                    flag = parent.value
                elif isinstance(parent, ast.Call) and parent.func is node:
                    flag = call_argument(parent, 0, "requires_grad")
                else:
                    continue
                if not (isinstance(flag, ast.Constant) and flag.value is False):
                    self._flagged.add(node.value.id)
        return self._flagged

    def _mutated_here(self, name: ast.Name) -> bool:
        """Is `name` changed other than by assignment (`xs.append(...)`, `buf.copy_(...)`, `out[i] = ...`)
        where it is read: in its own function or at module level (for a name read at module level,
        anywhere)? What it holds is then not what its assignments say."""
        functions = self._mutations().get(name.id)
        if not functions:
            return False
        function = self.ctx.scopes.enclosing_function(name)
        return function is None or function in functions or None in functions

    def _filled(self, name: ast.Name, definitions, depth: int) -> Flow:
        """A list built in the function and changed there only by `append`/`extend`/`insert`
        (`per_seq = []` then `per_seq.append(F.mse_loss(p, t))`), or a dict changed only by item stores
        (`logs = {}` then `logs[k] = fn(out[k], y[k]).detach()`): what it holds is its items; unknown
        when it is changed any other way."""
        function = self.ctx.scopes.enclosing_function(name)
        dicts = all(isinstance(d.value, ast.Dict) for d in definitions)
        if function is not None and not dicts:
            keyed = self._keyed_stores(name.id, function)
            if keyed is not None:  # a record a call gave, given more entries (`stats["loss"] = loss.item()`)
                return operands([*(self._loop_carried(d, depth) for d in definitions), *(self._flow(v, depth + 1) for _, v in keyed)]) or UNKNOWN
        if function is None or not (dicts or all(isinstance(d.value, ast.List) for d in definitions)):
            return UNKNOWN
        items = [e for d in definitions for e in (d.value.values if dicts else d.value.elts)]
        for node in self.ctx.index.within(function, ast.Attribute, ast.Subscript):
            if not (isinstance(node.value, ast.Name) and node.value.id == name.id):
                continue
            call = self.ctx.scopes.parent(node)
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                continue
            if dicts and isinstance(node, ast.Subscript) and isinstance(call, ast.Assign) and len(call.targets) == 1:
                items.append(call.value)  # `logs[k] = v`
                continue
            if dicts and isinstance(call, ast.Call) and call.func is node and node.attr in CONTAINER_MUTATORS:
                return UNKNOWN  # `logs.update(parts)`
            if not (isinstance(node, ast.Attribute) and isinstance(call, ast.Call) and call.func is node and node.attr in FILLING and call.args):
                if isinstance(node, ast.Subscript) or (isinstance(call, ast.Call) and call.func is node and node.attr.endswith("_")):
                    return UNKNOWN  # `xs[i] = v`, an in-place change
                continue
            items.append(call.args[-1])
        return operands([self._flow(item, depth + 1) for item in items]) or UNKNOWN

    def _kept_entry(self, name: ast.Name, key: str) -> bool:
        """Is `name[key]` the entry the record was made with: its function stores only at other string keys
        (`diag["lr"] = lr` beside `diag["ent"]` of `_, diag = self.evaluate(x)`)?"""
        function = self.ctx.scopes.enclosing_function(name)
        keyed = self._keyed_stores(name.id, function) if function is not None and self._mutated_here(name) else None
        return bool(keyed) and all(k != key for k, _ in keyed)

    def _keyed_stores(self, name: str, function: ast.AST) -> list[tuple[str, ast.AST]] | None:
        """(key, value) of each `name["key"] = value` in `function`, when every change of `name` there is such a
        store (a dict: no tensor is indexed by a string); None otherwise."""
        stored = []
        for node in self.ctx.index.within(function, ast.Attribute, ast.Subscript):
            if not (isinstance(node.value, ast.Name) and node.value.id == name) or self.ctx.scopes.enclosing_function(node) is not function:
                continue
            parent = self.ctx.scopes.parent(node)
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                keyed = isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
                if not (keyed and isinstance(parent, ast.Assign) and parent.targets == [node]):
                    return None
                stored.append((node.slice.value, parent.value))
            elif isinstance(node, ast.Attribute) and isinstance(parent, ast.Call) and parent.func is node and (node.attr in CONTAINER_MUTATORS or node.attr.endswith("_")):
                return None
        return stored

    def _mutations(self) -> dict[str, set[ast.AST | None]]:
        if self._mutated is None:
            self._mutated = {}
            for node in self.ctx.index.of_type(ast.Attribute, ast.Subscript):
                if not isinstance(node.value, ast.Name):
                    continue
                if isinstance(node, ast.Subscript):
                    changed = isinstance(node.ctx, ast.Store)
                else:
                    call = self.ctx.scopes.parent(node)
                    changed = isinstance(call, ast.Call) and call.func is node and (
                        node.attr in CONTAINER_MUTATORS
                        or (node.attr.endswith("_") and not node.attr.startswith("_") and node.attr not in FLAG_METHODS)
                    )
                if changed:
                    self._mutated.setdefault(node.value.id, set()).add(self.ctx.scopes.enclosing_function(node))
        return self._mutated

    def _definition(self, definition, depth: int) -> Flow | None:
        if definition.value is not None:
            return self._flow(definition.value, depth + 1)
        if is_parameter(definition):
            return self._passed(definition, depth)
        binding = self.ctx.scopes.parent(definition.node)
        if isinstance(binding, ast.AugAssign):  # `x += y`: the old value and y
            return operands([self._name(definition.node, depth + 1), self._flow(binding.value, depth + 1)])
        if self._loader_target(definition.node):
            return NONE
        if self._parameter_target(definition.node):
            return GRAPH
        if isinstance(definition.node, ast.Name) and self._iterated(definition.node, depth).state is State.GRAPH:
            return GRAPH  # `v` of `for v in values`, values carrying a graph
        unpacked = self._unpacked_from(definition.node)
        flow = self._flow(unpacked, depth + 1) if unpacked is not None else None
        if flow is not None and (flow.state is State.GRAPH or _is_none(flow)):
            return flow  # `x, *y = batch`: the parts of a value share its flow
        return UNKNOWN

    def _element(self, value: ast.AST, index: int, depth: int) -> Flow | None:
        """The flow of the element `index` of a tuple where it is known apart from the others: a tuple
        written out, what a project function returns in that place, the indices of `x.max(dim)`."""
        if isinstance(value, (ast.Tuple, ast.List)):
            elements = _element(value, index)
            return None if elements is value else self._flow(elements, depth + 1)
        if not isinstance(value, ast.Call):
            return None
        if index == 1 and self._returns_indices(value):
            return NONE  # `_, pred = out.max(dim=1)`: the indices are integers
        return self._from_callee(value, depth, index)

    def _returns_indices(self, call: ast.Call) -> bool:
        """`x.max(1)`, `torch.topk(x, k)`: a (values, indices) pair."""
        func = call.func
        name = self.ctx.qualified_name(func)
        if name is not None:
            method, given = name.removeprefix("torch."), len(call.args) + len(call.keywords) - 1
        elif isinstance(func, ast.Attribute):
            method, given = func.attr, len(call.args) + len(call.keywords)
        else:
            return False
        return method in INDEXED and (given >= 1 or method not in ("max", "min", "median", "mode"))

    def _iterated(self, target: ast.Name, depth: int) -> Flow | None:
        """The flow of the items a loop's or a comprehension's target takes: those of what it iterates over,
        when that is a name or attribute carrying a graph (`[F.cross_entropy(a, y) for a in aux_outputs]`), the values
        of a dict that does (`v` of `for k, v in d.items()`, of `for v in d.values()`), or an item of one
        that `zip` pairs (`p` of `for p, t in zip(preds, targets)`) or `enumerate` numbers; cut where what
        it iterates over is cut (`l` of `for l in reduced.values()`, a dict made under `torch.no_grad()`)."""
        loop = self.ctx.scopes.parent(target)
        iterated = loop.iter if isinstance(loop, (ast.comprehension, ast.For)) and loop.target is target else None
        if isinstance(loop, ast.Tuple) and any(e is target for e in loop.elts):
            outer = self.ctx.scopes.parent(loop)
            over = outer.iter if isinstance(outer, (ast.comprehension, ast.For)) and outer.target is loop else None
            place = next(i for i, e in enumerate(loop.elts) if e is target)
            if len(loop.elts) == 2 and place == 1 and _dict_view(over, "items"):  # `k, v` of `d.items()`
                iterated = over.func.value
            elif isinstance(over, ast.Call) and isinstance(over.func, ast.Name) and over.func.id == "zip" and place < len(over.args):
                iterated = over.args[place]  # `p, t` of `zip(preds, targets)`
            elif isinstance(over, ast.Call) and isinstance(over.func, ast.Name) and over.func.id == "enumerate" and place == 1 and over.args:
                iterated = over.args[0]  # `v` of `for i, v in enumerate(values)`
            else:
                iterated = None
        elif _dict_view(iterated, "values"):  # `v` of `d.values()`
            iterated = iterated.func.value
        if isinstance(iterated, ast.Name | ast.Call | ast.Attribute):  # `blk` of `for blk in self.model.blocks` too
            flow = self._flow(iterated, depth + 1)
            return flow if flow is not None and (flow.state is State.GRAPH or _is_none(flow) and flow.cuts) else UNKNOWN
        return UNKNOWN

    def _listed(self, value: ast.AST | None) -> bool:
        """A list or tuple written in place, bound to a name on every way to it, or passed by the call site
        for a parameter (`def total(terms): return torch.asarray(terms).sum()` called with `[ce, reg]`)."""
        if not isinstance(value, ast.Name):
            return isinstance(value, LISTED)
        definitions = self.values.reaching_definitions(value)
        return bool(definitions) and all(self._listed_definition(d) for d in definitions)

    def _listed_definition(self, definition) -> bool:
        if not is_parameter(definition):
            return isinstance(definition.value, LISTED)
        if isinstance(self._binding, Given):
            return definition.node is self._binding.function and definition.name in self._binding.listed
        passed = self.values.argument(definition, self._binding)
        return passed is not None and isinstance(passed[1], LISTED)

    def _passed(self, definition, depth: int) -> Flow | None:
        """The flow of what the call site passes for a parameter (unknown without one)."""
        passed = self.values.argument(definition, self._binding)
        if passed is None:  # a parameter the call leaves to its default (`expected_area=0.2`): the default's
            given = isinstance(self._binding, Given) and definition.node is self._binding.function
            default = parameter_defaults(definition.node).get(definition.name) if given else None
            return self._flow(default, depth + 1) if default is not None else UNKNOWN
        caller, argument, passage = passed
        if isinstance(argument, Flow):  # given as worked out at a call (`Given`)
            return argument
        outer = None if passage.default else self._binding.of(definition.node).outer
        flows = caller.analysis(GradientFlow)
        if flows is not self:
            return flows.flow(argument, outer)
        binding, self._binding = self._binding, outer
        try:
            return self._flow(argument, depth + 1)
        finally:
            self._binding = binding

    def _unpacked_from(self, target: ast.AST) -> ast.AST | None:
        """The value `x, y = value` unpacks into `target`."""
        parent = self.ctx.scopes.parent(target)
        while isinstance(parent, (ast.Tuple, ast.List, ast.Starred)):
            parent = self.ctx.scopes.parent(parent)
        return parent.value if isinstance(parent, ast.Assign) else None

    def _comprehension_target(self, name: ast.Name) -> ast.Name | None:
        """The target of an enclosing comprehension that binds `name` (read before it, in its element)."""
        for ancestor in self.ctx.scopes.ancestors(name):
            if isinstance(ancestor, (ast.stmt, ast.Lambda)):
                return None
            if isinstance(ancestor, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
                for generator in ancestor.generators:
                    for target in ast.walk(generator.target):
                        if isinstance(target, ast.Name) and target.id == name.id:
                            return target
        return None

    def parameter(self, expr: ast.AST, depth: int = 0) -> bool:
        """Is `expr` a parameter of a module itself, a leaf no computation made (`p` of `for name, p in
        model.named_parameters()`, `net.proj.weight`, `self.mu` of an `nn.Parameter`, a name bound only to one)?"""
        if isinstance(expr, ast.Attribute):
            own = is_self_attribute(expr) and isinstance(expr.ctx, ast.Load) and self._own_parameter(expr)
            return own or (expr.attr in PARAMETER_ATTRIBUTES and self._of_module(expr.value))
        if not isinstance(expr, ast.Name) or depth > MAX_DEPTH:
            return False
        bound = self._comprehension_target(expr)
        if bound is not None:
            return self._parameter_target(bound)
        definitions = self.values.reaching_definitions(expr)
        return bool(definitions) and all(
            self._parameter_target(d.node) if d.value is None else self.parameter(d.value, depth + 1) for d in definitions
        )  # fmt: skip

    def _parameter_target(self, target: ast.AST) -> bool:
        """Is `target` bound by iterating over a module's parameters (`for p in model.parameters()`, `p` of
        `for name, p in model.named_parameters()`, also in a comprehension)? Parameters require grad: each
        carries a graph."""
        return self._iterates(target, ("parameters",), ("named_parameters",))

    def _iterates(self, target: ast.AST, methods: tuple[str, ...], named: tuple[str, ...]) -> bool:
        """Is `target` bound by a loop over `x.<method>()`, or the second of a pair over `x.<named>()`, or
        over a collection kept from them (`layers = [m for m in model.modules() if ...][1:]`)?"""
        loop = self.ctx.scopes.parent(target)
        if isinstance(loop, ast.Tuple) and len(loop.elts) == 2 and loop.elts[1] is target:
            target, loop, methods = loop, self.ctx.scopes.parent(loop), named
        if not isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) or loop.target is not target:
            return False
        return all(
            isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)
            and iterated.func.attr in methods and not iterated.args and not iterated.keywords
            for iterated in self.values.item_sources(loop.iter) or [None]
        )  # fmt: skip

    def _loader_target(self, target: ast.AST) -> bool:
        """Is `target` bound by `for ... in <loader>` (data, which carries no graph)?"""
        node = target
        parent = self.ctx.scopes.parent(node)
        while isinstance(parent, (ast.Tuple, ast.List, ast.Starred)):
            node, parent = parent, self.ctx.scopes.parent(parent)
        if not isinstance(parent, (ast.For, ast.AsyncFor)) or parent.target is not node:
            return False
        if self._iterates_data(parent.iter):
            return True
        values = self.values.reaching_values(parent.iter) if isinstance(parent.iter, ast.Name) else None
        return bool(values) and len(values) == 1 and self._iterates_data(values[0])  # `pbar = tqdm(train_loader)`

    def _iterates_data(self, iterated: ast.AST) -> bool:
        """`loader`, `enumerate(tqdm(train_loader), total=len(train_loader))`: a loader by its name, or a
        `DataLoader(...)` (what `tr_dl` is bound to)."""
        if isinstance(iterated, ast.Call) and canonical_class(self.ctx.qualified_name(iterated.func)) in DATA_LOADERS:
            return True
        calls = [n for n in ast.walk(iterated) if isinstance(n, ast.Call)]
        if not all(isinstance(c.func, ast.Name) and c.func.id in ITERATION_HELPERS | NO_GRAPH_BUILTINS for c in calls):
            return False  # `zip(model(x), y)` may iterate over model outputs
        text = self.ctx.text(iterated).lower()
        return any(word in text for word in DATA_WORDS)

    def _under_no_grad(self, expr: ast.AST) -> Flow:
        """No graph; cut at its `no_grad` region when the value would carry one with grad enabled (`loss +=
        beta * penalty(model)` in `with torch.no_grad():`), so a term added there is told apart from data."""
        region = no_grad_region(self.ctx, expr)
        if region is None or self.ctx.analysis(GradEnabledFlow).flow(expr, self._binding).state is not State.GRAPH:
            return NONE
        return Flow(State.NONE, (region,))

    def _call(self, call: ast.Call, depth: int) -> Flow:
        func = call.func
        arguments = [*call.args, *(k.value for k in call.keywords if k.arg not in OPTION_KEYWORDS)]
        name = self.ctx.qualified_name(func)
        listed = name in LISTING_FUNCTIONS and self._listed(call_argument(call, 0, "data"))  # `torch.as_tensor([a, b])`
        if name in CUT_FUNCTIONS or listed:  # re-wrapping: a new tensor, with no graph (a leaf if it requires grad)
            value = call_argument(call, 0, "data") or call_argument(call, 0, "input")
            before = (self._flow(value, depth + 1) if value is not None else NONE) or UNKNOWN
            taken = self._cuts_within(value, depth + 1, set()) if before.state is State.UNKNOWN and value is not None else ()
            if taken:  # what it was taken out of, whatever else it mixed in
                before = Flow(State.NONE, taken)
            wrapped = Flow(State.NONE, (call,)) if before.state is State.GRAPH else before
            if requires_grad(call):
                return _new_leaf(self.ctx, wrapped)
            return NONE if wrapped.state is State.UNKNOWN else wrapped
        if isinstance(func, ast.Name) and not self.values.reaching_definitions(func) and name is None:
            if func.id in CUT_BUILTINS:
                return self._cut(call, call.args[0] if call.args else None, depth)
            if func.id in NO_GRAPH_BUILTINS:
                return NONE
            if func.id in SUMMING_BUILTINS:
                return operands([self._flow(a, depth + 1) for a in arguments])
        if name is not None and name.startswith("math."):  # a Python float: `math.sqrt(d)`, `math.log(loss)` cuts
            return self._cut(call, call.args[0] if call.args else None, depth)
        if name in DIFFERENTIABLE_COLLECTIVES:
            return operands([self._flow(a, depth + 1) for a in call.args[:1]])
        if name is not None and name.startswith("numpy."):  # arrays never carry a graph, but cuts do
            return operands([self._flow(a, depth + 1) for a in arguments])
        if canonical_class(name) in MODEL_WRAPPERS and call.args:  # `nn.DataParallel(net)`: the module it wraps
            return self._flow(call.args[0], depth + 1)
        if name is not None and name.startswith("torch."):
            if requires_grad(call) or canonical_class(name) == "torch.nn.Parameter":
                return GRAPH
            if name in NO_GRAPH_FUNCTIONS:
                return NONE
            if not _is_module_class(canonical_class(name)):  # a function: `torch.mean(x)`, `F.relu(x)`
                return operands([self._flow(a, depth + 1) for a in arguments])
        if isinstance(func, ast.Attribute) and name is None:
            if func.attr == "requires_grad_":
                return _new_leaf(self.ctx, self._flow(func.value, depth + 1) or UNKNOWN)
            if is_cut_method(call):
                return self._cut(call, func.value, depth)
            if func.attr in NO_GRAPH_METHODS:
                return NONE
        cut = self._from_callee(call, depth)
        if cut is OPAQUE:  # a method of the project whose returns are unknown: what its object carries (`model.encode(x)`)
            return self._flow(func.value, depth + 1) if isinstance(func, ast.Attribute) else UNKNOWN
        if cut is not None:
            return cut
        if self._from_table(call, depth):
            return GRAPH  # `TASK_LOSSES[name](pred, y)`: every function the table holds returns a graph
        if isinstance(func, ast.Name) and func.id == "self" and self._in_module_class(call):
            return GRAPH  # `self(x)` in a method of a module: its own forward
        callee = self.module_kind(func)
        if callee is State.GRAPH:
            return GRAPH
        if callee is State.NONE:  # a loss or an activation: what it is given
            return operands([self._flow(a, depth + 1) for a in arguments])
        if self._is_module_constructor(call):
            return GRAPH  # the module object: its parameters carry gradients
        if isinstance(func, ast.Name) and name is None and (self._flow(func, depth + 1) or UNKNOWN).state is State.GRAPH:
            return GRAPH  # a module passed in (`center_fn(feats, labels)` given a `CenterLoss()`)
        if isinstance(func, ast.Attribute) and name is None and self.values.constructor(func) is None:
            if is_self_attribute(func) and self._family_method(func):
                return UNKNOWN  # a method the class or a subclass defines, no one of them known to run (`self.batch_value(out, y)`)
            given = [self._flow(a, depth + 1) for a in arguments]
            receiver = self._flow(func.value, depth + 1)
            if (receiver is None or receiver.state is State.UNKNOWN) and any(self._left_torch(a, depth + 1) for a in arguments):
                return operands(given)  # an object given NumPy values is no tensor or module: `scaler.inverse_transform(arr)`
            # A tensor method (`x.mean()`, `x.to(device)`): its receiver and arguments.
            return operands([receiver, *given])
        return UNKNOWN

    def _cuts_within(self, expr: ast.AST, depth: int, seen: set[ast.AST]) -> tuple[ast.AST, ...]:
        """The cuts of values carrying a graph that `expr` is computed from, through the names bound in its
        function and the arguments of its calls: what a value re-wrapped into a new tensor was taken out of
        (`torch.tensor(np.mean(res ** 2))` of `res = k * np.gradient(model(t).detach().numpy())`), when the
        rest it mixes in (a hyperparameter, a NumPy helper of the project) leaves its flow unknown."""
        if depth > MAX_DEPTH or expr in seen or self._budget < 0:
            return ()
        seen.add(expr)
        self._budget -= 1
        if isinstance(expr, ast.Name):
            definitions = self.values.reaching_definitions(expr)
            return _unique(c for d in definitions if d.value is not None for c in self._cuts_within(d.value, depth + 1, seen))
        if isinstance(expr, ast.Call):
            name = self.ctx.qualified_name(expr.func)
            builtin = isinstance(expr.func, ast.Name) and name is None and expr.func.id in CUT_BUILTINS
            cut = cut_input(self.ctx, expr) if is_cut_method(expr, VALUE_CUTS) or name in CUT_FUNCTIONS or builtin else None
            if cut is not None and (self._flow(cut, depth + 1) or UNKNOWN).state is State.GRAPH:
                return (expr,)
            parts = [*expr.args, *(k.value for k in expr.keywords)]
            if isinstance(expr.func, ast.Attribute):
                parts.append(expr.func.value)
        else:
            parts = [e for e in ast.iter_child_nodes(expr) if isinstance(e, ast.expr)]
        return _unique(c for part in parts for c in self._cuts_within(part, depth + 1, seen))

    def _left_torch(self, expr: ast.AST, depth: int) -> bool:
        """Is `expr` a NumPy value or a Python number taken out of a tensor (`t.detach().cpu().numpy()`,
        `t.tolist()`), or computed by NumPy, then reshaped or indexed (`arr.reshape(-1, 1)`, `arr[:, 0]`), also
        through the names bound only to one?"""
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            definitions = self.values.reaching_definitions(expr)
            return bool(definitions) and all(d.value is not None and self._left_torch(d.value, depth + 1) for d in definitions)
        if isinstance(expr, ast.Subscript):
            return self._left_torch(expr.value, depth + 1)
        if not isinstance(expr, ast.Call):
            return False
        name = self.ctx.qualified_name(expr.func)
        if name is not None:
            return name.startswith("numpy.")
        if is_cut_method(expr, LEAVING_TORCH):
            return True
        return isinstance(expr.func, ast.Attribute) and self._left_torch(expr.func.value, depth + 1)  # an array's method

    def _from_callee(self, call: ast.Call, depth: int, index: int | None = None) -> Flow | None:
        """What a project callee returns: GRAPH; NONE when it cuts (cut at the call) or returns no graph
        (decorated `@torch.no_grad()`); else None. Asked for
        its element `index` of a tuple, also NONE without cuts (`return loss, 0`) and UNKNOWN."""
        found = self.callee(call) if index is None else self.callee(call, followed=RETURN_WORDS)
        if found is None:
            return None
        callee, skips_first = found
        bound = [(name, argument) for name, argument in bind_arguments(call, callee.function, skips_first).items() if argument is not None]
        given = {name: self._flow(argument, depth + 1) or UNKNOWN for name, argument in bound}
        listed = frozenset(name for name, argument in bound if self._listed(argument))
        instance = callee.instance or (self._binding.instance if isinstance(self._binding, Given) and is_self_attribute(call.func) else None)
        returned = callee.ctx.analysis(GradientFlow).returned(callee.function, Given(callee.function, given, instance, listed), index)
        if returned.state is State.GRAPH:
            return GRAPH  # `self.orthogonality()` of the module's own weights
        own = [c for c in returned.cuts if not any(c in f.cuts for f in given.values())]
        if returned.state is State.NONE and not own:
            # What it was given, cut by the caller (`total_variation(pred.data)`), or nothing with a graph
            # whatever it is given: a callee running under `torch.no_grad()`, returning a comparison or a size.
            return returned
        if returned.state is not State.NONE or not own:
            if index is None and callee.function.name not in MODULE_CALLS:
                return OPAQUE  # not its arguments' flow, as a tensor method's: `self.process(pred, y)` may cut `pred`
            return returned if index is not None else None  # an element: what is known of it
        path = "" if callee.ctx is self.ctx else self.ctx.analysis(ProjectView).display_path(callee.ctx.real_path or callee.ctx.path)
        cls = callee.ctx.scopes.enclosing_class(callee.function)
        name = f"{cls.name}.{callee.function.name}" if cls is not None else callee.function.name
        source = cut_input(callee.ctx, own[0])
        flows = callee.ctx.analysis(GradientFlow)
        carried = source is not None and flows.returned_flow(callee.function, source, given).state is State.GRAPH
        found = CalleeCut(name, own[0], path, carried, callee.ctx)
        inner = flows.callee_cuts.get(own[0])
        if inner is not None and inner.home is not None:  # cut by a function the callee calls (`aux` of `m, aux = self.moe(h)`): named where it is made
            where = "" if inner.home is self.ctx else self.ctx.analysis(ProjectView).display_path(inner.home.real_path or inner.home.path)
            found = CalleeCut(inner.callee, inner.cut, where, carried or inner.carried, inner.home)
        at = _unpacked_target(self.ctx, call, index) or call  # `stats` of `loss, stats = self.step(x)`: that element's cut
        self.callee_cuts[at] = found
        return Flow(State.NONE, (at,))

    def _from_table(self, call: ast.Call, depth: int) -> bool:
        """Does a call of a value that may be one of several functions of the project (`LOSSES[k](out, y)` of a
        table a decorator fills) return a graph whichever it runs, given the call's arguments?"""
        if not isinstance(call.func, ast.Subscript | ast.Name | ast.Attribute):
            return False
        found = functions_called(self.ctx, call, None if isinstance(self._binding, Given) else self._binding)
        if found is None or len(found) < 2:
            return False  # one function: `_from_callee`'s
        for callee in found:
            bound = bind_arguments(call, callee.function, False).items()
            given = Given(callee.function, {name: self._flow(a, depth + 1) or UNKNOWN for name, a in bound if a is not None})
            if callee.ctx.analysis(GradientFlow).returned(callee.function, given).state is not State.GRAPH:
                return False
        return True

    def passes_graph(self, call: ast.Call, live: set[ast.AST]) -> bool:
        """Does the project function `call` runs (in any module) return a graph when the arguments `live`
        carry one (`psnr(pred, target)` of a live prediction), the others unknown?"""
        found = self.callee(call, followed=ANY_MODULE)
        if found is None:
            return False
        callee, skips_first = found
        bound = bind_arguments(call, callee.function, skips_first).items()
        given = {name: GRAPH if argument in live else UNKNOWN for name, argument in bound if argument is not None}
        if GRAPH not in given.values():
            return False
        return callee.ctx.analysis(GradientFlow).returned(callee.function, Given(callee.function, given)).state is State.GRAPH

    def returned_flow(self, function: ast.AST, expr: ast.AST, flows: dict) -> Flow:
        """The flow of `expr` of `function` (of this file), its parameters holding `flows`, worked out apart
        from any question being answered here."""
        saved = self._question_state()
        self._stack, self._assumed, self._round, self._settled, self.values.unbound = {}, {}, {}, {}, None
        try:
            return self._answer(expr, Given(function, flows))
        finally:
            self._restore(saved)

    def returned(self, function: ast.AST, given: "Given", index: int | None = None) -> Flow:
        """What a function of this file returns (the element `index` of the tuples it returns, when
        asked), its parameters holding what `given` says (UNKNOWN while it is being worked out: a
        recursive call). Worked out apart from any question being answered here."""
        key = (function, frozenset(given.flows.items()), index, given.instance and given.instance[1])
        if key not in self._returns:
            self._returns[key] = UNKNOWN
            expressions = [_element(e, index) for e in function_returns(function) or ()]
            saved = self._question_state()
            self._stack, self._assumed, self._round, self._settled, self.values.unbound = {}, {}, {}, {}, None
            try:
                flows = [self._answer(e, given) for e in expressions or ()]
            finally:
                self._restore(saved)
            self._returns[key] = (alternatives(flows) or UNKNOWN) if expressions else UNKNOWN
        return self._returns[key]

    def _question_state(self) -> tuple:
        """Where the question being answered is (its fixed point, budget, binding), to answer another apart."""
        return (self._stack, self._assumed, self._round, self._settled, self._low, self._changed, self._budget,
                self._binding, self.values.unbound)  # fmt: skip

    def _restore(self, state: tuple) -> None:
        (self._stack, self._assumed, self._round, self._settled, self._low, self._changed, self._budget,
         self._binding, self.values.unbound) = state  # fmt: skip

    def callee(self, call: ast.Call, binding=None, followed: re.Pattern[bytes] = CUT_WORDS) -> tuple[Callee, bool] | None:
        """The function of the project a call runs, and whether the call binds its first parameter itself:
        a function (`helper(x)`, imported), a method (`self.helper(x)`), or a method of an object of a
        project class (`criterion(pred, y)` runs its `forward` or `__call__`, `model.compute_loss(x)`), the
        object found by points-to, under `binding` (default: the call site the question is asked for).
        `followed`: what another module must mention to be read (default: a cut)."""
        func = call.func
        instance = self._binding.instance if isinstance(self._binding, Given) and is_self_attribute(func) else None
        method = inherited_method(*instance, func.attr, self._view) if instance is not None else None
        if method is not None:  # `self.batch_value(...)` of a `Score` whose object is an `AbsError`: the override
            return Callee(method[1], method[0], instance), True
        if isinstance(func, ast.Name) or is_self_attribute(func):
            found = self._resolver.resolve(call, followed=followed)
            if found is not None:
                return found, isinstance(func, ast.Attribute)
        binding = binding or self._binding
        binding = None if isinstance(binding, Given) else binding
        method = method_called(self.ctx, call, binding, followed=followed)
        if method is not None:
            return method, True
        function = function_called(self.ctx, call, binding)  # `critic_loss = wgan_critic`, `self.crit, self.gen = LOSSES[kind]`
        index, home = self._view.index, function.ctx.module if function is not None else None
        if function is not None and (home is None or index is None or function.ctx is self.ctx or index.mentions(home.name, followed)):
            return function, False
        return None

    @cached_property
    def _view(self) -> ProjectView:
        return followed_view(self.ctx)

    @cached_property
    def _resolver(self) -> CallResolver:
        return CallResolver(self.ctx, self._view)  # a callee's module follows its own helpers too

    def depends_on(self, expr: ast.AST, targets: set[ast.AST]) -> bool:
        """Can the value of `expr` be computed from a binding whose target node is in `targets`?"""
        self._budget = BUDGET
        return self._depends(expr, targets, 0, set())

    def _depends(self, expr: ast.AST, targets: set[ast.AST], depth: int, seen: set[ast.AST]) -> bool:
        if depth > MAX_DEPTH:
            return False
        for node in ast.walk(expr):
            self._budget -= 1
            if self._budget < 0:
                return False
            if isinstance(node, ast.Name) and self._name_depends(node, targets, depth, seen):
                return True
        return False

    def _name_depends(self, name: ast.Name, targets: set[ast.AST], depth: int, seen: set[ast.AST]) -> bool:
        """`seen`: definitions already followed (around a loop they reach each other)."""
        for definition in self.values.reaching_definitions(name):
            if definition.node in targets:
                return True
            if definition.node in seen:
                continue
            seen.add(definition.node)
            binding = self.ctx.scopes.parent(definition.node)
            if definition.value is not None:
                sources = [definition.value]
            elif isinstance(binding, ast.AugAssign):
                sources = [definition.node, binding.value]
            else:
                unpacked = self._unpacked_from(definition.node)
                sources = [unpacked] if unpacked is not None else []
            if any(self._depends(s, targets, depth + 1, seen) for s in sources if s is not name):
                return True
        return False

    def module_kind(self, func: ast.AST) -> State:
        """GRAPH when `func` is a module with parameters (a torch.nn layer, a module class of this file),
        NONE when it is a torch.nn module without (a loss, an activation), UNKNOWN otherwise."""
        constructor = self.values.constructor(func)
        if constructor is None:
            values = self.values.reaching_values(func) if isinstance(func, ast.Name) else None
            if values and all(isinstance(v, ast.Call) and self._is_module_constructor(v) for v in values):
                return State.GRAPH
            return self._made_module(func)
        if self._is_module_constructor(constructor):
            return State.GRAPH
        name = canonical_class(self.ctx.qualified_name(constructor.func))
        if _is_module_class(name):
            return State.NONE if name.endswith("Loss") or name in PARAMETERLESS else State.UNKNOWN
        return self._made_module(func)

    def _made_module(self, func: ast.AST) -> State:
        """GRAPH when every object a name or a container's item may be, as the objects layer follows it (a
        builder of another module returning `smp.Unet(...)` or `nn.Conv2d(...)`), is made by a module
        constructor; NONE when every one is a torch.nn loss or module without parameters (`losses["bce"]`
        of `losses = {"bce": nn.BCEWithLogitsLoss()}`; `blk` of `for blk in self.blocks`, what is written there)."""
        made = built(self.ctx, func) if isinstance(func, ast.Name | ast.Subscript) else None
        if made and all(home.analysis(GradientFlow)._is_module_constructor(call) for home, call in made):
            return State.GRAPH
        classes = {canonical_class(home.qualified_name(call.func)) for home, call in made or ()}
        if classes and all(_is_module_class(c) and (c.endswith("Loss") or c in PARAMETERLESS) for c in classes):
            return State.NONE
        return State.UNKNOWN

    def _family_method(self, func: ast.Attribute) -> bool:
        """Does the class around `self.name(...)`, or a class of the project deriving from it, define `name`?"""
        cls = self.ctx.scopes.enclosing_class(func)
        family = self_classes(self.ctx, cls, self._view if self._view.index is not None else None) if cls is not None else []
        return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func.attr for _, c in family for n in c.body)

    def _in_module_class(self, node: ast.AST) -> bool:
        cls = self.ctx.scopes.enclosing_class(node)
        return cls is not None and cls.name in self.module_classes

    def _is_module_constructor(self, call: ast.Call) -> bool:
        """`Net()` for a module class of this file, a torch.nn layer with parameters, or a library model
        (`smp.Unet(...)`, `timm.create_model(...)`)."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.module_classes and self.ctx.analysis(Names).is_own_or_local(func):
            return True
        name = canonical_class(self.ctx.qualified_name(func))
        if name and not name.startswith("torch.") and self._view.index is not None and self._view.is_module_class(name):
            return True  # a module class of another module of the project
        if name in CONTAINERS:  # `nn.ModuleList(Block(d) for _ in range(n))`, `nn.Sequential(*[...])`, `[a, b]`
            items = [i for a in call.args for i in _listed(a.value if isinstance(a, ast.Starred) else a)]
            return any(isinstance(i, ast.Call) and self._is_module_constructor(i) for i in items)
        return name in PARAMETRISED or is_library_factory(name or "")


PARAMETERLESS = frozenset(
    "torch.nn." + name
    for name in (
        "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax",
        "LogSoftmax", "Softplus", "Hardtanh", "Hardswish", "Hardsigmoid", "Dropout", "Dropout1d", "Dropout2d",
        "Dropout3d", "AlphaDropout", "Identity", "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d",
        "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
        "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample",
    )
)  # fmt: skip


PARAMETER_VIEWS = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children", "state_dict"})


def _module_uses(ctx, function: ast.AST | None, name: str) -> tuple[list[ast.Call], list[ast.Attribute]]:
    """The calls of `name` in `function` (None: the module's own statements), and the reads there of what only
    a module has: its parameters (`name.parameters()`), a part with parameters (`name.head` of `name.head.weight`),
    a part handed to a function of the project (`name.decoder` of `penalty(name.decoder)`). A loss object's
    options (`name.weight`) and a model's other attributes (`name.acc`) are none."""
    calls, parts = [], []
    for use in ctx.scopes.reads(function, name):
        parent = ctx.scopes.parent(use)
        if isinstance(parent, ast.Call) and parent.func is use:
            calls.append(parent)
        elif isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Load):
            above = ctx.scopes.parent(parent)
            if isinstance(above, ast.Call) and above.func is parent:
                parts += [parent] if parent.attr in PARAMETER_VIEWS else []
            elif isinstance(above, ast.Attribute) and above.attr in PARAMETER_ATTRIBUTES | PARAMETER_VIEWS:
                parts.append(parent)
            elif isinstance(above, ast.Call) and parent in above.args and function_called(ctx, above) is not None:
                parts.append(parent)
    return calls, parts


def _element(expr: ast.AST, index: int | None) -> ast.AST:
    """The element `index` of a tuple written out (`return loss, acc`: `acc` for 1), else the whole."""
    if index is None or not isinstance(expr, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in expr.elts):
        return expr
    return expr.elts[index] if -len(expr.elts) <= index < len(expr.elts) else expr


def _unpacked_target(ctx, call: ast.Call, index: int | None) -> ast.AST | None:
    """The target that element `index` of what `call` returns is unpacked into (`a, b = f(x)`), if any."""
    statement = ctx.scopes.parent(call)
    target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
    if index is None or not isinstance(target, ast.Tuple | ast.List) or index >= len(target.elts):
        return None
    return None if any(isinstance(e, ast.Starred) for e in target.elts) else target.elts[index]


def _listed(arg: ast.AST) -> list[ast.AST]:
    """What a container's argument lists: itself, a list's or tuple's items, a comprehension's element."""
    if isinstance(arg, (ast.List, ast.Tuple)):
        return list(arg.elts)
    return [arg.elt] if isinstance(arg, (ast.GeneratorExp, ast.ListComp)) else [arg]


def _is_none(flow: Flow | None) -> bool:
    return flow is not None and flow.state is State.NONE


def _new_leaf(ctx, flow: Flow) -> Flow:
    """A value made to require grad: a leaf that learns when it was plain data (`torch.tensor(0.5,
    requires_grad=True)`) or made under `no_grad` (`w = p.clone()` there, then `w.requires_grad_()`), still
    cut from the model when it was made of cut values (the bug)."""
    if flow.state is State.NONE and all(is_no_grad(ctx, cut) for cut in flow.cuts):
        return GRAPH
    return flow


def is_torch_function(name: str | None) -> bool:
    """`torch.sigmoid`, `torch.nn.functional.relu`: a function of torch, not a module class."""
    return bool(name) and name.startswith("torch.") and not _is_module_class(canonical_class(name))


def _is_module_class(name: str | None) -> bool:
    """`torch.nn.Linear`, not `torch.nn.functional.relu` or `torch.nn.init.zeros_`."""
    return bool(name) and name.startswith("torch.nn.") and "." not in name[len("torch.nn.") :]


def requires_grad(call: ast.Call) -> bool:
    """`torch.zeros(n, requires_grad=True)`: the call makes a leaf that takes gradients."""
    return any(
        k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
    )


def _dict_view(node: ast.AST | None, method: str) -> bool:
    """`d.items()` / `d.values()` of a dict `d` (a name, or what a call returns: `metric.process(p, y).items()`)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method and not node.args


class GradEnabledFlow(GradientFlow):
    """The flows as if grad were enabled everywhere: what a value computed under `no_grad` would carry."""

    grad_everywhere = True


def no_grad_region(ctx, node: ast.AST) -> ast.AST | None:
    """The `torch.no_grad()` (a `with` item or a decorator) that `node` runs under."""
    for ancestor in ctx.scopes.ancestors(node):
        if isinstance(ancestor, (ast.With, ast.AsyncWith)):
            found = next((i.context_expr for i in ancestor.items if is_no_grad(ctx, i.context_expr)), None)
            if found is not None:
                return found
        elif isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return next((d for d in ancestor.decorator_list if is_no_grad(ctx, d)), None)
    return None


def under_no_grad(ctx, node: ast.AST) -> bool:
    """Does `node` run under `torch.no_grad()`/`inference_mode()` (a `with` block or a decorated function)?"""
    return ctx.analysis(NoGrad).under(node)


class NoGrad:
    """`under_no_grad` of a file: the statements passed on the way up remember the answer (a node deep
    in an `elif` chain costs the steps to a statement asked before, not to its function)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._from: dict[ast.AST, bool] = {}  # statement -> does a node in it run under no_grad

    def under(self, node: ast.AST) -> bool:
        path, found = [], False
        for ancestor in self.ctx.scopes.ancestors(node):
            if ancestor in self._from:
                found = self._from[ancestor]
                break
            path.append(ancestor)
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                if any(is_no_grad(self.ctx, item.context_expr) for item in ancestor.items):
                    found = True
                    break
            elif isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found = any(is_no_grad(self.ctx, decorator) for decorator in ancestor.decorator_list)
                break
        for passed in path:
            if isinstance(passed, ast.stmt):
                self._from[passed] = found
        return found


def is_no_grad(ctx, expr: ast.AST) -> bool:
    """Is `expr` `torch.no_grad()` / `inference_mode()` (a `with` item, a decorator, a region's cut)?"""
    return ctx.qualified_name(expr.func if isinstance(expr, ast.Call) else expr) in NO_GRAD


@dataclass(frozen=True)
class Holder:
    """The file a node of a flow is in: the linted file, or a caller's along a binding chain."""

    ctx: object
    binding: object  # what that file's own parameters are read under
    path: str  # the file as findings show it ("" for the linted file)

    def place(self, node: ast.AST) -> str:
        """Where the node is, as a message says it: "line 12" or "main.py:12"."""
        return f"{self.path}:{node.lineno}" if self.path else f"line {node.lineno}"


def holder(ctx, node: ast.AST, binding) -> Holder:
    """The file a node reached under `binding` is in (a cut the caller made, in the caller's file)."""
    site = binding
    while site is not None:
        for caller, _, _ in site.arguments.values():
            if caller is not ctx and caller.scopes.parent(node) is not None:
                return Holder(caller, site.outer, site.path)
        site = site.outer
    return Holder(ctx, binding, "")


def describe_cut(ctx, cut: ast.AST, binding, found: Holder | None = None) -> str:
    """A cut as messages name it: "`x.detach()` (line 12)", "(main.py:12)" for a cut a caller made (or a
    callee: `found`), and for a call of a project callee that cuts, where it does: "(line 12:
    `Loss.forward` cuts at loss.py:14)"."""
    found = found or holder(ctx, cut, binding)
    text = one_line(found.ctx.text(cut), 60, keep_end=True)
    inner = found.ctx.analysis(GradientFlow).callee_cuts.get(cut)
    place = f"{found.path}:{inner.cut.lineno}" if inner and not inner.path and found.path else inner and inner.place
    within = f": `{inner.callee}` cuts it with `{one_line(ast.unparse(inner.cut), 40, keep_end=True)}` at {place}" if inner else ""
    return f"`{text}` ({found.place(cut)}{within})"


def updated_in_place(statement: ast.AST) -> ast.AST | None:
    """The tensor a statement changes in place: `p -= ...` or `p.add_(...)`."""
    if isinstance(statement, ast.AugAssign):
        return statement.target
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr in VALUE_CHANGING:
            return func.value
    return None


def backward_loss(ctx, call: ast.Call) -> ast.AST | None:
    """The tensor a call runs backward from: `loss.backward()`, `scaler.scale(loss).backward()`,
    `accelerator.backward(loss)`, `self.manual_backward(loss)`, `torch.autograd.backward(loss)`."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr not in ("backward", "manual_backward"):
        return None  # the cheap test: most calls
    if ctx.qualified_name(func) == "torch.autograd.backward":
        return call_argument(call, 0, "tensors")
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr == "manual_backward" or (
        func.attr == "backward" and ctx.text(func.value).split(".")[-1] in ("accelerator", "fabric")
    ):
        return call_argument(call, 0, "loss")
    if func.attr == "backward" and call.args and made_by_runner(ctx, func.value):  # `self.launcher.backward(loss)`
        return call_argument(call, 0, "loss")
    if func.attr != "backward" or ctx.qualified_name(func) is not None:
        return None
    receiver = func.value
    scaled = isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)
    if scaled and receiver.func.attr == "scale" and len(receiver.args) == 1:
        return receiver.args[0]
    return receiver


MANAGED_STEPS = frozenset({"training_step", "compute_loss"})  # methods whose returned loss a library backpropagates


def managed_losses(ctx) -> list[tuple[ast.Return, ast.AST]]:
    """(the `return`, the loss) for each loss a training library backpropagates and steps for the project:
    what a Lightning-style `training_step` returns (the tensor, or the value at `"loss"` of a dict), what an
    override of HF `Trainer.compute_loss` returns (the first element of `(loss, outputs)`). A method that
    runs a backward itself (manual optimization, a trainer of its own) is not one."""
    found = []
    for function in ctx.index.of_type(ast.FunctionDef):
        if function.name not in MANAGED_STEPS or ctx.scopes.enclosing_class(function) is None:
            continue
        if any(backward_loss(ctx, c) is not None for c in ctx.index.within(function, ast.Call)):
            continue
        for node in ctx.index.within(function, ast.Return):
            if ctx.scopes.enclosing_function(node) is not function:
                continue
            for value in (node.value.body, node.value.orelse) if isinstance(node.value, ast.IfExp) else (node.value,):
                if isinstance(value, ast.Dict):
                    value = next((v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant) and k.value == "loss"), None)
                elif isinstance(value, ast.Tuple) and value.elts:
                    value = value.elts[0]
                if value is not None and not isinstance(value, ast.Constant):
                    found.append((node, value))
    return found


def is_cut_method(call: ast.Call, methods: frozenset[str] = CUT_METHODS) -> bool:
    """Is `call` a tensor method of `methods` that cuts (`t.item()`, `t.argmax(1)`)? `model.item(ids)` is not:
    `item`, `detach`, `numpy` and `tolist` take no positional argument, so it calls a layer kept under that name."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in methods:
        return False
    return func.attr in INDEX_CUTS or not call.args


def cut_input(ctx, cut: ast.AST) -> ast.AST | None:
    """What a cut is applied to: `kl` in `kl.item()`, `p` in `p.data`, `x` in `x.argmax(1)` and in
    `torch.tensor(x)`, `pred` in a project loss's `criterion(pred, y)`, `h` for `aux` of `m, aux = self.moe(h)`
    (an element a project callee cuts)."""
    if isinstance(getattr(cut, "ctx", None), ast.Store):
        statement = ctx.scopes.parent(ctx.scopes.parent(cut))
        return cut_input(ctx, statement.value) if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call) else None
    if isinstance(cut, ast.Attribute):
        return cut.value
    method = isinstance(cut, ast.Call) and isinstance(cut.func, ast.Attribute) and ctx.qualified_name(cut.func) is None
    if method and (not cut.args or cut.func.attr in CUT_METHODS):
        return cut.func.value
    if isinstance(cut, ast.Call) and cut.args:
        return cut.args[0]
    return None
