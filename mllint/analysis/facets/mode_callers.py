"""Across modules: the model calls of a file's functions seen from their call sites in other modules of
the project (one call site at a time, never mixed), a part of `modes.Modes`.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace

from mllint.analysis.objects.constants import binding_constants
from mllint.analysis.program.callers import Binding, Callers, call_sites
from mllint.analysis.program.hierarchy import lineage
from mllint.analysis.syntax.scopes import first_parameter, parameters
from mllint.analysis.facets.mode_facts import (
    FUNCTIONS, LIBRARY_HOOKS, Fact, Mode, Use, called_receiver, common_built, is_test_path, lookup,
    parameter_names, receiver_head,
)  # fmt: skip
from mllint.analysis.objects.call_sites import built, substituted, under
from mllint.analysis.objects.instances import Instances
from mllint.analysis.objects.points_to import NONE, Obj, either, joined, union
from mllint.analysis.objects.steps import stepped_optimizer
from mllint.analysis.syntax.names import is_self_attribute, reference_key


class CallSiteUses:
    """The methods of `Modes` that read call sites in other modules."""

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
            names = parameter_names(scope)
            names.discard(first_parameter(scope) if self.scopes.enclosing_class(scope) is not None else None)
            held = self._calls_held_parameters(scope, may_want)
            if not held and not self._may_call_parameters(scope, names, may_want):
                continue
            if calling is None:
                callers = self.call_graph().callers
                calling = {caller for helper in self._seeing(may_want) for caller in callers.get(helper, ())}
            if not held and scope not in calling and not self._may_note_on_parameters(scope, names, may_want):
                continue
            names |= held
            entry, deciding = self._entry_uses(scope, names, wanted, ()), self.deciding(scope)
            if not entry and not deciding:
                continue
            for binding in self.ctx.analysis(Callers).bindings(scope):
                flags = self._passed_flags(binding, deciding)
                seen = (self._seen_from(use, binding, use.key, "") for use in self._entry_uses(scope, names, wanted, flags))
                found += [replace(use, sites=call_sites(binding)) for use in seen if use is not None]
        return found

    def _entry_uses(self, scope: ast.AST, names: set[str], wanted: Callable, flags: tuple) -> list[Use]:
        """The model calls of a function on its parameters, as its caller left them, that a rule `wanted`,
        with the function run under the constants `flags` its call site passes (`mode="val"`)."""
        uses = self.summary(scope, 0, flags).uses if flags else self.flow(scope).uses
        return [
            use for use in uses
            if all(f.mode is Mode.ENTRY for f in use.facts) and all(k.split(".")[0] in names for k in either(use.key))
            and wanted(use.call, dict(use.constants))
        ]  # fmt: skip

    def _passed_flags(self, binding: Binding, deciding: set[str]) -> tuple:
        """The constants a call site passes (or leaves to their defaults) for the parameters that decide
        the function's branches."""
        found = binding_constants(self.ctx, binding)
        return tuple(sorted(((k, v) for k, v in found.items() if k in deciding), key=str))


    def _may_call_parameters(self, scope: ast.AST, parameters: set[str], wanted: Callable[[ast.AST], bool]) -> bool:
        """A cheap test before the flow: does the function call a parameter or an attribute of one (`model(x)`,
        `model.forward(x)`, `trainer.model(x)`) where a rule wants it, or pass one to a function of this file?"""
        for call in self.ctx.index.within(scope, ast.Call):
            func = called_receiver(call)
            held = receiver_head(func) in parameters or isinstance(func, ast.Name) and self._holds_parameter(func, scope)
            if held and wanted(call):
                return True
            if isinstance(call.func, ast.Name) and call.func.id in self.functions:
                if any(isinstance(a, ast.Name) and a.id in parameters for a in call.args):
                    return True
        return False


    def _holds_parameter(self, name: ast.Name, scope: ast.AST) -> bool:
        """May a local name be a parameter of `scope`, or its `.module` (`net = model.module if wrapped else
        model`, `getattr(model, "module", model)`)?"""
        found = self.objects.points_to(name) if name.id in self.scopes.local_bindings(scope) else None
        return bool(found) and any(obj.root().kind == "parameter" and obj.root().node is scope for obj in found)

    def _calls_held_parameters(self, scope: ast.AST, wanted: Callable[[ast.AST], bool]) -> set[str]:
        """The keys of the parameters (of `__init__`, a setter) that the attributes a method calls hold
        (`self.model(x)` with `self.model = model` in `__init__`) where a rule `wanted`: seen from the
        method's call sites on an instance built there (`_passed_to_instance`)."""
        if self.scopes.enclosing_class(scope) is None or self.scopes.enclosing_class(scope) in self.module_classes:
            return set()
        found = set()
        for call in self.ctx.index.within(scope, ast.Call):
            func = called_receiver(call)
            if reference_key(func) is not None and wanted(call):
                held = self.objects.points_to(func)
                if held and all(obj.kind == "parameter" for obj in held):
                    found |= {obj.key() for obj in held}
        return found

    def _may_note_on_parameters(self, scope: ast.AST, parameters: set[str], wanted: Callable[[ast.AST], bool]) -> bool:
        """Another cheap test before the flow of a function that calls no function of the file making a
        call a rule `wanted` (see `_seeing`): does it make one of its own, on a parameter or on a name it
        binds to a receiver (`net = model`)?"""
        heads = self._called_heads(scope, wanted)
        if heads & parameters:
            return True
        referencing = {
            node.targets[0].id for node in self.call_graph().bindings_of.get(scope, ()) if isinstance(node, ast.Assign)
            and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and (reference_key(node.value) is not None or self._holds_parameter(node.targets[0], scope))
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
            deeper = Use(use.call, site, scope, key, facts, constants=use.constants)
            seen = self._seen_from(deeper, binding.outer, own_key, f", through `{scope.name}` ({binding.place}){through}")
            made = common_built(facts)  # what the caller's flow knows built the model (`self.model` of `__init__`)
            if seen is None or made is None or common_built(seen.facts) is not None:
                return seen
            self.homes[made] = self.of_module(caller).homes.get(made, caller)
            return replace(seen, facts=frozenset(Fact(f.mode, f.site, f.origin, f.built or made) for f in seen.facts))
        if any(f.mode is Mode.ENTRY for f in facts) or all(f.mode is Mode.UNKNOWN for f in facts):
            return None  # partly the caller's own entry, or unknown: the call site tells nothing
        known = self.of_module(caller).homes  # what the caller's flow took from other modules' code
        for node in [site, scope, *(n for f in facts for n in (f.site, f.origin, f.built) if n is not None)]:
            self.homes[node] = known.get(node, caller)
        if common_built(facts) is None and binding.outer is not None and isinstance(scope, FUNCTIONS):
            facts, built, named = self._built_by_callers(facts, binding.outer, scope, key)
            through += f" (`{named}` is {self.describe(built)}, passed at {binding.outer.place})" if built is not None else ""
        return Use(use.call, site, scope, key, facts, own_key, through, constants=use.constants)


    def _built_by_callers(self, facts: frozenset, binding: Binding, scope: ast.AST, key: str):
        """Facts about a model the caller itself was passed (`model.train()` on a parameter it never
        rebinds, or an attribute its class's `__init__` stored from one: `self.model`): with the construction
        that its own call site `binding` passes, when that is known; that construction (None: unknown); and
        the name the model goes by there."""
        head, dot, rest = key.partition(".")
        names = parameter_names(scope)
        stored = {n.id for n in self.home(scope).ctx.index.within(scope, ast.Name) if isinstance(n.ctx, ast.Store)}
        found = self._passed(binding, key) if head in names and head not in stored else None
        held = _stored_parameter(self.home(scope).ctx, scope, head) if head.startswith("@") else None
        outer = binding.of(held[0]) if held is not None else None  # `self.model` a trainer's `__init__` stored
        found = self._passed(outer, held[1] + dot + rest) if outer is not None else found
        built = common_built(found[4]) if found is not None else None
        if built is None:
            return facts, None, key
        self.homes[built] = found[0]
        named = held[1] + dot + rest if outer is not None else key  # as the class's `__init__` names it
        return frozenset(Fact(f.mode, f.site, f.origin, f.built or built) for f in facts), built, named


    def _passed(self, binding: Binding, key: str):
        """(the caller's context, its call, the function or module around the call, the argument's key
        there, its facts just before the call) for the receiver `key` of the function `binding` calls;
        None when the call site is not in another module, is in a test (which exercises modes on purpose,
        often on mocks), or passes no receiver there."""
        if len(either(key)) > 1:  # `m = ema_model if use_ema else model`: what the call site passes for either
            found = [self._passed(binding, k) for k in either(key) if not _passes_none(binding, k)]
            if not found or None in found or len({f[1] for f in found}) != 1:
                return None
            return (*found[0][:3], joined(f[3] for f in found), frozenset().union(*(f[4] for f in found)))
        head, dot, rest = key.partition(".")
        if head.startswith("@"):
            return self._passed_to_instance(binding, head, dot + rest)
        passed = binding.argument(head)
        if not binding.path or is_test_path(binding.path) or passed is None or passed[2].default or passed[0] is self.ctx:
            return None
        caller, argument, _ = passed
        site = caller.index.parents.get(argument)
        site = caller.index.parents.get(site) if isinstance(site, ast.keyword) else site
        if not isinstance(site, ast.Call):
            return None
        scope = caller.scopes.enclosing_function(site) or caller.tree
        modes = self.of_module(caller)
        flow = modes.flow(scope)
        key = modes.key(argument, scope)
        if key is None or site not in flow.before:
            return None
        member, made = _member(modes.objects, argument, scope, rest)
        key = member or key + dot + rest
        facts = lookup(flow.before[site], key)
        if made is not None and common_built(facts) is None:  # `self.net = nn.Sequential(...)` in `__init__`
            modes.homes[made] = caller
            facts = frozenset(Fact(f.mode, f.site, f.origin, f.built or made) for f in facts)
        return caller, site, scope, key, facts


    def _passed_to_instance(self, binding: Binding, parameter: str, rest: str, built_here: bool = False):
        """`_passed` for the receiver a parameter of `__init__` (or a setter) stands for in a method called on
        an instance built in the caller's module (`trainer.score(loader)` with `trainer = Trainer(model)`):
        what was passed for it there (`objects.instances`), with its facts just before the method's call
        (`built_here`: also at a call site in the linted file, for what was built there)."""
        caller, site = binding.caller, binding.call
        if caller is None or (caller is self.ctx and not built_here) or is_test_path(binding.path) or not isinstance(site.func, ast.Attribute):
            return None
        if is_self_attribute(site.func):  # `self.validate()` in a base's template method
            return self._passed_to_self(binding, parameter, rest)
        cls = binding.ctx.scopes.enclosing_class(binding.function)
        named = [] if cls is None else [
            (f, p.arg) for home, own in lineage(binding.ctx, cls, self.view) for f in own.body if isinstance(f, FUNCTIONS)
            for p in parameters(f) if Obj("parameter", f, p.arg).key() == parameter
        ]  # fmt: skip
        instances = caller.analysis(Instances)
        instance = instances.built(site.func.value) if named else None
        bound = _bound(caller, instances.binding(instance, site), *named[0]) if instance is not None else None
        argument, held = bound or (None, None)
        scope = caller.scopes.enclosing_function(site) or caller.tree
        if argument is None or (caller.scopes.enclosing_function(argument) or caller.tree) is not scope:
            return None
        modes = self.of_module(caller)
        flow = modes.flow(scope)
        # A model built in the construction's call (`Trainer(Net())`) has no key there: the caller's flow keeps
        # what the instance's methods do to it by the key of the parameter holding it, as it keeps it in a file.
        key = modes.key(argument, scope) or (held if isinstance(argument, ast.Call) else None)
        if key is None or site not in flow.before:
            return None
        facts = lookup(flow.before[site], key + rest)
        if key == held and not rest:  # the construction passed: untouched since, the model is as it built it
            new = modes.builds_module(argument)
            facts = frozenset(
                Fact(Mode.TRAIN, argument, argument, argument) if f.mode is Mode.ENTRY and new else Fact(f.mode, f.site, f.origin, f.built or argument)
                for f in facts
            )  # fmt: skip
        return caller, site, scope, key + rest, facts


    def _passed_to_self(self, binding: Binding, parameter: str, rest: str):
        """`_passed_to_instance` for a method a base's template method calls on `self` (`self.validate()` in
        `BaseTrainer.fit`, run by a subclass's override): the facts the template method's flow has just
        before the call, with the model the instance's construction passed, where the template method's
        call sites that run the override (on an instance of its class) agree on it."""
        caller, site = binding.caller, binding.call
        method = caller.scopes.enclosing_function(site)
        modes = self.of_module(caller)
        flow = modes.flow(method) if method is not None else None
        if flow is None or site not in flow.before:
            return None
        facts = lookup(flow.before[site], parameter + rest)
        if common_built(facts) is None and not rest:
            override = (binding.ctx, binding.ctx.scopes.enclosing_class(binding.function))
            sites = [b for b in self.ctx.analysis(Callers).bindings_in(caller, method) if self._runs_on(b, *override)]
            outer = [self._passed_to_instance(b, parameter, rest, built_here=True) for b in sites]
            built = {(found[0], common_built(found[4])) for found in outer if found is not None}
            if len(built) == 1 and None not in (made := built.pop()):
                modes.homes[made[1]] = made[0]
                facts = frozenset(Fact(f.mode, f.site, f.origin, f.built or made[1]) for f in facts)
        return caller, site, method, parameter + rest, facts

    def _runs_on(self, binding: Binding, home, cls: ast.ClassDef | None) -> bool:
        """Is the method `binding` calls called on an instance built in its caller's module of `cls` (of the
        module `home`) or of a class derived from it?"""
        receiver = binding.call.func.value if binding.call is not None and isinstance(binding.call.func, ast.Attribute) else None
        instance = binding.caller.analysis(Instances).built(receiver) if receiver is not None and binding.caller is not None else None
        found = self.objects.class_of(instance) if instance is not None and cls is not None else None
        place = (home.module.name if home.module else None, cls.name) if cls is not None else None
        return found is not None and any((c.module.name if c.module else None, k.name) == place for c, k in lineage(*found, self.view))

    def frozen_at_call_sites(self, use: Use) -> bool:
        """Is the model of a use one the function gets from its callers (a parameter, or an attribute of
        `self` that `__init__` is passed) that no optimizer the function steps updates, at each call site
        of the function that passes them: each passes an optimizer built on the parameters of other
        objects than the model it passes (`train_inversion(unet, text_encoder, ..., optimizer=ti_optimizer)`
        with `ti_optimizer` built on the text encoder's embeddings: the U-Net is frozen)?"""
        scope = use.scope
        if use.own_key or not isinstance(scope, FUNCTIONS):
            return False
        head, *attributes = use.key.split(".")
        if use.key.startswith("@") and use.site is use.call:  # an object's key: as the model call's receiver is
            models = self.objects.points_to(called_receiver(use.call))
        elif head in parameter_names(scope):
            models = frozenset({self.objects.parameter(scope, head)})
            for attribute in attributes:
                models = union(*(self.objects.member(obj, attribute) for obj in models - {NONE})) if models else None
        else:
            return False
        steps = [s for call in self.ctx.index.within(scope, ast.Call) if (s := stepped_optimizer(self.ctx, call)) is not None]
        if not models or not steps:
            return False
        # The one function whose call sites pass them: `scope` itself, or its class's `__init__`.
        passed = [models, *(self.objects.points_to(receiver) or () for receiver in steps)]
        functions = {p.node for found in passed for obj in found for p in _chain(obj) if p.kind == "parameter"}
        if len(functions) != 1:
            return False
        sites = [b for b in self.ctx.analysis(Callers).bindings(functions.pop()) if b.site is not None]
        return bool(sites) and all(self._frozen_under(models, steps, binding) for binding in sites)


    def _frozen_under(self, models: frozenset, steps: list[ast.AST], binding: Binding) -> bool:
        """Under one call site: the objects the model is, and those the stepped optimizers train, are known,
        and none of the trained is the model, a part of it or what it is a part of."""
        models = substituted(self.objects, models, binding)
        trained: set[Obj] = set()
        for receiver in steps:
            made = built(self.ctx, receiver, binding)
            if made is None:
                return False
            for ctx, call in made:
                for owner in self.objects._of(ctx).trained_by(call):
                    # Built in the function (`Adam(model.parameters())`) or by its caller (`ti_optimizer`).
                    found = substituted(self.objects, under(ctx, owner, binding, self.objects), binding.outer)
                    if found is None:
                        return False
                    trained |= found - {NONE}
        if not models or not trained or any(p.kind == "parameter" for obj in {*models, *trained} for p in _chain(obj)):
            return False  # a parameter no call site tells: unknown
        return not any(obj in _chain(other) or other in _chain(obj) for obj in models - {NONE} for other in trained)

def _member(objects, argument: ast.AST, scope: ast.AST, rest: str) -> tuple[str | None, ast.Call | None]:
    """The key, seen from `scope`, of the attribute `rest` (`model`, `model.encoder`) of what `argument` is,
    when that is an object of its own (`self.model` of a trainer passed whole as `self`, which the trainer's
    flow keeps by the object `__init__` stored), and the construction that made it when one call did
    (`self.net = nn.Sequential(...)`); Nones else."""
    found = objects.points_to(argument) if rest else None
    for name in rest.split("."):
        found = union(*(objects.member(obj, name) for obj in found - {NONE})) if found else None
    key = objects.key_of(found, scope)
    if key is None or not key.startswith("@"):
        return None, None
    made = [obj.node for obj in found - {NONE} if obj.kind == "made" and isinstance(obj.node, ast.Call)]
    return key, made[0] if len(made) == 1 and len(found - {NONE}) == 1 else None


def _stored_parameter(ctx, method: ast.AST, key: str) -> tuple[ast.AST, str] | None:
    """(the function, the parameter) of the method's class (`__init__`, a setter) whose object key is `key`."""
    cls = ctx.scopes.enclosing_class(method)
    functions = (f for f in cls.body if isinstance(f, FUNCTIONS)) if cls is not None else ()
    return next(((f, p.arg) for f in functions for p in parameters(f) if Obj("parameter", f, p.arg).key() == key), None)


def _passes_none(binding: Binding, key: str) -> bool:
    """Does the call site pass `None` for the parameter `key` heads, or leave it to a `None` default
    (`ema=None`)? No model reaches the function there."""
    passed = binding.argument(key.partition(".")[0])
    return passed is not None and isinstance(passed[1], ast.Constant) and passed[1].value is None


def _chain(obj: Obj) -> set[Obj]:
    """An object and what it is an attribute of (`model.fc` is a part of `model`)."""
    found = set()
    while obj is not None:
        found.add(obj)
        obj = obj.base
    return found


def _bound(caller, binding, function: ast.AST, parameter: str) -> tuple[ast.AST, str] | None:
    """What `caller` passes for a parameter of a class's `function` to an instance (its `Instances.binding`),
    whose module it may read in a tree of its own (the function told by name and line), with the object key
    of that parameter in that tree."""
    while binding is not None and (binding.function.name, binding.function.lineno) != (function.name, function.lineno):
        binding = binding.also
    passed = binding.argument(parameter) if binding is not None else None
    if passed is None or passed[0] is not caller or passed[2].annotated:
        return None
    return passed[1], Obj("parameter", binding.function, parameter, ctx=binding.ctx).key()

