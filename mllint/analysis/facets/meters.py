"""Meters and training steps: what keeps a loss, or hands it back, across the calls of a loop.

`kept_argument(ctx, call, argument)` answers, for a call `meter.update(loss, n)` (or `meter(pred, y)`, its
`__call__`) of the linted file where `meter` is an object of a project class (found by points-to: built where
the file says, by a project helper, held in a container and taken by a loop over it, or passed by a call
site; callbacks of several classes in a list, each running its own hook; a dispatcher method handing its
`*args` to `getattr(cb, name)(*args)` of each callback), into which attribute the called method
accumulates (`totals.added`) a value that carries the graph of `argument`: `self.sum += val * n`, `self.sum =
self.sum + val`, `self.values.append(F.mse_loss(pred, target))`, `for v in values: self.sum += v` for `update([loss])`.
The gradient flow of the accumulated value decides, the parameter given a graph: not when the method cuts
it (`val.item()`, `float(val)`, `pred.detach()` first, `(pred.argmax(1) == y).sum()`); unknown (None) when
the class, the method or the binding is unknown (library meters such as torchmetrics' are never read).

`returned_loss(ctx, value)` answers, for a value of the linted file taken from a call of a function or
method of the project (`loss = trainer.train_step(batch)`, `loss, acc = step(...)`, `logs["loss"]` of
`logs = step(...)`), whether that function runs `backward()` on a tensor and returns it as it is (alone,
in a tuple, as a dict's value): the caller then holds the live loss, its graph included.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from mllint.analysis.objects.callees import function_called, hooks_called, method_called
from mllint.analysis.objects.constants import call_constants, got_attribute, passes_self
from mllint.analysis.program.callers import per_call_site
from mllint.analysis.program.calls import CallResolver, bind_arguments
from mllint.analysis.program.hierarchy import inherited_method
from mllint.analysis.facets.gradients import GRAPH, NONE, VALUE_CUTS, Given, GradientFlow, State, backward_loss, is_cut_method
from mllint.analysis.facets.totals import added
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.values import ValueKinds

CUT_BUILTINS = frozenset({"float", "int"})
KEEPING_METHODS = frozenset({"mean", "sum", "squeeze", "view", "reshape", "float", "mul", "div", "add"})  # of a loss, keeping its graph
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
ANY_KEY = object()  # a value of a returned dict under any key


@dataclass(frozen=True)
class Kept:
    cls: str  # the meter's class name
    attribute: str  # `sum` of `self.sum`
    path: str  # the class's file as findings show it ("" for the linted file)
    line: int  # the statement that accumulates the argument
    made: str = ""  # the method of the object that makes the accumulated value, where it returns it: `MAEMetric.process`, metrics.py:30


def kept_argument(ctx, call: ast.Call, argument: ast.AST) -> Kept | None:
    """Into which attribute the method `call` runs on an object of a project class accumulates a value
    that carries the graph of `argument` (an item of it, for a list or dict: `meter.update([loss])`,
    `history.log_dict({"loss": loss})` appending each value of `d.items()`)."""
    def methods(binding):
        method = method_called(ctx, call, binding)
        return [method] if method is not None else hooks_called(ctx, call, binding) or None

    for found, _ in per_call_site(ctx, receiver(call), methods):
        return next((kept for method in found if (kept := _kept_by(ctx, call, argument, method)) is not None), None)
    return None


def _kept_by(ctx, call: ast.Call, argument: ast.AST, method) -> Kept | None:
    """`kept_argument` for one method `call` may run, or for the hooks that method hands its `*args` on to
    (`self._emit("on_batch_end", loss)` running `getattr(cb, name)(self.state, *args)`)."""
    bound = bind_arguments(call, method.function, skips_first=passes_self(call, method.function))
    parameter = next((name for name, value in bound.items() if value is argument or _item_of(value, argument)), None)
    if parameter is None:
        return _forwarded(ctx, call, argument, method)
    return _accumulated(ctx, method, parameter)


def _forwarded(ctx, call: ast.Call, argument: ast.AST, method) -> Kept | None:
    """What the hooks of a loop's items keep when `method` hands them `argument` through its `*args`: a
    call `item.hook(x, *args)` or `getattr(item, name)(x, *args)` with `name` a parameter `call` fills with
    a string."""
    function = method.function
    vararg = function.args.vararg
    written = len(function.args.posonlyargs) + len(function.args.args) - passes_self(call, function)
    extras = call.args[written:] if vararg is not None else []
    position = next((i for i, a in enumerate(extras) if a is argument), None)
    if position is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    names = call_constants(call, function)
    for inner in ast.walk(function):
        if not isinstance(inner, ast.Call) or not inner.args or not _spreads(inner.args[-1], vararg.arg):
            continue
        name = inner.func.args[1] if got_attribute(inner.func) is not None else None
        hook = name.value if isinstance(name, ast.Constant) else names.get(name.id) if isinstance(name, ast.Name) else None
        if name is not None and not isinstance(hook, str):
            continue
        for found, _ in per_call_site(method.ctx, inner, lambda binding: hooks_called(method.ctx, inner, binding, hook) or None):
            for hooked in found:
                skipped = passes_self(inner, hooked.function)
                slots = [a.arg for a in parameters(hooked.function, variadic=False)][1 if skipped else 0 :]
                index = len(inner.args) - 1 + position
                kept = _accumulated(ctx, hooked, slots[index]) if index < len(slots) else None
                if kept is not None:
                    return kept
            break
    return None


def _spreads(argument: ast.AST, vararg: str) -> bool:
    return isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name) and argument.value.id == vararg


def _accumulated(ctx, method, parameter: str) -> Kept | None:
    """Into which attribute of its object `method` accumulates a value carrying the graph its `parameter` is given."""
    flows = method.ctx.analysis(GradientFlow)
    live, dead = (Given(method.function, {parameter: flow}, method.instance) for flow in (GRAPH, NONE))
    for node in ast.walk(method.function):
        found = added(node)
        if found is None or not is_self_attribute(found.total):
            continue
        carried = [v for v in found.values if flows.flow(v, live).state is State.GRAPH and flows.flow(v, dead).state is not State.GRAPH]
        if carried:
            cls = method.ctx.scopes.enclosing_class(method.function)
            path = _shown(ctx, method.ctx)
            return Kept(cls.name if cls is not None else method.function.name, found.total.attr, path, node.lineno, _maker(ctx, method, carried[0]))
    return None


def _shown(ctx, home) -> str:
    """The file of `home` as findings of `ctx` show it ("" for the linted file)."""
    return "" if home is ctx else ctx.analysis(ProjectView).display_path(home.real_path or home.path)


def _maker(ctx, method, value: ast.AST) -> str:
    """`MAEMetric.process`, metrics.py:30: the method of the meter's own class that makes `value` (`value =
    self.process(pred, target)` in a base class's `__call__`), where it returns it; empty when unknown."""
    definitions = method.ctx.analysis(ValueKinds).reaching_definitions(value) if isinstance(value, ast.Name) else []
    call = definitions[0].value if len(definitions) == 1 else None
    if not (isinstance(call, ast.Call) and is_self_attribute(call.func)):
        return ""
    home, cls = method.instance or (method.ctx, method.ctx.scopes.enclosing_class(method.function))
    found = inherited_method(home, cls, call.func.attr, ctx.analysis(ProjectView)) if cls is not None else None
    returned = function_returns(found[1]) if found is not None else None
    if not returned:
        return ""
    owner = found[0].scopes.enclosing_class(found[1])
    return f"`{owner.name}.{found[1].name}`, {_shown(ctx, found[0]) or os.path.basename(ctx.path)}:{returned[-1].lineno}"


def receiver(call: ast.Call) -> ast.AST:
    """The object a call runs a method of: `meter` of `meter.update(x)`, `m` of `m(pred, y)` (its `__call__`)."""
    return call.func.value if isinstance(call.func, ast.Attribute) else call.func


def _item_of(value: ast.AST | None, argument: ast.AST) -> bool:
    """Is `argument` an item of a list, tuple or dict written out as the argument `value`?"""
    if isinstance(value, ast.Dict):
        return any(v is argument for v in value.values)
    return isinstance(value, (ast.List, ast.Tuple)) and any(e is argument for e in value.elts)


@dataclass(frozen=True)
class Returned:
    function: str  # `Trainer.train_step`
    path: str  # its file as findings show it ("" for the linted file)
    line: int  # the `backward()` it runs on what it returns
    what: str = "the loss"  # or "a term of the loss": what the loss is summed from, returned beside it
    returns: str = ""  # where it returns it, as findings show it: `steps.py:12`

    def places(self, ctx) -> str:
        """`steps.py:9, returned at steps.py:12`: where the loss is backpropagated and returned, by file and line."""
        path = self.path or os.path.basename(ctx.path)
        return f"{path}:{self.line}" + (f", returned at {path}:{self.returns}" if self.returns else "")


def returned_loss(ctx, value: ast.AST, feeding: bool = False) -> Returned | None:
    """For `value` (a name, `name["key"]`, or a call), the backpropagated loss a project function returns
    into it; None when it returns no such thing or is unknown. `feeding`: or a value that loss is computed
    from (`return y_pred, y` after `loss = crit(y_pred, y)` and its backward: the prediction's graph)."""
    return ctx.analysis(StepReturns).returned(value, feeding)


class StepReturns:
    """`returned_loss`'s answers for one linted file (an analysis: its call resolver is built once)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.view = ctx.analysis(ProjectView)
        self.resolver = CallResolver(ctx, self.view)

    def returned(self, value: ast.AST, feeding: bool = False) -> Returned | None:
        key = None
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
            value, key = value.value, value.slice.value
        definition = self._definition(value)
        holder = dict_of(self.ctx, definition) if definition is not None and key is None else None
        if holder is not None:  # `v` of `for k, v in out.items()`, `out = step(...)` or `step(...).items()`: any of its values
            value, key, definition = holder, ANY_KEY, self._definition(holder)
        index, call = None, value
        if isinstance(value, ast.Name):
            if definition is None:
                return None
            call, index = _assigned_call(self.ctx, definition)
            if isinstance(call, ast.Subscript) and index is None and key is None:  # `loss = out["loss"]`
                return self.returned(call, feeding)
        found = self._callee(call) if isinstance(call, ast.Call) else None
        if found is None:
            return None
        cctx, function = found
        values = cctx.analysis(ValueKinds)
        losses = [b for c in cctx.index.within(function, ast.Call) if isinstance(b := backward_loss(cctx, c), ast.Name)]
        for returned in (function_returns(function) or ()) if losses else ():
            at = returned.lineno
            if index is None and key is None and isinstance(returned, ast.Name):  # `return logs` of `logs = {"loss": loss}`
                assigned = values.reaching_values(returned)
                returned = assigned[0] if assigned is not None and len(assigned) == 1 and isinstance(assigned[0], ast.Tuple | ast.Dict) else returned
            parts = _parts(returned, index, key)
            whole = index is None and key is None and isinstance(returned, ast.Tuple | ast.Dict)
            if whole:  # `output = step(batch)` holding `(y_pred, y)`, `history.append(step(batch))` of a dict of losses
                parts = returned.elts if isinstance(returned, ast.Tuple) else returned.values
            for part, loss in ((p, b) for p in parts for b in losses):
                if cctx.scopes.enclosing_function(loss) is not function:
                    continue
                if not isinstance(part, ast.Name):  # `return loss * accum, acc`: arithmetic keeps the loss's graph
                    part = _scaled_loss(values, part, loss)
                    if part is None:
                        continue
                term = not same_tensor(values, part, loss) and not (feeding and self._feeds(cctx, part, loss))
                if not term or _terms_of(cctx, part, loss):
                    cls = cctx.scopes.enclosing_class(function)
                    name = f"{cls.name}.{function.name}" if cls is not None else function.name
                    path = "" if cctx is self.ctx else self.view.display_path(cctx.real_path or cctx.path)
                    what = "a term of the loss" if term else "the loss"
                    holder = "tuple" if isinstance(returned, ast.Tuple) else "dict"
                    return Returned(name, path, loss.lineno, f"a {holder} holding {what}" if whole else what, at)
        return None

    @staticmethod
    def _feeds(ctx, part: ast.Name, loss: ast.Name) -> bool:
        """Is `part` a value the loss is computed from, made in the step (not a parameter, not a cut)?"""
        definitions = ctx.analysis(ValueKinds).reaching_definitions(part)
        if not definitions or any(d.value is None or _cut_value(d.value) for d in definitions):
            return False
        return ctx.analysis(GradientFlow).depends_on(loss, {d.node for d in definitions})

    def _definition(self, value: ast.AST) -> ast.AST | None:
        """The one binding of a name that reaches it (its target node), a comprehension's own set aside."""
        if not isinstance(value, ast.Name):
            return None
        definitions = [d for d in self.ctx.analysis(ValueKinds).reaching_definitions(value) if self._visible(d.node, value)]
        return definitions[0].node if len(definitions) == 1 else None

    def _visible(self, target: ast.AST, use: ast.AST) -> bool:
        """Is a binding seen at `use`: not the target of a comprehension around something else?"""
        comprehension = next((a for a in self.ctx.scopes.ancestors(target) if isinstance(a, COMPREHENSIONS)), None)
        return comprehension is None or comprehension in set(self.ctx.scopes.ancestors(use))

    def _callee(self, call: ast.Call) -> tuple[object, ast.AST] | None:
        """(its module's context, the function) a call runs: a function of the project, `self.method(...)`,
        or a method of an object of a project class (`trainer.train_step(batch)`)."""
        callee = self.resolver.resolve(call, reexported=True)  # `from engine import step`, re-exported by the package
        if callee is not None:
            return callee.ctx, callee.function
        if isinstance(call.func, ast.Name):  # a closure a builder made, passed in: `step_fn(batch)`
            for callee, _ in per_call_site(self.ctx, call.func, lambda binding: function_called(self.ctx, call, binding)):
                return callee.ctx, callee.function
        if not isinstance(call.func, ast.Attribute):
            return None
        found = self.view.class_summary(self.ctx.analysis(ValueKinds).constructed_class(call.func.value) or "")
        class_ctx, cls = found[1].definition() if found is not None else (None, None)
        method = own_method(cls, call.func.attr) if cls is not None else None
        if method is not None:
            return class_ctx, method
        # An object points-to follows: a parameter its call sites fill (`run_epoch(trainer, loader)`), a builder's.
        for callee, _ in per_call_site(self.ctx, call.func.value, lambda binding: method_called(self.ctx, call, binding)):
            return callee.ctx, callee.function
        return None


def _scaled_loss(values: ValueKinds, part: ast.AST, loss: ast.Name) -> ast.Name | None:
    """The name of `loss` in `part`, an arithmetic expression of it that keeps its graph (`loss * accum`,
    `-loss`, `loss + reg`, `loss.mean()`); None when `part` is something else or a cut (`loss.item()`)."""
    if not isinstance(part, ast.BinOp | ast.UnaryOp | ast.Call) or any(_cut_value(n) for n in ast.walk(part)):
        return None
    if isinstance(part, ast.Call) and not (isinstance(part.func, ast.Attribute) and part.func.attr in KEEPING_METHODS):
        return None
    return next((n for n in ast.walk(part) if isinstance(n, ast.Name) and same_tensor(values, n, loss)), None)


def _terms_of(ctx, part: ast.Name, loss: ast.Name) -> bool:
    """Is `part` what the backpropagated `loss` is summed from, returned beside it by the loss function
    they are both unpacked from (`loss, loss_dict = self.loss_fn(...)` where it returns
    `sum(loss_dict.values()), loss_dict`): its values are the loss's live terms."""
    values = ctx.analysis(ValueKinds)
    definitions, losses = values.reaching_definitions(part), values.reaching_definitions(loss)
    if len(definitions) != 1 or len(losses) != 1:
        return False
    (call, index), (other, loss_index) = _assigned_call(ctx, definitions[0].node), _assigned_call(ctx, losses[0].node)
    if not isinstance(call, ast.Call) or call is not other or index is None or loss_index is None or index == loss_index:
        return False
    found = ctx.analysis(StepReturns)._callee(call)
    if found is None:
        return False
    home, function = found
    for returned in function_returns(function) or ():
        if not (isinstance(returned, ast.Tuple) and max(index, loss_index) < len(returned.elts)):
            return False
        terms, total = returned.elts[index], returned.elts[loss_index]
        made = {d.node for d in home.analysis(ValueKinds).reaching_definitions(terms) if d.value is not None and not _cut_value(d.value)} if isinstance(terms, ast.Name) else set()
        if not made or not home.analysis(GradientFlow).depends_on(total, made):
            return False
    return True


def same_tensor(values: ValueKinds, a: ast.Name, b: ast.Name) -> bool:
    """Do both names hold the same tensor, with its graph (the same assignments reach them, none of them
    a cut: `loss.item()`, `loss.detach()`, `float(loss)`)?"""
    if a.id != b.id:
        return False
    first, second = values.reaching_definitions(a), values.reaching_definitions(b)
    same = bool(first) and [d.node for d in first] == [d.node for d in second]
    return same and not cut_on_a_path(values, a)


def cut_on_a_path(values: ValueKinds, name: ast.Name) -> bool:
    """Is a binding that reaches `name` a cut of a value (`loss = loss.detach().item()`, `float(loss)`)?"""
    return any(d.value is not None and _cut_value(d.value) for d in values.reaching_definitions(name))


def _cut_value(value: ast.AST) -> bool:
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute):
        return is_cut_method(value, VALUE_CUTS | {"cpu"})
    return isinstance(value.func, ast.Name) and value.func.id in CUT_BUILTINS


def _assigned_call(ctx, target: ast.AST) -> tuple[ast.AST | None, int | None]:
    """The value assigned to `target`, and its position when unpacked from a tuple (`loss, acc = ...`)."""
    parent = ctx.scopes.parent(target)
    if isinstance(parent, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in parent.elts):
        holder = ctx.scopes.parent(parent)
        position = next(i for i, e in enumerate(parent.elts) if e is target)
        return (holder.value, position) if isinstance(holder, ast.Assign) and holder.targets == [parent] else (None, None)
    return (parent.value, None) if isinstance(parent, ast.Assign) and parent.targets == [target] else (None, None)


def _parts(returned: ast.AST, index: int | None, key) -> list[ast.AST]:
    """What a caller takes from a returned value: all of it, its `index`-th element, its value at `key`
    (each value for `ANY_KEY`); an int key of a tuple is its element (`res = step(...)`, `res[0]`)."""
    if isinstance(key, int) and not isinstance(key, bool) and isinstance(returned, ast.Tuple) and index is None:
        index, key = key, None
    if index is not None:
        ok = isinstance(returned, ast.Tuple) and index < len(returned.elts)
        returned = returned.elts[index] if ok else None
    if key is not None and isinstance(returned, ast.Dict):
        return [v for k, v in zip(returned.keys, returned.values) if key is ANY_KEY or (isinstance(k, ast.Constant) and k.value == key)]
    if key is ANY_KEY and isinstance(returned, ast.Name):
        return [returned]  # a dict returned by name (`return loss_dict`): whether its values are live is asked of it
    return [returned] if key is None and returned is not None else []


def dict_of(ctx, target: ast.AST) -> ast.Name | ast.Call | None:
    """`out` for `v` of `for k, v in out.items()` or of `for v in out.values()`; the call for `v` of `for k,
    v in metric.process(pred, y).items()`."""
    parent = ctx.scopes.parent(target)
    pair = isinstance(parent, ast.Tuple) and len(parent.elts) == 2 and parent.elts[1] is target
    loop = ctx.scopes.parent(parent) if pair else parent
    if not isinstance(loop, ast.For) or loop.target is not (parent if pair else target):
        return None
    call = loop.iter
    method = "items" if pair else "values"
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == method and isinstance(call.func.value, ast.Name | ast.Call):
        return call.func.value
    return None
