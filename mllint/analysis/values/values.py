"""Value kinds: what an expression holds (softmax output, log-probabilities, sigmoid output, a Linear
layer's raw logits) and what class an object was constructed from (`criterion = nn.CrossEntropyLoss()`),
following local names, `self.` attributes and calls through the assignments that can reach them. Calls of
the project's classes and functions (`out = model(x)` with `model = Net()`) are described here and
resolved across modules by `project_view.ProjectView`. A kind is known only when every reaching assignment
agrees: unknown stays unknown.

A parameter is unknown unless the value is asked under a `Binding`: one call site's arguments for the
parameters of one function (`callers.Binding`, the layer that finds call sites). Its argument is then
described in the caller's module and wrapped in `Passed`, which says where it came from. Which assignments
reach a use, and what a loop's turns give its target, is `reaching`'s (`ValueKinds` builds on it).
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import enum
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

from mllint.analysis.syntax.folding import fold
from mllint.analysis.values.runners import handed_back
from mllint.analysis.syntax.names import call_argument, is_self_attribute, partial_target, reference_key
from mllint.analysis.syntax.scopes import FUNCTION_NODES, SCOPE_NODES, parameter_defaults, parameters
from mllint.analysis.syntax.tree import module_statements, position, same_expression
from mllint.analysis.values.library_classifiers import CLASSIFIER_HEADS, is_library_model
from mllint.analysis.values.reaching import (
    Bindings, CONDITIONAL_NODES, Definition, MAX_DEPTH, ReachingDefinitions, _constant_index,
)


class Kind(enum.Enum):
    PROBABILITIES = "softmax output"
    LOG_PROBABILITIES = "log_softmax output"
    SIGMOID = "sigmoid output"
    LOG_SIGMOID = "logsigmoid output"
    LOGITS = "raw logits from a Linear layer"
    ONE_HOT = "one-hot rows"
    RELU = "ReLU output"  # non-negative, exactly zero where a unit is off: a row may be all zero
    SOFTPLUS = "softplus output"  # positive
    HARDSIGMOID = "hardsigmoid output"  # in [0, 1], exactly 0 or 1 past +-3


FUNCTION_KINDS = {
    "torch.softmax": Kind.PROBABILITIES,
    "torch.nn.functional.softmax": Kind.PROBABILITIES,
    "torch.special.softmax": Kind.PROBABILITIES,
    "torch.nn.functional.softmin": Kind.PROBABILITIES,
    "torch.log_softmax": Kind.LOG_PROBABILITIES,
    "torch.nn.functional.log_softmax": Kind.LOG_PROBABILITIES,
    "torch.special.log_softmax": Kind.LOG_PROBABILITIES,
    "torch.sigmoid": Kind.SIGMOID,
    "torch.nn.functional.sigmoid": Kind.SIGMOID,
    "torch.special.expit": Kind.SIGMOID,
    "torch.nn.functional.logsigmoid": Kind.LOG_SIGMOID,
    "torch.nn.functional.linear": Kind.LOGITS,
    "torch.nn.functional.one_hot": Kind.ONE_HOT,
    "torch.relu": Kind.RELU,
    "torch.nn.functional.relu": Kind.RELU,
    "torch.nn.functional.relu6": Kind.RELU,
    "torch.nn.functional.softplus": Kind.SOFTPLUS,
    "torch.nn.functional.hardsigmoid": Kind.HARDSIGMOID,
}
METHOD_KINDS = {"softmax": Kind.PROBABILITIES, "log_softmax": Kind.LOG_PROBABILITIES, "sigmoid": Kind.SIGMOID, "relu": Kind.RELU}
MODULE_KINDS = {
    "torch.nn.Softmax": Kind.PROBABILITIES,
    "torch.nn.Softmax2d": Kind.PROBABILITIES,  # over the channels of (N, C, H, W)
    "torch.nn.Softmin": Kind.PROBABILITIES,
    "torch.nn.LogSoftmax": Kind.LOG_PROBABILITIES,
    "torch.nn.Sigmoid": Kind.SIGMOID,
    "torch.nn.LogSigmoid": Kind.LOG_SIGMOID,
    "torch.nn.Linear": Kind.LOGITS,
    "torch.nn.LazyLinear": Kind.LOGITS,
    "torch.nn.ReLU": Kind.RELU,
    "torch.nn.ReLU6": Kind.RELU,
    "torch.nn.Softplus": Kind.SOFTPLUS,
    "torch.nn.Hardsigmoid": Kind.HARDSIGMOID,
    # PyTorch Geometric's graph convolutions: a linear map of the features, aggregated over the
    # neighbours (no activation): the last one's output is raw scores, as a Linear layer's.
    **{f"torch_geometric.nn.{conv}": Kind.LOGITS for conv in ("GCNConv", "SAGEConv", "GATConv", "GATv2Conv", "GraphConv", "ChebConv", "TransformerConv")},
}
# Activations whose input is not the logits a loss wants back: `softmin(x)` is `softmax(-x)`.
NEGATING_ACTIVATIONS = frozenset({"torch.nn.Softmin", "torch.nn.functional.softmin"})
EXP_FUNCTIONS = {"torch.exp", "torch.special.exp"}
WHERE_FUNCTIONS = {"torch.where"}
# The vocabulary of value-preserving operations: what a tensor's kind (softmax, sigmoid, log-softmax output,
# raw logits) survives. Each group keeps it for a reason of its own; adding a spelling is adding a word.
# - Rearranging: every value kept, only moved or relabelled (`reshape`, `permute`, `flip`, `roll`, `expand`,
#   a dtype or device move): `torch.sigmoid(z).squeeze(1)`, `probs.flip(-1)` are sigmoid, softmax output.
# - Selecting: some of the values picked (`gather`, `index_select`, `narrow`): `probs.gather(1, a)` (`Selected`).
# - Resampling: each value a convex combination of its neighbours (`F.interpolate` in any mode but bicubic,
#   average pooling, `nn.Upsample`): resized probabilities are probabilities, resized logits logits.
# - Order-keeping: max pooling keeps the order of values, not the values (`ORDER_KEEPING_*`, `ORDER_KINDS`).
# An affine map (`2 * p - 1`), a clamp (a rule decides what a clamp before a log means) or a bicubic resize
# (which overshoots [0, 1]) keeps none of them.
_REARRANGING = (
    "squeeze unsqueeze reshape flatten clone detach permute transpose unflatten flip fliplr flipud roll rot90 "
    "movedim moveaxis swapaxes swapdims"
)
VALUE_PRESERVING_METHODS = {
    *_REARRANGING.split(), "view", "contiguous", "float", "double", "half", "to", "cpu", "cuda", "resize",
    "resize_as", "expand", "expand_as", "repeat", "tile",
}
# Their function forms, the tensor first: `torch.unsqueeze(torch.sigmoid(z), 0)` is sigmoid output.
VALUE_PRESERVING_FUNCTIONS = frozenset(f"torch.{name}" for name in (*_REARRANGING.split(), "tile"))
# Tensor methods (and `torch.` functions) that pick some of a tensor's values: `probs.gather(1, a)` is softmax output.
SELECTING_METHODS = frozenset({"gather", "index_select", "masked_select", "take_along_dim", "take", "narrow", "select", "diagonal"})
SELECTING_FUNCTIONS = frozenset(f"torch.{name}" for name in SELECTING_METHODS)
RESAMPLING_FUNCTIONS = frozenset({
    *(f"torch.nn.functional.{name}" for name in ("interpolate", "upsample", "upsample_bilinear", "upsample_nearest")),
    *(f"torch.nn.functional.{pool}_pool{n}d" for pool in ("avg", "adaptive_avg") for n in (1, 2, 3)),
})  # fmt: skip
RESAMPLING_LAYERS = frozenset({
    "torch.nn.Upsample", "torch.nn.UpsamplingBilinear2d", "torch.nn.UpsamplingNearest2d",
    *(f"torch.nn.{pool}Pool{n}d" for pool in ("Avg", "AdaptiveAvg") for n in (1, 2, 3)),
})  # fmt: skip
OVERSHOOTING_MODES = frozenset({"bicubic"})  # an interpolation that is not a convex combination
SEQUENTIAL = "torch.nn.Sequential"
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Methods of an nn.Module or a tensor that return the object they are called on (`model.to(device)`).
RETURNS_RECEIVER = frozenset({
    "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_", "share_memory",
    "to_empty",
})  # fmt: skip
RECORD_CLASSES = frozenset({"builtins.dict", "types.SimpleNamespace", "argparse.Namespace"})  # built from keywords
# `torch.distributions` over classes and outcomes, built from logits or from probabilities (`probs=` is first):
# what their `.probs` and `.logits` hold. A Categorical normalises its logits (`.logits` are log-probabilities).
CATEGORICAL_DISTRIBUTIONS = frozenset({"Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough"})
BINARY_DISTRIBUTIONS = frozenset({"Bernoulli"})
DISTRIBUTION_FIELDS = ("probs", "logits")
BUILTINS = frozenset(dir(builtins))
# Expressions whose value is never a module: assigning one to a model's attribute replaces no layer.
STATE_EXPRESSIONS = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.JoinedStr, ast.ListComp, ast.DictComp, ast.GeneratorExp, ast.Dict)
# Layers whose output is their input, in values (`nn.Dropout` only rescales while training): an
# `nn.Sequential` ending in one outputs what the layer before it outputs.
PASSING_LAYERS = frozenset({
    "torch.nn.Identity", "torch.nn.Dropout", "torch.nn.Dropout1d", "torch.nn.Dropout2d", "torch.nn.Dropout3d",
    "torch.nn.AlphaDropout", "torch.nn.FeatureAlphaDropout", "torch.nn.Flatten", "torch.nn.Unflatten",
})  # fmt: skip
# Wrappers whose calls run the model they wrap (`DataParallel(model)(x)` is `model(x)`); `wrapper.module` is it.
MODEL_WRAPPERS = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel", "torch.compile"})
# Pooling keeps the order of values, not the values: pooled, a ReLU output is still non-negative and all
# zero where its units are off (`nn.MaxPool2d`, `F.adaptive_avg_pool2d`); a softmax's or sigmoid's is no
# longer what a loss takes as one.
POOLS = ("Max", "Avg", "AdaptiveAvg", "AdaptiveMax")
ORDER_KEEPING_LAYERS = frozenset(f"torch.nn.{pool}Pool{n}d" for pool in POOLS for n in (1, 2, 3))
ORDER_KEEPING_FUNCTIONS = frozenset(
    f"torch.nn.functional.{pool}_pool{n}d" for pool in ("max", "avg", "adaptive_avg", "adaptive_max") for n in (1, 2, 3)
)
ORDER_KINDS = frozenset({Kind.RELU})  # the kinds pooling keeps
PASSING_FUNCTIONS = frozenset(f"torch.nn.functional.{name}" for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"))
MODULE_CONTAINERS = {"torch.nn.ModuleDict", "torch.nn.ModuleList"}
# Methods that add layers to a container after it is built; those that add one at the end, by their count of arguments.
ADDITIONS = frozenset({"append", "add_module", "extend", "insert", "register_module"})
REMOVALS = frozenset({"pop", "remove", "clear", "reverse", "sort", "insert"})  # what may leave another item last
ADDED_LAST = {"append": 1, "add_module": 2, "register_module": 2}
# Linear combinations: products of two tensors, collections of tensors and their reductions.
MATMUL_FUNCTIONS = {"torch.matmul", "torch.mm", "torch.bmm", "torch.sparse.mm", "torch.spmm"}
MATMUL_METHODS = {"matmul", "mm", "bmm"}
STACK_FUNCTIONS = {"torch.stack", "torch.cat", "torch.concat"}
REDUCING_FUNCTIONS = {"torch.mean", "torch.sum"}


def _takes(function: ast.FunctionDef, positional: int, keywords: set) -> bool:
    """Does a method (its `self` aside) take `positional` arguments and these keywords?"""
    args = function.args
    named = [a.arg for a in (*args.posonlyargs, *args.args)][1:]
    required = len(named) - len(args.defaults)
    fits = positional <= len(named) or args.vararg is not None
    return fits and positional + len([k for k in keywords if k in named[positional:]]) >= required and (
        args.kwarg is not None or keywords <= {*named[positional:], *(a.arg for a in args.kwonlyargs)})


def canonical_class(name: str | None) -> str | None:
    """`torch.nn.modules.loss.CrossEntropyLoss` -> `torch.nn.CrossEntropyLoss`; `torch_geometric.nn.conv.GCNConv`
    -> `torch_geometric.nn.GCNConv`."""
    for inner, package in (("torch.nn.modules.", "torch.nn."), ("torch_geometric.nn.conv.", "torch_geometric.nn.")):
        if name and name.startswith(inner):
            return package + name.rsplit(".", 1)[-1]
    return name


# Value descriptors: what an expression evaluates to, as far as one module's own code tells. A descriptor
# that names a class or function of the project (`Ref`) is resolved by `project_view.ProjectView`, which
# follows it into the module that defines it; module summaries store descriptors, never resolved facts.
def kept_value(ctx, node: ast.AST) -> ast.AST:
    """What `node` holds the values of, through the wrappers that keep them (`VALUE_PRESERVING_METHODS`
    and their `torch.` function forms): `x.std(0)` for `x.std(0).detach()`, `z.norm(dim=1)` for
    `torch.clone(z.norm(dim=1)).to(device)`, `sd` for `sd[:, None]` (new axes only). The one answer for rules
    that recognise a value by its call."""
    while isinstance(node, ast.Call | ast.Subscript):
        func = node.func if isinstance(node, ast.Call) else None
        if func is None:
            if not _adds_axes(node.slice):
                break
            node = node.value
        elif isinstance(func, ast.Attribute) and func.attr in VALUE_PRESERVING_METHODS and ctx.qualified_name(func) is None:
            node = func.value
        elif node.args and ctx.qualified_name(func) in VALUE_PRESERVING_FUNCTIONS:
            node = node.args[0]
        else:
            break
    return node


def _adds_axes(index: ast.AST) -> bool:
    """`[:, None]`, `[None]`, `[..., None]`: an index that only adds axes, every value kept."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    whole = lambda i: isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None
    constant = lambda i: isinstance(i, ast.Constant) and (i.value is None or i.value is Ellipsis)
    return any(isinstance(i, ast.Constant) and i.value is None for i in items) and all(whole(i) or constant(i) for i in items)


@dataclass(frozen=True, eq=False)
class Made:
    """A tensor of a known kind made by `node` (a softmax call...); with `layer`, a module object whose
    output has that kind (`nn.Softmax(dim=1)`, an `nn.Sequential` ending in one), made by its constructor."""

    kind: Kind
    node: ast.Call
    layer: bool = False
    activation: ast.Call | None = None  # a layer's activation, when a container (`nn.Sequential`) holds it
    listed_apart: bool = False  # that activation built on its own and listed by name (`nn.Sequential(self.fc, self.softmax)`)
    rows: bool = False  # each row of the tensor (an item on its first dim) has the kind too (`over_rows`)
    # the parameters of its function whose defaults chose the layer's class (`getattr(nn, final)()`, `final="Softmax"`)
    # or that it is the last layer (`if final: layers.append(...)`)
    defaulted: tuple[str, ...] = ()
    normalised: bool = False  # log-probabilities a distribution normalised itself (a Categorical's `.logits`)


@dataclass(frozen=True, eq=False)
class Ref:
    """A class, function or module-level object named by its qualified name (`pkg.models.Net`)."""

    name: str


@dataclass(frozen=True, eq=False)
class Called:
    """What the call `node` of `callee` returns: an instance of a class, a function's return value, a
    model's `forward` output."""

    callee: "Value"
    node: ast.Call
    # For a model's call: decides the tests of its `forward` (True, False, or None when it does not), by the
    # constants the call passes or leaves to their defaults (`def forward(self, x, normalize=True)`).
    decide: Callable[[ast.AST], bool | None] | None = None


@dataclass(frozen=True, eq=False)
class Chained:
    """An `nn.Sequential` whose output is the output of `last`, its last layer (a module of the project:
    `nn.Sequential(backbone, Head(...))`): calling it is calling `last`."""

    last: "Value"


@dataclass(frozen=True, eq=False)
class Member:
    """A method of an object, as a call calls it (`model.scores` of `model.scores(x)`, `model = Net()`):
    called, what the method of the object's class returns."""

    value: "Value"
    name: str


@dataclass(frozen=True, eq=False)
class Own:
    """The instance `self` is in a method of the module-level class `cls` (qualified): what its own methods
    return is read through the class hierarchy (`self.predict_proba(x)`), whatever the class derives from."""

    cls: str


@dataclass(frozen=True, eq=False)
class Unwrapped:
    """`model.module`: the model a wrapper holds (values see through `DataParallel(model)`), so the model
    itself, unless it is an instance of a class of the project that sets its own `self.module`."""

    value: "Value"


@dataclass(frozen=True, eq=False)
class Exp:
    """`torch.exp(value)`: probabilities when `value` is log-probabilities."""

    value: "Value"


@dataclass(frozen=True, eq=False)
class Complement:
    """`1 - value`: the probability of the other outcome when `value` is probabilities (exactly 0 where
    `value` saturates at 1)."""

    value: "Value"


@dataclass(frozen=True, eq=False)
class Padded:
    """`value` set beside or into a block of exact zeros (`torch.cat([p, p.new_zeros(b, k)], 1)`,
    `torch.zeros(b, v).scatter_add(1, idx, p)`): probabilities there are 0 in the zero block, not by
    underflow."""

    value: "Value"


@dataclass(frozen=True, eq=False)
class OneOf:
    """One of several values depending on the path taken: known only when they all agree."""

    values: tuple


@dataclass(frozen=True, eq=False)
class Packed:
    """A tuple of values (`return logits, probs`), or a dict with `keys` (`return {"logits": z, "probs":
    p}`); None for an element that is not known."""

    values: tuple
    keys: tuple | None = None


@dataclass(frozen=True, eq=False)
class Item:
    """Element `index` of a tuple value (`out[1]`, `logits, probs = model(x)`) or a dict's (`out["probs"]`);
    with `index` None, an item of a loop over the value (`for row in probs`: of a tensor, one of its rows);
    with `...`, any item of a collection (`outs[name]`)."""

    value: "Value"
    index: int | str | None | type(...)


@dataclass(frozen=True, eq=False)
class Keyed:
    """A dict a comprehension that keeps its keys (`keyed_loop`) builds (`{name: head(h) for name, head in
    heads.items()}`): at each key of what it iterates, `entry` with the comprehension's items read at that
    key (`at_key`)."""

    entry: "Value"
    comprehension: ast.DictComp


@dataclass(frozen=True, eq=False)
class Selected:
    """Values picked from a tensor (`probs.gather(1, a)`, `probs[:, a]`, `probs.index_select(0, i)`): of its kind."""

    value: "Value"


@dataclass(frozen=True, eq=False)
class Mapped:
    """A value mapped linearly by an operand not known (`adj @ z`, `torch.sparse.mm(adj, z)`, `z + self.bias`):
    raw logits stay raw logits; of any other kind, nothing is known."""

    value: "Value"


@dataclass(frozen=True, eq=False)
class Mixed:
    """A linear combination of values (`0.5 * p + 0.5 * q`, `p @ one_hot`, the mean of stacked softmax
    outputs): probabilities when its parts are probabilities or one-hot rows, the weights unknown."""

    values: tuple
    stacked: bool = False  # a collection not yet reduced (`[p, q]`, `torch.stack([p, q])`)
    joined: bool = False  # a tensor stacked or concatenated from them (`torch.stack(ps, 1)`): each slice one of them


@dataclass(frozen=True, eq=False)
class Passed:
    """What one call site passes for a parameter, described in the caller's module (`module`)."""

    value: "Value"
    module: str
    passage: "Passage"


@dataclass(frozen=True)
class Passage:
    """A parameter's argument at one call site, as a message names it."""

    parameter: str
    argument: str  # the argument's text (or the default's) at the call
    path: str  # the caller's file as findings show it, relative to the linted file ("" for the linted file)
    line: int
    default: bool = False  # no caller passes it: its default
    annotated: bool = False  # no caller tells: the class its annotation names (`argument`)

    @property
    def place(self) -> str:
        """"main.py:12", or "line 12" in the linted file."""
        return f"{self.path}:{self.line}" if self.path else f"line {self.line}"


Value = Made | Ref | Called | Chained | Member | Own | Unwrapped | Exp | Complement | Padded | OneOf | Packed | Item | Selected | Mapped | Mixed | Passed
PENDING = object()  # a value still being described: it adds nothing to the values it is one of


@dataclass(frozen=True)
class Source:
    """Where a value that reaches the linted code was made, when that is in a class or function."""

    via: str  # `Net.forward`, `build_model`
    path: str  # the defining file as findings show it; "" for the linted file itself
    line: int


@dataclass(frozen=True)
class Origin:
    kind: Kind
    node: ast.Call  # in the linted file: the call that made the value, or the call that returned it
    source: Source | None = None
    exp_of_log: bool = False  # probabilities written `exp(log_softmax(x))`
    mixture: bool = False  # a linear combination of such values (`node` is one of them)
    passage: Passage | None = None  # the value reached the linted code as an argument of this call site
    complement: bool = False  # `1 - p` of such values, on at least one path (`where(t, p, 1 - p)`)
    padded: bool = False  # set beside or into explicit zeros (`Padded`), on at least one path
    normalised: bool = False  # a distribution's own log-probabilities (`Made.normalised`), no log_softmax written

    def where(self, argument: ast.AST) -> str:
        """What a message says about where the value comes from, after "is softmax output"."""
        mixed = "combined linearly, " if self.mixture else ""
        passed = "" if self.passage is None else f": {describe_passage(self.passage)}"
        if self.source is not None:
            place = f"{self.source.path}:{self.source.line}" if self.source.path else f"line {self.source.line}"
            if not self.source.via:
                return f"{passed} ({mixed}{place})"
            return f"{passed}{', and' if passed else ':'} `{self.source.via}` returns {self.kind.value} ({mixed}{place})"
        return passed or ("" if self.node is argument else f" ({mixed}line {self.node.lineno})")


def describe_passage(passage: Passage) -> str:
    """"`model` is `Net()` passed at main.py:12"."""
    place = passage.place
    if passage.default:
        return f"`{passage.parameter}` is its default `{passage.argument}` ({place})"
    if passage.annotated:
        return f"`{passage.parameter}` is annotated `{passage.argument}` ({place})"
    what = "" if passage.argument == passage.parameter else f" `{passage.argument}`"
    return f"`{passage.parameter}` is{what} passed at {place}"



class ValueKinds(ReachingDefinitions):
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.scopes = ctx.scopes
        self._definitions: dict[ast.AST, dict[str, Bindings]] | None = None
        self._comprehension_targets: set[int] = set()  # ids of the names comprehensions bind: read only inside them
        self._reached: dict[ast.Name, list[Definition]] = {}  # `_reaching`'s answers, by use
        self._declared: dict[ast.AST, set[str]] = {}  # function -> its `global` and `nonlocal` names
        self._before: dict[ast.Name, list[Definition] | None] = {}  # `_reaching_before`'s answers, by use
        self._literally_run: dict[ast.AST, bool] = {}  # `_runs_literally`'s answers, by `if`
        self._outside: dict[int, tuple[Bindings, Bindings]] = {}  # `_outside_comprehensions`'s answers
        self._conditionals: dict[ast.AST, ast.AST | None] = {}  # `_conditional`'s answers
        self._arms_of: dict[ast.If, list[list[ast.stmt]]] = {}  # `_arms`'s answers
        self._chain_tops: dict[ast.If, ast.If] = {}  # `_elif_chain_top`'s answers
        self._attribute_values: dict[ast.ClassDef, dict[str, list[ast.AST]]] = {}
        self._attribute_items: dict[ast.ClassDef, dict[str, dict]] = {}  # `_held_items`' fills, by class
        self._added: dict[tuple[ast.AST | None, str], list[ast.Call]] | None = None
        self._changed: dict[tuple[ast.AST | None, str], list[ast.AST]] | None = None
        self._filled_names: dict[tuple[ast.AST | None, str], list] | None = None
        self._describing: set[ast.AST] = set()  # assigned values being described, inside out
        self._loop_items: dict[ast.AST, LoopItem] = {}
        self._records: dict[str, ast.stmt] | None = None  # `_record_definitions`
        # `getattr` calls whose class parameters' defaults chose, layers those defaults made the last one
        self._defaulted: dict[ast.AST, tuple[str, ...]] = {}
        # While recording (`callers.per_call_site`): the functions whose parameters a value needed unbound.
        self.unbound: list[ast.AST] | None = None

    # What a value is.
    def value(self, expr: ast.AST, depth: int = 0, binding=None) -> Value | None:
        """The descriptor of what `expr` evaluates to, from this module's code alone (None: unknown);
        under `binding`, its function's parameters hold what that call site passes."""
        value = self._value(expr, depth, binding)
        return None if value is PENDING else value

    def _value(self, expr: ast.AST, depth: int, binding=None) -> Value | None:
        """As `value`, or PENDING when `expr` only repeats a value being described (around a loop)."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Call):
            return self._call_value(expr, depth, binding)
        if isinstance(expr, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in expr.elts):
            return Packed(tuple(self.value(e, depth + 1, binding) for e in expr.elts))
        if isinstance(expr, ast.BinOp):
            return self._combination(expr, depth, binding)
        if isinstance(expr, ast.DictComp) and keyed_loop(expr):  # `{k: head(h) for k, head in heads.items()}`
            entry = self._value(expr.value, depth, binding)  # (a sub-expression: no depth, as below)
            return entry if entry is None or entry is PENDING else Keyed(entry, expr)
        if isinstance(expr, (ast.List, ast.ListComp, ast.DictComp)):
            parts = expr.elts if isinstance(expr, ast.List) else [expr.value if isinstance(expr, ast.DictComp) else expr.elt]
            return _mixed([self.value(part, depth + 1, binding) for part in parts], stacked=True)
        if isinstance(expr, ast.Dict) and expr.keys and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in expr.keys):
            return Packed(tuple(self.value(v, depth + 1, binding) for v in expr.values), tuple(k.value for k in expr.keys))
        index = _constant_index(expr.slice) if isinstance(expr, ast.Subscript) else None
        if index is None and isinstance(expr, ast.Subscript) and not selects_values(expr):
            index = expr.slice.value if isinstance(expr.slice, ast.Constant) else self._loop_key(expr.slice) or ...  # `outs[name]`: any item
        if isinstance(index, str) and is_self_attribute(expr.value) and (held := self.held_items(expr.value, index)):
            return self._one_of(held, depth, binding)  # `self.outputs["probs"]`, stored by another method
        if index is not None or isinstance(expr, ast.Subscript):
            inner = self._value(expr.value, depth + 1, binding)  # `x[:, a]`, `x[mask]`: a tensor's values
            if index == "logits" and _library_output(inner):  # `model(**batch)["logits"]`
                return Made(Kind.LOGITS, inner.node)
            if inner is None and isinstance(expr.value, ast.Name | ast.Attribute) and self.ctx.qualified_name(expr.value):
                inner = Ref(self.ctx.qualified_name(expr.value))  # a table of another module (`MODELS[arch]`)
            return inner if inner is None or inner is PENDING else Item(inner, index) if index is not None else Selected(inner)
        if isinstance(expr, LoopItem):
            inner = self._value(expr.iterable, depth + 1, binding)
            return inner if inner is None or inner is PENDING else Item(inner, expr.key)
        # Sub-expressions that keep the value (a branch, a wrapper's `.module`, a distribution's field)
        # cost no depth: the budget counts assignments followed.
        if isinstance(expr, ast.IfExp) and (held := fold(expr.test, {})) is not None:  # `a if True else b`: the arm taken
            return self._value(expr.body if held else expr.orelse, depth, binding)
        if isinstance(expr, ast.IfExp):  # `model.module if wrapped else model`: known when both agree
            both = [v for v in (self._value(expr.body, depth, binding), self._value(expr.orelse, depth, binding)) if v is not PENDING]
            return None if not both or None in both else both[0] if len(both) == 1 else OneOf(tuple(both))
        if isinstance(expr, ast.Attribute) and expr.attr == "module" and not is_self_attribute(expr):
            inner = self._value(expr.value, depth, binding)  # `model.module` of a wrapped model
            return inner if inner is None or inner is PENDING else Unwrapped(inner)
        if isinstance(expr, ast.Attribute) and expr.attr in DISTRIBUTION_FIELDS and not is_self_attribute(expr):
            inner = self._value(expr.value, depth, binding)  # `dist.probs` of `dist = Categorical(logits=z)`
            if expr.attr == "logits" and _library_output(inner):  # `model(**batch).logits` of a transformers head
                return Made(Kind.LOGITS, inner.node)
            return inner if inner is None or inner is PENDING else Item(inner, expr.attr)
        if isinstance(expr, ast.Name):
            values = self._assigned_or_parameters(expr)
            if values and len(values) == 1 and isinstance(values[0], ast.Dict) and self._fills.get((self.scopes.enclosing_scope(expr), expr.id)):
                return self._filled(values[0], self._fills[(self.scopes.enclosing_scope(expr), expr.id)], depth, binding)
            if values and any(self._changed_record(v, expr) for v in values):
                return None  # `out = Output(scores=p)`, then `out.scores = z`: not what it was built with
        elif is_self_attribute(expr):
            values = self._self_attribute_values(expr)
            if values and all(isinstance(v, ast.Name) for v in values):
                depth -= 1  # `self.model = model`: the name itself, kept (no value is worked out in between)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name | ast.Attribute):
            if self._member_replaced(expr, expr):
                return None  # `model.head = nn.Linear(...)` before: not the layer its class keeps
            receiver = self._value(expr.value, depth + 1, binding)  # `model.head` handed on: the layer its class keeps
            return receiver if receiver is None or receiver is PENDING else Member(receiver, expr.attr)
        else:
            return None
        found = self._one_of(values or [], depth, binding)
        replaced = self._replaced_head(expr, found, depth, binding) if isinstance(found, Called) else None
        return found if replaced is None else replaced

    def _loop_key(self, name: ast.AST) -> ast.AST | None:
        """The `keyed_loop` whose key variable `name` is, read in its body or value (`k` of `heads[k]` in
        `{k: heads[k](h) for k in heads}`, in `for k in heads: heads[k](h)`): what is read at it, at its
        turn's key."""
        loop = self._keyed_around(name)
        return loop if loop is not None and key_variable(loop) == name.id else None

    def _keyed_around(self, name: ast.AST) -> ast.AST | None:
        """The `keyed_loop` whose value or body `name` is read in, when its target binds `name`; None when
        a nearer comprehension binds it, or none does."""
        node = name
        while isinstance(name, ast.Name) and (parent := self.scopes.parent(node)) is not None and not isinstance(parent, SCOPE_NODES):
            comprehension = isinstance(parent, COMPREHENSIONS) and node is not parent.generators[0].iter
            if comprehension and any(_binds(g.target, name.id) for g in parent.generators):
                return parent if isinstance(parent, ast.DictComp) and node is parent.value and keyed_loop(parent) else None
            if isinstance(parent, ast.For) and any(node is s for s in parent.body) and _binds(parent.target, name.id):
                return parent if keyed_loop(parent) else None
            node = parent
        return None

    def _keyed_layer(self, layer: ast.AST | None, depth: int, binding=None) -> Value | None:
        """A layer a `keyed_loop` reads at its turn's key (`acts[k]`, `act` of `{k: nn.Sequential(..., act) for
        k, act in acts.items()}`), as a value; None for any other."""
        name = layer.slice if isinstance(layer, ast.Subscript) else layer
        if self._keyed_around(name) is None:
            return None
        value = self._value(layer, depth, binding)
        return value if isinstance(value, Item) and isinstance(value.index, ast.AST) else None

    def _one_of(self, values: list, depth: int, binding=None) -> Value | None:
        """What a name holds when it may hold any of `values`. Around a loop, assignments reach each other
        (`out = out.view(...)` then `out = out.contiguous()`): an assignment met again while it is being
        described adds nothing new (the least fixed point), so it is left out."""
        described = []
        for value in values:
            if isinstance(value, Definition):  # a parameter: what the binding's call site passes
                described.append(self._passed_value(value, depth, binding))
                continue
            if value in self._describing:
                continue
            self._describing.add(value)
            try:
                described.append(self._value(value, depth + 1, binding))
            finally:
                self._describing.discard(value)
        described = [d for d in described if d is not PENDING]
        if not described:
            return PENDING if values else None
        if any(d is None for d in described):
            return None
        return described[0] if len(described) == 1 else OneOf(tuple(described))

    def _assigned_or_parameters(self, use: ast.Name) -> list | None:
        """The expressions that may have been assigned to `use`, and the parameter definitions that may
        give it its value; None when some other way of reaching it is unknown."""
        found: list = []
        for definition in self._reaching(use) or [None]:
            if definition is not None and definition.value is not None:
                found.append(definition.value)
            elif definition is not None and is_parameter(definition):
                found.append(definition)
            elif definition is not None and (item := self._loop_item(definition)) is not None:
                found.append(item)
            else:
                return None
        return found

    def _loop_item(self, definition: Definition) -> "LoopItem | None":
        """What a loop binds to its variable: an item of what it iterates (`row` in `for row in probs`, in
        `for row, t in zip(probs, targets)` or `for i, row in enumerate(probs)`), one per loop."""
        target, parent = definition.node, self.scopes.parent(definition.node)
        loop, iterable = parent, getattr(parent, "iter", None)
        if isinstance(parent, ast.Tuple):  # an item of `zip(a, b)`, `enumerate(a)` or `a.items()`
            loop, iterable = self.scopes.parent(parent), None
            call = getattr(loop, "iter", None)
            name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else None
            items = isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "items" and not call.args
            if items and len(parent.elts) == 2 and parent.elts[1] is target:
                iterable, target = call.func.value, parent
            position = parent.elts.index(target) - (name == "enumerate") if target is not parent else -1
            zipped = name in ("zip", "enumerate") and self.ctx.qualified_name(call.func) is None and not call.keywords
            if zipped and loop.target is parent and 0 <= position < len(call.args) and len(parent.elts) == len(call.args) + (name == "enumerate"):
                iterable, target = call.args[position], parent
        if not isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) or loop.target is not target or iterable is None:
            return None
        if definition.node not in self._loop_items:
            keyed = self.scopes.parent(loop) if isinstance(loop, ast.comprehension) else loop
            key = keyed if target is loop.target and keyed_loop(keyed) == "items" else None  # `v` of `d.items()`, per key
            self._loop_items[definition.node] = ast.copy_location(LoopItem(iterable, key), iterable)
        return self._loop_items[definition.node]

    def _passed_value(self, definition: Definition, depth: int, binding) -> Value | None:
        passed = self.argument(definition, binding)
        if passed is None:
            return None
        caller, argument, passage = passed
        outer = binding.of(definition.node).outer if not passage.default else None
        value = caller.analysis(ValueKinds).value(argument, depth + 1, outer)
        return None if value is None else Passed(value, caller.module.name if caller.module else "", passage)

    def argument(self, definition: Definition, binding):
        """(the caller's context, the argument, its `Passage`) a binding gives a parameter; None when no
        binding of its function is given (recorded while recording)."""
        function = definition.node
        binding = binding.of(function) if binding is not None else None  # its own, or the `__init__` one it holds
        if binding is None:
            if self.unbound is not None and function not in self.unbound:
                self.unbound.append(function)
            return None
        return binding.argument(definition.name)

    def _combination(self, expr: ast.BinOp, depth: int, binding=None) -> Value | None:
        """`p + q`, `w * p`, `p / n`, `p @ one_hot`: linear in values of a kind; a weight is unknown. Its operands
        cost no depth (the budget counts assignments followed)."""
        for chosen, other, weight in _blends(expr):  # `p * t + (1 - p) * (1 - t)`: as `torch.where(t, p, 1 - p)`
            if not self._number_like(weight) and self.value(weight, depth, binding) is None:  # targets, not a gate
                return self._one_of([chosen, other], depth, binding)
        left, right = self.value(expr.left, depth, binding), self.value(expr.right, depth, binding)
        if isinstance(expr.op, ast.Sub) and _is_one(expr.left):
            return None if right is None else Complement(right)  # `1 - p`
        if isinstance(expr.op, (ast.Add, ast.MatMult)):
            return _mixed([left, right]) or _mapped(left, right)
        if isinstance(expr.op, ast.Mult) and (left is None) != (right is None):
            return _weighted(left or right)
        if isinstance(expr.op, ast.Mult) and _gate(left) != _gate(right):  # `p_gen * vocab` of `p_gen = sigmoid(...)`
            return _mixed([right if _gate(left) else left])
        return _mixed([left]) if isinstance(expr.op, ast.Div) and right is None else None

    def _number_like(self, weight: ast.AST) -> bool:
        """Is `weight` a number, or a name that may hold one (`alpha = 0.25`, a parameter defaulting to one)?"""
        if _number(weight):
            return True
        values = self._assigned_or_parameters(weight) if isinstance(weight, ast.Name) else None
        defaults = lambda d: parameter_defaults(d.node).get(d.name) if isinstance(d, Definition) else d
        return any(_number(defaults(value)) for value in values or ())

    def _contracted(self, spec: str, operands: list[ast.AST], depth: int, binding=None) -> Value | None:
        """`torch.einsum("k,kbc->bc", w, probs)`: a stack of values (`torch.stack(probs)`) contracted over its
        first axis with a vector of weights (whatever they are) is their linear combination; any other
        contraction, not known."""
        inputs, arrow, output = spec.replace(" ", "").partition("->")
        subscripts = inputs.split(",")
        if not arrow or len(subscripts) != 2 or len(operands) != 2:
            return None
        for stack, axes, weights in ((operands[1], subscripts[1], subscripts[0]), (operands[0], subscripts[0], subscripts[1])):
            value = self.value(stack, depth + 1, binding)
            if isinstance(value, Mixed) and value.stacked and axes[:1] == weights and weights.isalpha() and weights not in output:
                return Mixed(value.values)
        return None

    def _reduced(self, collection: ast.AST, depth: int, binding=None) -> Value | None:
        """The mean or sum over a collection of values (`torch.stack(probs).mean(0)`, `sum(probs)`)."""
        inner = self._collection(collection, depth + 1, binding)
        return Mixed(inner.values) if isinstance(inner, Mixed) and inner.stacked else None

    def _averaged(self, call: ast.Call, tensor: ast.AST, dim_position: int, depth: int, binding=None) -> Value | None:
        """`probs.mean(dim=1)`, `torch.mean(probs, 1)`: a tensor's mean over a dim written out, other than the
        dim its softmax normalises (the clips, crops or heads a forward averages), combines values of its kind;
        a mean over every dim (a number) or over the softmax's own dim, nothing known."""
        dim = call_argument(call, dim_position, "dim")
        inner = self._value(tensor, depth + 1, binding) if dim is not None else None
        if inner is None or inner is PENDING:
            return inner
        if isinstance(inner, Made) and not inner.layer and isinstance(inner.node, ast.Call):
            method = self.ctx.qualified_name(inner.node.func) is None  # `z.softmax(1)`, not `F.softmax(z, 1)`
            normalised = call_argument(inner.node, 0 if method else 1, "dim")
            if normalised is not None and _constant_index(normalised) is not None and _constant_index(normalised) == _constant_index(dim):
                return None
        return Mixed((inner,))

    def _collection(self, collection: ast.AST, depth: int, binding=None) -> Value | None:
        """What a collection holds: a tuple or list written out, or a name bound to a list and appended to
        (`dists = []`, then `dists.append(F.softmax(z, 1))` in a loop): its items, stacked."""
        if isinstance(collection, ast.Tuple):
            return _mixed([self.value(element, depth + 1, binding) for element in collection.elts], stacked=True)
        items = self.listed_items(collection) if isinstance(collection, ast.Name) else None
        items = self.held_items(collection, ...) or None if is_self_attribute(collection) else items  # `self.preds`
        if items is not None and not any(isinstance(item, ast.Starred) for item in items):
            return _mixed([self.value(item, depth + 1, binding) for item in items], stacked=True)
        return self.value(collection, depth, binding)

    def _distribution(self, call: ast.Call, cls: str, depth: int, binding=None) -> Value | None:
        """A distribution as its fields: `Categorical(logits=z)` holds softmax output in `.probs` and
        log-probabilities in `.logits`; `Bernoulli(logits=z)` sigmoid output in `.probs` and `z` in `.logits`;
        built from `probs=p`, `.probs` is `p`."""
        categorical = cls in CATEGORICAL_DISTRIBUTIONS
        if not categorical and cls not in BINARY_DISTRIBUTIONS:
            return None
        logits, probs = call_argument(call, 1, "logits"), call_argument(call, 0, "probs")
        if logits is not None:
            given = None if categorical else self.value(logits, depth + 1, binding)
            made = Made(Kind.PROBABILITIES if categorical else Kind.SIGMOID, call)
            return Packed((made, Made(Kind.LOG_PROBABILITIES, call, normalised=True) if categorical else given), DISTRIBUTION_FIELDS)
        if probs is not None:
            kept = self.value(probs, depth + 1, binding)
            return Packed((kept, Made(Kind.LOG_PROBABILITIES, call, normalised=True) if categorical else None), DISTRIBUTION_FIELDS)
        return None

    def _call_value(self, call: ast.Call, depth: int, binding=None) -> Value | None:
        func = call.func
        if _calls_self(func):
            return self._own_forward(call)
        name = self.ctx.qualified_name(func)
        if name in FUNCTION_KINDS:
            return Made(FUNCTION_KINDS[name], call, rows=over_rows(FUNCTION_KINDS[name], call, 1))
        if canonical_class(name) in MODEL_WRAPPERS and call.args:
            return self._value(call.args[0], depth, binding)
        handed = handed_back(call, self._makers)
        if handed is not None:  # `model, opt = accelerator.prepare(model, opt)`: what it is given, in order
            values = tuple(self.value(a, depth + 1, binding) for a in handed)
            return values[0] if len(values) == 1 else Packed(values)
        if (name or "").startswith("torch.distributions."):
            return self._distribution(call, name.rsplit(".", 1)[-1], depth, binding)
        first = call.args[0] if call.args else None
        if name in MATMUL_FUNCTIONS and len(call.args) == 2:
            operands = [self.value(argument, depth + 1, binding) for argument in call.args]
            return _mixed(operands) or _mapped(*operands)
        if name == "torch.einsum" and len(call.args) >= 3 and isinstance(first, ast.Constant) and isinstance(first.value, str):
            return self._contracted(first.value, call.args[1:], depth, binding)
        if name is None and _matmul_method(call):  # `p.bmm(one_hot)`: the method form
            operands = [self.value(operand, depth + 1, binding) for operand in (func.value, call.args[0])]
            return _mixed(operands) or _mapped(*operands)
        padded = self._padded(call, name, depth, binding)
        if padded is not None:
            return padded
        if name in STACK_FUNCTIONS and first is not None:  # `(p, q)`, `[p, q]`, a name holding a list, appended to
            listed = self._collection(first, depth + 1, binding)
            return Mixed(listed.values, stacked=True, joined=True) if isinstance(listed, Mixed) and listed.stacked else None
        builtin_sum = isinstance(func, ast.Name) and func.id == "sum" and name is None and len(call.args) == 1
        if (name in REDUCING_FUNCTIONS or builtin_sum) and first is not None:
            reduced = self._reduced(first, depth, binding)
            return reduced if reduced is not None or name != "torch.mean" else self._averaged(call, first, 1, depth, binding)
        if name is None and isinstance(func, ast.Attribute) and func.attr in ("mean", "sum"):
            reduced = self._reduced(func.value, depth, binding)
            return reduced if reduced is not None or func.attr != "mean" else self._averaged(call, func.value, 0, depth, binding)
        if name in WHERE_FUNCTIONS and len(call.args) == 3 and not call.keywords:  # either of the two values
            return self._one_of(call.args[1:], depth, binding)
        if name in EXP_FUNCTIONS and len(call.args) == 1 and not call.keywords:
            inner = self._value(call.args[0], depth + 1, binding)
            return inner if inner is None or inner is PENDING else Exp(inner)
        if name is None and isinstance(func, ast.Attribute):
            if func.attr in METHOD_KINDS and tensor_method(self.ctx, func):
                kind = METHOD_KINDS[func.attr]
                # `x.softmax(dim)`: a tensor method needs its dim; `x.sigmoid()`, `x.relu()` take none.
                if kind in (Kind.SIGMOID, Kind.RELU) or call.args or any(k.arg == "dim" for k in call.keywords):
                    return Made(kind, call, rows=over_rows(kind, call, 0))
                return None
            if func.attr == "exp" and not call.args and not call.keywords:
                inner = self._value(func.value, depth + 1, binding)
                return inner if inner is None or inner is PENDING else Exp(inner)
            if func.attr in VALUE_PRESERVING_METHODS:  # also `Net().to(device)`: the same module
                return self._value(func.value, depth + 1, binding)
            if func.attr in SELECTING_METHODS:
                inner = self._value(func.value, depth + 1, binding)
                return inner if inner is None or inner is PENDING else Selected(inner)
        if name in VALUE_PRESERVING_FUNCTIONS and first is not None:
            return self._value(first, depth + 1, binding)
        if name in SELECTING_FUNCTIONS and first is not None:  # `torch.gather(probs, 1, a)`
            inner = self._value(first, depth + 1, binding)
            return inner if inner is None or inner is PENDING else Selected(inner)
        if canonical_class(name) in MODULE_CONTAINERS and len(call.args) == 1 and not call.keywords:
            return self._value(call.args[0], depth, binding)  # `nn.ModuleDict({...})`: what it holds
        if first is not None and (name in PASSING_FUNCTIONS or (len(call.args) == 1 and self._passing_layer(func, name, binding))):
            return self._value(first, depth + 1, binding)  # `self.dropout(logits)`, `F.dropout(probs, 0.1)`: its input's values
        if first is not None and (name in RESAMPLING_FUNCTIONS or (len(call.args) == 1 and self._passing_layer(func, name, binding, RESAMPLING_LAYERS))):
            mode = call_argument(call, 3, "mode") if name in RESAMPLING_FUNCTIONS else None
            inner = self._value(first, depth + 1, binding) if not _constant_in(mode, OVERSHOOTING_MODES) else None
            return inner  # `F.interpolate(probs, size)`, `self.up(probs)`: probabilities
        if first is not None and (name in ORDER_KEEPING_FUNCTIONS or (len(call.args) == 1 and self._passing_layer(func, name, binding, ORDER_KEEPING_LAYERS))):
            inner = self._value(first, depth + 1, binding)  # `self.pool(F.relu(h))`: still a ReLU output's zeros
            return inner if inner is PENDING or (isinstance(inner, Made) and inner.kind in ORDER_KINDS) else None
        fields = self.record_fields(call, name)
        if fields is not None:  # `SequenceClassifierOutput(logits=scores)`, `dict(logits=z)`: its fields' values by name
            return Packed(tuple(self.value(v, depth + 1, binding) for v in fields.values()), tuple(fields))
        if name is None and isinstance(func, ast.Call):
            name = self._named_class(func, binding)
        if name is None and isinstance(func, ast.Subscript):  # `ACTS["softmax"]()` of a table of classes
            name = self._table_class(func, binding)
        if name is not None:
            activation = self._activation_layer(call, binding)
            if activation is not None:
                kind = MODULE_KINDS[self._class_name(activation, binding)]
                inner = None if activation is call else activation
                defaulted = (*self._defaulted.get(activation.func, ()), *self._defaulted.get(activation, ()))
                apart = inner is not None and not isinstance(self.ctx.scopes.parent(inner), ast.Call | ast.List | ast.Tuple | ast.Starred)
                return Made(kind, call, layer=True, activation=inner, listed_apart=apart, rows=over_rows(kind, activation, 0), defaulted=defaulted)
            keyed = self._keyed_layer(self._last_layer(call), depth, binding) if canonical_class(name) == SEQUENTIAL else None
            if keyed is not None:  # `nn.Sequential(nn.Linear(h, n), acts[k])` built per key `k`: the key's own layer
                return Chained(keyed)
            last = self._output_layer(call, binding) if canonical_class(name) == SEQUENTIAL else None
            if last is not None:  # `nn.Sequential(backbone, Head(...))`: the head's output
                inner = self._value(last, depth + 1, binding)
                return inner if inner is None or inner is PENDING else Chained(inner)
            return None if canonical_class(name).startswith("torch.") and not self._linting_torch() else Called(Ref(name), call)
        if isinstance(func, ast.Attribute) and name is None and not is_self_attribute(func):
            # `model.scores(x)`, `self.net.embed(x)`: a method of the object, found when the project knows its class
            if self._member_replaced(func, call):
                return None  # `model.head = nn.Linear(...)`, then `model.head(h)`
            receiver = self._value(func.value, depth + 1, binding)
            return receiver if receiver is None or receiver is PENDING else Called(Member(receiver, func.attr), call)
        if is_self_attribute(func) and self._own_method(func):
            return Called(Member(self._own(call), func.attr), call)  # `self.predict_proba(x)`: what it returns
        callee = self._value(func, depth + 1, binding)
        if callee is None and isinstance(func, ast.Name):
            callee = self._unbound_model(func, call)
        if isinstance(callee, Called) and isinstance(func, ast.Name) and self.changed_before(func, call):
            return self._added_last(func, call)  # `model = build(); model.add_module("act", nn.Sigmoid())`
        return callee if callee is None or callee is PENDING else Called(callee, call)

    def record_fields(self, call: ast.Call, name: str | None) -> dict[str, ast.AST] | None:
        """Field name -> value of a call that builds a record: keywords only, of `dict`, `SimpleNamespace` or a
        transformers output class (`...Output`); positional arguments too, in field order, of a dataclass or
        `NamedTuple` class of the file. None for any other call, or a `**` splat."""
        if any(k.arg is None for k in call.keywords):
            return None
        keywords = {k.arg: k.value for k in call.keywords}
        builtin = isinstance(call.func, ast.Name) and call.func.id == "dict" and "dict" not in self.scopes.bound_anywhere()
        if builtin or name in RECORD_CLASSES or (name or "").startswith("transformers.") and name.endswith("Output"):
            return keywords if keywords and not call.args else None
        return self._file_record(call)

    def _changed_record(self, value: ast.AST, name: ast.Name) -> bool:
        """Is `value`, bound to `name`, a record (`record_fields`) whose fields its scope stores to?"""
        key = (self.scopes.enclosing_scope(name), name.id)
        record = isinstance(value, ast.Call) and self.record_fields(value, self.ctx.qualified_name(value.func)) is not None
        return record and bool(self._fills.get(key) or self._changes.get(key))

    def _file_record(self, call: ast.Call) -> dict[str, ast.AST] | None:
        """Field name -> value of a call of a record class of the file its function names: a top-level
        dataclass or `NamedTuple` class (`built_record`), or `namedtuple("P", ["probs", "h"])` bound to a
        module-level name."""
        func = call.func
        statement = self._record_definitions().get(func.id) if isinstance(func, ast.Name) else None
        if isinstance(statement, ast.ClassDef):
            return built_record(self.ctx, statement, call)
        if statement is None:
            return None
        fields = statement.value.args[1]
        listed = fields.value.replace(",", " ").split() if isinstance(fields, ast.Constant) and isinstance(fields.value, str) else [
            e.value for e in getattr(fields, "elts", ()) if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]  # fmt: skip
        return record_arguments(listed, call) if listed and len(listed) == len(getattr(fields, "elts", listed)) else None

    def _record_definitions(self) -> dict[str, ast.stmt]:
        """Name -> the first module-level statement that may define it as a record class: a class, or a
        `namedtuple("P", [...])` bound to the name alone. Indexed once per file: `_file_record` is asked per call."""
        if self._records is None:
            self._records = {}
            for statement in module_statements(self.ctx.tree):
                if isinstance(statement, ast.ClassDef):
                    self._records.setdefault(statement.name, statement)
                made = statement.value if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
                named = statement.targets[0].id if made is not None and isinstance(statement.targets[0], ast.Name) else None
                if named and isinstance(made, ast.Call) and self.ctx.qualified_name(made.func) == "collections.namedtuple" and len(made.args) == 2:
                    self._records.setdefault(named, statement)
        return self._records

    def _makers(self, receiver: ast.expr) -> list[str | None]:
        """The qualified classes of what was assigned to a name or a `self.` attribute (None for what is no call)."""
        made = self.assigned_values(receiver) or ()
        return [self.ctx.qualified_name(m.func) if isinstance(m, ast.Call) else None for m in made]

    def _unbound_model(self, func: ast.Name, call: ast.Call) -> Value | None:
        """An instance of the file's one module class whose `forward` takes the call's arguments, for a name
        nothing in the file binds (a pasted snippet's `model(x, adj)`); None otherwise."""
        if func.id in self.scopes.bound_anywhere() or self.ctx.qualified_name(func) is not None or self.ctx.module is None:
            return None
        if func.id in BUILTINS or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        fitting = [c for c in self._module_classes() if _takes(c[1], len(call.args), {k.arg for k in call.keywords})]
        if len(fitting) != 1:
            return None
        return Called(Ref(f"{self.ctx.module.name}.{fitting[0][0].name}"), call)

    def _module_classes(self) -> list[tuple[ast.ClassDef, ast.FunctionDef]]:
        """The file's top-level `nn.Module` subclasses that define `forward`, with it."""
        found = []
        for statement in module_statements(self.ctx.tree):
            if isinstance(statement, ast.ClassDef) and any(self.ctx.qualified_name(b) == "torch.nn.Module" for b in statement.bases):
                forward = next((f for f in statement.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
                if forward is not None:
                    found.append((statement, forward))
        return found

    def _padded(self, call: ast.Call, name: str | None, depth: int, binding=None) -> Value | None:
        """`torch.cat([p, p.new_zeros(b, k)], 1)`: one known part beside explicit zeros; `zeros.scatter_add(1,
        idx, p)`: a known value added into explicit zeros, or into another known value (a mixture)."""
        func, parts = call.func, None
        if name in ("torch.cat", "torch.concat") and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
            parts = call.args[0].elts
        elif name is None and isinstance(func, ast.Attribute) and func.attr in ("scatter_add", "scatter_add_") and len(call.args) == 3:
            parts = [func.value, call.args[2]]
        if parts is None:
            return None
        known = [p for p in parts if not self._zeros(p)]
        if len(known) == len(parts) and len(parts) == 2 and isinstance(func, ast.Attribute) and func.attr.startswith("scatter"):
            return _mixed([self._value(p, depth + 1, binding) for p in parts])  # into a padded mixture: a mixture
        if len(known) != 1 or len(known) == len(parts):
            return None
        inner = self._value(known[0], depth + 1, binding)
        return inner if inner is None or inner is PENDING else Padded(inner)

    def _zeros(self, expr: ast.AST) -> bool:
        """Is `expr` made of exact zeros: `torch.zeros(...)`, `torch.zeros_like(p)`, `p.new_zeros(...)`?"""
        if not isinstance(expr, ast.Call):
            return False
        name = self.ctx.qualified_name(expr.func)
        return name in ("torch.zeros", "torch.zeros_like") or (name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr == "new_zeros")

    def _passing_layer(self, func: ast.AST, name: str | None, binding=None, layers=PASSING_LAYERS) -> bool:
        """Is the module `func` calls one of `layers`, by default those that pass their input on (`self.drop =
        nn.Dropout(p)`, `nn.Identity()`)?"""
        if name is not None or not isinstance(func, ast.Name | ast.Attribute):
            return False
        found = self.construction(func, 0, binding)
        return found is not None and canonical_class(found[0].qualified_name(found[1].func)) in layers

    def changed_before(self, module: ast.Name, call: ast.Call) -> bool:
        """Is the module `module` names changed in its scope before `call`: a layer added to it or to a part
        of it (`model.add_module(...)`, `model.classifier.append(...)`), a part replaced (`model.fc = ...`)?
        What it returns is then not what its class or builder says."""
        changes = self._changes.get((self.scopes.enclosing_scope(call), module.id), ())
        return bool(changes) and position(changes[0]) < position(call)

    def _member_replaced(self, member: ast.Attribute, use: ast.AST) -> bool:
        """Is the attribute `member` reads of a name (`model.head`) changed in its scope before `use`: assigned
        (`model.head = nn.Linear(16, 3)`, or a part of it), or layers added to it or to the object?"""
        if not isinstance(member.value, ast.Name):
            return False
        name, key = member.value.id, f"{member.value.id}.{member.attr}"
        for change in self._changes.get((self.scopes.enclosing_scope(use), name), ()):
            if position(change) >= position(use):
                break
            targets = change.targets if isinstance(change, ast.Assign) else [change.func.value]
            if any(k == name or k == key or k.startswith(f"{key}.") for k in (reference_key(t) or name for t in targets)):
                return True
        return False

    def _replaced_head(self, use: ast.Name | ast.Attribute, model: "Called", depth: int, binding) -> Value | None:
        """A library classifier (`torchvision.models.resnet18()`, `timm.create_model(...)`) whose last layer
        the code replaces (`replacing_head`) with a layer (`model.fc = nn.Sequential(nn.Linear(512, 3),
        nn.Sigmoid())`) or with a module a function or class of the project builds (`model.classifier =
        make_head(n)`): a chain ending in that layer. None for anything else."""
        if not (isinstance(model.callee, Ref) and is_library_model(model.callee.name)):
            return None
        head = self.replacing_head(use)
        layer = self._value(head, depth + 1, binding) if head is not None else None
        built = isinstance(layer, Called) and isinstance(layer.callee, Ref)
        return Chained(layer) if (isinstance(layer, Made) and layer.layer) or built else None

    def replacing_head(self, use: ast.Name | ast.Attribute) -> ast.AST | None:
        """What the code assigns to the classifier head of the model `use` reads (`model.fc = ...`): for a
        name, its last change before `use` on its path; for a `self.` attribute, its one change in the
        class. None when that is not one such assignment."""
        if isinstance(use, ast.Name):
            changes = [c for c in self._changes.get((self.scopes.enclosing_scope(use), use.id), ()) if position(c) < position(use)]
            heads = changes[-1:] if changes and self.same_path(changes[-1], use) else []
        else:
            cls = self.scopes.enclosing_class(use)
            assigned = self.ctx.index.within(cls, ast.Assign) if cls is not None else []
            heads = [a for a in assigned if any((reference_key(t) or "").startswith(f"self.{use.attr}.") for t in a.targets)]
        keys = [[reference_key(t) for t in h.targets] for h in heads if isinstance(h, ast.Assign)]
        if len(heads) != 1 or keys[:1] not in ([[f"{reference_key(use)}.{h}"]] for h in CLASSIFIER_HEADS):
            return None
        return heads[0].value

    def _added_last(self, module: ast.Name, call: ast.Call) -> Value | None:
        """The output of a module whose last change before `call`, on every path, adds an activation layer
        to it (`model.append(nn.Sigmoid())`): that activation's kind; None for any other change."""
        changes = self._changes[(self.scopes.enclosing_scope(call), module.id)]
        last = changes[bisect_left([position(c) for c in changes], position(call)) - 1]
        added = isinstance(last, ast.Call) and reference_key(last.func.value) == module.id and last.func.attr in ADDED_LAST
        if not added or len(last.args) != ADDED_LAST[last.func.attr] or not self.same_path(last, call):
            return None
        activation = self._activation_layer(last.args[-1]) if isinstance(last.args[-1], ast.Call) else None
        if activation is None:
            return None
        kind = MODULE_KINDS[canonical_class(self.ctx.qualified_name(activation.func))]
        return Made(kind, call, activation=activation, rows=over_rows(kind, activation, 0))

    @property
    def _fills(self) -> dict[tuple[ast.AST | None, str], list[tuple[str, ast.AST] | ast.Call | None]]:
        """What a function stores into a name's items (`out["probs"] = p`: the key and the value) or merges
        into it (`out.update(...)`), by scope and the name; None for a store at a computed key."""
        if self._filled_names is None:
            self._filled_names = {}
            for node in self.ctx.index.of_type(ast.Assign, ast.AugAssign):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    items = [target] if isinstance(target, ast.Subscript) else [t for t in ast.walk(target) if isinstance(t, ast.Subscript)]
                    for item in (i for i in items if isinstance(i.value, ast.Name)):
                        key = item.slice.value if isinstance(item.slice, ast.Constant) and isinstance(item.slice.value, str) else None
                        fill = (key, node.value) if key is not None and item is target and isinstance(node, ast.Assign) else None
                        self._filled_names.setdefault((self.scopes.enclosing_scope(node), item.value.id), []).append(fill)
            for call in self.ctx.index.of_type(ast.Call):
                if isinstance(call.func, ast.Attribute) and call.func.attr == "update" and isinstance(call.func.value, ast.Name):
                    self._filled_names.setdefault((self.scopes.enclosing_scope(call), call.func.value.id), []).append(call)
        return self._filled_names

    def stored_items(self, name: ast.Name, key: str) -> list[ast.AST]:
        """What the function of `name` stores into the name's item `key` before it reads it there
        (`logs["kl"] = kl.item()`, then `logs["kl"]`)."""
        fills = self._fills.get((self.scopes.enclosing_scope(name), name.id), ())
        return [fill[1] for fill in fills if isinstance(fill, tuple) and fill[0] == key and position(fill[1]) < position(name)]

    def _filled(self, literal: ast.Dict, fills: list, depth: int, binding=None) -> Value | None:
        """A dict built from a literal and then filled, in source order, by item stores and `update`s at
        constant keys, as its entries: a store straight in the function's body replaces the entry, one under a
        branch or loop adds a possible value (an entry whose possible values differ is unknown); a store at a
        computed key or a merge of unknown entries leaves only the keys stored after it known."""
        entries: dict[str, list] = {}
        scope = self.scopes.enclosing_scope(literal)
        if not self._store_entries(entries, zip(literal.keys, literal.values), True, depth, binding):
            return None
        for fill in sorted(fills, key=lambda f: position(f[1] if isinstance(f, tuple) else f)) if None not in fills else []:
            statement = self.scopes.statement(fill[1] if isinstance(fill, tuple) else fill)
            straight = self.scopes.parent(statement) is scope
            if isinstance(fill, tuple):
                self._store_entries(entries, [(ast.Constant(fill[0]), fill[1])], straight, depth, binding)
                continue
            merged = fill.args[0] if len(fill.args) == 1 and not fill.keywords else None
            pairs = list(zip(merged.keys, merged.values)) if isinstance(merged, ast.Dict) else None
            if merged is None and not fill.args:
                pairs = [(ast.Constant(k.arg), k.value) for k in fill.keywords] if all(k.arg for k in fill.keywords) else None
            value = self.value(merged, depth + 1, binding) if merged is not None and pairs is None else None
            if isinstance(value, Packed) and value.keys is not None:
                for key, entry in zip(value.keys, value.values):
                    entries[key] = [entry] if straight else [*entries.get(key, []), entry]
            elif pairs is None or not self._store_entries(entries, pairs, straight, depth, binding):
                entries.clear()  # any key may have been set
        if None in fills:
            return None
        return Packed(tuple(e[0] if all(v is e[0] for v in e) else None for e in entries.values()), tuple(entries))

    def _store_entries(self, entries: dict[str, list], pairs, straight: bool, depth: int, binding=None) -> bool:
        """Record `key: value` pairs (False: a key is not a constant string)."""
        for key, expr in pairs:
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return False
            value = self.value(expr, depth + 1, binding)
            entries[key.value] = [value] if straight else [*entries.get(key.value, []), value]
        return True

    @property
    def _changes(self) -> dict[tuple[ast.AST | None, str], list[ast.AST]]:
        """The layers added to a name or its parts (`_additions`) and the assignments to its attributes
        (`model.fc = ...`), by scope and the name, in source order."""
        if self._changed is None:
            self._changed = {}
            for (scope, key), calls in self._additions.items():
                self._changed.setdefault((scope, key.split(".")[0]), []).extend(calls)
            for node in self.ctx.index.by_type.get(ast.Assign, ()):
                for target in node.targets:
                    key = reference_key(target) if isinstance(target, ast.Attribute) else None
                    if key is not None and not self._state(node.value, target):
                        self._changed.setdefault((self.scopes.enclosing_scope(node), key.split(".")[0]), []).append(node)
            for nodes in self._changed.values():
                nodes.sort(key=position)
        return self._changed

    def _state(self, value: ast.AST, target: ast.Attribute) -> bool:
        """Is `value`, assigned to `target` (`model.hidden`), surely not a module: a literal or arithmetic, a
        tensor a `torch.` function makes, what a method of the object itself or of the old value returns
        (`model.hidden = model.init_hidden()`, `model.h = model.h.detach()`), or a tuple of those?"""
        if isinstance(value, ast.Tuple | ast.List):
            return all(self._state(e, target) for e in value.elts)
        if isinstance(value, STATE_EXPRESSIONS):
            return True
        if not isinstance(value, ast.Call):
            return False
        name = self.ctx.qualified_name(value.func)
        if name is not None:
            return name.count(".") == 1 and name.startswith("torch.") and name[6:].islower() and name != "torch.compile"
        owner = reference_key(value.func.value) if isinstance(value.func, ast.Attribute) else None
        return owner is not None and owner in (reference_key(target.value), reference_key(target))

    def _own_forward(self, call: ast.Call) -> Value | None:
        """`self(x)`, `self.__call__(x)` or `self.forward(x)` in a method of a module-level class (a mixin's
        too, whose `self` is a class mixing it in): its `forward`'s output."""
        own = self._own(call)
        return None if own is None else Called(Called(Ref(own.cls), call), call)

    def _own(self, node: ast.AST) -> Own | None:
        """The instance `self` is where `node` stands, in a method of a module-level class."""
        cls = self.scopes.enclosing_class(node)
        if cls is None or self.ctx.module is None or self.scopes.enclosing_scope(cls) is not None:
            return None
        return Own(f"{self.ctx.module.name}.{cls.name}")

    def _own_method(self, func: ast.Attribute) -> bool:
        """Does `self.name` stand for a method (of the class or a base), not an attribute its class assigns?"""
        cls = self.scopes.enclosing_class(func)
        if cls is None or func.attr in ("forward", "__call__"):
            return False
        return self._class_attribute(cls, func.attr) is None

    def _linting_torch(self) -> bool:
        """Inside torch's own sources, torch's functions are the project's."""
        return bool(self.ctx.module) and self.ctx.module.name.split(".")[0] == "torch"

    def _activation_layer(self, constructor: ast.Call, binding=None) -> ast.Call | None:
        """The activation layer a module's output comes from: the module itself (`nn.Softmax(1)`), or the
        last layer of an `nn.Sequential`, nested ones too; None for any other module."""
        name = self._class_name(constructor, binding)
        if name in MODULE_KINDS:
            return constructor
        if name == SEQUENTIAL:
            last = self._passed_on(constructor, binding)
            found = self._activation_layer(last, binding) if last is not None else None
            pooled = self._passed_on(constructor, binding, PASSING_LAYERS | ORDER_KEEPING_LAYERS) if found is None else None
            found = found or (self._activation_layer(pooled, binding) if pooled is not None else None)  # `nn.ReLU(), nn.MaxPool2d(2)`
            return found if pooled is None or MODULE_KINDS.get(self._class_name(found, binding) if found else None) in ORDER_KINDS else None
        return None

    def _passed_on(self, constructor: ast.Call, binding=None, passing=PASSING_LAYERS) -> ast.Call | None:
        """The constructor of the layer an `nn.Sequential`'s output comes from: its last layer, or past
        layers that pass their input on (`nn.Identity()`, `nn.Dropout(p)`; or any of `passing`) the one
        before them; None when that is not known."""
        item, layers = self._last_layer(constructor), self._layers(constructor)
        while True:
            last = self.constructor(item) if isinstance(item, ast.Name) or is_self_attribute(item) else item
            if not isinstance(last, ast.Call) or self._class_name(last, binding) not in passing:
                return last if isinstance(last, ast.Call) else None
            if len(layers) < 2 or layers[-1] is not item:
                return None
            layers = layers[:-1]
            item = layers[-1]

    def _layers(self, constructor: ast.Call) -> list[ast.AST]:
        """An `nn.Sequential`'s layers in order, as its arguments, an `OrderedDict` of named layers, or the
        list it unpacks (written out, or filled as `listed_layers` tells) say; empty when not known."""
        args = constructor.args
        if len(args) == 1 and isinstance(args[0], ast.Call) and self.ctx.qualified_name(args[0].func) == "collections.OrderedDict":
            pairs = args[0].args[0].elts if len(args[0].args) == 1 and isinstance(args[0].args[0], ast.List | ast.Tuple) else []
            return [pair.elts[1] if isinstance(pair, ast.Tuple) and len(pair.elts) == 2 else None for pair in pairs]
        if not any(isinstance(a, ast.Starred) for a in args):
            return list(args)
        if len(args) == 1 and isinstance(args[0].value, ast.List | ast.Tuple):  # `nn.Sequential(*[body, head])`
            return list(args[0].value.elts)
        listed = self.listed_layers(args[0].value, constructor) if len(args) == 1 else None
        return list(listed[0]) if listed is not None and None not in listed[0] else []

    def _output_layer(self, constructor: ast.Call, binding=None) -> ast.Call | None:
        """The layer an `nn.Sequential`'s output comes from (`_passed_on`) when it is a module of the project
        (or an `nn.Sequential` ending in one); None for any other."""
        last = self._passed_on(constructor, binding)
        name = self._class_name(last, binding) if last is not None else None
        return last if name is not None and (name == SEQUENTIAL or not name.startswith("torch.")) else None

    def output_constructor(self, constructor: ast.Call) -> ast.Call | None:
        """The constructor of the layer whose output a module built by `constructor` returns: itself, or the
        layer an `nn.Sequential`'s output comes from (`_passed_on`), nested ones too; None when not known, or
        last only under its function's defaults (`if flag: layers.append(...)`: the call sites decide)."""
        for _ in range(MAX_DEPTH):
            if constructor is None or self._class_name(constructor) != SEQUENTIAL:
                return None if constructor in self._defaulted else constructor
            constructor = self._passed_on(constructor)
        return None

    def layer_class(self, constructor: ast.Call) -> str | None:
        """The class a layer's constructor call builds (`act()` with `act=nn.SiLU`), as `_class_name` reads it."""
        return self._class_name(constructor)

    def _class_name(self, constructor: ast.Call, binding=None) -> str | None:
        """The class a constructor call builds: by its name, by the class a `getattr` names, or by the class
        a name holds (`_held_class`)."""
        func = constructor.func
        name = self.ctx.qualified_name(func) if not isinstance(func, ast.Call) else self._named_class(func, binding)
        if name is None and isinstance(func, ast.Name):
            name = self._held_class(func, binding)
        if name is None and isinstance(func, ast.Subscript):
            name = self._table_class(func, binding)
        return canonical_class(name)

    def _table_class(self, item: ast.Subscript, binding=None) -> str | None:
        """The class an entry of a dict literal of classes holds (`ACTIVATIONS["softmax"]` with `"softmax":
        partial(nn.Softmax, dim=-1)`), the table bound once to a name, the key a string (`_string`)."""
        table = self._reaching(item.value) if isinstance(item.value, ast.Name) else []
        literal = table[0].value if len(table) == 1 else None
        key = self._string(item.slice, item, binding, 0) if isinstance(literal, ast.Dict) else None
        entries = [v for k, v in zip(literal.keys, literal.values) if isinstance(k, ast.Constant) and k.value == key] if key else []
        return self._class_held_by(self.ctx, entries[0]) if len(entries) == 1 else None

    def _held_class(self, name: ast.Name, binding=None) -> str | None:
        """The class a name bound once holds: a class (`act = nn.Tanh`), a `getattr(nn, ...)` of one, a
        `functools.partial` of one, an entry of a table of them (`act = ACTIVATIONS[name]`), or for a parameter what the call site `binding` passes, else its default
        (`final_act=partial(nn.Softmax, dim=-1)`), which is kept in `_defaulted` by `name` as `_string` does."""
        definitions = self._reaching(name)
        if len(definitions) != 1:
            return None
        ctx, held, defaulted = self.ctx, definitions[0].value, ()
        if held is None and is_parameter(definitions[0]):
            passed = self.argument(definitions[0], binding) if binding is not None else None
            ctx, held = passed[:2] if passed is not None else (self.ctx, parameter_defaults(definitions[0].node).get(definitions[0].name))
            defaulted = (definitions[0].name,) if passed is None else ()
        found = self._named_class(held, binding) if isinstance(held, ast.Call) and ctx is self.ctx else None
        if found is None and isinstance(held, ast.Subscript) and ctx is self.ctx:  # `out_act = ACTIVATIONS[name]`
            found = self._table_class(held, binding)
        if found is not None:
            defaulted = defaulted or self._defaulted.get(held, ())
        else:
            found = self._class_held_by(ctx, held)
        if found is not None and defaulted:
            self._defaulted[name] = defaulted
        return found

    @staticmethod
    def _class_held_by(ctx, held: ast.AST | None) -> str | None:
        """The class an expression of `ctx` names: `nn.Tanh`, or `functools.partial(nn.Softmax, dim=-1)`."""
        held = partial_target(ctx, held) or held
        return ctx.qualified_name(held) if isinstance(held, ast.Name | ast.Attribute) else None

    def _named_class(self, call: ast.Call, binding=None) -> str | None:
        """The class `getattr(nn, name)` names (also with a fallback: `getattr(nn, name, nn.ReLU)`), `name` a
        string (`_string`)."""
        if not (isinstance(call.func, ast.Name) and call.func.id == "getattr" and len(call.args) in (2, 3) and not call.keywords):
            return None
        module = self.ctx.qualified_name(call.args[0])
        if module is None or self.ctx.qualified_name(call.func) not in (None, "getattr", "builtins.getattr"):
            return None
        name = self._string(call.args[1], call, binding, 0)
        return f"{module}.{name}" if name is not None else None

    def _string(self, expr: ast.AST, at: ast.AST, binding, depth: int) -> str | None:
        """The string `expr` holds: a constant, through names and `self.` attributes assigned one, or a
        parameter a call site (`binding`) fills with one or else its default (`def build_head(...,
        final="Softmax")`), which is kept in `_defaulted` by `at`: a call that passes the parameter makes
        the answer unknown (`project_view.ProjectView`)."""
        if isinstance(expr, ast.Constant):
            return expr.value if isinstance(expr.value, str) else None
        if depth > MAX_DEPTH:
            return None
        if is_self_attribute(expr):
            values = self._self_attribute_values(expr) or []
            return self._string(values[0], at, binding, depth + 1) if len(values) == 1 else None
        definitions = self._reaching(expr) if isinstance(expr, ast.Name) else []
        if len(definitions) != 1:
            return None
        if definitions[0].value is not None:
            return self._string(definitions[0].value, at, binding, depth + 1)
        if not is_parameter(definitions[0]):
            return None
        passed = self.argument(definitions[0], binding) if binding is not None else None
        if passed is not None:
            return passed[1].value if isinstance(passed[1], ast.Constant) and isinstance(passed[1].value, str) else None
        default = parameter_defaults(definitions[0].node).get(definitions[0].name)
        if default is not None:
            self._defaulted[at] = (definitions[0].name,)
        return self._string(default, at, None, depth + 1) if default is not None else None

    def _last_layer(self, constructor: ast.Call) -> ast.AST | None:
        """The last layer of an `nn.Sequential`: its last argument, or the layer added last after it is
        built (`seq.append(nn.Sigmoid())`, `seq.add_module("out", nn.Sigmoid())`, on every path after the
        construction); None when that is not known (an addition in a loop or a branch, an insertion)."""
        target = self.scopes.parent(constructor)
        key = reference_key(target.targets[0]) if isinstance(target, ast.Assign) and len(target.targets) == 1 else None
        scope = self.scopes.enclosing_scope(constructor)
        added = [c for c in self._additions.get((scope, key), ()) if position(c) > position(constructor)] if key else []
        if not added:
            last = constructor.args[-1] if constructor.args else None
            if isinstance(last, ast.Call) and self.ctx.qualified_name(last.func) == "collections.OrderedDict" and len(last.args) == 1:
                pairs = last.args[0]  # `nn.Sequential(OrderedDict([..., ("out", nn.Softmax(1))]))`
                pair = pairs.elts[-1] if isinstance(pairs, ast.List | ast.Tuple) and pairs.elts else None
                return pair.elts[1] if isinstance(pair, ast.Tuple) and len(pair.elts) == 2 else None
            if isinstance(last, ast.Starred) and isinstance(last.value, ast.List | ast.Tuple):  # `nn.Sequential(*[body, head])`
                return last.value.elts[-1] if last.value.elts and not isinstance(last.value.elts[-1], ast.Starred) else None
            if isinstance(last, ast.Starred) and _drops_last(last.value):  # `nn.Sequential(*layers[:-1])`: the one before
                return self._last_listed(last.value.value, constructor, dropped=1)
            return self._last_listed(last.value, constructor) if isinstance(last, ast.Starred) else last
        last = added[-1]
        if last.func.attr not in ADDED_LAST or len(last.args) != ADDED_LAST[last.func.attr]:
            return None
        return last.args[-1] if self._runs_by_default(last, constructor, last.args[-1]) else None

    def last_listed_deciding(self, listed: ast.Name, decide: Callable[[ast.AST], bool | None]) -> ast.AST | None:
        """The last layer of the list `listed` names where it is read (`nn.Sequential(*layers)`, `return
        layers`) as `_last_listed` tells, the tests of the `if`s around its fills settled by `decide` (the
        constants the call sites pass: `if cfg.get("prob_out", False): layers.append(nn.Softmax(-1))`); None
        when not known."""
        return self._last_listed(listed, listed, decide=decide)

    def _last_listed(self, listed: ast.AST, constructor: ast.Call, dropped: int = 0, decide=None) -> ast.AST | None:
        """The last item of the list `nn.Sequential(*layers)` unpacks: the one the last statement before the
        construction that fills it leaves last (`layers += [..., nn.Softmax(-1)]`, `layers.append(x)`), when
        that statement runs on every path to the construction; past fills the defaults skip (`if dropout:`)
        and fills of layers that pass their input on (`nn.Dropout(p)`); None when that is not known. `dropped`: the
        items the unpacking leaves off the end (1 for `*layers[:-1]`), all of them from the last fill."""
        if not isinstance(listed, ast.Name):
            return None
        scope = self.scopes.enclosing_scope(constructor)
        uses = self.scopes.uses(scope, listed.id)
        filled = [node for name in uses if (node := self._filling(name)) is not None and position(node) < position(constructor)]
        skipped: tuple[str, ...] = ()  # the parameters whose defaults skip later fills (`if dropout:`)
        for node in sorted(filled, key=position, reverse=True):
            last = _last_item(node, dropped)
            if last is None or self._changed_after(listed, node, constructor):
                return None
            if isinstance(last, ast.Call) and self._class_name(last) in PASSING_LAYERS and not dropped:
                continue  # `layers.append(nn.Dropout(p))`, run or not: the layer before it gives the output
            runs, read = self._default_path(node, constructor, decide)
            if runs is not False:
                if runs and (read or skipped):
                    self._defaulted[last] = tuple(dict.fromkeys((*read, *skipped)))
                return last if runs else None
            skipped += read
        return None

    def _filling(self, name: ast.Name) -> ast.AST | None:
        """The statement or call that binds or adds to the list `name` stands in (`name = [...]`, `name +=
        ...`, `name.append(x)`); None for any other use."""
        parent = self.scopes.parent(name)
        if isinstance(parent, ast.Attribute):
            parent = self.scopes.parent(parent)
        return parent if isinstance(parent, ast.Assign | ast.AugAssign | ast.Call) and _fills(parent, name.id) else None

    def _changed_after(self, listed: ast.Name, fill: ast.AST, constructor: ast.Call) -> bool:
        """Is the list taken from or written into after its last fill (`layers.pop()`, `del layers[-1]`,
        `layers[-1] = nn.Identity()`), or emptied or reordered anywhere before `constructor`?"""
        for name in self.scopes.uses(self.scopes.enclosing_scope(constructor), listed.id):
            if not position(name) < position(constructor):
                continue
            parent = self.scopes.parent(name)
            call = self.scopes.parent(parent)
            if isinstance(parent, ast.Attribute) and parent.attr in REMOVALS and isinstance(call, ast.Call) and call.func is parent:
                return True
            if isinstance(parent, ast.Subscript) and not isinstance(parent.ctx, ast.Load) and position(name) > position(fill):
                return True
        return False

    def listed_layers(self, listed: ast.AST, constructor: ast.Call) -> tuple[list[ast.AST], ast.AST | None] | None:
        """The items statements before `constructor` put in the list `nn.Sequential(*listed)` unpacks (list
        literals bound or added, `append`ed items), and its last layer as `_last_listed` tells; None when
        the list is filled or read any other way on the way."""
        if not isinstance(listed, ast.Name):
            return None
        items = []
        for name in self.scopes.uses(self.scopes.enclosing_scope(constructor), listed.id):
            if name is listed or position(name) > position(constructor):
                continue
            parent = self.scopes.parent(name)
            if isinstance(parent, ast.Attribute) and _fills(self.scopes.parent(parent), listed.id):
                added = self.scopes.parent(parent).args
                items += added if parent.attr == "append" else added[0].elts if parent.attr == "extend" and isinstance(added[0], ast.List) else [None]
            elif isinstance(parent, ast.AugAssign) and isinstance(parent.op, ast.Add) and isinstance(parent.value, ast.List):
                items += parent.value.elts
            elif isinstance(parent, ast.Assign) and isinstance(parent.value, ast.List) and parent.targets == [name]:
                items += parent.value.elts
            elif isinstance(parent, ast.Tuple) and isinstance(self.scopes.parent(parent), ast.Assign) and _unpacked_list(self.scopes.parent(parent), parent, name):
                continue  # `layers, d = [], in_dim`
            elif isinstance(parent, ast.Assign) and name in parent.targets and any(n is listed for n in ast.walk(parent.value)):
                continue  # `logps = torch.stack(logps)`: bound again after the list is read
            else:
                return None
        return items, self._last_listed(listed, constructor)

    def _runs_by_default(self, node: ast.AST, anchor: ast.AST, made: ast.AST) -> bool:
        """Does `node` run on every path to `anchor`, or on every path the defaults of its function's
        parameters take (`if out_act: layers.append(...)` with `out_act="Sigmoid"`)? Those parameters are
        kept in `_defaulted` by `made`, as `_string` does: a call that passes one makes the answer unknown."""
        runs, read = self._default_path(node, anchor)
        if runs and read:
            self._defaulted[made] = read
        return runs is True

    def _default_path(self, node: ast.AST, anchor: ast.AST, decide=None) -> tuple[bool | None, tuple[str, ...]]:
        """(does `node` run on the way to `anchor` as `_runs_by_default` asks: True, False when the defaults
        alone keep it from running (`if dropout: layers.append(...)` with `dropout=0.0`), None when not
        known; the parameters whose defaults decide it). `decide`, when given, settles the tests instead (as the
        call sites' constants tell)."""
        if self.same_path(node, anchor):
            return True, ()
        function = self.scopes.enclosing_scope(anchor)
        if not isinstance(function, FUNCTION_NODES) or self.scopes.enclosing_scope(node) is not function:
            return None, ()
        defaults = {k: v.value for k, v in parameter_defaults(function).items() if isinstance(v, ast.Constant)}
        around = {anchor, *self.scopes.ancestors(anchor)}
        read: list[str] = []
        child = node
        for ancestor in self.scopes.ancestors(node):
            if ancestor is function or ancestor in around:
                break
            if isinstance(ancestor, ast.For) and child in ancestor.body:
                child = ancestor  # the last fill of a loop's body: what its last round leaves last
                continue
            if isinstance(ancestor, CONDITIONAL_NODES):
                names = [n.id for n in ast.walk(ancestor.test) if isinstance(n, ast.Name)] if isinstance(ancestor, ast.If) else None
                known = {n: defaults[n] for n in names or () if n in defaults and not self._rebound(function, n)}
                if decide is not None:  # the call sites' constants (their defaults among them), not the defaults alone
                    known, folded = {}, decide(ancestor.test) if isinstance(ancestor, ast.If) else None
                else:
                    folded = fold(ancestor.test, known) if known or names == [] else None
                if folded is None:
                    return None, ()
                read += known
                if folded is not (child in ancestor.body):  # `if last_act or not is_last:` with `last_act=False`
                    return False, tuple(dict.fromkeys(read))
            child = ancestor
        return True, tuple(dict.fromkeys(read))

    def _rebound(self, function: ast.AST, name: str) -> bool:
        """Does `function` assign its parameter `name` anywhere?"""
        return any(n.id == name and isinstance(n.ctx, ast.Store) for n in self.ctx.index.within(function, ast.Name))

    @property
    def _additions(self) -> dict[tuple[ast.AST | None, str], list[ast.Call]]:
        """The calls adding layers to a container (`x.append(...)`, `x.add_module(...)`), by scope and
        the container's key, in source order."""
        if self._added is None:
            self._added = {}
            for call in self.ctx.index.by_type.get(ast.Call, ()):
                func = call.func
                key = reference_key(func.value) if isinstance(func, ast.Attribute) and func.attr in ADDITIONS else None
                if key is not None:
                    self._added.setdefault((self.scopes.enclosing_scope(call), key), []).append(call)
            for calls in self._added.values():
                calls.sort(key=position)
        return self._added

    # What an object was built from.
    def constructed_class(self, expr: ast.AST, depth: int = 0, binding=None) -> str | None:
        """The qualified class name `expr` was constructed from (`torch.nn.CrossEntropyLoss`), when every
        way of getting there agrees; under `binding`, a parameter is what that call site passes."""
        found = self.construction(expr, depth, binding)
        return canonical_class(found[0].qualified_name(found[1].func)) if found is not None else None

    def constructor(self, expr: ast.AST) -> ast.Call | None:
        """The call of this file that built the object `expr` refers to, when every way of getting there agrees."""
        found = self.construction(expr)
        return found[1] if found is not None and found[0] is self.ctx else None

    def construction(self, expr: ast.AST, depth: int = 0, binding=None) -> tuple[object, ast.Call] | None:
        """(the context, the call) that built the object `expr` refers to, when every way of getting there
        agrees on the class; under `binding`, through what its call site passes (the caller's context)."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Call):
            return (self.ctx, expr) if self.ctx.qualified_name(expr.func) else None
        if isinstance(expr, ast.Name):
            found = [self._definition_construction(d, depth, binding) for d in self._reaching(expr)]
        elif is_self_attribute(expr):
            found = [self.construction(v, depth + 1, binding) for v in self._self_attribute_values(expr) or ()]
        else:
            return None
        if not found or any(f is None for f in found):
            return None
        names = {ctx.qualified_name(call.func) for ctx, call in found}  # type: ignore[misc]
        return found[-1] if len(names) == 1 else None

    def _definition_construction(self, definition: Definition, depth: int, binding) -> tuple[object, ast.Call] | None:
        if definition.value is not None:
            return self.construction(definition.value, depth + 1, binding)
        passed = self.argument(definition, binding) if is_parameter(definition) else None
        if passed is None:
            return None
        caller, argument, passage = passed
        return caller.analysis(ValueKinds).construction(argument, depth + 1, None if passage.default else binding.of(definition.node).outer)



def _is_one(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float) and expr.value == 1


def _number(expr: ast.AST | None) -> bool:
    """A numeric literal, signed or not (`0.25`, `-1`)."""
    expr = expr.operand if isinstance(expr, ast.UnaryOp) else expr
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)


def _constant_in(expr: ast.AST | None, constants: frozenset) -> bool:
    return isinstance(expr, ast.Constant) and expr.value in constants


def _blends(expr: ast.BinOp) -> list[tuple[ast.AST, ast.AST, ast.AST]]:
    """The readings of `a * w + b * (1 - w)`, factors in either order: `a` where `w` is 1 and `b` where it is 0,
    what `torch.where(w, a, b)` picks for binary targets `w`, as (a, b, w); none for any other sum."""
    if not isinstance(expr.op, ast.Add):
        return []
    pairs = [_factors(side) for side in (expr.left, expr.right)]
    found = []
    for (a, w), (b, v) in ((x, y) for x in pairs[0] for y in pairs[1]):
        if _complement_of(v, w):
            found.append((a, b, w))
        elif _complement_of(w, v):
            found.append((b, a, v))
    return found


def _factors(expr: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """(factor, the other factor) of a product of two, both ways round; none for anything else."""
    if not (isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult)):
        return []
    return [(expr.left, expr.right), (expr.right, expr.left)]


def _complement_of(expr: ast.AST, of: ast.AST) -> bool:
    """Is `expr` written `1 - of`?"""
    return isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Sub) and _is_one(expr.left) and same_expression(expr.right, of)


def _gate(value: Value | None) -> bool:
    """Is `value` a weight in [0, 1] made by a sigmoid (`torch.sigmoid(z)`, `1 - torch.sigmoid(z)`)?"""
    value = value.value if isinstance(value, Complement) else value
    return isinstance(value, Made) and value.kind is Kind.SIGMOID and not value.layer


def _mapped(left: Value | None, right: Value | None) -> Mapped | None:
    """The known one of two operands, mapped by the other, not known (a weight, an adjacency, a bias)."""
    return Mapped(left or right) if (left is None) != (right is None) else None


def _matmul_method(call: ast.Call) -> bool:
    """`a.matmul(b)`, `a.mm(b)`, `a.bmm(b)` on a tensor (not a method of `self`)."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr in MATMUL_METHODS and len(call.args) == 1 and not call.keywords
        and not is_self_attribute(func)
    )  # fmt: skip


def _weighted(value: Value) -> Mixed:
    """A value times a weight not known: a stack of values weighted item by item (`w[:, None, None] *
    torch.stack(probs)`) is still a stack, to be reduced; anything else a combination of the one value."""
    return Mixed(value.values, stacked=True, joined=value.joined) if isinstance(value, Mixed) and value.stacked else Mixed((value,))


def _mixed(parts: list[Value | None], stacked: bool = False) -> Mixed | None:
    """A combination of known parts; None when one of them is unknown."""
    return None if not parts or any(part is None for part in parts) else Mixed(tuple(parts), stacked)


def over_rows(kind: Kind, activation: ast.Call, dim_position: int) -> bool:
    """Does each row of an activation's output (an item on its first dim) have its kind? An elementwise
    activation's or a Linear layer's does, a softmax's when it is over the last dim (`dim=-1`)."""
    if kind not in (Kind.PROBABILITIES, Kind.LOG_PROBABILITIES):
        return True
    dim = call_argument(activation, dim_position, "dim")
    return dim is not None and _constant_index(dim) == -1


def selects_values(expr: ast.AST) -> bool:
    """Is `expr` a tensor's values picked by an index that is no element's key (`out[mask]`, `x[:, a]`):
    of the tensor's kind (`Selected`), not an item of a tuple or dict (`out[0]`, `out["probs"]`, `outs[name]`)?"""
    if not isinstance(expr, ast.Subscript) or _constant_index(expr.slice) is not None or isinstance(expr.slice, ast.Name):
        return False
    return not (isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str))


def _library_output(value: Value | None) -> bool:
    """Is `value` what a call of a transformers task model returns (`AutoModelForSequenceClassification.
    from_pretrained(...)`, `BertForTokenClassification(config)`, passed in, moved or wrapped): an output
    whose `.logits` are the head's raw scores, before any softmax?"""
    model = value.callee if isinstance(value, Called) else None
    while isinstance(model, Passed | Unwrapped):
        model = model.value
    return isinstance(model, Called) and isinstance(model.callee, Ref) and makes_task_model(model.callee.name)


def record_fields(ctx, cls: ast.ClassDef) -> list[str] | None:
    """The field names, in order, of a dataclass or `NamedTuple` class (of `ctx`); None for another class."""
    decorators = [ctx.qualified_name(d.func if isinstance(d, ast.Call) else d) for d in cls.decorator_list]
    if "dataclasses.dataclass" not in decorators and "typing.NamedTuple" not in [ctx.qualified_name(b) for b in cls.bases]:
        return None
    return [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]


def built_record(ctx, cls: ast.ClassDef, call: ast.Call) -> dict[str, ast.AST] | None:
    """Field name -> value of `call` building the record class `cls` (of `ctx`, `record_fields`), less the
    fields a method of the class stores to (`self.value = self.value.squeeze(-1)` in `__post_init__`): those
    hold what the method made, not what the call passed. None when `cls` is no record or the call does not fit."""
    fields = record_arguments(record_fields(ctx, cls), call)
    if fields is None:
        return None
    stored = {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and is_self_attribute(n)}
    return {name: value for name, value in fields.items() if name not in stored}


def record_arguments(names: list[str] | None, call: ast.Call) -> dict[str, ast.AST] | None:
    """Field name -> value of a call that builds a record whose fields are `names`, in order (positional
    arguments in field order, keywords by name); None when they do not fit, or for a `**` splat."""
    keywords = {k.arg: k.value for k in call.keywords}
    if names is None or None in keywords or len(call.args) > len(names) or any(k not in names for k in keywords):
        return None
    return {**dict(zip(names, call.args)), **keywords} or None


def makes_task_model(name: str) -> bool:
    """Does a call of `name` make a transformers task model (`AutoModelForSequenceClassification.from_pretrained`,
    `.from_config`, `BertForTokenClassification`), whose output's `.logits` are the head's raw scores?"""
    task = name.split(".")[1] if name.startswith("transformers.") and name.count(".") in (1, 2) else ""
    return "For" in task and name.rsplit(".", 1)[-1] in (task, "from_pretrained", "from_config")



def tensor_method(ctx, func: ast.AST) -> bool:
    """Is `func` a method of a tensor (`x.softmax`), not a function of a library (`F.softmax`) nor an
    attribute of the object (`self.softmax`, a layer or method of its own, whatever its name)?"""
    return isinstance(func, ast.Attribute) and not is_self_attribute(func) and ctx.qualified_name(func) is None


def _calls_self(func: ast.AST) -> bool:
    """`self`, `self.__call__` or `self.forward` as what a call calls."""
    if isinstance(func, ast.Attribute) and func.attr in ("__call__", "forward"):
        func = func.value
    return isinstance(func, ast.Name) and func.id == "self"


def _fills(node: ast.AST, name: str) -> bool:
    """Does a statement or call bind or add to the list `name` (`name = [...]`, `name += ...`, `name.append(x)`)?"""
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name and func.attr in ADDITIONS
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def _unpacked_list(assignment: ast.Assign, target: ast.Tuple, name: ast.Name) -> bool:
    """`layers, d = [], in_dim`: is `name` bound to an empty list?"""
    value = assignment.value
    if assignment.targets != [target] or not isinstance(value, ast.Tuple) or len(value.elts) != len(target.elts):
        return False
    element = value.elts[target.elts.index(name)]
    return isinstance(element, ast.List) and not element.elts


def _last_item(node: ast.AST, dropped: int = 0) -> ast.AST | None:
    """The item a statement filling a list leaves last in it: `x` of `layers.append(x)`, the last of
    `layers += [...]`, `layers = [...]`, `layers.extend([...])`; with `dropped` items left off the end, the
    one before them in the same literal; None when not known."""
    if isinstance(node, ast.Call):
        method = node.func.attr
        listed = node.args[0] if method in ("append", "extend") and len(node.args) == 1 else None
        if method == "append":
            return None if dropped else listed
    elif isinstance(node, ast.AugAssign) and not isinstance(node.op, ast.Add):
        return None
    else:
        listed = node.value
    elements = listed.elts if isinstance(listed, ast.List | ast.Tuple) else []
    if len(elements) > dropped and not any(isinstance(e, ast.Starred) for e in elements[-dropped - 1 :]):
        return elements[-dropped - 1]
    return None


def _drops_last(expr: ast.AST) -> bool:
    """Is `expr` a name's list without its last item (`layers[:-1]`)?"""
    cut = expr.slice if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) else None
    return isinstance(cut, ast.Slice) and cut.lower is None and cut.step is None and _constant_index(cut.upper) == -1 if cut is not None else False


def is_parameter(definition: Definition) -> bool:
    """Is the definition a parameter of its function (not the function's own name)?"""
    function = definition.node
    return isinstance(function, FUNCTION_NODES) and definition.name in {a.arg for a in parameters(function)}



class LoopItem(ast.expr):
    """Stands for the item a loop binds (`row` in `for row in probs`): one row of what it iterates; with
    `key`, the value of a `keyed_loop`'s `.items()` at its turn's key (`head` in `{name: head(h) for name,
    head in heads.items()}`)."""

    _fields = ("iterable",)

    def __init__(self, iterable: ast.AST, key: ast.AST | None = None) -> None:
        super().__init__()
        self.iterable = iterable
        self.key = key


def keyed_loop(loop: ast.AST) -> str | None:
    """How a loop over a dict keeps its keys, in its key variable: "items" (`for k, v in d.items()`,
    `{k: f(v) for k, v in d.items()}`), "keys" (`for k in d`, `d.keys()`, a literal tuple or list of
    keys); None for any other. A dict comprehension's own key is that variable, with one generator and
    no filter; a `for` loop's, with no `else`."""
    if isinstance(loop, ast.DictComp):
        [generator, *more] = loop.generators
        if more or generator.ifs or generator.is_async or not isinstance(loop.key, ast.Name):
            return None
        target, iterable, key = generator.target, generator.iter, loop.key.id
    elif isinstance(loop, ast.For) and not loop.orelse:
        target, iterable = loop.target, loop.iter
        key = target.elts[0].id if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name) else getattr(target, "id", None)
    else:
        return None
    method = iterable.func.attr if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args else None
    pair = isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts)
    if method == "items" and pair and target.elts[0].id == key and target.elts[1].id != key:
        return "items"
    if isinstance(target, ast.Name) and target.id == key and (method == "keys" or method is None and not isinstance(iterable, ast.Call)):
        return "keys"
    return None


def key_variable(loop: ast.AST) -> str:
    """The name a `keyed_loop` binds to each key: a comprehension's key, a `for`'s (first) target."""
    if isinstance(loop, ast.DictComp):
        return loop.key.id
    return loop.target.elts[0].id if isinstance(loop.target, ast.Tuple) else loop.target.id


def _binds(target: ast.AST, name: str) -> bool:
    return any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(target))


def at_key(value, loop: ast.AST, key):
    """`value` with the items a `keyed_loop` reads at its turn's key (`Item(..., loop)`) read at `key`
    instead (None: an item of a loop over them)."""
    if isinstance(value, Item) and value.index is loop:
        return Item(at_key(value.value, loop, key), key)
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    changed = {}
    for field in dataclasses.fields(value):
        held = getattr(value, field.name)
        new = tuple(at_key(v, loop, key) for v in held) if isinstance(held, tuple) else at_key(held, loop, key)
        if new is not held and (not isinstance(held, tuple) or any(a is not b for a, b in zip(new, held))):
            changed[field.name] = new
    return dataclasses.replace(value, **changed) if changed else value
