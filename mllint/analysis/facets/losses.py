"""Loss calls and the activations fed to them: which torch loss a call computes (`F.nll_loss(...)`,
`criterion(...)` whatever object the objects layer says `criterion` is: built by a helper and moved,
kept in a container, set by a setter), its input (as the values describe it, or else the output of the
project model the objects layer says is called), the table of activation outputs each loss
must not be fed, and the fixes that drop an activation (`F.softmax(x, 1)` -> `x`) where nothing else reads
its value or turn a softmax into `log_softmax`. Shared by the ML1 rules.

A loss object or an input that reaches the loss call as a parameter (`def train(model, criterion)`) is
read under each of its function's call sites in turn (`callers.per_call_site`): the loss and its input
come from the same call site, or the call is not reported."""
from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from mllint.analysis.program.callers import Callers, call_sites, per_call_site
from mllint.analysis.syntax.names import call_argument, called_name, is_self_attribute
from mllint.analysis.objects.call_sites import built, chosen_note, constructed_classes, decided_test, getattr_names, made_classes, makers, possible_constants, replaced_by_call, table_item, under
from mllint.analysis.objects.callees import called_names
from mllint.analysis.objects.constants import binding_constants, call_constants, fold, stored_names
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.objects.turns import turns
from mllint.analysis.program.hierarchy import inherited_method
from mllint.analysis.program.project_view import Instance, ProjectView, followed_view, place_in
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.folding import runs_under
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.syntax.tree import assignment_targets, own_method
from mllint.analysis.values.library_classifiers import is_library_model
from mllint.analysis.values.values import (
    FUNCTION_KINDS, METHOD_KINDS, MODULE_KINDS, NEGATING_ACTIVATIONS, SEQUENTIAL, VALUE_PRESERVING_METHODS, Called, Kind, Origin, Passed, Ref, Source,
    ValueKinds, canonical_class, selects_values, tensor_method,
)
from mllint.findings import Applicability, Fix, Related

CROSS_ENTROPY = "cross-entropy"
NLL = "nll"
BCE = "bce"
BCE_WITH_LOGITS = "bce-with-logits"
KL_DIV = "kl-div"
LOSSES = {
    "torch.nn.functional.cross_entropy": CROSS_ENTROPY,
    "torch.nn.CrossEntropyLoss": CROSS_ENTROPY,
    "torch.nn.functional.nll_loss": NLL,
    "torch.nn.NLLLoss": NLL,
    "torch.nn.functional.binary_cross_entropy": BCE,
    "torch.nn.BCELoss": BCE,
    "torch.nn.functional.binary_cross_entropy_with_logits": BCE_WITH_LOGITS,
    "torch.nn.BCEWithLogitsLoss": BCE_WITH_LOGITS,
    "torch.nn.functional.kl_div": KL_DIV,
    "torch.nn.KLDivLoss": KL_DIV,
}

# What goes wrong when a loss is fed an activation's output, by (loss, kind of its input). Cross-entropy
# and BCE-with-logits expect raw logits, NLL and KL-div log-probabilities, BCE probabilities. Pairs not
# listed are right (`log_softmax` into `NLLLoss`), or may be (softmax output into `BCELoss`).
SOFTMAX_TWICE = "softmax applied twice"
NOT_LOG_PROBABILITIES = "NLL of values that are not log-probabilities"
SIGMOID_TWICE = "sigmoid applied twice"
REDUNDANT_LOG_SOFTMAX = "log_softmax applied twice"
OTHER_ACTIVATION = "a loss that applies one activation fed the output of another"
KL_DIV_NOT_LOG_PROBABILITIES = "KL divergence of values that are not log-probabilities"
BCE_OUT_OF_RANGE = "BCE of values outside [0, 1]"
BCE_AFTER_SIGMOID = "BCE after a sigmoid, unstable"
MISMATCHES = {
    (CROSS_ENTROPY, Kind.PROBABILITIES): SOFTMAX_TWICE,
    (CROSS_ENTROPY, Kind.LOG_PROBABILITIES): REDUNDANT_LOG_SOFTMAX,
    (CROSS_ENTROPY, Kind.SIGMOID): OTHER_ACTIVATION,
    (CROSS_ENTROPY, Kind.LOG_SIGMOID): OTHER_ACTIVATION,
    (NLL, Kind.PROBABILITIES): NOT_LOG_PROBABILITIES,
    (NLL, Kind.SIGMOID): NOT_LOG_PROBABILITIES,
    (NLL, Kind.LOG_SIGMOID): NOT_LOG_PROBABILITIES,
    (NLL, Kind.LOGITS): NOT_LOG_PROBABILITIES,
    (CROSS_ENTROPY, Kind.RELU): OTHER_ACTIVATION,
    (CROSS_ENTROPY, Kind.SOFTPLUS): OTHER_ACTIVATION,
    (CROSS_ENTROPY, Kind.HARDSIGMOID): OTHER_ACTIVATION,
    (BCE_WITH_LOGITS, Kind.HARDSIGMOID): OTHER_ACTIVATION,
    (BCE_WITH_LOGITS, Kind.RELU): OTHER_ACTIVATION,
    (BCE_WITH_LOGITS, Kind.SOFTPLUS): OTHER_ACTIVATION,
    (BCE_WITH_LOGITS, Kind.SIGMOID): SIGMOID_TWICE,
    (BCE_WITH_LOGITS, Kind.PROBABILITIES): OTHER_ACTIVATION,
    (BCE_WITH_LOGITS, Kind.LOG_PROBABILITIES): OTHER_ACTIVATION,
    (BCE_WITH_LOGITS, Kind.LOG_SIGMOID): OTHER_ACTIVATION,
    (KL_DIV, Kind.PROBABILITIES): KL_DIV_NOT_LOG_PROBABILITIES,
    (KL_DIV, Kind.SIGMOID): KL_DIV_NOT_LOG_PROBABILITIES,
    (KL_DIV, Kind.LOGITS): KL_DIV_NOT_LOG_PROBABILITIES,
    (BCE, Kind.LOG_PROBABILITIES): BCE_OUT_OF_RANGE,
    (BCE, Kind.LOG_SIGMOID): BCE_OUT_OF_RANGE,
    (BCE, Kind.LOGITS): BCE_OUT_OF_RANGE,
    (BCE, Kind.SIGMOID): BCE_AFTER_SIGMOID,
}
# The activation each loss applies to its input itself.
APPLIES = {CROSS_ENTROPY: "log_softmax", BCE_WITH_LOGITS: "the sigmoid"}


LOSS_NAME = re.compile(r"loss|crit|objective", re.IGNORECASE)  # what a parameter holding a loss is called
MODEL_KEYWORDS = frozenset({"module", "model"})  # how a training wrapper is handed the model by keyword
PARTIAL = frozenset({"functools.partial"})  # binds a function's arguments: not a wrapper that trains


@dataclass(frozen=True)
class LossInput:
    loss: str  # CROSS_ENTROPY, NLL, ...
    callee: str  # the loss as written: `F.nll_loss`, `self.criterion`
    argument: ast.AST  # the input (prediction) argument
    origin: Origin  # what the input is
    note: str = ""  # for a loss object passed by a call site: where (" (passed at main.py:12)")
    related: tuple[Related, ...] = ()  # the call sites it holds under (`callers.call_sites`)


def mismatched_inputs(ctx, problem: str) -> list[tuple[ast.Call, LossInput]]:
    """The loss calls of the file whose input's activation makes `problem` (see `MISMATCHES`), each with
    that input: as the file's own code tells, or else under one call site of the function around it."""
    found = []
    for call, inputs in ctx.analysis(LossCalls).inputs.items():
        first = next((f for f in inputs if MISMATCHES.get((f.loss, f.origin.kind)) == problem), None)
        if first is not None:
            found.append((call, first))
    return found


class LossCalls:
    """The loss calls of a file, each worked out once for all the ML1 rules."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx

    @cached_property
    def inputs(self) -> dict[ast.Call, list[LossInput]]:
        """The calls that may compute a loss, in source order, with the loss and the kind of their input:
        the one the code tells, or one per call site that tells both."""
        found = {}
        for call in self.ctx.index.of_type(ast.Call):
            if self._may_be_a_loss_function(call.func) or self._may_hold_a_loss(call):
                found[call] = [f for inputs, _ in per_call_site(self.ctx, call, lambda b, call=call: self._inputs(call, b)) for f in inputs]
            handed = self._handed_input(call) if not found.get(call) else None
            if handed is not None:
                found[call] = [handed]
        if not any(found.values()):
            found.update((call, [f]) for call, f in self._unread_losses())
        return found

    def _unread_losses(self) -> Iterator[tuple[ast.Call, LossInput]]:
        """A loss that applies an activation itself built beside the one model of its scope (`model = Net()`,
        `criterion = nn.BCEWithLogitsLoss()`) and read nowhere in the file, which calls no loss it understands:
        code out of view (a fragment's, a framework's) calls it on that model's output, the model the input."""
        ctx, view = self.ctx, self.ctx.analysis(ProjectView)
        by_scope: dict[ast.AST | None, list[tuple[ast.Name, ast.Call]]] = {}
        for node in ctx.index.of_type(ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call):
                by_scope.setdefault(ctx.scopes.enclosing_scope(node), []).append((node.targets[0], node.value))
        for built_here in by_scope.values():
            losses = [(n, c) for n, c in built_here if self._loss_of_class(ctx.qualified_name(c.func)) in APPLIES and n.id not in self._read_names]
            models = [(n, c) for n, c in built_here if self._model_value(c) is not None]
            if len(losses) != 1 or len({n.id for n, _ in models}) != 1:
                continue
            (_, loss), (name, model) = losses[0], models[-1]
            origin = view.origin_of(Called(self._model_value(model), model))
            if origin is not None:
                kind = self._loss_of_class(ctx.qualified_name(loss.func))
                yield loss, LossInput(kind, ctx.text(loss), model, origin, f" (built beside `{name.id}`, its call out of view)")

    def _model_value(self, constructor: ast.Call):
        """The value of a construction that makes a model: an instance of a module of the project, or a torch
        container of layers (`nn.Sequential(...)`); None for anything else."""
        view = self.ctx.analysis(ProjectView)
        value = self.ctx.analysis(ValueKinds).value(constructor)
        found = view.resolve(value, view.own) if value is not None else None
        return value if isinstance(found, Instance) or (getattr(found, "layer", False) and canonical_class(self.ctx.qualified_name(constructor.func)) == SEQUENTIAL) else None

    @cached_property
    def _read_names(self) -> frozenset[str]:
        """The names the file reads anywhere."""
        return frozenset(n.id for n in self.ctx.index.of_type(ast.Name) if isinstance(n.ctx, ast.Load))

    def _handed_input(self, call: ast.Call) -> LossInput | None:
        """A library's training wrapper handed a model of the project and a loss that applies an activation
        itself (`NeuralNetClassifier(Net, criterion=nn.CrossEntropyLoss)`, `Model(net, "adam",
        nn.CrossEntropyLoss())`): the wrapper, not the code in view, calls the loss on the model's output,
        so the model (a class or an instance) is the loss input. The loss is told by its value (a loss
        class, instance or function), at any place or keyword; the model is the first argument or one passed
        as `module=`/`model=`."""
        ctx = self.ctx
        view = ctx.analysis(ProjectView)
        wrapper = ctx.qualified_name(call.func)
        if wrapper is None or wrapper in LOSSES or wrapper in PARTIAL:
            return None
        losses = {self._handed_loss(a) for a in [*call.args, *(k.value for k in call.keywords)]} - {None}
        model = next((k.value for k in call.keywords if k.arg in MODEL_KEYWORDS), call.args[0] if call.args else None)
        if len(losses) != 1 or model is None:
            return None
        loss, given = losses.pop()
        if loss not in APPLIES or _keeps_handed(view, wrapper, call, given):
            return None  # (an NLL given with a softmax model: skorch takes the log of probabilities itself)
        value = ctx.analysis(ValueKinds).value(model)
        named = _class_name(ctx, ast.Call(func=model)) if value is None and isinstance(model, ast.Name | ast.Attribute) else None
        value = Called(Ref(named), model) if named is not None else value  # the class: the wrapper builds it
        origin = view.origin_of(Called(value, model)) if isinstance(view.resolve(value, view.own), Instance) else None
        if origin is None:
            return None
        return LossInput(loss, ctx.text(given), model, origin, f" (handed to `{ctx.text(call.func)}` with the model)")

    def _handed_loss(self, argument: ast.AST) -> tuple[str, ast.AST] | None:
        """(the loss, its expression) of an argument that is a torch loss: a class, an instance or a
        function (`nn.CrossEntropyLoss`, `nn.CrossEntropyLoss(weight=w)`, `F.cross_entropy`)."""
        if isinstance(argument, ast.Call):
            loss = self._loss_of_class(self.ctx.qualified_name(argument.func))
        else:
            loss = LOSSES.get(self.ctx.qualified_name(argument)) if isinstance(argument, ast.Name | ast.Attribute) else None
        return (loss, argument) if loss is not None else None

    def _inputs(self, call: ast.Call, binding) -> list[LossInput] | None:
        """The call's input under `binding`; or else, in a loop over a dict with known keys (`turns`), its
        input in each turn that has one (`crit(out[name], ...)` of `for name, crit in criteria.items()`)."""
        if not self._runs_under(call, binding):
            return None
        found = self._input(call, binding)
        turned = turns(self.ctx, call) if found is None else None
        if turned is None:
            return None if found is None else [found]
        loop, keys = turned
        return [f for key in keys if (f := self._input(call, binding, (loop, key))) is not None] or None

    def _runs_under(self, call: ast.Call, binding) -> bool:
        """Does `call` run under the constants the call site `binding` passes to the function around it (`if
        loss_name == "nll":` with `fit(model, "ce")`: its `else` arm only, or what follows an `if` whose taken arm
        returns)? Without a call site, yes."""
        function = self.ctx.scopes.enclosing_function(call)
        bound = binding.of(function) if binding is not None and function is not None else None
        if bound is None:
            return True
        constants = binding_constants(self.ctx, bound)
        if not constants:
            return True
        return runs_under(self.ctx.scopes, call, lambda branch: fold(branch.test, constants))

    def _may_be_a_loss_function(self, func: ast.AST) -> bool:
        """`F.cross_entropy`, `nn.NLLLoss` or an alias imported under another name: by its name, before
        resolving it."""
        name = called_name(func)
        return name in self._loss_names and LOSSES.get(self.ctx.qualified_name(func)) is not None

    @cached_property
    def _loss_names(self) -> set[str]:
        """The names a loss function or class can be called by: its own, or an alias an import binds it to."""
        own = {n.rsplit(".", 1)[-1] for n in LOSSES}
        aliases = {
            alias.asname for node in self.ctx.index.of_type(ast.Import, ast.ImportFrom) for alias in node.names
            if alias.asname and alias.name.rsplit(".", 1)[-1] in own
        }  # fmt: skip
        return own | aliases

    def _input(self, call: ast.Call, binding, turn: tuple | None = None) -> LossInput | None:
        ctx = self.ctx
        loss, note = LOSSES.get(ctx.qualified_name(call.func)), ""
        if loss is None:
            loss = loss_function(ctx, call.func, binding)
            if loss is not None and binding is not None and loss_function(ctx, call.func, None) is None:
                note = _passed_note(ctx, call.func, binding)
        chosen = []  # what the configuration's defaults chose among: the loss object, the model called
        if loss is None:
            loss = self._loss_object(call.func, binding, turn)
            if loss is not None and binding is not None and self._loss_object(call.func, None, turn) is None:
                note = _passed_note(ctx, call.func, binding)
            chosen += [call.func] if loss is not None else []
            item = self._item_note(call.func, binding, turn, loss) if loss is not None else ""
            note = (f"{note[:-1]}; {item})" if note.endswith(")") else f"{note} ({item})") if item else note
        if loss is None:
            loss = self._wrapped_loss(call.func, binding)
            if loss is not None and binding is not None and self._wrapped_loss(call.func, None) is None:
                note = _passed_note(ctx, call.func, binding)
        argument = self._prediction(call) if loss else None
        if argument is not None and self._reported_by_caller(_values_kept_from(argument), binding):
            return None
        origin = ctx.analysis(ProjectView).origin(argument, binding, turn) if argument is not None else None
        if origin is not None and (self._replaced_member(argument) or self._changed_model(argument, binding)):
            return None
        if origin is None and argument is not None and turn is None:
            origin = self._model_output(argument, binding)
            found = ctx.analysis(Objects).points_to(_values_kept_from(argument)) if origin is not None else None
            chosen += [obj.node.func for obj in found or () if obj.kind == "made" and isinstance(obj.node, ast.Call)]
        default = chosen_note(ctx, chosen, binding) if origin is not None and chosen else ""
        note += f"{default}," if default else ""
        note += f" (at key {turn[1]!r})" if turn else ""
        return None if origin is None else LossInput(loss, ctx.text(call.func), argument, origin, note, call_sites(binding))

    def _replaced_member(self, argument: ast.AST) -> bool:
        """Is the input the output of a layer a model keeps (`model.head(h)`, `head(h)` with `head =
        model.head`) that code of the file may replace from outside its class (`def swap(m): m.head = ...`)?"""
        kept = _values_kept_from(argument)
        func = kept.func if isinstance(kept, ast.Call) else None
        if isinstance(func, ast.Name):
            assigned = self.ctx.analysis(ValueKinds).assigned_values(func)
            func = assigned[0] if assigned and len(assigned) == 1 else None
        if not isinstance(func, ast.Attribute) or is_self_attribute(func) or not isinstance(func.value, ast.Name | ast.Attribute):
            return False
        return self.ctx.analysis(Objects).written_elsewhere(func)

    def _changed_model(self, argument: ast.AST, binding) -> bool:
        """Is the input the output of a model (`model(x)`, `out` bound to it) that a function is handed and
        replaces a part of (`swap(model)` with `def swap(m): m.fc = nn.Linear(...)`), under `binding`?"""
        found = self.ctx.analysis(Objects).points_to(_values_kept_from(argument))
        calls = [o.node for o in found or () if o.kind == "made" and o.ctx is self.ctx and isinstance(o.node, ast.Call)]
        return any(replaced_by_call(self.ctx, built(self.ctx, c.func, binding)) for c in calls)

    def _prediction(self, call: ast.Call) -> ast.AST | None:
        """The input argument: at its place, as `input=`, or through a `*pair` or `**kwargs` of a literal
        (`kw = {"input": out, "target": y}; loss_fn(**kw)`, `criterion(*(out, y))`)."""
        return self.ctx.analysis(ValueKinds).passed_argument(call, 0, "input")

    def _loss_object(self, func: ast.AST, binding, turn: tuple | None = None) -> str | None:
        """The loss every object `func` may be computes (`criterion = build_criterion(cfg).to(device)`,
        `self.losses["ce"]`, a loss passed by the call site `binding`; in a loop's `turn`), as the objects layer tells."""
        made = built(self.ctx, func, binding, turn=turn)
        classes = [constructed_classes(m, self.ctx) for m in made or ()]
        if not classes or None in classes:
            return None
        losses = {self._loss_of_class(name) for names in classes for name in names}
        if len(losses) == 2 and None in losses and (any(len(names) > 1 for names in classes) or self.ctx.analysis(Objects).each_item(func)):
            losses.discard(None)  # a table of losses by configuration, or a loop calling each: the one of this family
        return losses.pop() if len(losses) == 1 else None

    def _item_note(self, func: ast.AST, binding, turn: tuple | None, loss: str) -> str:
        """For the variable of a loop calling each item of a container (`Objects.each_item`): which item is
        the `loss`, and where it is built ("its item `nn.BCELoss()`, losses.py:17"); "" for another callee."""
        if not self.ctx.analysis(Objects).each_item(func):
            return ""
        made = built(self.ctx, func, binding, turn=turn) or []
        item = next(((home, c) for home, c in made if any(self._loss_of_class(n) == loss for n in constructed_classes((home, c), self.ctx))), None)
        return "" if item is None else f"its item `{item[0].text(item[1])}`, {place_in(self.ctx, item[0], item[1])}"

    def _loss_of_class(self, name: str | None) -> str | None:
        """The loss a class computes: a library loss's, or that of the one a project subclass derives from
        without a `forward` of its own (`class SmoothCE(nn.CrossEntropyLoss)` setting `label_smoothing`)."""
        found = LOSSES.get(canonical_class(name))
        base = self.ctx.analysis(ProjectView).library_base(name, LOSSES) if found is None and name is not None else None
        return found if base is None else LOSSES[base]

    def _wrapped_loss(self, func: ast.AST, binding) -> str | None:
        """The loss every function `func` may be computes on its input (`_taking_input`): a closure a builder
        returns (`def fn(pred, target): return base(pred, target * (1 - eps) + eps / 2)` over `base =
        nn.BCEWithLogitsLoss()`), or an instance of a project module whose `forward` passes its input on to a
        loss it holds (`return self.crit(pred, target)`): each of its returns a loss call (`LOSSES`, or a loss
        object or function) given that parameter as its input, its values unchanged (reshaped, viewed, masked)."""
        found = under(self.ctx, func, binding) if isinstance(func, ast.Name | ast.Attribute) else None
        losses = set()
        for home, function, first, made in [_taking_input(self.ctx, o) for o in found or ()] or [(None,) * 4]:
            if function is None:
                return None
            for returned in function_returns(function) or [None]:
                argument = call_argument(returned, 0, "input") if isinstance(returned, ast.Call) else None
                argument = _values_kept_from(argument) if argument is not None else None  # `scores.reshape(-1, n)` too
                if not (isinstance(argument, ast.Name) and argument.id == first) or first in stored_names(function):
                    return None
                calls = home.analysis(LossCalls)
                losses.add(LOSSES.get(home.qualified_name(returned.func)) or loss_function(home, returned.func) or calls._loss_object(returned.func, made))
        return losses.pop() if len(losses) == 1 and None not in losses else None

    def _reported_by_caller(self, argument: ast.AST, binding) -> bool:
        """Is the input the parameter of a loss module's `forward` its call site `binding` passes to, so that
        the call of the module is the loss call reported (`adv(disc(x), y)`, not `self.crit(pred, target)`)?"""
        function = binding.function if binding is not None and binding.call is not None else None
        if not isinstance(argument, ast.Name) or not isinstance(function, ast.FunctionDef) or function.name != "forward":
            return False
        own = parameters(function)
        return len(own) > 1 and own[1].arg == argument.id and binding.caller.analysis(LossCalls)._wrapped_loss(binding.call.func, binding.outer) is not None

    def _own_output(self, call: ast.Call) -> Origin | None:
        """The output of `self(x)` in a module class: `_forward_output` of its class."""
        return self._forward_output(self.ctx.scopes.enclosing_class(call))

    def _defined_output(self, view: ProjectView, name: str) -> Origin | None:
        """`_forward_output` of a model class of the linted file the values do not follow (`return
        self.head(h)` with `self.head = build_head(cfg["head"], ...)` picking a registered builder)."""
        found = view.class_summary(name)
        home, cls = found[1].definition() if found is not None else (None, None)
        return self._forward_output(cls) if home is self.ctx else None

    def _forward_output(self, cls: ast.ClassDef | None) -> Origin | None:
        """What every `return` of the class's `forward` gives, each read as a loss input is (a layer of
        `self` a registry's key picked: `return self.head(h)`), when they agree."""
        forward = own_method(cls, "forward", ast.FunctionDef) if cls is not None else None
        returned = function_returns(forward) if forward is not None else None
        origins = [self._model_output(r, None, own=False) for r in returned or ()]
        return origins[0] if origins and all(o is not None and o.kind is origins[0].kind for o in origins) else None

    def _model_output(self, argument: ast.AST, binding, own: bool = True) -> Origin | None:
        """What the objects layer tells of an input the values do not follow: the output of the project
        models the called object may be (`out = model(x)` with `model = self.model`, moved, wrapped, built
        by a builder, set by a setter, or passed by the call site `binding`), when they agree."""
        found = self.ctx.analysis(Objects).points_to(_values_kept_from(argument))
        calls = {_values_kept_from(obj.node) for obj in found or () if obj.kind == "made" and obj.ctx is self.ctx}  # `model(x).squeeze(-1)`: `model(x)`
        if not found or len(calls) != len(found) or not all(isinstance(c, ast.Call) for c in calls):
            return None
        view, origins, values = self.ctx.analysis(ProjectView), [], self.ctx.analysis(ValueKinds)
        for call in calls:
            if isinstance(call.func, ast.Name) and call.func.id == "self":  # the module's own output (Lightning's `self(x)`)
                origins.append(self._own_output(call) if own else None)
                continue
            if isinstance(call.func, ast.Name) and values.changed_before(call.func, call):
                origins.append(self._replaced_head_output(view, call, binding))  # `model.classifier = make_head(n)`
                continue  # (`model.classifier.add_module("act", nn.Sigmoid())`: not what its class makes)
            made = built(self.ctx, call.func, binding)
            if made is None and binding is not None:  # the loss set by a setter's call, the model by `__init__`'s
                made = next((m for m, b in makers(self.ctx, call.func) if b is not None and b.function is not binding.function), None)
            if replaced_by_call(self.ctx, made):
                return None  # `swap(model)` replacing `model.fc`: not what its class makes
            classes = {_class_name(ctx, constructor) for ctx, constructor in made or ()}
            chosen = self._table_choices(made) if None in classes else None
            if chosen:  # `MODELS[name](**kw)` in a builder: what every class the key may choose makes
                origins += [view.origin_of(Called(Called(Ref(name), made[0][1]), call)) for name in sorted(chosen)]
                continue
            if len(classes) != 1 or None in classes:
                return None
            name = classes.pop()
            if name.startswith("torch."):  # each layer it may be (a head each subclass's hook builds): `nn.Sequential(..., nn.Softmax(1))`, passed in, wrapped
                layered = [
                    (self._passed_layer_output(view, m, call, binding) if binding is not None else None) or self._chosen_layer_output(view, m, call)
                    for m in made
                ]  # fmt: skip
                if len(made) == 1 or None not in layered:
                    origins += layered
                    continue
            model = Called(Ref(name), made[0][1])
            origins.append(
                view.origin_of(Called(model, call)) or self._flagged_output(view, model, call) or self._chosen_own_layer(view, name, call)
                or self._defined_output(view, name)
            )  # fmt: skip
        return origins[0] if origins and all(o is not None and o.kind is origins[0].kind for o in origins) else None

    def _table_choices(self, made: list[tuple[object, ast.Call]] | None) -> frozenset[str] | None:
        """The project classes a table read builds (`MODEL_REGISTRY[name](**kwargs)` in a helper, `name` bound
        at its call sites; `getattr(models, cfg["arch"])(...)`), every key the call sites may pass counted; None
        when one is not a project class."""
        if not made or not all(table_item(home, c.func) is not None or getattr_names(home, c.func, self.ctx) is not None for home, c in made):
            return None
        view = self.ctx.analysis(ProjectView)
        names = frozenset().union(*(constructed_classes(m, self.ctx) or {None} for m in made))
        return names if names and all(n is not None and view.class_summary(n) is not None for n in names) else None

    def _passed_layer_output(self, view: ProjectView, made: tuple[object, ast.Call], call: ast.Call, binding) -> Origin | None:
        """The output of a torch module a call site builds and passes (as the objects layer follows it, through
        `DataParallel` and `self.model` too): what its construction makes, read in the caller's module."""
        home, constructor = made
        layer = home.analysis(ValueKinds).value(constructor)
        if home is self.ctx or home.module is None or layer is None:
            return view.origin_of(Called(layer, call)) if home is self.ctx and layer is not None else None
        passed = binding.argument(call.func.id) if isinstance(call.func, ast.Name) else None
        if passed is None:
            return None
        return view.origin_of(Called(Passed(layer, home.module.name, passed[2]), call))  # named as the call site passes it

    def _chosen_layer_output(self, view: ProjectView, made: tuple[object, ast.Call], call: ast.Call) -> Origin | None:
        """The output of a torch module built in another module (`nn.Sequential(net, nn.Sigmoid())`), also
        one whose output layer's class the configuration chooses (`getattr(nn, cfg.out_act)()` with the field defaulting to "Sigmoid", `act = ACTIVATIONS[cfg.get(
        "out_act", "sigmoid")]` then `act()`), as the constants its key may be tell (`made_classes`)."""
        home, constructor = made
        values = home.analysis(ValueKinds)
        last = values.output_constructor(constructor)
        if last is None:  # the last layer of a list a builder fills, in the module that fills it
            home, last = self._configured_last(view, home, constructor) or (home, None)
            values = home.analysis(ValueKinds)
        chosen = last is not None and values.layer_class(last) is None  # a class the module's own code does not tell
        written = home.qualified_name(last.func) if isinstance(last, ast.Call) else None  # `nn.Sigmoid()` itself
        classes = made_classes(home, last, self.ctx) if chosen else {written} if written and written.startswith("torch.") else None
        kinds = {MODULE_KINDS.get(canonical_class(name)) for name in classes or {None}}
        if len(kinds) != 1 or None in kinds:
            return None
        line = _chosen_at(home, last).lineno
        if home is self.ctx:
            return Origin(kinds.pop(), call, Source("", "", line))
        summary = view.summary(home.module.name) if home.module is not None else None
        return Origin(kinds.pop(), call, Source("", *view.line_of(summary, line))) if summary is not None else None

    def _replaced_head_output(self, view: ProjectView, call: ast.Call, binding) -> Origin | None:
        """The output of a library classifier whose head the code replaces (`ValueKinds.replacing_head`) with
        a torch module built elsewhere (`model.classifier = make_head(n)`, its layers filled by a helper): what
        that module outputs (`_chosen_layer_output`); None for any other change."""
        head = self.ctx.analysis(ValueKinds).replacing_head(call.func)
        model = built(self.ctx, call.func, binding) if head is not None else None
        library = bool(model) and all(is_library_model(_class_name(*made) or "") for made in model)
        made = built(self.ctx, head, binding) if library else None
        if not made or len(made) != 1 or not (_class_name(*made[0]) or "").startswith("torch."):
            return None
        return self._chosen_layer_output(view, made[0], call)

    def _chosen_own_layer(self, view: ProjectView, name: str, call: ast.Call) -> Origin | None:
        """The output of a project model whose `forward` returns what a layer it keeps makes (`return
        self.out_act(h)`) built from a class the configuration chooses in `__init__` (`self.out_act =
        OUT_ACTS[head_act]()`, `getattr(nn, act)()`), as the constants its key may be at every construction
        of the class tell (`made_classes`)."""
        found = view.class_summary(name)
        home, cls = found[1].definition() if found is not None else (None, None)
        forward = own_method(cls, "forward", ast.FunctionDef) if cls is not None else None
        returned = function_returns(forward) if forward is not None else None
        last = returned[0] if returned and len(returned) == 1 else None
        if not (isinstance(last, ast.Call) and is_self_attribute(last.func)) or home is None:
            return None
        assigned = home.analysis(ValueKinds).attribute_values(cls, last.func.attr)
        layer = assigned[0] if assigned and len(assigned) == 1 and isinstance(assigned[0], ast.Call) else None
        if layer is None:
            return None
        home, layer = self._configured_last(view, home, layer) or (home, layer)
        kinds = {MODULE_KINDS.get(canonical_class(n)) for n in made_classes(home, layer, self.ctx) or {None}}
        if len(kinds) != 1 or None in kinds:
            return None
        summary = view.summary(home.module.name) if home.module is not None else view.own
        line = _chosen_at(home, layer).lineno
        if home is self.ctx:
            return Origin(kinds.pop(), call, Source(f"{cls.name}.forward", "", line))
        return Origin(kinds.pop(), call, Source(f"{cls.name}.forward", *view.line_of(summary, line))) if summary is not None else None

    def _configured_last(self, view: ProjectView, home, layer: ast.Call) -> tuple[object, ast.Call] | None:
        """The last layer of an `nn.Sequential(*layers)` (built there, or returned by a builder of the project:
        `make_head(cfg, d)`) whose fills the configuration settles (`if cfg.get("prob_out", False):
        layers.append(nn.Softmax(-1))`), each test read as the constants it may be at every call site."""
        built = view.function(home.qualified_name(layer.func) or "")
        if built is not None:
            returned = function_returns(built[1]) or []
            home, layer = built[0], returned[0] if len(returned) == 1 and isinstance(returned[0], ast.Call) else None
        if layer is None or canonical_class(home.qualified_name(layer.func)) != SEQUENTIAL:
            return None
        listed = layer.args[0].value if len(layer.args) == 1 and isinstance(layer.args[0], ast.Starred) else None
        lister = view.function(home.qualified_name(listed.func) or "") if isinstance(listed, ast.Call) else None
        if lister is not None:  # `nn.Sequential(*make_layers(d, kind))`: the list a helper fills and returns
            returned = function_returns(lister[1]) or []
            home, listed = lister[0], returned[0] if len(returned) == 1 and isinstance(returned[0], ast.Name) else None
        if not isinstance(listed, ast.Name):
            return None

        def decide(test: ast.AST) -> bool | None:  # `if cfg.head == "softmax":`, `if kind == "cls":` (constants at every call site)
            found = possible_constants(home, test, self.ctx)
            truths = {bool(v) for v in found} if found else set()
            return truths.pop() if len(truths) == 1 else decided_test(home, test, self.ctx)

        last = home.analysis(ValueKinds).last_listed_deciding(listed, decide)
        return (home, last) if isinstance(last, ast.Call) else None

    def called_classes(self, call: ast.Call) -> Iterator[tuple[frozenset[str | None], object]]:
        """The classes of the objects `call` may call (`criterion(...)` with `criterion` built by a builder,
        moved, kept in a container, picked from a table of classes (`LOSSES[args.loss]()`), or passed by a
        call site), as the objects layer tells: what the file tells, or else one set per call site's binding
        (with it). Only calls that may hold a loss."""
        if not self._may_hold_a_loss(call):
            return iter(())
        return (
            (frozenset(canonical_class(n) for m in made for n in constructed_classes(m, self.ctx) or {None}), binding)
            for made, binding in makers(self.ctx, call.func) if made
        )  # fmt: skip

    def turned_classes(self, call: ast.Call) -> list[tuple[object, frozenset[str | None]]]:
        """(key, the classes of the objects `call` may call in that key's turn) for each turn of the loop over
        a dict around it (`turns`: `crit(...)` of `for name, crit in criteria.items()`); empty outside one."""
        turned = turns(self.ctx, call) if self._may_hold_a_loss(call) else None
        found = []
        for key in turned[1] if turned else ():
            made = built(self.ctx, call.func, turn=(turned[0], key))
            if made:
                found.append((key, frozenset(canonical_class(n) for m in made for n in constructed_classes(m, self.ctx) or {None})))
        return found

    @staticmethod
    def _flagged_output(view: ProjectView, model: Called, call: ast.Call) -> Origin | None:
        """The output of a model whose `forward` returns another kind by a flag (`def forward(self, x,
        normalize=True)`), under the constants the call passes or leaves to their defaults."""
        found = view.forward_of(model.callee.name)
        node = found[1].definition()[1] if found is not None else None
        forward = own_method(node, "forward", ast.FunctionDef) if node is not None else None
        constants = call_constants(call, forward, skips_first=True) if forward is not None else None
        if not constants:
            return None
        return view.origin_of(Called(model, call, decide=lambda test: fold(test, constants)))

    def _may_hold_a_loss(self, call: ast.Call) -> bool:
        """A cheap test before asking what the object called is: a call with an input, of a call
        (`nn.CrossEntropyLoss()(...)`), an item (`criterions[i]`), a name that no import binds, or an
        attribute the file writes (`self.criterion = ...`) or names like a loss (`self.loss_fn`)."""
        func = call.func
        if not call.args and not call.keywords:
            return False
        if isinstance(func, ast.Call | ast.Subscript):
            return True
        if isinstance(func, ast.Name):
            return self.ctx.qualified_name(func) is None
        return isinstance(func, ast.Attribute) and (func.attr in self._written or bool(LOSS_NAME.search(func.attr)))

    @cached_property
    def _written(self) -> set[str]:
        """The attributes the file assigns."""
        return {
            inner.attr for node in self.ctx.index.of_type(ast.Assign, ast.AnnAssign)
            for target in assignment_targets(node) for inner in ast.walk(target) if isinstance(inner, ast.Attribute)
        }  # fmt: skip


def loss_function(ctx, func: ast.AST, binding=None) -> str | None:
    """The loss of `LOSSES` a called value computes as a function, every value it may be agreeing: a name
    bound to `F.cross_entropy` or to a `functools.partial` of it, a loss function held on `self` (`self.loss
    = loss` with `loss=F.mse_loss`), under `binding` what the call site passes."""
    names = called_names(ctx, func, binding)
    losses = {LOSSES.get(name) if name.rsplit(".", 1)[-1].islower() else None for name in names or ()}
    return losses.pop() if len(losses) == 1 else None


def _keeps_handed(view: ProjectView, wrapper: str, call: ast.Call, given: ast.AST) -> bool:
    """Does the code of the project that `call` calls use the loss it is handed, so that its own loss call is
    the one judged (per call site)? A function or a module of the project does; a class of the project does
    when its `__init__` reads the parameter the loss is passed for (`self.loss_fn = loss_fn`), not when it
    only hands it to a library base (`class Net(skorch.NeuralNet)` passing `criterion` to `super().__init__`)."""
    found = view.class_summary(wrapper)
    if found is None or view.is_module_like(wrapper):
        return view.find(wrapper) is not None
    home, cls = found[1].definition()
    init = inherited_method(home, cls, "__init__", view) if cls is not None else None
    if init is None:
        return False
    keyword = next((k.arg for k in call.keywords if k.value is given), None)
    own = parameters(init[1])[1:]
    at = next((i for i, a in enumerate(call.args) if a is given), None)
    name = keyword if keyword is not None else own[at].arg if at is not None and at < len(own) else None
    passed_up = {id(n) for call in ast.walk(init[1]) if isinstance(call, ast.Call) and _calls_super_init(call) for n in ast.walk(call)}
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in passed_up for n in ast.walk(init[1]))


def _calls_super_init(call: ast.Call) -> bool:
    """`super().__init__(...)`, `super(Net, self).__init__(...)`."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) and called_name(func.value.func) == "super"


def _taking_input(ctx, obj) -> tuple:
    """(its context, the function, its input parameter, the binding its `self.` attributes hold under) of a
    callable object of the project `ctx`'s code reaches: a function (not a method nor a lambda) by its first
    parameter; an instance of a project module by its `forward`'s, its attributes as its construction's
    `__init__` binding sets them (`self.crit` chosen by the `kind` passed), under the call site of the builder
    that made it (`get_loss("vanilla")` returning `AdversarialLoss(kind)`). Nones when it is neither."""
    objects = ctx.analysis(Objects)
    function = objects.function_of(obj)
    if function is not None:
        home, node = function
        own = parameters(node) if not isinstance(node, ast.Lambda) and home.scopes.enclosing_class(node) is None else []
        return (home, node, own[0].arg, None) if own else (None,) * 4
    found = objects.class_of(obj) if obj.kind == "made" else None
    forward = own_method(found[1], "forward", ast.FunctionDef) if found is not None else None
    own = parameters(forward) if forward is not None else []
    if len(own) < 2:
        return (None,) * 4
    init = inherited_method(found[0], found[1], "__init__", objects.view)
    made = obj.ctx.analysis(Callers).instance_binding(obj.ctx, obj.node, init) if init is not None else None
    builder = obj.ctx.scopes.enclosing_function(obj.node) if made is not None and obj.site is not None else None
    sites = ctx.analysis(Callers).bindings_in(obj.ctx, builder) if builder is not None and made.outer is None else ()
    outer = next((b for b in sites if b.call is obj.site), None)
    return found[0], forward, own[1].arg, dataclasses.replace(made, outer=outer) if outer is not None else made

def _values_kept_from(argument: ast.AST) -> ast.AST:
    """The tensor whose values a chain of value-keeping methods passes on (`scores` of `scores.reshape(-1,
    scores.size(-1)).float()`), also picked from by a mask or slice (`out[data.train_mask]`): the model output
    the objects layer knows."""
    while (isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute) and argument.func.attr in VALUE_PRESERVING_METHODS) or selects_values(argument):
        argument = argument.value if isinstance(argument, ast.Subscript) else argument.func.value
    return argument


def _chosen_at(ctx, constructor: ast.Call) -> ast.AST:
    """Where a layer's class is chosen: the table entry a name it calls is bound to (`out_act =
    ACTIVATIONS[...]`), else the constructor itself."""
    bound = ctx.analysis(ValueKinds).reaching_values(constructor.func) if isinstance(constructor.func, ast.Name) else None
    return bound[0] if bound is not None and len(bound) == 1 and isinstance(bound[0], ast.Subscript) else constructor


def _class_name(ctx, constructor: ast.Call) -> str | None:
    """The qualified name of the class or factory a call of `ctx` calls, its own module's classes too."""
    func = table_item(ctx, constructor.func) or constructor.func  # `cls = MODELS[name]` then `cls(n)`: the table's
    name = ctx.analysis(Objects).called_class(constructor) if func is constructor.func else ctx.qualified_name(func)
    if name is None and isinstance(func, ast.Name) and ctx.qualified_name(func) is None and ctx.module is not None:
        return f"{ctx.module.name}.{func.id}"
    if name is None and isinstance(func, ast.Subscript):  # `MODELS["resnet"](n)`: the one a decorator files there
        filed = followed_view(ctx).registered(ctx.analysis(ValueKinds).value(func))
        return filed[0] if filed and len(filed) == 1 else None
    return name


def _passed_note(ctx, func: ast.AST, binding) -> str:
    """Where a loss object passed by a call site comes from: " (`nn.NLLLoss()` passed at main.py:12)", also
    for the parameter an attribute is set from (`self.loss = loss`)."""
    found = [o for o in ctx.analysis(Objects).points_to(func) or () if o.kind == "parameter" and binding.of(o.node) is not None]
    holder = binding.of(found[0].node) if len(found) == 1 else binding
    parameter = func.id if isinstance(func, ast.Name) else found[0].name if len(found) == 1 else None
    passed = holder.argument(parameter) if parameter is not None else None
    if passed is None:
        return f" (passed at {binding.place})"
    passage = passed[2]
    if passage.default:
        return f" (its default `{passage.argument}`)"
    if passage.annotated:
        return f" (annotated `{passage.argument}`)"
    what = "" if passage.argument == passage.parameter else f"`{passage.argument}` "
    return f" ({what}passed at {passage.place})"


def activation_input(ctx, activation: ast.Call, kind: Kind) -> ast.AST | None:
    """What an activation of `kind` is applied to: `F.softmax(x, 1)`, `x.softmax(1)`, `self.softmax(x)`;
    None for a model whose last layer is the activation (an `nn.Sequential`): not ours to drop, nor is a
    `softmin`, whose input is the logits negated."""
    values = ctx.analysis(ValueKinds)
    function, module = ctx.qualified_name(activation.func), values.constructed_class(activation.func)
    if function in NEGATING_ACTIVATIONS or module in NEGATING_ACTIVATIONS:
        return None
    if FUNCTION_KINDS.get(function) is kind or MODULE_KINDS.get(module) is kind:
        return call_argument(activation, 0, "input")
    func = activation.func
    method = tensor_method(ctx, func) and METHOD_KINDS.get(func.attr) is kind
    return func.value if method else None


def drop_activation_fix(ctx, argument: ast.AST, origin: Origin, message: str, applicability: Applicability) -> Fix | None:
    """Replace the activation by its input, when the loss is the only reader of its value."""
    activation = origin.node
    if origin.source is not None or origin.mixture or (activation is not argument and not _only_use(ctx, argument, activation)):
        return None
    inner = activation_input(ctx, activation, origin.kind)
    if inner is None:
        return None
    return ctx.fix(message, applicability, ctx.replace(activation, ctx.text(inner)))


def _only_use(ctx, argument: ast.AST, activation: ast.Call) -> bool:
    """Is `argument` a name assigned only `activation`, and read nowhere else?"""
    values = ctx.analysis(ValueKinds)
    if not isinstance(argument, ast.Name) or values.reaching_values(argument) != [activation]:
        return False
    return ctx.scopes.reads(ctx.scopes.enclosing_function(argument), argument.id) == [argument]


def log_softmax_fix(ctx, argument: ast.AST, softmax: ast.Call) -> Fix | None:
    """`F.softmax(x, dim=1)` -> `F.log_softmax(x, dim=1)`, when written at the loss input (unsafe)."""
    func = softmax.func
    functional = FUNCTION_KINDS.get(ctx.qualified_name(func)) is Kind.PROBABILITIES
    method = tensor_method(ctx, func) and func.attr == "softmax"
    if softmax is not argument or not (functional or method) or not isinstance(func, (ast.Attribute, ast.Name)):
        return None
    name = func.attr if isinstance(func, ast.Attribute) else func.id
    if name != "softmax":
        return None  # an alias (`from torch.nn.functional import softmax as sm`) has no matching log form
    callee = ctx.text(func)
    return ctx.fix("Use `log_softmax`", Applicability.UNSAFE, ctx.replace(func, callee[: -len("softmax")] + "log_softmax"))
