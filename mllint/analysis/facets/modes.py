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
import re
from collections.abc import Callable
from functools import cached_property

from mllint.analysis.program.callers import constructions, per_call_site
from mllint.analysis.program.calls import ANY_MODULE, Callee, CallResolver, bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.hierarchy import lineage, project_class
from mllint.analysis.facets.layers import NO_LAYER, Layer, ModeLayers
from mllint.analysis.facets.loops import TrainingLoops
from mllint.analysis.facets.mode_callers import CallSiteUses
from mllint.analysis.objects.returned import as_passed
from mllint.analysis.facets.mode_calls import CallGraph, build_call_graph, closure, named_targets
from mllint.analysis.syntax.scopes import first_parameter
from mllint.analysis.facets.mode_facts import (
    COPIES, FOLLOWED_MODULES, FUNCTIONS, GRAD_MODES, GRAD_OFF, HARMLESS_BUILTINS, LIBRARY_HOOKS, LOOPS, MAX_CALL_DEPTH, MAX_CONTEXTS, MODE_NEUTRAL, SAME_MODULE, SET_GRAD_ENABLED, Fact, FlowFacts, Mode, Summary, Use, called_receiver, calls_in_evaluation_order, is_getattr, linked_names, moved_model, name_says_evaluation, own_calls, parameter_names, receiver_head,
)  # fmt: skip
from mllint.analysis.facets.mode_flow import Flow, switches_modes
from mllint.analysis.facets.mode_reach import OutputReach, kept_elements
from mllint.analysis.objects.steps import stepped_optimizer
from mllint.analysis.syntax.names import Names, is_self_attribute, reference_key
from mllint.analysis.objects.callees import hooks_called, method_called
from mllint.analysis.objects.call_sites import makers
from mllint.analysis.objects.instances import Instances
from mllint.analysis.objects.constants import fold, passes_self
from mllint.analysis.objects.points_to import WRAPPERS, Objects
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.program.summaries import FunctionSummary
from mllint.analysis.syntax.tree import assignment_targets, bound_receivers, module_statements
from mllint.analysis.values.values import Called, ValueKinds, canonical_class
from mllint.source import one_line


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


class Modes(CallSiteUses):
    def __init__(self, ctx, layers: ModeLayers | None = None, call_sites_read: bool = False) -> None:
        """`call_sites_read`: the module is another one's caller, whose lint reads the facts of the
        arguments at its call sites (`_passed`): its flows track every argument."""
        self.ctx = ctx
        self.call_sites_read = call_sites_read
        self.linted = ctx  # the file linted: this one, or the one that reads it (`of_module`)
        self.layers = layers or ctx.analysis(mode_layers)
        self.scopes = ctx.scopes
        self.module_classes = ctx.analysis(ModuleClasses).modules
        self.objects = ctx.analysis(Objects)
        functions: dict[str, list[ast.AST]] = {}
        for node in module_statements(ctx.tree):
            if isinstance(node, FUNCTIONS):
                functions.setdefault(node.name, []).append(node)
        self.functions = {name: nodes[0] for name, nodes in functions.items() if len(nodes) == 1}
        self.classes = {node.name: node for node in module_statements(ctx.tree) if isinstance(node, ast.ClassDef)}
        self.view = ctx.analysis(ProjectView) if ctx.project is not None else None
        self.wrapper_methods = self._wrapper_methods()
        self.resolver = CallResolver(ctx, self.view) if self.view is not None else None
        self.homes: dict[ast.AST, object] = {}  # the nodes of other modules in this file's facts and uses
        self._read_layers: dict[object, ModeLayers] = {}  # another module's context -> its layers, read from here
        self._generators: dict[ast.AST, bool] = {}
        self._summaries: dict[tuple, Summary | None] = {}
        self._depths: dict[tuple, int] = {}  # the depth each summary was worked out at
        self._contexts: dict[ast.AST, int] = {}  # function -> how many sets of constants it was summarized under
        self._deciding: dict[ast.AST, set[str]] = {}
        self._flags: dict[ast.AST, list[tuple[str, ast.expr]]] = {}
        self._switching: dict[tuple[ast.Call, re.Pattern[bytes]], Callee | None] = {}
        self._in_progress: set[ast.AST] = set()
        self._flows: dict[ast.AST, FlowFacts] = {}  # scope -> what its flow found
        self._calls: CallGraph | None = None
        self._attributes: dict[ast.ClassDef, set[str]] = {}
        self._qualified: dict[ast.AST, str | None] = {}
        self._keys: dict[tuple[ast.AST, ast.AST], str | None] = {}  # (receiver, scope) -> its key
        self._seen: dict[str, set[ast.AST]] = {}  # a rule's test (by name) -> the scopes that see a call it wants
        self._callees: dict[ast.Call, Callee | None] = {}
        self._hooks: dict[tuple[ast.Call, str | None], list[Callee]] = {}
        self._neutral: dict[tuple[ast.AST, int], bool] = {}  # (function, depth) -> `switches_nothing`
        self._builds: dict[ast.Call, bool] = {}
        self._call_orders: dict[ast.AST, list[ast.Call]] = {}
        self._own_nodes: dict[tuple, list[ast.AST]] = {}  # (scope, types, stored) -> its own nodes of those types

    def _wrapper_methods(self) -> dict[str, tuple[object, ast.AST]]:
        """The methods of the plain classes that wrap models and switch their modes (`def val_start(self):
        self.img_enc.eval()`), with their module's context, by name, when no other class of the file (or
        wrapper imported) has one of that name: `model.val_start()` and `model.train_emb(...)` are calls of
        them. The classes are the file's, and those it imports from other modules of the project (`from
        model import VSE` in the script that trains it and in the one that evaluates it)."""
        methods: dict[str, list[ast.AST]] = {}
        wrappers = [(self.ctx, cls) for cls in self.classes.values() if _wraps_models(self.ctx, cls)]
        for qualified in sorted(set(self.ctx.analysis(Names).module_imports().values())) if self.view is not None else ():
            found = project_class(self.view, qualified)
            if found is not None and found[0] is not self.ctx and _wraps_models(*found):
                wrappers.append(found)
        for cls in [*self.ctx.index.of_type(ast.ClassDef), *(cls for home, cls in wrappers if home is not self.ctx)]:
            for function in cls.body:
                if isinstance(function, FUNCTIONS):
                    methods.setdefault(function.name, []).append(function)
        return {
            function.name: (home, function)
            for home, cls in wrappers for function in cls.body
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
        return {receiver_head(called_receiver(call)) for call in made if wanted(call)}

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
            (receiver_head(target), receiver_head(moved_model(node.value)))
            for node in assigned if reference_key(moved_model(node.value)) is not None for target in bound_receivers(node)
        ]  # fmt: skip
        names = linked_names(names, copies)
        follows = False
        for node in nodes:
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in ("eval", "train"):
                    moved = moved_model(func.value)
                    if receiver_head(moved.args[0] if is_getattr(moved) else moved) in names:
                        return True
                own = (isinstance(func, ast.Name) and func.id in self.functions) or (
                    isinstance(func, ast.Attribute) and func.attr in self._file_methods
                )
                follows |= own
                passed = [*node.args, *(k.value for k in node.keywords)]
                passed += [func.value] if isinstance(func, ast.Attribute) else []
                if any(receiver_head(a.value if isinstance(a, ast.Starred) else a) in names for a in passed) and (
                    own or self.project_callee(node)
                ):
                    return True
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                listed = node.iter.elts if isinstance(node.iter, (ast.List, ast.Tuple, ast.Set)) else None
                if listed is not None and {receiver_head(n) for n in (node.target, *listed)} & names:
                    return True
                variables = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
                if any(receiver_head(v) in names and self._made_module(v) for v in variables):
                    return True  # `for name, m in models.items()` over models built here
            elif node in assigned and _not_a_receiver(node.value) and {receiver_head(t) for t in bound_receivers(node)} & names:
                unpacked = isinstance(node.value, ast.Call) and any(
                    isinstance(t, (ast.Tuple, ast.List)) for t in assignment_targets(node)
                )
                if unpacked or self._may_give_a_mode(node.value):  # `a, b = make()`: what a local function returns too
                    return True
        if follows:
            return not isinstance(scope, FUNCTIONS) or bool(names - self.scopes.local_bindings(scope))
        return False

    def _may_give_a_mode(self, value: ast.AST) -> bool:
        """Can the object an assigned value gives have a known mode (see `Flow._value_facts`)?"""
        if isinstance(value, (ast.Tuple, ast.List)):
            return any(self._may_give_a_mode(element) for element in value.elts)
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and isinstance(value.value, ast.Name | ast.Call):
            # `parts["model"]` of `parts = build_components(cfg)`, `build(cfg)["model"]`: an item of what a function returns
            returned = self.ctx.analysis(ValueKinds).reaching_values(value.value) or [] if isinstance(value.value, ast.Name) else [value.value]
            return any(isinstance(v, ast.Call) and self._may_give_a_mode(v) for v in returned) or self._made_module(value)
        while isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Attribute) and func.attr in ("eval", "train"):
                return True
            if isinstance(func, ast.Attribute) and func.attr in SAME_MODULE:
                value = func.value
            elif isinstance(func, ast.Name) and func.id in self.functions:
                return True
            elif value.args and (canonical_class(self.qualified_name(func)) in WRAPPERS or self.qualified_name(func) in COPIES):
                value = value.args[0]
            else:
                return self.builds_module(value) or self.may_build_elsewhere(value)
        return reference_key(value) is not None

    def _made_module(self, expr: ast.AST) -> bool:
        """May `expr` be a module the file builds, as the objects layer follows it (`models["a"]` of `models
        = {"a": Net(), ...}`, a loop variable over them)?"""
        made = self.objects.made(expr)
        return bool(made) and any(ctx is self.ctx and self.builds_module(call) for ctx, call in made)

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
            self._seen[wanted.__name__] = closure(noting, calls.callers)
        return self._seen[wanted.__name__]

    def _uses_of(self, scopes: list[ast.AST]) -> list[Use]:
        return [use for scope in scopes for use in self.flow(scope).uses]

    def flow(self, scope: ast.AST) -> FlowFacts:
        """The facts along a function (or the module), computed once."""
        if scope not in self._flows:
            flow = Flow(self, scope, 0)
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
    def home(self, node: ast.AST) -> "Modes":
        """The modes of the module `node` belongs to: this file's, or another module's read from here."""
        ctx = self.homes.get(node)
        return self if ctx is None else self.of_module(ctx)

    def where(self, node: ast.AST) -> str:
        """`line 12` in this file, `engine.py:12` in another module."""
        ctx = self.homes.get(node)
        if ctx is None:
            return f"line {node.lineno}"
        return f"{self.view.display_path(ctx.real_path or ctx.path)}:{node.lineno}"

    def project_callee(self, call: ast.Call) -> Callee | None:
        """The function of another module of the project that `call` runs, when it passes a receiver: an
        imported function, or a method of an object of a class of another module as the objects layer
        tells (`self.ema.update(self.model)` with `self.ema = EMA(model)`). None: any other call, and a
        decorated function or a generator, whose body does not run as the call: `@contextmanager`."""
        if call not in self._callees:
            name = self.qualified_name(call.func)  # an import's: else a function of this module, or none
            passes = self.resolver is not None and self._passes_receivers(call)
            imported = passes and name is not None and "." in name
            callee = self.resolver.resolve(call, followed=self.followed, reexported=True) if imported else None
            if callee is None and passes and name is None and isinstance(call.func, ast.Attribute):
                callee = method_called(self.ctx, call)
            home = self.of_module(callee.ctx) if callee is not None and callee.ctx is not self.ctx else None
            if home is None or not home.runs_as_called(callee.function):
                callee = None
            self._callees[call] = callee
        return self._callees[call]

    def hooks(self, call: ast.Call, hook: str | None = None) -> list[Callee]:
        """The hooks of the project a call on an item of a container of callbacks runs, one per class its
        objects may be of (`cb.on_epoch_end(self)` of `for cb in self.callbacks`; `getattr(cb, name)(self)`
        given the `hook` name `name` holds), as the objects layer tells here or under the first call site
        that does (`callees.hooks_called`); empty when one is unknown or does not run as called."""
        if (call, hook) not in self._hooks:
            linted = self.linted.analysis(Objects) if self.linted is not self.ctx else None

            def ask(binding) -> list[Callee] | None:
                return hooks_called(self.ctx, call, binding, hook, linted) or None

            found = next((hooks for hooks, _ in per_call_site(self.ctx, call, ask, self.linted if linted else None)), [])
            runs = all((self if h.ctx is self.ctx else self.of_module(h.ctx)).runs_as_called(h.function) for h in found)
            self._hooks[(call, hook)] = found if runs else []
        return self._hooks[(call, hook)]

    def leaves_modes(self, call: ast.Call, depth: int = 0) -> bool:
        """Does `call` run a function of another module of the project that cannot switch a mode
        (`log_stats(model, step)` of a utils.py with no `.eval(`/`.train(`)? The flow then keeps the modes
        of what it passes. A call of a library, or one not resolved, may switch them."""
        name = self.qualified_name(call.func) or ""
        callee = self.resolver.resolve(call, followed=ANY_MODULE, reexported=True) if "." in name and self.resolver else None
        module = callee.ctx.module if callee is not None and callee.ctx is not self.ctx else None
        if module is None or self.view.index is None or self.view.index.mentions(module.name, self.followed):
            return False
        return self.of_module(callee.ctx).switches_nothing(callee.function, depth)

    def switches_nothing(self, function: ast.AST, depth: int = 0) -> bool:
        """Can a function of a module with no `.eval(`/`.train(` leave its parameters' modes alone? Each
        call its parameters reach must be a mode-neutral method (`model.state_dict()`), a call of the
        model itself, torch's, a harmless builtin, or a call of such a function of the project (to
        `MAX_CALL_DEPTH`); a library's (`wandb.watch(model)`) may switch them."""
        key = (function, depth)
        if key not in self._neutral:
            self._neutral[key] = depth <= MAX_CALL_DEPTH and self.runs_as_called(function) and all(
                self._keeps_modes(call, parameter_names(function), depth) for call in self.ctx.index.within(function, ast.Call)
            )  # fmt: skip
        return self._neutral[key]

    def _keeps_modes(self, call: ast.Call, parameters: set[str], depth: int) -> bool:
        func = call.func
        method = isinstance(func, ast.Attribute) and receiver_head(func.value) in parameters
        passed = [a.value if isinstance(a, ast.Starred) else a for a in [*call.args, *(k.value for k in call.keywords)]]
        if not any(receiver_head(a) in parameters for a in passed) and (not method or func.attr in MODE_NEUTRAL):
            return True  # `model.parameters()`, `print(step)`: no parameter handed on
        if isinstance(func, ast.Name) and func.id in parameters:
            return True  # `model(batch)`: runs the model
        name = self.qualified_name(func) or ""
        if name.startswith("torch.") or name in HARMLESS_BUILTINS:
            return True
        if isinstance(func, ast.Name) and func.id in self.functions:
            return self.switches_nothing(self.functions[func.id], depth + 1)
        return not method and self.leaves_modes(call, depth + 1)

    def runs_as_called(self, function: ast.AST) -> bool:
        """Does a call of the function run its body: no generator (`yield` hands the body over in parts), and
        no decorator but ones that set the gradient mode around it (`@torch.no_grad()`)? Any other decorator
        may make it something else (`@contextmanager`, whose `with` body runs at its `yield`)."""
        return not self.is_generator(function) and all(self.qualified_name(d.func if isinstance(d, ast.Call) else d) in GRAD_MODES for d in function.decorator_list)

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
                self.disables_grad(item.context_expr, may=True)
                for with_node in self.ctx.index.of_type(ast.With, ast.AsyncWith)
                for item in with_node.items
            )
        )

    def may_switch_to_eval(self) -> bool:
        """A cheap test before the mode flow: is there an `.eval()`, a `.train(...)` with an argument, or a
        `from_pretrained` (transformers returns the model in eval mode); or, in a file that trains, a call of
        a function of another module that may (`validate(model, loader)` in engine.py)?"""
        calls = self.ctx.index.of_type(ast.Call)
        methods = [call.func.attr for call in calls if isinstance(call.func, ast.Attribute)]
        if any(
            isinstance(call.func, ast.Attribute)
            and (call.func.attr in ("eval", "from_pretrained") or (call.func.attr == "train" and (call.args or call.keywords)))
            for call in calls
        ):
            return True
        if any(self.wrapper_methods.get(method, (self.ctx,))[0] is not self.ctx for method in methods):
            return True  # `model.val_start()` of a wrapper class of another module (`_wrapper_methods`)
        return "backward" in methods and any(self.switching_module(call) is not None for call in calls)

    @cached_property
    def followed(self) -> re.Pattern[bytes]:
        """What the text of another module must mention for its functions to be followed: `.eval(`, `.train(`,
        `.from_pretrained(` (`FOLLOWED_MODULES`), or a call of a method of a wrapper class of another module
        that switches modes (`model.val_start()` in the evaluation module of a script that imports `VSE`)."""
        names = sorted(
            name.encode() for name, (home, function) in self.wrapper_methods.items()
            if home is not self.ctx and switches_modes(home, function)
        )  # fmt: skip
        return re.compile(FOLLOWED_MODULES.pattern + rb"|\.(?:" + b"|".join(names) + rb")\(") if names else FOLLOWED_MODULES

    def switching_module(self, call: ast.Call, followed: re.Pattern[bytes] | None = None) -> Callee | None:
        """The function of another module `call` runs, when its module may switch a model's mode (or load
        one, see `followed`); with `followed=ANY_MODULE`, whatever its module holds (a builder that only builds)."""
        followed = followed or self.followed
        key = (call, followed)
        if key not in self._switching:
            name = self.qualified_name(call.func) or ""
            callee = self.resolver.resolve(call, followed=followed) if "." in name and self.resolver else None
            self._switching[key] = callee if callee is not None and callee.ctx is not self.ctx else None
        return self._switching[key]

    def may_build_elsewhere(self, call: ast.Call) -> bool:
        """May a call return a model another module builds: a builder of another module (one that only
        builds: `convnet(num_classes=2)`), a builder or class taken from a table (`MODELS["convnet"](...)`)?"""
        return isinstance(call.func, ast.Subscript) or self.switching_module(call, ANY_MODULE) is not None

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
                used = any(t.id in calls.read_as_model for t in named_targets(node))
                matters = used and (wanted is None or scope in wanted or (scope in calls.callers and scope in calls.handing_out))
            if matters and (self.builds_module(call) or self.may_build_elsewhere(call)):
                setting.add(scope)  # it may read other modules: asked only where it matters
        for scope, made in calls.calls_of.items():  # `evaluate(model, loader)`, `model = load(cfg)` of another module
            if scope not in setting and any(self.switching_module(call) is not None for call in made):
                setting.add(scope)
        found = closure(setting, calls.callers)
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
            if any(self.disables_grad(item.context_expr, may=True) for item in with_node.items):
                holding.add(self.scopes.enclosing_function(with_node) or self.ctx.tree)
        holding = {scope for scope in holding if not self._never_evaluates(scope)}
        return closure(holding, self.call_graph().callers)

    def _never_evaluates(self, scope: ast.AST) -> bool:
        """A scope whose calls are no evaluation pass whatever its gradients (see `evaluation_pass`)."""
        name = scope.name if isinstance(scope, FUNCTIONS) else ""
        return name in LIBRARY_HOOKS or name == "__init__" or self.scopes.enclosing_class(scope) in self.module_classes

    def call_graph(self) -> "CallGraph":
        if self._calls is None:
            self._calls = build_call_graph(self)
        return self._calls

    def key(self, expr: ast.AST, scope: ast.AST) -> str | None:
        """The one key of a receiver seen from `scope`: the object it is (`objects.Objects.key`), or, for
        the attributes of an nn.Module's `self` (which `self.eval()` switches too), its reference key;
        the object an item of a container is; None for anything else."""
        if (expr, scope) in self._keys:
            return self._keys[(expr, scope)]
        key = reference_key(expr)
        if key is None and isinstance(expr, ast.Subscript):  # `models["student"]`: the object an item is
            key = self.objects.key(expr, scope)
            key = key if key is not None and key.startswith("@") else None
        if key is None and isinstance(expr, (ast.IfExp, ast.BoolOp)):  # `model.module if wrapped else model`: either arm
            key = self.objects.key(expr, scope)
        if key is None and isinstance(expr, ast.Call):  # `unwrap(model)`: what a helper returns of what it is passed
            found = self.objects.points_to(expr)
            passed_back = found and not any(o.node is expr or o.site is expr for o in found)  # (not a copy it makes)
            key = self.objects.key(expr, scope) if passed_back else None
        cls = self.scopes.enclosing_class(scope) if key is not None and isinstance(scope, FUNCTIONS) else None
        if key is not None and not (cls is not None and cls in self.module_classes and key.partition(".")[0] == first_parameter(scope)):
            key = self.objects.key(expr, scope) or key
        self._keys[(expr, scope)] = key
        return key

    @cached_property
    def optimized(self) -> dict[str, ast.AST]:
        """The keys of what the file's optimizers get the parameters of (`objects.Objects.optimized`), with
        the function (or module) that builds the optimizer: as that function names it (`model` for its
        parameter) and as the object it is anywhere (what `self.model` holds in another method)."""
        found = {}
        for owner in self.objects.optimized():
            scope = self.scopes.enclosing_function(owner) or self.ctx.tree
            for key in (self.key(owner, scope), self.objects.key(owner, None)):
                found.setdefault(key, scope)
        for call in self.ctx.index.of_type(ast.Call):  # an optimizer another module builds, stepped here
            if (stepped := stepped_optimizer(self.ctx, call)) is not None:
                for made in self.objects.points_to(stepped) or ():
                    home = self.objects._of(made.ctx) if made.kind == "made" and made.ctx is not self.ctx else None
                    owners = home.trained_by(made.node) if home is not None and isinstance(made.node, ast.Call) else []
                    for trained in (obj for owner in owners for obj in as_passed(self.objects, made.site, home.points_to(owner)) or ()):
                        found.setdefault(trained.key(), self.scopes.enclosing_function(call) or self.ctx.tree)
        found.pop(None, None)
        return found

    def set_by_its_builder(self, fact: Fact) -> bool:
        """Was a mode set as the model was made: by the library as it loads it (`from_pretrained`), or by
        the helper that builds it, before handing it back (`model.eval()` before `return model, tok`)?
        Such a mode is the loader's, not a choice of the code that goes on to train the model."""
        if fact.origin is fact.built:
            return True
        if fact.built is None or fact.origin is None or fact.site is fact.origin or self.homes.get(fact.origin) is not self.homes.get(fact.built):
            return False
        scopes = self.home(fact.origin).ctx.scopes
        function = scopes.enclosing_function(fact.origin)
        return function is not None and function is scopes.enclosing_function(fact.built)

    def frozen(self, use: Use) -> bool:
        """Is the model of a use one that no optimizer updates while the optimizers at hand update others:
        a teacher, a frozen encoder, an EMA copy kept in eval mode on purpose? At hand: the file's, for a
        model the file makes or keeps; those the function builds itself, or steps and is passed by each of
        its call sites (`frozen_at_call_sites`), for a model it is passed."""
        key = use.key
        if use.own_key or "{" in key:
            return False
        if self.frozen_at_call_sites(use):
            return True
        passed = self.ctx.analysis(Instances).arguments(key)
        at_hand = self._at_hand(use, passed) if key.startswith("@parameter:") else None
        updated = [k for k, scope in self.optimized.items() if (key.startswith("@") and at_hand is None) or scope is use.scope or scope in (at_hand or ())]
        keys = {key, self.objects.key(called_receiver(use.call), None) if self.home(use.call) is self else None} - {None}
        keys |= {self.objects.key(argument, None) for argument in passed} - {None}
        return bool(updated) and not any(
            k == key or k.startswith(key + ".") or key.startswith((k + ".", k + "@")) for k in updated for key in keys
        )  # an optimizer a builder makes over what it makes updates that object at each of its call sites

    def _at_hand(self, use: Use, passed: list[ast.AST]) -> set[ast.AST]:
        """For a model an instance's attribute holds from a parameter of its class (`self.model` of a trainer
        given `model`): the scopes whose optimizers are at hand, the class's methods and those where this
        file builds an instance of it (what each passes, `instances.Instances.arguments`)."""
        cls = self.scopes.enclosing_class(use.scope)
        scopes = {f for f in cls.body if isinstance(f, FUNCTIONS)} if cls is not None else set()
        return scopes | {self.scopes.enclosing_function(argument) or self.ctx.tree for argument in passed}

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
        sets, then none), at the depth it is first asked for, and again when asked less deep than a summary
        cut short by `MAX_CALL_DEPTH` was (at most once per depth)."""
        if depth > MAX_CALL_DEPTH or function in self._in_progress:
            return None
        key = (function, constants)
        if constants and key not in self._summaries:
            self._contexts[function] = self._contexts.get(function, 0) + 1
            if self._contexts[function] > MAX_CONTEXTS:
                key, constants = (function, ()), ()
        known = self._summaries.get(key)
        if key not in self._summaries or (known is not None and known.cut and depth < self._depths[key]):
            self._in_progress.add(function)
            try:
                flow = Flow(self, function, depth, dict(constants))
                exit_state = flow.run()
                uses = [u for u in flow.uses if any(f.mode is Mode.ENTRY for f in u.facts)]
                self._summaries[key] = Summary(exit_state, uses, flow.returned, flow.returned_items, flow.cut)
                self._depths[key] = depth
            finally:
                self._in_progress.discard(function)
        return self._summaries[key]

    def deciding(self, function: ast.AST) -> set[str]:
        """The parameters of a function whose values decide its branches or its gradients: named in an
        `if` or conditional expression's test, or passed to `set_grad_enabled(...)` or `.train(...)`."""
        if function not in self._deciding:
            names = parameter_names(function)
            tests = [n.test for n in self.ctx.index.within(function, ast.If, ast.IfExp)]
            tests += [
                argument for call in self.ctx.index.within(function, ast.Call) if call.args
                and (isinstance(call.func, ast.Attribute) and call.func.attr == "train" or self.qualified_name(call.func) in SET_GRAD_ENABLED)
                for argument in call.args[:1]
            ]  # fmt: skip
            tests += [call.args[1] for call in self.ctx.index.within(function, ast.Call) if is_getattr(call) and len(call.args) > 1]  # the hook it calls
            named = {n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name)}
            for flag, value in reversed(self.flags(function)):  # `is_train = mode == "train"` decides by `mode`
                if flag in named:
                    named |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            self._deciding[function] = named & names
        return self._deciding[function]

    def flags(self, function: ast.AST) -> list[tuple[str, ast.expr]]:
        """The names a function binds once, in its own body, to a test (`is_train = mode == "train"`, `not
        training`), in order: under constants passed for what the test reads, they are constants too."""
        if function not in self._flags:
            stored = [n.id for n in self.own_nodes(function, ast.Name, stored=True)]
            self._flags[function] = [
                (node.targets[0].id, node.value) for node in self.own_nodes(function, ast.Assign)
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and stored.count(node.targets[0].id) == 1
                and isinstance(node.value, (ast.Compare, ast.UnaryOp, ast.BoolOp, ast.Name))
            ]  # fmt: skip
        return self._flags[function]

    def attributes(self, cls: ast.AST, ctx=None) -> set[str]:
        """The attributes a class (of this module, or of `ctx`'s) or its project bases assign on `self`
        (`self.model = ...`, in a base's `__init__` of this module or another)."""
        if not isinstance(cls, ast.ClassDef):
            return set()
        if cls not in self._attributes:
            self._attributes[cls] = {
                target.attr
                for home, own in lineage(ctx or self.ctx, cls, self.view)
                for node in home.index.within(own, ast.Assign, ast.AnnAssign)
                for target in bound_receivers(node)
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            }
        return self._attributes[cls]

    # Questions about a call's surroundings.
    def grad_disabled(self, node: ast.AST, constants: dict | None = None, may: bool = False) -> bool:
        """Is `node` inside `with torch.no_grad()` (or `inference_mode`, `set_grad_enabled(False)`), or
        in a function decorated with one? `may`: or `set_grad_enabled(flag)` (some call may pass False)."""
        for ancestor in self.scopes.ancestors(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                if any(self.disables_grad(item.context_expr, constants, may) for item in ancestor.items):
                    return True
            elif isinstance(ancestor, FUNCTIONS):
                return any(self.disables_grad(d) for d in ancestor.decorator_list)
            elif isinstance(ancestor, (ast.Lambda, ast.ClassDef)):
                return False
        return False

    def disables_grad(self, expr: ast.AST, constants: dict | None = None, may: bool = False) -> bool:
        call = expr if isinstance(expr, ast.Call) else None
        name = self.qualified_name(call.func if call else expr)
        if name in GRAD_OFF:
            mode = call.args[0] if call is not None and call.args else None
            return not (isinstance(mode, ast.Constant) and mode.value is False)
        if name in SET_GRAD_ENABLED and call is not None and call.args:
            argument = call.args[0]
            if isinstance(argument, ast.Constant):
                return argument.value is False
            decided = fold(argument, constants) if constants else None  # `set_grad_enabled(phase == "train")`
            return may if decided is None else decided is False
        return False

    def step_body(self, node: ast.AST) -> ast.AST:
        """The innermost loop or function around `node`: the body one training step or pass runs."""
        for ancestor in self.scopes.ancestors(node):
            if isinstance(ancestor, (*LOOPS, *FUNCTIONS, ast.Lambda)):
                return ancestor
        return self.ctx.tree

    def evaluation_pass(self, call: ast.AST, constants: dict | None = None) -> bool:
        """Is `call` part of an evaluation pass: under `torch.no_grad()`/`inference_mode()`, or in a
        function whose name says it evaluates, and not in a step that trains (a `no_grad` block for
        logging or EMA inside a training loop is not an evaluation), nor in `__init__` or a method of an
        nn.Module (a dummy forward pass that sizes the layers)? `constants`: the flags a call site passes
        (`run_epoch(model, loader, mode="val")`), which decide `set_grad_enabled(is_train)` and the branches."""
        if not self._evaluation_site(call, constants):
            return False
        body = self.step_body(call)
        if not constants:
            return not self.trains(body, steps=True)
        return not any(self._trains_by(c, steps=True) for c in own_calls(body, constants))

    def _may_be_evaluation_pass(self, call: ast.AST) -> bool:
        """`evaluation_pass` without its dearest test (does the step train?), for the cheap tests: under
        `set_grad_enabled(flag)` too, which a call site's constant may decide."""
        return self._evaluation_site(call, None, may=True)

    def _evaluation_site(self, call: ast.AST, constants: dict | None, may: bool = False) -> bool:
        function = self.scopes.enclosing_function(call)
        name = function.name if isinstance(function, FUNCTIONS) else ""
        if name in LIBRARY_HOOKS or name == "__init__" or self.scopes.enclosing_class(call) in self.module_classes:
            return False  # a dummy forward pass to size layers, a module's own helpers
        # A function named like an evaluation counts for its loops over data, not for a lone call (a
        # `validate_shapes` that runs one dummy batch).
        return self.grad_disabled(call, constants, may) or (name_says_evaluation(name) and self._in_a_loop(call, function))

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
            body = self.step_body(call)
            return not self.grad_disabled(call, constants) and any(self._trains_by(c) for c in own_calls(body, constants))
        return self._may_be_training_step(call) and self.trains(self.step_body(call))

    def _may_be_training_step(self, call: ast.AST) -> bool:
        """`training_step` without its dearest test (does the step train?), for the cheap tests."""
        return not self.grad_disabled(call)

    def trains(self, body: ast.AST, steps: bool = False) -> bool:
        """Does a loop or function backpropagate (`TrainingLoops.trains`), or with `steps` step an
        optimizer itself (as `steps.step_of` tells: not `env.step(action)` nor a scheduler's)?"""
        if steps and any(stepped_optimizer(self.ctx, call) is not None for call in own_calls(body)):
            return True
        return self.linted.analysis(TrainingLoops).trains(body, self.ctx, nested=False)

    def _trains_by(self, call: ast.Call, steps: bool = False) -> bool:
        return steps and stepped_optimizer(self.ctx, call) is not None or self.linted.analysis(TrainingLoops).trains(call, self.ctx, nested=False)

    def trained_between(self, first: ast.AST, second: ast.AST) -> bool:
        """Does the smallest statement holding both nodes train (`TrainingLoops.trains`)? A model put in
        training mode and evaluated with no training around it is put there on purpose (recomputing
        batch-norm statistics, Monte Carlo dropout)."""
        home = self.home(second)
        if home is not self:
            return home.trained_between(first, second)
        around_first = [first, *self.scopes.ancestors(first)]
        around_second = {second, *self.scopes.ancestors(second)}
        common = next((node for node in around_first if node in around_second), self.ctx.tree)
        return self.linted.analysis(TrainingLoops).trains(common, self.ctx)

    def trained_since(self, first: ast.AST, second: ast.AST) -> bool:
        """Does a statement run between `first` and `second` train, when both are in one block of a
        statement that is no loop (a function, `if __name__ == "__main__":`): the statements of that block
        from the one holding `first` to the one holding `second`; else as `trained_between`?"""
        home = self.home(second)
        if home is not self:
            return home.trained_since(first, second)
        around_first = {first, *self.scopes.ancestors(first)}
        around_second = {second, *self.scopes.ancestors(second)}
        common = next((node for node in (first, *self.scopes.ancestors(first)) if node in around_second), self.ctx.tree)
        span = _span(common, around_first, around_second)
        trains = self.linted.analysis(TrainingLoops).trains
        return self.trained_between(first, second) if span is None else any(trains(s, self.ctx) for s in span)

    # What the model is.
    def layer(self, use: Use) -> Layer | None:
        """The model's mode-dependent layer (NO_LAYER: known to have none; None: unknown), from the
        constructions the facts agree on or else those that made the objects the model may be (`self.model`
        written in any method), or those its call sites pass."""
        constructions = {f.built for f in use.facts}
        if None in constructions:
            constructions.discard(None)
            if self.home(use.site) is not self:
                built = self._site_constructions(use)
            else:
                built = self._made_modules(called_receiver(use.call)) or self._passed_constructions(use)
            if not built:
                return None
            constructions.update(built)
        layers = []
        kept = kept_elements(self.ctx, use.call) if self.home(use.call) is self else None
        reach = OutputReach(self)  # not kept: it refers back to the modes
        for construction in constructions:
            reached = reach.layer(self.homes.get(construction, self.ctx), construction, kept)
            layer = reached if reached is not None else self._layers_of(construction).of_constructor(construction)
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
        func = called_receiver(use.call)
        if self.view is None or not self._may_be_passed(func):
            return []
        found: list[ast.Call] = []
        for (ctx, construction), _ in constructions(self.ctx, func):
            if ctx is not self.ctx:
                self.homes[construction] = ctx
            found.append(construction)
        return found

    def _site_constructions(self, use: Use) -> list[ast.Call]:
        """What a call site in another module passes for the model parameter of the function around a model
        call (`evaluate(self.model, ...)` of a trainer whose `__init__` took it from a builder): every one
        of the argument's constructions there, or none when one is unknown."""
        func, site = called_receiver(use.call), use.site
        function = self.scopes.enclosing_function(func)
        if not (isinstance(func, ast.Name) and isinstance(function, FUNCTIONS) and isinstance(site, ast.Call)):
            return []
        argument = bind_arguments(site, function, passes_self(site, function)).get(func.id)
        if argument is None:
            return []
        made = next((m for m, _ in makers(self.home(site).ctx, argument, self.ctx)), None)
        for ctx, construction in made or ():
            if ctx is not self.ctx:
                self.homes[construction] = ctx
        return [construction for _, construction in made or ()]

    def _may_be_passed(self, func: ast.AST) -> bool:
        """A cheap test before asking callers: a parameter of the function around it, or `self.x`."""
        if isinstance(func, ast.Attribute):
            return is_self_attribute(func)
        function = self.scopes.enclosing_function(func)
        return isinstance(func, ast.Name) and isinstance(function, FUNCTIONS) and func.id in parameter_names(function)

    def _layers_of(self, construction: ast.Call) -> ModeLayers:
        """The layers of the module a construction is in, its classes resolved in the linted project."""
        return self.layers_in(self.homes.get(construction, self.ctx))

    def layers_in(self, ctx) -> ModeLayers:
        """The layers of a module of the project (this one's own), its classes resolved in the linted project."""
        if ctx is self.ctx:
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
                calls = calls_in_evaluation_order(expr)
            self._call_orders[expr] = calls
        return self._call_orders[expr]

    def _made_modules(self, receiver: ast.AST) -> list[ast.Call]:
        """The constructions of this file that made every object `receiver` may be, when all build modules."""
        made = self.objects.made(receiver)
        if not made or any(ctx is not self.ctx or not self.builds_module(call) for ctx, call in made):
            return []
        return [call for _, call in made]

    def of_module(self, ctx) -> "Modes":
        """The modes of another module of the project, read from here: through this file's project view,
        so that a caller's flow follows the functions of other modules it calls (the linted one's too)."""
        modes = ctx.analysis(project_modes)
        if modes.view is None and self.view is not None:
            modes.view, modes.resolver, modes.linted = self.view, CallResolver(ctx, self.view), self.linted
        return modes


def _not_a_receiver(value: ast.AST) -> bool:
    """Is an assigned value no plain receiver (`model.to(device)`), or an item of a container
    (`parts["model"]`) that may hold a model of a known mode?"""
    moved = moved_model(value)
    return reference_key(moved) is None or (isinstance(moved, ast.Subscript) and isinstance(moved.slice, ast.Constant))


def _span(common: ast.AST, around_first: set, around_second: set) -> list[ast.stmt] | None:
    """The statements of the one block of `common` (no loop) from the one holding the first node to the one
    holding the second; None when they are in different blocks, or in the other order."""
    if isinstance(common, LOOPS):
        return None
    for block in (b for f in ("body", "orelse", "finalbody") for b in [getattr(common, f, None)] if isinstance(b, list)):
        first = next((i for i, s in enumerate(block) if s in around_first), None)
        second = next((i for i, s in enumerate(block) if s in around_second), None)
        if first is not None and second is not None:
            return block[first : second + 1] if first <= second else None
    return None


def project_modes(ctx) -> Modes:
    """The modes of another module of the project, read from a lint (`ctx.analysis(project_modes)`): on
    its own, its classes from other modules counted as models (whether they are is asked when it matters)."""
    return Modes(ctx, ModeLayers.summarizing(ctx), call_sites_read=True)


def _wraps_models(ctx, cls: ast.ClassDef) -> bool:
    """Is `cls` a plain class (no nn.Module) that switches the mode of models it holds (`self.enc.eval()`)?"""
    return cls not in ctx.analysis(ModuleClasses).modules and any(
        isinstance(call.func, ast.Attribute) and call.func.attr in ("train", "eval")
        and (reference_key(call.func.value) or "").startswith("self.")
        for call in ctx.index.within(cls, ast.Call)
    )  # fmt: skip
