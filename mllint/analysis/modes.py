"""Train/eval mode of models along the paths of each function: which mode a model is in when it is called.

Models are tracked by receiver: the expression naming the object (`model`, `self.model`,
`self.model.encoder`), so that `self.model.eval()` in one method and `self.model(x)` in another are about
the same object. A key's mode is a set of facts, one per way of getting there: TRAIN or EVAL (set by a
construction, `m.train()`, `m.eval()`, `m.train(False)`), ENTRY (as the caller left it: parameters and
`self.*` at a function's start) or UNKNOWN. Calls into functions and methods of the same file are
followed a few levels deep through their summaries (the facts at their exit, and the model calls whose
mode depends on the caller); so are calls of the functions of the project's other modules (the modes they
leave; the model calls they make are reported in their own file). Any other call that receives a model
makes its mode unknown.

Across modules the other way, a model call whose mode is as the caller left it, in a function whose
model is a parameter, is seen from each call site of that function in another module of the project
(`callers.Callers`; one call site at a time, never mixed): the caller's module is read on its own (its
own helpers followed, not other modules) and the facts just before its call become the model's. When
those are the caller's own entry too, its callers are asked in turn (the layer's budget of caller depth).
Facts and uses from another module keep their nodes; `Modes.homes` says which module each belongs to.

Rules read `Modes.training_uses()` (or `evaluation_uses()`): the model calls they may report with the facts
that may hold there, including the calls inside a same-file helper seen from each of its callers, and the
calls seen from call sites in other modules. Cheap tests on the file's call graph spare the flows that
could note none of those (`_seeing`, `_may_hold_a_mode`), and a flow tracks only the receivers whose facts
it may read and runs only the statements that may change them.
"""
from __future__ import annotations

import ast
import builtins
import enum
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

from mllint.analysis.callers import Binding, Callers, call_sites, constructions
from mllint.analysis.calls import Callee, CallResolver, bind_arguments
from mllint.analysis.classes import ModuleClasses
from mllint.analysis.layers import NO_LAYER, Layer, ModeLayers
from mllint.analysis.library_models import library_model
from mllint.analysis.names import call_argument, is_self_attribute, reference_key
from mllint.analysis.objects import Objects, fold, unrolled
from mllint.analysis.project import ProjectView
from mllint.analysis.scopes import parameters
from mllint.analysis.summaries import FunctionSummary
from mllint.analysis.tree import assignment_targets, child_nodes
from mllint.analysis.values import Called, canonical_class
from mllint.findings import Related
from mllint.source import one_line

MAX_CALL_DEPTH = 3  # how many calls deep helpers are followed
MAX_ROUNDS = 8  # loop fixpoint iterations
MAX_CONTEXTS = 4  # sets of constants a function is summarized under (`Modes.summary`)
GRAD_OFF = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
SET_GRAD_ENABLED = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}
# nn.Module methods that return the module itself and keep its mode.
SAME_MODULE = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "requires_grad_", "share_memory", "to_empty"}
# nn.Module methods that leave the mode alone.
MODE_NEUTRAL = SAME_MODULE | {
    "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "named_children", "state_dict", "load_state_dict", "zero_grad", "register_buffer", "register_parameter",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook", "get_submodule",
    "forward", "type",
}  # fmt: skip
WRAPPERS = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel"}
HARMLESS_BUILTINS = {"print", "len", "isinstance", "type", "id", "repr", "str", "hasattr", "getattr", "sum", "format"}
BUILTIN_NAMES = frozenset(dir(builtins))
# Methods that a library calls with the mode it has set itself (Lightning).
LIBRARY_HOOKS = {"validation_step", "test_step", "predict_step"}
EVALUATION_WORDS = {
    "validate", "validation", "val", "valid", "evaluate", "evaluation", "eval", "predict", "prediction",
    "inference", "test", "testing",
}  # fmt: skip
LOOPS = (ast.For, ast.AsyncFor, ast.While)
# The nodes that may make a statement act on the modes (see `_Flow._acts`).
ACTING = (
    ast.Call, ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.withitem, ast.While, ast.Return, ast.Raise,
    ast.Break, ast.Continue,
)  # fmt: skip
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# What another module of the project must mention for a call of its functions to be followed: a switch of
# mode. Elsewhere the call stays unknown (reading every module a loop calls into costs too much).
FOLLOWED_MODULES = re.compile(rb"\.eval\(|\.train\(")


class Mode(enum.Enum):
    TRAIN = "training"
    EVAL = "eval"
    ENTRY = "as the caller left it"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Fact:
    mode: Mode
    site: ast.AST | None = None  # the statement's call in the analysed function that set it
    origin: ast.AST | None = None  # the `m.train()`/`m.eval()`/construction that set it (maybe in a helper)
    built: ast.Call | None = None  # the construction of the model, when known


ENTRY = frozenset({Fact(Mode.ENTRY)})
State = dict  # receiver key -> frozenset[Fact]


@dataclass(frozen=True)
class Use:
    call: ast.Call  # the model call (`model(x)`), maybe inside a helper
    site: ast.AST  # where the analysed function reaches it: the call itself or the call of the helper
    scope: ast.AST  # the analysed function (or module)
    key: str  # the receiver, as the analysed function names it
    facts: frozenset
    # Seen from a call site in another module (`site`, `scope` and the facts are that module's): the
    # receiver as the function around `call` names it, and the functions passed through on the way.
    own_key: str = ""
    through: str = ""  # ", through `report` (engine.py:30)"
    sites: tuple[Related, ...] = ()  # seen from call sites: they, innermost first (`callers.call_sites`)
    constants: tuple = ()  # the loop variables known as constants in the round of an unrolled loop it was seen in

    @property
    def name(self) -> str:
        """The receiver as the linted file names it at the model call (an object's key: as the call spells it)."""
        key = self.own_key or self.key
        return key if not key.startswith("@") else reference_key(_called_receiver(self.call)) or "the model"


@dataclass
class Summary:
    exit: State
    uses: list[Use]  # model calls whose mode depends on the caller (their facts include ENTRY)
    returned: frozenset


@dataclass(frozen=True)
class FlowFacts:
    """What a function's flow found, kept without the flow (which refers back to its `Modes`)."""

    uses: list[Use]
    before: dict[ast.AST, State]  # the state just before each call


@dataclass
class _Targets:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


def lookup(state: State, key: str) -> frozenset:
    """A key's facts: its own, else those of its nearest enclosing receiver (a mode set on a model holds
    for its submodules), else ENTRY."""
    while True:
        if key in state:
            return state[key]
        if "." not in key:
            return ENTRY
        key = key.rsplit(".", 1)[0]


def join(states: Iterable[State | None]) -> State | None:
    reachable = [s for s in states if s is not None]
    if not reachable:
        return None
    if len(reachable) == 1:
        return reachable[0]
    if all(s is reachable[0] for s in reachable):
        return reachable[0]
    joined = {}
    for key in {k for s in reachable for k in s}:
        facts = [lookup(s, key) for s in reachable]
        first = facts[0]
        joined[key] = first if all(f is first for f in facts) else frozenset().union(*facts)
    return joined


def mode_layers(ctx) -> ModeLayers:
    """The file's `ModeLayers` (`ctx.analysis(mode_layers)`), factories of other modules known by the
    modes of what they return."""
    return ModeLayers(ctx, returns_new_model)


def returns_new_model(function: FunctionSummary) -> bool:
    """Does a function of the project return a model in training mode, as built (a factory)? Read by
    `Modes` in its own file, once per module summary."""
    return isinstance(function.returns, Called) and bool(function.fact(_returns_new_model))


def _returns_new_model(ctx, node: ast.AST) -> bool:
    summary = ctx.analysis(project_modes).summary(node, 0)
    facts = summary.returned if summary is not None else ()
    return bool(facts) and all(f.mode is Mode.TRAIN and f.built is not None for f in facts)


class Modes:
    def __init__(self, ctx, layers: ModeLayers | None = None, call_sites_read: bool = False) -> None:
        """`call_sites_read`: the module is another one's caller, whose lint reads the facts of the
        arguments at its call sites (`_passed`): its flows track every argument."""
        self.ctx = ctx
        self.call_sites_read = call_sites_read
        self.layers = layers or ctx.analysis(mode_layers)
        self.scopes = ctx.scopes
        self.module_classes = ctx.analysis(ModuleClasses).modules
        self.objects = ctx.analysis(Objects)
        functions: dict[str, list[ast.AST]] = {}
        for node in ctx.tree.body:
            if isinstance(node, FUNCTIONS):
                functions.setdefault(node.name, []).append(node)
        self.functions = {name: nodes[0] for name, nodes in functions.items() if len(nodes) == 1}
        self.classes = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}
        self.wrapper_methods = self._wrapper_methods()
        self.view = ctx.analysis(ProjectView) if ctx.project is not None else None
        self.resolver = CallResolver(ctx, self.view) if self.view is not None else None
        self.homes: dict[ast.AST, object] = {}  # the nodes of other modules in this file's facts and uses
        self._read_layers: dict[object, ModeLayers] = {}  # another module's context -> its layers, read from here
        self._generators: dict[ast.AST, bool] = {}
        self._summaries: dict[tuple, Summary | None] = {}
        self._contexts: dict[ast.AST, int] = {}  # function -> how many sets of constants it was summarized under
        self._deciding: dict[ast.AST, set[str]] = {}
        self._in_progress: set[ast.AST] = set()
        self._flows: dict[ast.AST, FlowFacts] = {}  # scope -> what its flow found
        self._calls: _CallGraph | None = None
        self._attributes: dict[ast.ClassDef, set[str]] = {}
        self._qualified: dict[ast.AST, str | None] = {}
        self._trains: dict[ast.AST, bool] = {}  # helpers that call `.backward(...)`
        self._seen: dict[str, set[ast.AST]] = {}  # a rule's test (by name) -> the scopes that see a call it wants
        self._steps: dict[tuple, bool] = {}  # (loop or function, methods) -> does it call one of them (`trains`)
        self._callees: dict[ast.Call, Callee | None] = {}
        self._builds: dict[ast.Call, bool] = {}
        self._call_orders: dict[ast.AST, list[ast.Call]] = {}
        self._own_nodes: dict[tuple, list[ast.AST]] = {}  # (scope, types, stored) -> its own nodes of those types

    def _wrapper_methods(self) -> dict[str, ast.AST]:
        """The methods of the file's plain classes that wrap models and switch their modes (`def
        val_start(self): self.img_enc.eval()`), by name, when no other class of the file has one of that
        name: `model.val_start()` and `model.train_emb(...)` are calls of them."""
        methods: dict[str, list[ast.AST]] = {}
        for node in self.ctx.index.of_type(ast.ClassDef):
            for function in node.body:
                if isinstance(function, FUNCTIONS):
                    methods.setdefault(function.name, []).append(function)
        wrappers = [
            cls for cls in self.classes.values()
            if cls not in self.module_classes and any(
                isinstance(call.func, ast.Attribute) and call.func.attr in ("train", "eval")
                and (reference_key(call.func.value) or "").startswith("self.")
                for call in self.ctx.index.within(cls, ast.Call)
            )
        ]  # fmt: skip
        return {
            function.name: function
            for cls in wrappers for function in cls.body
            if isinstance(function, FUNCTIONS) and len(methods[function.name]) == 1 and not function.name.startswith("__")
        }  # fmt: skip

    def training_uses(self) -> list[Use]:
        """The model calls that may be training steps (see `training_step`) with the model maybe in eval
        mode, with their facts: seen from their own function, from the callers in this file of the
        function they are in, and, in functions that train a model they are passed, from their call sites
        in other modules."""
        scopes = [scope for scope in self._scopes_that_set_modes(None) if self._may_train_in_eval(scope)]
        uses = self._uses_of(scopes) + self._from_callers(self._training_scopes, self.training_step, self._may_be_training_step)
        return [use for use in uses if not use.constants or self._trains_in_its_round(use)]

    def _trains_in_its_round(self, use: Use) -> bool:
        """Seen in one round of an unrolled loop (`for phase in ["train", "val"]`): is the call a training
        step there, its branches decided by the loop variable?"""
        constants = dict(use.constants)
        if self.home(use.call).grad_disabled(use.call, constants):
            return False  # `with torch.set_grad_enabled(is_training):` with `is_training=False` passed
        return any(self.training_step(node, constants) for node in {use.call, use.site} if self.home(node) is self)

    def _may_evaluate_in_a_mode(self, scope: ast.AST) -> bool:
        """A cheap test before a scope's flow: can it note an evaluation pass whose model has a known mode,
        or that decides a pass its callers note too? Through a function or method of the file that makes
        model calls; as a function the file calls (its callers see its passes, and ML302 weighs every way
        there); or with a pass of its own on a receiver that may have a mode (`_may_hold_a_mode`)."""
        calls = self.call_graph()
        if scope in calls.calling_model_helpers or scope in calls.callers:
            return True
        return self._may_hold_a_mode(scope, self._called_heads(scope, self._may_be_evaluation_pass))

    def _may_train_in_eval(self, scope: ast.AST) -> bool:
        """A cheap test before a scope's flow: can it note a training step whose model may be in eval
        mode? Through a function or method of the file that makes model calls, or with a training step of
        its own on a receiver that may have a mode (`_may_hold_a_mode`)."""
        calls = self.call_graph()
        if scope in calls.calling_model_helpers:
            return True
        heads = self._called_heads(scope, self._may_be_training_step)
        return bool(heads) and self._may_hold_a_mode(scope, heads)

    def _called_heads(self, scope: ast.AST, wanted: Callable[[ast.AST], bool]) -> set[str | None]:
        """The names heading the receivers of a scope's model calls that a rule `wanted` (`model` for
        `model.net(x)`)."""
        made = self.call_graph().model_calls_of.get(scope, ())
        return {_head(_called_receiver(call)) for call in made if wanted(call)}

    def _may_hold_a_mode(self, scope: ast.AST, names: set[str]) -> bool:
        """May one of `names` name a receiver of a known mode (training or eval) in a scope's flow? It may
        when the scope switches it (`train(...)`, `eval()`), passes it to a function it follows, assigns it
        what may have a mode (a construction, `Net().eval()`, what a function of the file returns) or
        copies it from or to a name that may; or when it is an enclosing scope's name and the scope follows
        a function of the file. Any other name is as the caller left it, or unknown."""
        calls = self.call_graph()
        nodes = [*calls.calls_of.get(scope, ()), *calls.bindings_of.get(scope, ())]
        assigned = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None]
        copies = [
            (_head(target), _head(_moved(node.value)))
            for node in assigned if reference_key(_moved(node.value)) is not None for target in _bound(node)
        ]  # fmt: skip
        names = _linked(names, copies)
        follows = False
        for node in nodes:
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in ("eval", "train"):
                    moved = _moved(func.value)
                    if _head(moved.args[0] if _is_getattr(moved) else moved) in names:
                        return True
                own = (isinstance(func, ast.Name) and func.id in self.functions) or (
                    isinstance(func, ast.Attribute) and func.attr in self._file_methods
                )
                follows |= own
                passed = [*node.args, *(k.value for k in node.keywords)]
                passed += [func.value] if isinstance(func, ast.Attribute) else []
                if any(_head(a.value if isinstance(a, ast.Starred) else a) in names for a in passed) and (
                    own or self.project_callee(node)
                ):
                    return True
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                listed = node.iter.elts if isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)) else None
                if listed is not None and {_head(n) for n in (node.target, *listed)} & names:
                    return True
            elif node in assigned and reference_key(_moved(node.value)) is None and {_head(t) for t in _bound(node)} & names:
                unpacked = isinstance(node.value, ast.Call) and any(
                    isinstance(t, (ast.Tuple, ast.List)) for t in assignment_targets(node)
                )
                if unpacked or self._may_give_a_mode(node.value):  # `a, b = make()`: what a local function returns too
                    return True
        if follows:
            return not isinstance(scope, FUNCTIONS) or bool(names - self.scopes.local_bindings(scope))
        return False

    def _may_give_a_mode(self, value: ast.AST) -> bool:
        """Can the object an assigned value gives have a known mode (see `_Flow._value_facts`)?"""
        if isinstance(value, (ast.Tuple, ast.List)):
            return any(self._may_give_a_mode(element) for element in value.elts)
        while isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr in ("eval", "train"):
                return True
            if isinstance(func, ast.Attribute) and func.attr in SAME_MODULE:
                value = func.value
            elif isinstance(func, ast.Name) and func.id in self.functions:
                return True
            elif value.args and canonical_class(self.qualified_name(func)) in WRAPPERS:
                value = value.args[0]
            else:
                return self.builds_module(value)
        return reference_key(value) is not None

    def _passes_receivers(self, call: ast.Call) -> bool:
        """Does the call pass a receiver (`model`, `self.model`) that is not an imported name?"""
        return any(
            reference_key(argument) is not None and self.qualified_name(argument) is None
            for argument in [*call.args, *(k.value for k in call.keywords)]
        )

    @cached_property
    def _file_methods(self) -> set[str]:
        return {node.name for cls in self.ctx.index.of_type(ast.ClassDef) for node in cls.body if isinstance(node, FUNCTIONS)}

    def evaluation_uses(self) -> list[Use]:
        """The model calls that may be evaluation passes (see `evaluation_pass`), with their facts: those
        seen from functions that hold an evaluation pass or call one that does, and from the call sites in
        other modules of those functions."""
        evaluating = self._evaluating_scopes()
        seeing = self._seeing(self._may_be_evaluation_pass)
        scopes = [
            scope for scope in self._scopes_that_set_modes(evaluating) if scope in seeing and self._may_evaluate_in_a_mode(scope)
        ]  # fmt: skip
        return self._uses_of(scopes) + self._from_callers(evaluating, self.evaluation_pass, self._may_be_evaluation_pass)

    def _seeing(self, wanted: Callable[[ast.AST], bool]) -> set[ast.AST]:
        """The scopes whose flows may note a model call a rule `wanted`: those making one, and those that
        call a function or method of the file that does, directly or not. The flows of the others note
        only calls the rule passes by."""
        if wanted.__name__ not in self._seen:
            calls = self.call_graph()
            noting = {scope for scope, made in calls.model_calls_of.items() if any(wanted(call) for call in made)}
            self._seen[wanted.__name__] = _closure(noting, calls.callers)
        return self._seen[wanted.__name__]

    def _uses_of(self, scopes: list[ast.AST]) -> list[Use]:
        return [use for scope in scopes for use in self.flow(scope).uses]

    def flow(self, scope: ast.AST) -> FlowFacts:
        """The facts along a function (or the module), computed once."""
        if scope not in self._flows:
            flow = _Flow(self, scope, 0)
            flow.run()
            self._flows[scope] = FlowFacts(flow.uses, flow.before)
        return self._flows[scope]

    def may_train_passed_models(self) -> bool:
        """A cheap test before asking callers: is the file in a project, with a function that trains?"""
        return self.view is not None and bool(self._training_scopes)

    @cached_property
    def _training_scopes(self) -> set[ast.AST]:
        """The functions that call `.backward(...)` themselves (worked out once)."""
        if self.view is None:
            return set()
        return {
            self.scopes.enclosing_function(call)
            for call in self.ctx.index.of_type(ast.Call)
            if isinstance(call.func, ast.Attribute) and call.func.attr == "backward"
        } - {None}

    # Across modules: call sites in other modules of the functions of this file.
    def _from_callers(self, scopes, wanted: Callable[[ast.AST], bool], may_want: Callable[[ast.AST], bool]) -> list[Use]:
        """The model calls of `scopes` (functions) that a rule `wanted`, whose mode is as the caller left it,
        on a parameter, seen from each call site in another module of the project (`may_want`: a cheaper
        test that `wanted` implies, for the tests before a flow)."""
        if self.view is None:
            return []
        found: list[Use] = []
        calling: set[ast.AST] | None = None  # the scopes calling a function of the file that makes a wanted call
        for scope in scopes:
            if not isinstance(scope, FUNCTIONS) or scope.name in LIBRARY_HOOKS:
                continue
            names = _parameter_names(scope)
            names.discard(_first_parameter(scope) if self.scopes.enclosing_class(scope) is not None else None)
            if not self._may_call_parameters(scope, names, wanted):
                continue
            if calling is None:
                callers = self.call_graph().callers
                calling = {caller for helper in self._seeing(may_want) for caller in callers.get(helper, ())}
            if scope not in calling and not self._may_note_on_parameters(scope, names, may_want):
                continue
            entry = [
                use for use in self.flow(scope).uses
                if all(f.mode is Mode.ENTRY for f in use.facts) and use.key.split(".")[0] in names and wanted(use.call)
            ]  # fmt: skip
            if not entry:
                continue
            for binding in self.ctx.analysis(Callers).bindings(scope):
                seen = (self._seen_from(use, binding, use.key, "") for use in entry)
                found += [replace(use, sites=call_sites(binding)) for use in seen if use is not None]
        return found

    def _may_call_parameters(self, scope: ast.AST, parameters: set[str], wanted: Callable[[ast.AST], bool]) -> bool:
        """A cheap test before the flow: does the function call a parameter (`model(x)`, `model.forward(x)`)
        where a rule wants it, or pass one to a function of this file?"""
        for call in self.ctx.index.within(scope, ast.Call):
            func = _called_receiver(call)
            if isinstance(func, ast.Name) and func.id in parameters and wanted(call):
                return True
            if isinstance(call.func, ast.Name) and call.func.id in self.functions:
                if any(isinstance(a, ast.Name) and a.id in parameters for a in call.args):
                    return True
        return False

    def _may_note_on_parameters(self, scope: ast.AST, parameters: set[str], wanted: Callable[[ast.AST], bool]) -> bool:
        """Another cheap test before the flow of a function that calls no function of the file making a
        call a rule `wanted` (see `_seeing`): does it make one of its own, on a parameter or on a name it
        binds to a receiver (`net = model`)?"""
        heads = self._called_heads(scope, wanted)
        if heads & parameters:
            return True
        referencing = {
            node.targets[0].id for node in self.call_graph().bindings_of.get(scope, ()) if isinstance(node, ast.Assign)
            and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and reference_key(node.value) is not None
        }  # fmt: skip
        return bool(heads & referencing)

    def _seen_from(self, use: Use, binding: Binding, own_key: str, through: str) -> Use | None:
        """`use` seen from one call site in another module (None: the call site tells nothing): the facts
        of the argument just before the call; when they are the caller's entry, from its own call sites."""
        found = self._passed(binding, use.key)
        if found is None:
            return None
        caller, site, scope, key, facts = found
        if all(f.mode is Mode.ENTRY for f in facts):
            if binding.outer is None or not isinstance(scope, FUNCTIONS):
                return None
            deeper = Use(use.call, site, scope, key, facts)
            return self._seen_from(deeper, binding.outer, own_key, f", through `{scope.name}` ({binding.place}){through}")
        if any(f.mode is Mode.ENTRY for f in facts) or all(f.mode is Mode.UNKNOWN for f in facts):
            return None  # partly the caller's own entry, or unknown: the call site tells nothing
        for node in [site, scope, *(n for f in facts for n in (f.site, f.origin, f.built) if n is not None)]:
            self.homes[node] = caller
        if _common_built(facts) is None and binding.outer is not None and isinstance(scope, FUNCTIONS):
            facts, built = self._built_by_callers(facts, binding.outer, scope, key)
            through += f" (`{key}` is {self.describe(built)}, passed at {binding.outer.place})" if built is not None else ""
        return Use(use.call, site, scope, key, facts, own_key, through)

    def _built_by_callers(self, facts: frozenset, binding: Binding, scope: ast.AST, key: str):
        """Facts about a model the caller itself was passed (`model.train()` on a parameter it never
        rebinds): with the construction that its own call site `binding` passes, when that is known; and
        that construction (None: unknown)."""
        head = key.split(".")[0]
        names = _parameter_names(scope)
        stored = {n.id for n in self.home(scope).ctx.index.within(scope, ast.Name) if isinstance(n.ctx, ast.Store)}
        found = self._passed(binding, key) if head in names and head not in stored else None
        built = _common_built(found[4]) if found is not None else None
        if built is None:
            return facts, None
        self.homes[built] = found[0]
        return frozenset(Fact(f.mode, f.site, f.origin, f.built or built) for f in facts), built

    def _passed(self, binding: Binding, key: str):
        """(the caller's context, its call, the function or module around the call, the argument's key
        there, its facts just before the call) for the receiver `key` of the function `binding` calls;
        None when the call site is not in another module, is in a test (which exercises modes on purpose,
        often on mocks), or passes no receiver there."""
        head, dot, rest = key.partition(".")
        passed = binding.argument(head)
        if not binding.path or _is_test_path(binding.path) or passed is None or passed[2].default or passed[0] is self.ctx:
            return None
        caller, argument, _ = passed
        site = caller.index.parents.get(argument)
        site = caller.index.parents.get(site) if isinstance(site, ast.keyword) else site
        if not isinstance(site, ast.Call):
            return None
        scope = caller.scopes.enclosing_function(site) or caller.tree
        modes = caller.analysis(project_modes)
        flow = modes.flow(scope)
        key = modes.key(argument, scope)
        if key is None or site not in flow.before:
            return None
        key += dot + rest
        return caller, site, scope, key, lookup(flow.before[site], key)

    def home(self, node: ast.AST) -> "Modes":
        """The modes of the module `node` belongs to: this file's, or another module's read from here."""
        ctx = self.homes.get(node)
        return self if ctx is None else ctx.analysis(project_modes)

    def where(self, node: ast.AST) -> str:
        """`line 12` in this file, `engine.py:12` in another module."""
        ctx = self.homes.get(node)
        if ctx is None:
            return f"line {node.lineno}"
        return f"{self.view.display_path(ctx.real_path or ctx.path)}:{node.lineno}"

    def project_callee(self, call: ast.Call) -> Callee | None:
        """The function of another module of the project that `call` runs, when it passes a receiver
        (None: any other call, and a decorated function or a generator, whose body does not run as the
        call: `@contextmanager`)."""
        if call not in self._callees:
            name = self.qualified_name(call.func)  # an import's: else a function of this module, or none
            imported = self.resolver is not None and name is not None and "." in name and self._passes_receivers(call)
            callee = self.resolver.resolve(call, followed=FOLLOWED_MODULES) if imported else None
            if callee is None or callee.ctx is self.ctx or callee.function.decorator_list:
                callee = None
            elif callee.ctx.analysis(project_modes).is_generator(callee.function):
                callee = None
            self._callees[call] = callee
        return self._callees[call]

    def is_generator(self, function: ast.AST) -> bool:
        if function not in self._generators:
            self._generators[function] = bool(self.own_nodes(function, ast.Yield, ast.YieldFrom))
        return self._generators[function]

    def may_evaluate(self) -> bool:
        """A cheap test before the mode flow: does the file disable gradients, or name a function like an
        evaluation? Without either it has no evaluation pass."""
        functions = self.ctx.index.of_type(*FUNCTIONS)
        return (
            any(name_says_evaluation(f.name) for f in functions)
            or any(self.disables_grad(d) for f in functions for d in f.decorator_list)
            or any(
                self.disables_grad(item.context_expr)
                for with_node in self.ctx.index.of_type(ast.With, ast.AsyncWith)
                for item in with_node.items
            )
        )

    def may_switch_to_eval(self) -> bool:
        """A cheap test before the mode flow: is there an `.eval()`, a `.train(...)` with an argument, or a
        `from_pretrained` (transformers returns the model in eval mode)?"""
        return any(
            isinstance(call.func, ast.Attribute)
            and (call.func.attr in ("eval", "from_pretrained") or (call.func.attr == "train" and (call.args or call.keywords)))
            for call in self.ctx.index.of_type(ast.Call)
        )

    def _scopes_that_set_modes(self, wanted: set[ast.AST] | None) -> list[ast.AST]:
        """The functions (and the module) where a known mode can hold: those that build a model or call
        `.train(...)`/`.eval()`, and those that call them, directly or not. Elsewhere every model's mode
        is as the caller left it, or unknown. With `wanted`, only those scopes, and the models built
        only where a wanted scope can see them."""
        calls = self.call_graph()
        setting = set(calls.setting)
        for node, scope, call in calls.built:
            if scope in setting:
                continue
            if isinstance(node, ast.Return):
                matters = scope in calls.callers
            else:  # seen where it is built, or by the callers of its scope (returned, or left in `self.model`)
                used = any(t.id in calls.read_as_model for t in assignment_targets(node))
                matters = used and (wanted is None or scope in wanted or (scope in calls.callers and scope in calls.handing_out))
            if matters and self.builds_module(call):  # it may read other modules: asked only where it matters
                setting.add(scope)
        found = _closure(setting, calls.callers)
        scopes = [self.ctx.tree, *self.ctx.index.of_type(*FUNCTIONS)]
        return [s for s in scopes if s in found and (wanted is None or s in wanted)]

    def _evaluating_scopes(self) -> set[ast.AST]:
        """The scopes that may hold an evaluation pass (a function named like one, or under a decorator or
        `with` block that disables gradients), and those that call them, directly or not."""
        holding = {
            f for f in self.ctx.index.of_type(*FUNCTIONS)
            if name_says_evaluation(f.name) or any(self.disables_grad(d) for d in f.decorator_list)
        }  # fmt: skip
        for with_node in self.ctx.index.of_type(ast.With, ast.AsyncWith):
            if any(self.disables_grad(item.context_expr) for item in with_node.items):
                holding.add(self.scopes.enclosing_function(with_node) or self.ctx.tree)
        holding = {scope for scope in holding if not self._never_evaluates(scope)}
        return _closure(holding, self.call_graph().callers)

    def _never_evaluates(self, scope: ast.AST) -> bool:
        """A scope whose calls are no evaluation pass whatever its gradients (see `evaluation_pass`)."""
        name = scope.name if isinstance(scope, FUNCTIONS) else ""
        return name in LIBRARY_HOOKS or name == "__init__" or self.scopes.enclosing_class(scope) in self.module_classes

    def call_graph(self) -> "_CallGraph":
        if self._calls is None:
            self._calls = self._build_call_graph()
        return self._calls

    def _build_call_graph(self) -> "_CallGraph":
        graph = _CallGraph()
        methods: dict[str, list[ast.AST]] = {}
        for cls in self.classes.values():
            for node in cls.body:
                if isinstance(node, FUNCTIONS):
                    methods.setdefault(node.name, []).append(node)
        for call in self.ctx.index.of_type(ast.Call):
            func = call.func
            scope = self.scopes.enclosing_function(call) or self.ctx.tree
            graph.calls_of.setdefault(scope, []).append(call)
            if isinstance(func, ast.Attribute) and func.attr in ("train", "eval"):
                graph.setting.add(scope)
            elif isinstance(func, ast.Name) and func.id in self.functions:
                graph.callers.setdefault(self.functions[func.id], set()).add(scope)
            elif isinstance(func, ast.Attribute):
                for method in methods.get(func.attr, ()):
                    graph.callers.setdefault(method, set()).add(scope)
            if self._may_call_a_model(call, scope):
                graph.model_calls_of.setdefault(scope, []).append(call)
        # `model = Net().to(device)`, `return nn.Sequential(...)`; not `self.fc = nn.Linear(...)`
        for node in self.ctx.index.of_type(ast.For, ast.AsyncFor):
            graph.bindings_of.setdefault(self.scopes.enclosing_function(node) or self.ctx.tree, []).append(node)
        for node in self.ctx.index.of_type(ast.Assign, ast.AnnAssign, ast.Return):
            scope = self.scopes.enclosing_function(node) or self.ctx.tree
            if not isinstance(node, ast.Return):
                graph.bindings_of.setdefault(scope, []).append(node)
            returns = isinstance(node, ast.Return) and node.value is not None
            if returns and self.is_module_function(scope):
                graph.handing_out.add(scope)  # what callers read back (see `_Flow._read_by_callers`)
            elif not isinstance(node, ast.Return) and any(isinstance(t, ast.Attribute) for t in assignment_targets(node)):
                graph.handing_out.add(scope)  # `self.model = model`: what the class's other methods see
            named = isinstance(node, ast.Return) or all(isinstance(t, ast.Name) for t in assignment_targets(node))
            call = _strip_same_module(node.value) if named and node.value is not None else None
            if call is not None:
                graph.built.append((node, scope, call))
        with_model_calls = _closure(set(graph.model_calls_of), graph.callers)
        graph.calling_model_helpers = {caller for helper in with_model_calls for caller in graph.callers.get(helper, ())}
        graph.candidates = {t.id for node, _, _ in graph.built if not isinstance(node, ast.Return) for t in assignment_targets(node)}
        graph.read_as_model = self._read_as_model(graph.candidates)
        return graph

    def _may_call_a_model(self, call: ast.Call, scope: ast.AST) -> bool:
        """Can a flow note `call` as a model call (see `_Flow._call`): a local name (`net(x)`), a
        `.forward(...)`, or, in a method, an attribute of an object (`self.net(x)`)?"""
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in self.functions and not (isinstance(scope, FUNCTIONS) and func.id in self.scopes.local_bindings(scope)):
                return False  # a call of a function of the file: followed
            return func.id not in self.classes and func.id not in BUILTIN_NAMES and self.qualified_name(func) is None
        if not isinstance(func, ast.Attribute):
            return False
        method = isinstance(scope, FUNCTIONS) and isinstance(self.scopes.parent(scope), ast.ClassDef)
        return func.attr == "forward" or (method and isinstance(func.value, ast.Name) and self.qualified_name(func.value) is None)

    def _read_as_model(self, names: set[str]) -> set[str]:
        """Those of `names` that some read anywhere in the file may run as a model with the mode it was
        built in. Only two reads surely do not: a method call `name.method(...)` (other than `forward`,
        `train`/`eval` or a device move), and an attribute read `name.attribute` that is not assigned."""
        found: set[str] = set()
        for name in self.ctx.index.by_type.get(ast.Name, ()):
            if name.id in names and name.id not in found and isinstance(name.ctx, ast.Load) and not self._surely_not_run(name):
                found.add(name.id)
        return found

    def _surely_not_run(self, name: ast.Name) -> bool:
        parent = self.scopes.parent(name)
        if not isinstance(parent, ast.Attribute) or parent.attr in ("forward", "module", "train", "eval", *SAME_MODULE):
            return False
        holder = self.scopes.parent(parent)
        method_call = isinstance(holder, ast.Call) and holder.func is parent
        return method_call or not isinstance(holder, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Call, ast.keyword, ast.Return))

    def key(self, expr: ast.AST, scope: ast.AST) -> str | None:
        """The one key of a receiver seen from `scope`: the object it is (`objects.Objects.key`), or, for
        the attributes of an nn.Module's `self` (which `self.eval()` switches too), its reference key;
        None for anything but a name and attributes of it."""
        key = reference_key(expr)
        if key is None:
            return None
        cls = self.scopes.enclosing_class(scope) if isinstance(scope, FUNCTIONS) else None
        if cls is not None and cls in self.module_classes and key.partition(".")[0] == _first_parameter(scope):
            return key
        return self.objects.key(expr, scope) or key

    @cached_property
    def optimized(self) -> dict[str, ast.AST]:
        """The keys of what the file's optimizers get the parameters of (`objects.Objects.optimized`), with
        the function (or module) that builds the optimizer."""
        return {
            self.key(owner, scope): scope
            for owner in self.objects.optimized()
            for scope in [self.scopes.enclosing_function(owner) or self.ctx.tree]
        }  # fmt: skip

    def frozen(self, use: Use) -> bool:
        """Is the model of a use one that no optimizer updates while the optimizers at hand update others:
        a teacher, a frozen encoder, an EMA copy kept in eval mode on purpose? At hand: the file's, for a
        model the file makes or keeps; those the function builds itself, for a model it is passed."""
        key = use.key
        if use.own_key or "{" in key:
            return False
        updated = [k for k, scope in self.optimized.items() if key.startswith("@") or scope is use.scope]
        return bool(updated) and not any(k == key or k.startswith(key + ".") or key.startswith(k + ".") for k in updated)

    def is_module_function(self, scope: ast.AST) -> bool:
        """A function defined once at module level: its callers here call it by name and read what it
        returns (`model = build()`)."""
        return isinstance(scope, FUNCTIONS) and self.functions.get(scope.name) is scope

    def qualified_name(self, expr: ast.AST) -> str | None:
        if expr not in self._qualified:
            self._qualified[expr] = self.ctx.qualified_name(expr)
        return self._qualified[expr]

    def summary(self, function: ast.AST, depth: int, constants: tuple = ()) -> Summary | None:
        """What a function does to the modes of the models it receives. Computed once per set of constants
        its call passes for the parameters that decide its branches (`deciding`; at most `MAX_CONTEXTS`
        sets, then none), at the depth it is first asked for: a deeper, cut-short summary only knows less."""
        if depth > MAX_CALL_DEPTH or function in self._in_progress:
            return None
        key = (function, constants)
        if constants and key not in self._summaries:
            self._contexts[function] = self._contexts.get(function, 0) + 1
            if self._contexts[function] > MAX_CONTEXTS:
                key, constants = (function, ()), ()
        if key not in self._summaries:
            self._in_progress.add(function)
            try:
                flow = _Flow(self, function, depth, dict(constants))
                exit_state = flow.run()
                uses = [u for u in flow.uses if any(f.mode is Mode.ENTRY for f in u.facts)]
                self._summaries[key] = Summary(exit_state, uses, flow.returned)
            finally:
                self._in_progress.discard(function)
        return self._summaries[key]

    def deciding(self, function: ast.AST) -> set[str]:
        """The parameters of a function whose values decide its branches or its gradients: named in an
        `if` or conditional expression's test, or passed to `set_grad_enabled(...)` or `.train(...)`."""
        if function not in self._deciding:
            names = _parameter_names(function)
            tests = [n.test for n in self.ctx.index.within(function, ast.If, ast.IfExp)]
            tests += [
                argument for call in self.ctx.index.within(function, ast.Call) if call.args
                and (isinstance(call.func, ast.Attribute) and call.func.attr == "train" or self.qualified_name(call.func) in SET_GRAD_ENABLED)
                for argument in call.args[:1]
            ]  # fmt: skip
            self._deciding[function] = {n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name) and n.id in names}
        return self._deciding[function]

    def attributes(self, cls: ast.AST) -> set[str]:
        """The attributes a class assigns on `self` (`self.model = ...`)."""
        if not isinstance(cls, ast.ClassDef):
            return set()
        if cls not in self._attributes:
            self._attributes[cls] = {
                target.attr
                for node in self.ctx.index.within(cls, ast.Assign, ast.AnnAssign)
                for target in _bound(node)
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            }
        return self._attributes[cls]

    # Questions about a call's surroundings.
    def grad_disabled(self, node: ast.AST, constants: dict | None = None) -> bool:
        """Is `node` inside `with torch.no_grad()` (or `inference_mode`, `set_grad_enabled(False)`), or
        in a function decorated with one?"""
        for ancestor in self.scopes.ancestors(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                if any(self.disables_grad(item.context_expr, constants) for item in ancestor.items):
                    return True
            elif isinstance(ancestor, FUNCTIONS):
                return any(self.disables_grad(d) for d in ancestor.decorator_list)
            elif isinstance(ancestor, (ast.Lambda, ast.ClassDef)):
                return False
        return False

    def disables_grad(self, expr: ast.AST, constants: dict | None = None) -> bool:
        call = expr if isinstance(expr, ast.Call) else None
        name = self.qualified_name(call.func if call else expr)
        if name in GRAD_OFF:
            mode = call.args[0] if call is not None and call.args else None
            return not (isinstance(mode, ast.Constant) and mode.value is False)
        if name in SET_GRAD_ENABLED and call is not None and call.args:
            if constants and fold(call.args[0], constants) is False:  # `set_grad_enabled(phase == "train")`
                return True
            return isinstance(call.args[0], ast.Constant) and call.args[0].value is False
        return False

    def step_body(self, node: ast.AST) -> ast.AST:
        """The innermost loop or function around `node`: the body one training step or pass runs."""
        for ancestor in self.scopes.ancestors(node):
            if isinstance(ancestor, (*LOOPS, *FUNCTIONS, ast.Lambda)):
                return ancestor
        return self.ctx.tree

    def evaluation_pass(self, call: ast.AST) -> bool:
        """Is `call` part of an evaluation pass: under `torch.no_grad()`/`inference_mode()`, or in a
        function whose name says it evaluates, and not in a step that trains (a `no_grad` block for
        logging or EMA inside a training loop is not an evaluation), nor in `__init__` or a method of an
        nn.Module (a dummy forward pass that sizes the layers)?"""
        return self._may_be_evaluation_pass(call) and not self.trains(self.step_body(call), ("backward", "step"))

    def _may_be_evaluation_pass(self, call: ast.AST) -> bool:
        """`evaluation_pass` without its dearest test (does the step train?), for the cheap tests."""
        function = self.scopes.enclosing_function(call)
        name = function.name if isinstance(function, FUNCTIONS) else ""
        if name in LIBRARY_HOOKS or name == "__init__" or self.scopes.enclosing_class(call) in self.module_classes:
            return False  # a dummy forward pass to size layers, a module's own helpers
        # A function named like an evaluation counts for its loops over data, not for a lone call (a
        # `validate_shapes` that runs one dummy batch).
        return self.grad_disabled(call) or (name_says_evaluation(name) and self._in_a_loop(call, function))

    def _in_a_loop(self, node: ast.AST, function: ast.AST) -> bool:
        for ancestor in self.scopes.ancestors(node):
            if ancestor is function:
                return False
            if isinstance(ancestor, (*LOOPS, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                return True
        return False

    def training_step(self, call: ast.AST, constants: dict | None = None) -> bool:
        """Is `call` made in a loop iteration or function that trains (calls `backward`), outside `no_grad`?
        `constants`: the loop variables known in a round of an unrolled loop, which decide branches."""
        home = self.home(call)
        if home is not self:
            return home.training_step(call)
        if constants:
            return not self.grad_disabled(call, constants) and any(
                isinstance(c.func, ast.Attribute) and c.func.attr == "backward" or self._helper_trains(c, self.step_body(call))
                for c in _own_calls(self.step_body(call), constants)
            )  # fmt: skip
        return self._may_be_training_step(call) and self.trains(self.step_body(call), ("backward",))

    def _may_be_training_step(self, call: ast.AST) -> bool:
        """`training_step` without its dearest test (does the step train?), for the cheap tests."""
        return not self.grad_disabled(call)

    def trains(self, body: ast.AST, methods: tuple[str, ...]) -> bool:
        """Does a loop or function call one of `methods` (`.backward(...)`) itself, or a helper of this
        file that calls `.backward(...)`?"""
        if (body, methods) not in self._steps:
            self._steps[(body, methods)] = any(
                (isinstance(call.func, ast.Attribute) and call.func.attr in methods) or self._helper_trains(call, body)
                for call in _own_calls(body)
            )
        return self._steps[(body, methods)]

    def _helper_trains(self, call: ast.Call, around: ast.AST) -> bool:
        """Is `call` a call of a function or method of this file, or of a function of another module of the
        project, that calls `.backward(...)` somewhere, itself or through the helpers of its file?"""
        helper, ctx = self._helper(call, around), self.ctx
        if helper is None and self.resolver is not None:
            callee = self.resolver.resolve(call)  # another module, read when it mentions the loop model's words
            helper, ctx = (callee.function, callee.ctx) if callee is not None else (None, ctx)
        if helper is None:
            return False
        if helper not in self._trains:
            self._trains[helper] = False  # while a recursive helper is asked
            home = self if ctx is self.ctx else ctx.analysis(project_modes)
            self._trains[helper] = any(
                (isinstance(node.func, ast.Attribute) and node.func.attr == "backward") or home._helper_trains(node, helper)
                for node in ctx.index.within(helper, ast.Call)
            )
        return self._trains[helper]

    def trained_between(self, first: ast.AST, second: ast.AST) -> bool:
        """Does the smallest statement holding both nodes train (call `.backward(...)` anywhere inside,
        or a helper of this file that does)? A model put in training mode and evaluated with no training
        around it is put there on purpose (recomputing batch-norm statistics, Monte Carlo dropout)."""
        home = self.home(second)
        if home is not self:
            return home.trained_between(first, second)
        around_first = [first, *self.scopes.ancestors(first)]
        around_second = {second, *self.scopes.ancestors(second)}
        common = next((node for node in around_first if node in around_second), self.ctx.tree)
        return any(
            (isinstance(call.func, ast.Attribute) and call.func.attr == "backward") or self._helper_trains(call, common)
            for call in self.ctx.index.within(common, ast.Call)
        )

    def _helper(self, call: ast.Call, body: ast.AST) -> ast.AST | None:
        func = call.func
        if isinstance(func, ast.Name):
            return self.functions.get(func.id)
        if isinstance(func, ast.Attribute) and func.attr in self.wrapper_methods:
            return self.wrapper_methods[func.attr]
        cls = self.scopes.enclosing_class(body)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and cls is not None:
            return next((n for n in cls.body if isinstance(n, FUNCTIONS) and n.name == func.attr), None)
        return None

    # What the model is.
    def layer(self, use: Use) -> Layer | None:
        """The model's mode-dependent layer (NO_LAYER: known to have none; None: unknown), from the
        constructions the facts agree on or, for `self.model`, the class's assignments."""
        constructions = {f.built for f in use.facts}
        if None in constructions:
            constructions.discard(None)
            home = self.home(use.site)
            built = home.attribute_constructions(use.key, use.scope) or (self._passed_constructions(use) if home is self else [])
            if not built:
                return None
            constructions.update(built)
            if home is not self:
                self.homes.update(dict.fromkeys(built, home.ctx))
        layers = []
        for construction in constructions:
            layer = self._layers_of(construction).of_constructor(construction)
            if layer is not None and layer.node is not None and construction in self.homes:
                self.homes.setdefault(layer.node, self.homes[construction])
            layers.append(layer)
        if any(layer is NO_LAYER for layer in layers):
            return NO_LAYER  # some way of getting here evaluates a model that does not care
        return next((layer for layer in layers if layer is not None), None)

    def _passed_constructions(self, use: Use) -> list[ast.Call]:
        """What the call sites of the function around a model call pass for the model (`model(x)` with
        `model` a parameter, or `self.model` set from one in `__init__`): every one of their constructions,
        or none when one is unknown."""
        func = _called_receiver(use.call)
        if self.view is None or not self._may_be_passed(func):
            return []
        found: list[ast.Call] = []
        for (ctx, construction), _ in constructions(self.ctx, func):
            if ctx is not self.ctx:
                self.homes[construction] = ctx
            found.append(construction)
        return found

    def _may_be_passed(self, func: ast.AST) -> bool:
        """A cheap test before asking callers: a parameter of the function around it, or `self.x`."""
        if isinstance(func, ast.Attribute):
            return is_self_attribute(func)
        function = self.scopes.enclosing_function(func)
        return isinstance(func, ast.Name) and isinstance(function, FUNCTIONS) and func.id in _parameter_names(function)

    def _layers_of(self, construction: ast.Call) -> ModeLayers:
        """The layers of the module a construction is in, its classes resolved in the linted project."""
        ctx = self.homes.get(construction)
        if ctx is None:
            return self.layers
        if ctx not in self._read_layers:
            self._read_layers[ctx] = ModeLayers.read_from(ctx, self.layers)
        return self._read_layers[ctx]

    def describe(self, node: ast.AST) -> str:
        """`model.train()` (line 20), or (engine.py:20) in another module, for messages."""
        return f"`{one_line(self.context_of(node).text(node), 40)}` ({self.where(node)})"

    def context_of(self, node: ast.AST):
        return self.homes.get(node, self.ctx)

    def loops_around(self, node: ast.AST, scope: ast.AST) -> set[ast.AST]:
        home = self.home(node)
        if home is not self:
            return home.loops_around(node, scope)
        loops = set()
        for ancestor in self.scopes.ancestors(node):
            if ancestor is scope:
                break
            if isinstance(ancestor, LOOPS):
                loops.add(ancestor)
        return loops

    def builds_module(self, call: ast.Call) -> bool:
        if call not in self._builds:
            self._builds[call] = self.layers.builds_module(call)
        return self._builds[call]

    def own_nodes(self, scope: ast.AST, *types: type, stored: bool = False) -> list[ast.AST]:
        """The nodes of `types` in a function's (or the module's) body, not inside its nested functions,
        lambdas or classes, in source order (`stored`: only names that are assigned)."""
        if (scope, types, stored) not in self._own_nodes:
            found = self.ctx.index.within(scope, *types)
            if stored:
                found = [node for node in found if isinstance(node.ctx, ast.Store)]
            if not isinstance(scope, FUNCTIONS):
                found = [node for node in found if self.scopes.enclosing_scope(node) is None]
            else:
                header = {node for part in (*scope.decorator_list, scope.args, scope.returns) if part for node in ast.walk(part)}
                found = [node for node in found if node not in header and self.scopes.enclosing_scope(node) is scope]
            self._own_nodes[(scope, types, stored)] = found
        return self._own_nodes[(scope, types, stored)]

    def calls_in_order(self, expr: ast.AST) -> list[ast.Call]:
        """The calls of an expression, each after the calls in its own arguments (not inside lambdas)."""
        if expr not in self._call_orders:
            calls = self.ctx.index.within(expr, ast.Call)  # in order, unless one holds another or a lambda does
            if len(calls) > 1 or (calls and self.ctx.index.within(expr, ast.Lambda)):
                calls = _calls_in_order(expr)
            self._call_orders[expr] = calls
        return self._call_orders[expr]

    def attribute_constructions(self, key: str, scope: ast.AST) -> list[ast.Call]:
        """For `self.model` in a method: the constructions of every `self.model = ...` of the class (the
        arms of an `if` may build different classes); empty when one of them builds no module."""
        head, _, attribute = key.partition(".")
        cls = self.scopes.enclosing_class(scope) if isinstance(scope, FUNCTIONS) else None
        if cls is None or "." in attribute or not attribute or head != _first_parameter(scope):
            return []
        values = [
            node.value
            for node in self.ctx.index.within(cls, ast.Assign)
            if any(isinstance(t, ast.Attribute) and t.attr == attribute and reference_key(t.value) == head for t in node.targets)
        ]
        calls = [_strip_same_module(v) for v in values]
        return [] if any(c is None or not self.builds_module(c) for c in calls) else calls


@dataclass
class _CallGraph:
    """What `Modes` needs of the file before any flow: who calls which function of the file, where modes
    are set and models built, and which names are read in ways that may run a model."""

    callers: dict[ast.AST, set[ast.AST]] = field(default_factory=dict)  # function -> the scopes calling it
    setting: set[ast.AST] = field(default_factory=set)  # scopes calling `.train(...)`/`.eval()`
    handing_out: set[ast.AST] = field(default_factory=set)  # scopes whose values their callers may see
    built: list[tuple[ast.AST, ast.AST, ast.Call]] = field(default_factory=list)  # (statement, scope, call)
    candidates: set[str] = field(default_factory=set)  # the names `built` assigns
    read_as_model: set[str] = field(default_factory=set)  # those of them `Modes._read_as_model` keeps
    model_calls_of: dict[ast.AST, list[ast.Call]] = field(default_factory=dict)  # scope -> its calls that may run a model
    calling_model_helpers: set[ast.AST] = field(default_factory=set)  # scopes calling functions that make some
    calls_of: dict[ast.AST, list[ast.Call]] = field(default_factory=dict)  # scope -> the calls it makes
    bindings_of: dict[ast.AST, list[ast.AST]] = field(default_factory=dict)  # scope -> its assignments and for loops


def _closure(start: set[ast.AST], callers: dict[ast.AST, set[ast.AST]]) -> set[ast.AST]:
    """`start` and every scope that calls one of them, directly or not."""
    found, stack = set(start), list(start)
    while stack:
        for caller in callers.get(stack.pop(), ()):
            if caller not in found:
                found.add(caller)
                stack.append(caller)
    return found


class _Flow:
    """The facts along one function's statements (or the module's)."""

    def __init__(self, modes: Modes, scope: ast.AST, depth: int, constants: dict | None = None) -> None:
        self.modes = modes
        self.ctx = modes.ctx
        self.scope = scope
        self.depth = depth
        self.uses: list[Use] = []
        self.before: dict[ast.Call, State] = {}  # the state just before each call
        self._uses_at: dict[tuple, int] = {}
        self.returned: frozenset = frozenset()
        self._returns: list[State] = []
        self._loops: list[_Targets] = []
        self.self_name = _first_parameter(scope) if self._is_method() else None
        self.constants: dict = constants or {}  # the loop variables of the unrolled loops around the statement
        # run, and the parameters the call site passes constants for
        self.saved: dict[str, tuple[str, frozenset]] = {}  # `was = m.training`: was -> (m's key, m's facts then)
        self._keys: dict[ast.AST, str | None] = {}
        nodes = modes.own_nodes(scope, *ACTING)
        self._followed = {call for call in nodes if isinstance(call, ast.Call) and self._may_follow(call)}
        # The function's own names whose facts it never reads: not tracked (the module's are all tracked,
        # as its helpers may read any of them).
        self.untracked = frozenset()
        if isinstance(scope, FUNCTIONS):
            self.untracked = modes.scopes.local_bindings(scope) - self._read_names(nodes)
        self.active = self._active_statements(nodes)

    def run(self) -> State:
        body = self.scope.body if isinstance(self.scope.body, list) else []
        end = self._block(body, {})
        return join([end, *self._returns]) or {}

    def _is_method(self) -> bool:
        return isinstance(self.scope, FUNCTIONS) and isinstance(self.modes.scopes.parent(self.scope), ast.ClassDef)

    def _read_names(self, nodes: list[ast.AST]) -> set[str]:
        """The heads of the receivers whose facts the flow may read: parameters (the caller reads them),
        models called or switched, the arguments of calls it follows (or of every call, when call sites
        are read), values assigned or returned, and the variables of loops over listed models."""
        read = {a.arg for a in parameters(self.scope)}
        for node in nodes:
            if isinstance(node, ast.Call):
                receivers = self._read_by_call(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)) and node.value is not None:
                receivers = [self._held(node.value)]
            elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)):
                receivers = [node.target]
            else:
                continue
            for receiver in receivers:
                key = self.key(receiver) if receiver is not None else None
                if key is not None:
                    read.add(key.partition(".")[0])
        return read

    def _read_by_call(self, call: ast.Call) -> list[ast.AST]:
        """The receivers whose facts a call may read (see `_call`)."""
        func, read = call.func, []
        if isinstance(func, ast.Name):
            read.append(func)
        elif isinstance(func, ast.Attribute) and (func.attr in ("eval", "train", "forward") or func.attr in self.modes.wrapper_methods):
            moved = _moved(func.value)
            read += [func.value, moved.args[0] if _is_getattr(moved) else moved]
        if self.modes.call_sites_read or call in self._followed:
            read += [a.value if isinstance(a, ast.Starred) else a for a in [*call.args, *(k.value for k in call.keywords)]]
        return read

    def _may_follow(self, call: ast.Call) -> bool:
        """Can the flow apply the summary of the function `call` runs (see `_call` and `_method_call`)?"""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.modes.functions:
            return True
        if isinstance(func, ast.Attribute) and self.key(func.value) is not None and self.modes.qualified_name(func.value) is None:
            return self.key(func.value) == self.self_name or func.attr in self.modes.wrapper_methods
        return self.modes.project_callee(call) is not None

    def _held(self, value: ast.AST) -> ast.AST | None:
        """The receiver whose facts an assigned or returned value has (see `_value_facts`)."""
        while isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr in (*SAME_MODULE, "eval", "train"):
                value = func.value
            elif value.args and canonical_class(self.modes.qualified_name(func)) in WRAPPERS:
                value = value.args[0]
            else:
                return None
        return value

    def _tracks(self, key: str) -> bool:
        return key.partition(".")[0] not in self.untracked

    def _active_statements(self, nodes: list[ast.AST]) -> set[ast.AST]:
        """The statements the flow must run: those holding a call that may note a model call or change a
        tracked receiver's facts, a binding of one, or a jump. Any other statement leaves the state as it
        is (and asks for no summary): the flow passes it by."""
        active: set[ast.AST] = set()
        for node in nodes:
            if not self._acts(node):
                continue
            while node is not self.scope and node not in active:
                if isinstance(node, ast.stmt):
                    active.add(node)
                node = self.modes.scopes.parent(node)
        return active

    def _acts(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return self._call_acts(node)
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if _saved_mode(node) is not None:
                return True
            return node.value is not None and any(self._binds_tracked(t) for t in assignment_targets(node))
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return self._binds_tracked(node.target)
        if isinstance(node, ast.withitem):
            return node.optional_vars is not None and self._binds_tracked(node.optional_vars)
        if isinstance(node, ast.While):
            return isinstance(node.test, ast.Constant) and bool(node.test.value)
        return isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue))

    def _binds_tracked(self, target: ast.AST) -> bool:
        key = self.key(target)
        if key is None:
            return any(self._binds_tracked(element) for element in getattr(target, "elts", ()))
        return self._tracks(key)

    def _call_acts(self, call: ast.Call) -> bool:
        """Can `_call` note a model call, apply a summary, or change a tracked receiver's facts?"""
        func = call.func
        if call in self._followed or any(self._passes_tracked(a) for a in [*call.args, *(k.value for k in call.keywords)]):
            return True
        if isinstance(func, ast.Name):
            return func.id not in BUILTIN_NAMES and self.modes.qualified_name(func) is None
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in ("eval", "train"):
            moved = _moved(func.value)
            owner = self.key(moved.args[0] if _is_getattr(moved) else moved)
            return owner is not None and self._tracks(owner)
        owner = self.key(func.value)
        if owner is None or self.modes.qualified_name(func.value) is not None:
            return False
        return func.attr == "forward" or owner == self.self_name or (func.attr not in MODE_NEUTRAL and self._tracks(owner))

    def _passes_tracked(self, argument: ast.AST) -> bool:
        key = self.key(argument.value if isinstance(argument, ast.Starred) else argument)
        return key is not None and self._tracks(key)

    def key(self, expr: ast.AST) -> str | None:
        if expr not in self._keys:
            self._keys[expr] = self.modes.key(expr, self.scope)
        return self._keys[expr]

    # Statements.
    def _block(self, statements: list, state: State | None) -> State | None:
        for statement in statements:
            if state is None:
                return None
            if statement in self.active:
                state = self._statement(statement, state)
        return state

    def _statement(self, node: ast.AST, state: State) -> State | None:
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            return state
        if isinstance(node, ast.If):
            state = self._expression(node.test, state)
            decided = fold(node.test, self.constants) if self.constants else None
            if decided is not None:
                return self._block(node.body if decided else node.orelse, state)
            arms = self._block(node.body, state), self._block(node.orelse, state)
            return self._restored(node.test, *arms) or join(arms)
        if isinstance(node, LOOPS):
            return self._loop(node, state)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                state = self._expression(item.context_expr, state)
                if item.optional_vars is not None:
                    state = self._bind(item.optional_vars, frozenset({Fact(Mode.UNKNOWN)}), state)
            return self._block(node.body, state)
        if isinstance(node, ast.Try) or (hasattr(ast, "TryStar") and isinstance(node, ast.TryStar)):
            body = self._block(node.body, state)
            handler_entry = join([state, body])
            handlers = [self._block(h.body, handler_entry) for h in node.handlers]
            end = join([self._block(node.orelse, body), *handlers])
            if not node.finalbody:
                return end
            return self._block(node.finalbody, end if end is not None else handler_entry)
        if isinstance(node, ast.Match):
            state = self._expression(node.subject, state)
            return join([state, *(self._block(case.body, state) for case in node.cases)])
        if isinstance(node, ast.Return):
            if node.value is not None:
                state = self._expression(node.value, state)
                if self._read_by_callers():
                    self.returned |= self._value_facts(node.value, state, returned=True)
            self._returns.append(state)
            return None
        if isinstance(node, (ast.Break, ast.Continue)):
            if self._loops:
                targets = self._loops[-1]
                (targets.breaks if isinstance(node, ast.Break) else targets.continues).append(state)
            return None
        if isinstance(node, ast.Raise):
            return None
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is None:
                return state
            saved = _saved_mode(node)
            if saved is not None and self.key(saved[1]) is not None:
                key = self.key(saved[1])
                self.saved[saved[0]] = (key, lookup(state, key))
            state = self._expression(node.value, state)
            targets = assignment_targets(node)
            if self._may_be_run(targets, node.value):
                facts = self._value_facts(node.value, state)
            else:
                facts = frozenset({Fact(Mode.UNKNOWN, node.value)})
            for target in targets:
                if isinstance(target, (ast.Tuple, ast.List)):
                    state = self._bind_items(target, node.value, state)
                else:
                    state = self._bind(target, facts, state)
            return state
        for child in child_nodes(node):
            if isinstance(child, ast.expr):
                state = self._expression(child, state)
        return state

    def _loop(self, node: ast.AST, state: State) -> State | None:
        items = unrolled(node, self.modes.scopes)
        if items is not None:
            return self._unroll(node, items, state)
        if not isinstance(node, ast.While):
            state = self._expression(node.iter, state)
            state = self._bind(node.target, frozenset({Fact(Mode.UNKNOWN)}), state)
        head = state
        for _ in range(MAX_ROUNDS):
            self._loops.append(_Targets())
            entry = self._expression(node.test, head) if isinstance(node, ast.While) else head
            end = self._block(node.body, entry)
            targets = self._loops.pop()
            new_head = join([head, end, *targets.continues])
            if new_head == head:
                break
            head = new_head
        forever = isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and bool(node.test.value)
        normal_exit = None if forever else self._block(node.orelse, head)
        return self._set_through_target(node, join([normal_exit, *targets.breaks]))

    def _restored(self, test: ast.AST, body: State | None, orelse: State | None) -> State | None:
        """`if was_training: m.train()` after `was_training = m.training`: the arms are correlated with the
        saved mode (training in one, not in the other), so `m` is back as it was when saved."""
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        name = test.operand if negated else test
        saved = self.saved.get(name.id) if isinstance(name, ast.Name) else None
        if saved is None or body is None or orelse is None:
            return None
        training, other = (orelse, body) if negated else (body, orelse)
        key, facts = saved
        if all(f.mode is Mode.TRAIN for f in lookup(training, key)) and all(f.mode is Mode.EVAL for f in lookup(other, key)):
            joined = join([body, orelse])
            return self._set(joined, key, facts)
        return None

    def _unroll(self, node: ast.For, items: list, state: State) -> State | None:
        """A loop over literal constants, run once per item with the loop variable as that constant: the
        branches it decides are taken as the program takes them (`if phase == "train": model.train()`)."""
        state, outer, breaks = self._expression(node.iter, state), self.constants, []
        for item in items:
            if state is None:
                break
            self.constants = {**outer, node.target.id: item}
            self._loops.append(_Targets())
            end = self._block(node.body, state)
            targets = self._loops.pop()
            breaks += targets.breaks
            state = join([end, *targets.continues])
        self.constants = outer
        return join([self._block(node.orelse, state) if state is not None else None, *breaks])

    def _set_through_target(self, loop: ast.AST, state: State | None) -> State | None:
        """`for net in (generator, discriminator): net.train()`: the models listed take the modes the loop
        variable was given."""
        target = self.key(loop.target) if isinstance(loop, (ast.For, ast.AsyncFor)) else None
        if state is None or target is None or not isinstance(loop.iter, (ast.List, ast.Tuple, ast.Set)):
            return state
        if not any(
            isinstance(call.func, ast.Attribute) and call.func.attr in ("train", "eval") and self.key(call.func.value) == target
            for call in _own_calls(loop)
        ):
            return state
        for element in loop.iter.elts:
            key = self.key(element)
            if key is not None:
                state = self._set(state, key, lookup(state, target))
        return state

    def _bind(self, target: ast.AST, facts: frozenset, state: State) -> State:
        key = self.key(target)
        if key is None:
            for element in getattr(target, "elts", ()):
                state = self._bind(element, frozenset({Fact(Mode.UNKNOWN)}), state)
            return state
        return self._set(state, key, facts)

    def _bind_items(self, target: ast.Tuple | ast.List, value: ast.AST, state: State) -> State:
        """`student, teacher = Net(), Net().eval()`, `benchmark, model = make_parts()`: each name gets the
        mode of what is at its position, or of what the function of the file returns there (a
        construction trains, `Net().eval()` evaluates; anything else: unknown)."""
        size = len(target.elts)
        returns = [value] if _is_items(value, size) else self._returned_tuples(value, size) or []
        unknown = frozenset({Fact(Mode.UNKNOWN)})
        for i, element in enumerate(target.elts):
            items = [r.elts[i] for r in returns]
            facts = frozenset().union(*(self._value_facts(v, {}) if isinstance(v, ast.Call) else unknown for v in items))
            state = self._bind(element, facts or unknown, state)
        return state

    @cached_property
    def _local_functions(self) -> dict[str, list[ast.AST]]:
        found: dict[str, list[ast.AST]] = {}
        for node in self.modes.own_nodes(self.scope, *FUNCTIONS):
            found.setdefault(node.name, []).append(node)
        return found

    def _returned_tuples(self, value: ast.AST, size: int) -> list[ast.Tuple] | None:
        """The `return a, b` statements of the function of the file that `value` calls, when every return
        of it is a tuple of `size` items."""
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return None
        name = value.func.id
        local = self._local_functions.get(name, [])
        if local:
            function = local[0] if len(local) == 1 else None
        else:
            function = None if self._shadowed(value.func) else self.modes.functions.get(name)
        if function is None:
            return None
        returns = self.modes.own_nodes(function, ast.Return)
        if returns and all(_is_items(r.value, size) for r in returns):
            return [r.value for r in returns]
        return None

    def _set(self, state: State, key: str, facts: frozenset) -> State:
        """`key` holds `facts` now, and so do its submodules; an enclosing model with a known mode is
        now partly in another mode: unknown."""
        if not self._tracks(key):
            return state
        prefix, state = key + ".", dict(state)
        for submodule in [k for k in state if k.startswith(prefix)]:
            del state[submodule]
        modes = {f.mode for f in facts}
        parent = key
        while "." in parent:
            parent = parent.rsplit(".", 1)[0]
            if parent in state and {f.mode for f in state[parent]} != modes:
                state[parent] = frozenset({Fact(Mode.UNKNOWN)})
        state[key] = facts
        return state

    # Expressions, in evaluation order.
    def _expression(self, expr: ast.AST, state: State) -> State:
        skipped = self._skipped_arms(expr) if self.constants else ()
        for call in self.modes.calls_in_order(expr):
            if call not in skipped:
                state = self._call(call, state)
        return state

    def _skipped_arms(self, expr: ast.AST) -> set[ast.AST]:
        """The calls in the arms of conditional expressions the loop variables decide against
        (`model.train() if phase == "train" else model.eval()`)."""
        skipped: set[ast.AST] = set()
        for choice in self.ctx.index.within(expr, ast.IfExp):
            decided = fold(choice.test, self.constants)
            if decided is not None:
                skipped.update(self.ctx.index.within(choice.orelse if decided else choice.body, ast.Call))
        return skipped

    def _call(self, call: ast.Call, state: State) -> State:
        self.before[call] = state
        func = call.func
        if isinstance(func, ast.Attribute):
            owner = self.key(func.value)
            if owner is not None and self.modes.qualified_name(func.value) is None:
                return self._method_call(call, owner, func.attr, state)
            if isinstance(func.value, ast.Call) and func.attr in ("eval", "train"):
                # `model.to(device).train()` sets the mode of `model`; `Net().eval()` makes a new object,
                # read by `_value_facts`.
                moved = _moved(func.value)
                if _is_getattr(moved):  # `getattr(model, "module", model).train()`: the model or its wrapped one
                    moved = moved.args[0]
                owner = self.key(moved)
                return state if owner is None else self._method_call(call, owner, func.attr, state)
        elif isinstance(func, ast.Name):
            if func.id in self.modes.functions and not self._shadowed(func):
                return self._follow(call, self.modes.functions[func.id], None, state)
            if func.id in self.modes.classes or func.id in HARMLESS_BUILTINS:
                return state
            key = self.key(func)
            if key is not None and self.modes.qualified_name(func) is None and func.id not in BUILTIN_NAMES:
                self._record(call, call, key, lookup(state, key))
        if (self.modes.qualified_name(func) or "").startswith("torch."):
            return state
        callee = self.modes.project_callee(call)
        if callee is not None:
            return self._follow(call, callee.function, None, state, callee.ctx)
        return self._unknown_arguments(call, state)

    def _method_call(self, call: ast.Call, owner: str, method: str, state: State) -> State:
        own = self._own_method(call, owner, method) if method in ("eval", "train") else None
        if own is not None:  # `self.eval(loader)` of a trainer: its own method, not `Module.eval()`
            return self._follow(call, own, owner, state)
        if method in ("eval", "train"):
            restored = self.saved.get(getattr(call_argument(call, 0, "mode"), "id", None)) if method == "train" else None
            if restored is not None and restored[0] == owner:  # `m.train(was_training)`: back as it was
                return self._set(state, owner, restored[1])
            mode = _requested_mode(call, method)
            facts = lookup(state, owner)
            built = _common_built(facts)
            return self._set(state, owner, frozenset({Fact(mode, call, call, built)}))
        if method in MODE_NEUTRAL:
            if method == "forward":
                self._record(call, call, owner, lookup(state, owner))
            return self._unknown_arguments(call, state)
        if owner == self.self_name and self._method(method) is not None:
            return self._follow(call, self._method(method), owner, state)
        if owner != self.self_name and method in self.modes.wrapper_methods:
            return self._follow(call, self.modes.wrapper_methods[method], owner, state)
        if owner == self.self_name and method in self.modes.attributes(self.modes.scopes.parent(self.scope)):
            # `self.model(x)`: a call of the model held in an attribute.
            key = self.key(call.func) or f"{owner}.{method}"
            self._record(call, call, key, lookup(state, key))
        else:  # `model.freeze()`, `x.copy_(...)`: a method that may change its object's mode
            state = self._set(state, owner, frozenset({Fact(Mode.UNKNOWN, call)}))
        return self._unknown_arguments(call, state)

    def _own_method(self, call: ast.Call, owner: str, method: str) -> ast.AST | None:
        """The method a class of the file that is no nn.Module defines itself under a name of `Module`'s,
        called on its instance (`self.eval(...)` in a trainer, `trainer.train()`)."""
        if owner == self.self_name:
            cls = self.modes.scopes.parent(self.scope)
            return self._method(method) if cls not in self.modes.module_classes else None
        found = self.modes.objects.points_to(call.func.value)
        classes = {self.modes.objects.instance_class(obj) for obj in found or ()}
        if len(classes) != 1 or None in classes or classes & set(self.modes.module_classes):
            return None
        cls = classes.pop()
        return next((n for n in cls.body if isinstance(n, FUNCTIONS) and n.name == method), None)

    def _method(self, name: str) -> ast.AST | None:
        """The method `name` of the analysed method's class or of its base classes in this file."""
        cls = self.modes.scopes.parent(self.scope)
        seen = set()
        while isinstance(cls, ast.ClassDef) and cls not in seen:
            seen.add(cls)
            for node in cls.body:
                if isinstance(node, FUNCTIONS) and node.name == name:
                    return node
            bases = [b.id for b in cls.bases if isinstance(b, ast.Name)]
            cls = self.modes.classes.get(bases[0]) if len(bases) == 1 else None
        return None

    def _shadowed(self, name: ast.Name) -> bool:
        return self._binds(name.id)

    def _binds(self, name: str) -> bool:
        """Does the analysed function bind `name` itself (a local, not the module's)?"""
        return isinstance(self.scope, FUNCTIONS) and name in self.modes.scopes.local_bindings(self.scope)

    def _record(self, call: ast.Call, site: ast.AST, key: str, facts: frozenset, inner: tuple = ()) -> None:
        """Note the facts at a model call; a loop's later rounds replace its earlier ones."""
        constants = tuple(sorted({**dict(inner), **self.constants}.items(), key=str))
        use = Use(call, site, self.scope, key, facts, constants=constants)
        index = self._uses_at.get((call, site, constants))
        if index is None:
            self._uses_at[(call, site, constants)] = len(self.uses)
            self.uses.append(use)
        else:
            self.uses[index] = use

    def _unknown_arguments(self, call: ast.Call, state: State) -> State:
        """A call we cannot follow may change the mode of any model it receives (`self` included)."""
        for argument in [*call.args, *(k.value for k in call.keywords)]:
            if isinstance(argument, ast.Starred):
                argument = argument.value
            key = self.key(argument)
            if key is not None and self.modes.qualified_name(argument) is None:
                state = self._set(state, key, frozenset({Fact(Mode.UNKNOWN, call)}))
        return state

    def _follow(self, call: ast.Call, function: ast.AST, owner: str | None, state: State, home=None) -> State:
        """Apply a function's summary: the modes it leaves, the model calls it makes. `home`: the context of
        another module of the project that defines it (its model calls are reported there, not here)."""
        callee_modes = self.modes if home is None else home.analysis(project_modes)
        summary = callee_modes.summary(function, self.depth + 1, self._passed_constants(call, function, owner, callee_modes))
        mapping = self._parameter_mapping(call, function, owner, callee_modes.ctx)
        if summary is None or mapping is None:
            if owner is not None:
                state = self._set(state, owner, frozenset({Fact(Mode.UNKNOWN, call)}))
            return self._unknown_arguments(call, state)
        before = state
        if home is None:
            # Module-level names the callee uses are the caller's too, unless the caller binds its own.
            for head in {k.split(".")[0] for k in summary.exit} - set(mapping):
                if head not in self.modes.scopes.local_bindings(function) and not self._binds(head):
                    mapping[head] = head
            for use in summary.uses:
                key = _translate(use.key, mapping)
                if key is not None:
                    self._record(use.call, call, key, self._substitute(use.facts, before, key, call), use.constants)
        for callee_key in sorted(summary.exit, key=len):
            key = _translate(callee_key, mapping)
            if key is not None:
                state = self._set(state, key, self._substitute(summary.exit[callee_key], before, key, call, home))
        return state

    def _passed_constants(self, call: ast.Call, function: ast.AST, owner: str | None, callee: Modes) -> tuple:
        """The constants the call passes for the parameters that decide the callee's branches
        (`compute_loss(model, batch, is_training=False)`; a loop variable known here counts too)."""
        deciding = callee.deciding(function)
        if not deciding:
            return ()
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
        bound = bind_arguments(call, function, owner is not None and not static)
        found = {}
        for name in deciding:
            argument = bound.get(name)
            if isinstance(argument, ast.Constant):
                found[name] = argument.value
            elif isinstance(argument, ast.Name) and argument.id in self.constants:
                found[name] = self.constants[argument.id]
        return tuple(sorted(found.items(), key=str))

    def _parameter_mapping(self, call: ast.Call, function: ast.AST, owner: str | None, home) -> dict[str, str] | None:
        """Callee parameter -> the caller's receiver passed for it (`home`: the callee's context). None when
        `*args` or `**kwargs` may fill a parameter, or the callee rebinds a parameter that receives a model
        (it may have changed the old one first)."""
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
        skips_first = owner is not None and not static
        bound = bind_arguments(call, function, skips_first)
        if any(argument is None for argument in bound.values()):
            return None
        passed = [*call.args, *(k.value for k in call.keywords)]
        if len(bound) < len(passed) and any(self.key(a) is not None for a in passed if a not in bound.values()):
            return None  # a model taken by the callee's `*args` or `**kwargs`: where it goes is unknown
        mapping: dict[str, str] = {}
        if skips_first:
            first = _first_parameter(function)
            if first is None:
                return None
            mapping[first] = owner
        for parameter, argument in bound.items():
            key = self.key(argument)
            if key is not None:
                mapping[parameter] = key
        rebound = {n.id for n in home.index.within(function, ast.Name) if isinstance(n.ctx, ast.Store)}
        return None if rebound & set(mapping) else mapping

    def _substitute(self, facts: frozenset, state: State, key: str, site: ast.AST, home=None) -> frozenset:
        """The callee's facts seen from the caller: ENTRY is the caller's state; the rest happened at `site`
        (`home`: the callee's context, when another module's: where its nodes are)."""
        result = set()
        before = lookup(state, key)
        for fact in facts:
            if fact.mode is Mode.ENTRY:
                result |= before
                continue
            if home is not None:
                self.modes.homes.update({node: home for node in (fact.origin, fact.built) if node is not None})
            result.add(Fact(fact.mode, site, fact.origin, fact.built or _common_built(before)))
        return frozenset(result)

    def _read_by_callers(self) -> bool:
        """Do callers read the mode of what this function returns? Only of module-level functions,
        called by name (`model = build()`); what a method returns is as unknown as any other call's."""
        return self.modes.is_module_function(self.scope)

    def _may_be_run(self, targets: list[ast.AST], value: ast.AST) -> bool:
        """Can the object a call assigns to these names be run as a model here? Not when no read of the
        names may run it (`Modes._read_as_model`): then what the call builds is not worth asking."""
        calls = self.modes.call_graph()
        if _strip_same_module(value) is None or not all(isinstance(t, ast.Name) and t.id in calls.candidates for t in targets):
            return True
        return any(t.id in calls.read_as_model for t in targets)

    # Values.
    def _value_facts(self, value: ast.AST, state: State, returned: bool = False) -> frozenset:
        """The mode of the object an expression gives: a new module trains; `m.eval()` returns `m`."""
        unknown = frozenset({Fact(Mode.UNKNOWN, value)})
        if isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr in (*SAME_MODULE, "eval", "train"):
                inner = self._value_facts(func.value, state, returned)
                if func.attr in ("eval", "train"):
                    return frozenset({Fact(_requested_mode(value, func.attr), value, value, _common_built(inner))})
                return inner
            if isinstance(func, ast.Name) and func.id in self.modes.functions and not self._shadowed(func):
                summary = self.modes.summary(self.modes.functions[func.id], self.depth + 1)
                return summary.returned if summary is not None and summary.returned else unknown
            if canonical_class(self.modes.qualified_name(func)) in WRAPPERS and value.args:
                return self._value_facts(value.args[0], state, returned)  # runs the wrapped model as it is
            if self.modes.builds_module(value):
                library = library_model(self.modes.ctx, value)
                mode = Mode.EVAL if library is not None and library.starts_in_eval else Mode.TRAIN
                return frozenset({Fact(mode, value, value, value)})
            return unknown
        key = self.key(value)
        if key is None:
            return unknown
        facts = lookup(state, key)
        if returned:  # the caller does not know what ENTRY meant here
            return frozenset(Fact(Mode.UNKNOWN, value) if f.mode is Mode.ENTRY else f for f in facts)
        return facts


def project_modes(ctx) -> Modes:
    """The modes of another module of the project, read from a lint (`ctx.analysis(project_modes)`): on
    its own, its classes from other modules counted as models (whether they are is asked when it matters)."""
    return Modes(ctx, ModeLayers.summarizing(ctx), call_sites_read=True)


def _is_test_path(path: str) -> bool:
    """`tests/test_engine.py`, `engine_test.py`, `conftest.py`."""
    *folders, name = path.replace("\\", "/").split("/")
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or bool({"test", "tests"} & set(folders))


def _calls_in_order(expr: ast.AST) -> list[ast.Call]:
    """The calls of an expression, each after the calls in its own arguments (not inside lambdas)."""
    order: list[ast.Call] = []
    stack: list[tuple[ast.AST, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if isinstance(node, (ast.Lambda, *FUNCTIONS, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            stack.append((node, True))
        stack += [(child, False) for child in reversed(child_nodes(node))]
    return order


def _head(expr: ast.AST) -> str | None:
    """`self` for `self.model.encoder`: the name a reference (`names.reference_key`) starts with."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _bound(node: ast.Assign | ast.AnnAssign) -> list[ast.AST]:
    """The receivers an assignment binds (`a`, `self.b` in `a, *self.b = ...`; not `x[i]`)."""
    found, stack = [], list(assignment_targets(node))
    while stack:
        target = stack.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            stack += target.elts
        elif isinstance(target, ast.Starred):
            stack.append(target.value)
        elif isinstance(target, (ast.Name, ast.Attribute)):
            found.append(target)
    return found


def _linked(names: set[str], links: list[tuple[str, str]]) -> set[str]:
    """`names` and every name linked to one of them, directly or not."""
    found, changed = set(names), True
    while changed:
        changed = False
        for first, second in links:
            if (first in found) != (second in found):
                found.update((first, second))
                changed = True
    return found


def _parameter_names(function: ast.AST) -> set[str]:
    """The names of a function's parameters, not `*args` and `**kwargs`."""
    return {a.arg for a in parameters(function, variadic=False)}


def _called_receiver(call: ast.Call) -> ast.AST:
    """The model a model call runs: `net` in `net(x)` and `net.forward(x)`, `self.net` in `self.net(x)`."""
    func = call.func
    return func.value if isinstance(func, ast.Attribute) and func.attr == "forward" else func


def _saved_mode(node: ast.AST) -> tuple[str, ast.AST] | None:
    """`was_training = model.training`: (the name, the model)."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None
    value = node.value
    if isinstance(value, ast.Attribute) and value.attr == "training":
        return node.targets[0].id, value.value
    return None


def _requested_mode(call: ast.Call, method: str) -> Mode:
    if method == "eval":
        return Mode.EVAL
    argument = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if argument is None:
        return Mode.TRAIN if not call.keywords else Mode.UNKNOWN
    if isinstance(argument, ast.Constant) and isinstance(argument.value, bool):
        return Mode.TRAIN if argument.value else Mode.EVAL
    return Mode.UNKNOWN


def _common_built(facts: frozenset) -> ast.Call | None:
    built = {f.built for f in facts}
    return built.pop() if len(built) == 1 else None


def _strip_same_module(value: ast.AST) -> ast.Call | None:
    """`Net().to(device)` -> `Net()`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SAME_MODULE:
        value = value.func.value
    return value if isinstance(value, ast.Call) else None


def _moved(value: ast.AST) -> ast.AST:
    """`model` for `model.to(device).float()`: the object a chain of device and dtype moves returns."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SAME_MODULE:
        value = value.func.value
    return value


def _is_items(value: ast.AST | None, size: int) -> bool:
    """`(a, b)` with `size` items, none starred."""
    return (
        isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == size
        and not any(isinstance(e, ast.Starred) for e in value.elts)
    )  # fmt: skip


def _is_getattr(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and bool(node.args)


def _translate(callee_key: str, mapping: dict[str, str | None]) -> str | None:
    """The caller's key for a callee's: its head mapped (a parameter, `self`), an object's own key as it is."""
    head, dot, rest = callee_key.partition(".")
    if head.startswith("@"):
        return callee_key
    target = mapping.get(head)
    return target + dot + rest if target is not None else None


def _first_parameter(function: ast.AST) -> str | None:
    if not isinstance(function, FUNCTIONS):
        return None
    parameters = [*function.args.posonlyargs, *function.args.args]
    return parameters[0].arg if parameters else None


def name_says_evaluation(name: str) -> bool:
    """`validate`, `run_evaluation`, `val_epoch`, `test`; not pytest's `test_*` functions."""
    words = name.lower().strip("_").split("_")
    if words[0] == "test" and len(words) > 1:
        return False
    return any(word in EVALUATION_WORDS for word in words)


def _own_calls(body: ast.AST, constants: dict | None = None):
    """The calls a loop or function makes itself: not in nested loops, functions or classes (nor in the
    branches `constants`, the loop variables of an unrolled loop's round, decide against)."""
    stack = child_nodes(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*LOOPS, *FUNCTIONS, ast.Lambda, ast.ClassDef)):
            continue
        if constants and isinstance(node, (ast.If, ast.IfExp)):
            decided = fold(node.test, constants)
            if decided is not None:
                arm = node.body if decided else node.orelse
                stack += [node.test, *(arm if isinstance(arm, list) else [arm])]
                continue
        if isinstance(node, ast.Call):
            yield node
        stack += child_nodes(node)
