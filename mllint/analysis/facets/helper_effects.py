"""Effects a module's `forward` has through the project functions it calls (ML401, ML304).

`INPLACE`: an in-place tensor method (`x.sub_(m)`), an augmented assignment, or a store into a tensor's items
(`x[mask] = 0`, `x[:, 0] *= s`: `views.tensor_store`), on what a parameter holds
(through views: `x.view(B, -1)`, `x[:, :3]`, an in-place chain `x.sub_(m).div_(s)`). `DROPOUT`: a functional
dropout that leaves `training` to its default (`F.dropout(h, p)`) in a function that does not read the
mode itself (`reads_mode`); a call that passes `training=` (or reads `self.training` for it), or sits in a
function that reads the mode (`if self.training: h = noisy(h)`), turns it off.

`taken_somewhere(linted, ctx, function, reach)`: the `if`s around an effect hold under some call of its
function (`if inplace:` is not taken under `swish(x)` with `inplace=False`, nor under `swish(x, self.inplace)`,
the module's own option).

`forward_sites(ctx, function, parameter)`: where a module's `forward` (or another method that code outside
its class calls for a result, `entry_of_module`: `agent.act(obs)`) hands its own tensor argument to
`function` (directly, or through project functions passing it on), and whether some other call hands it
something else (then the place to change is the call in `forward`, not the helper).
"""
from __future__ import annotations

import ast
import re
from weakref import WeakKeyDictionary

from mllint.analysis.facets.gradients import FLAG_METHODS
from mllint.analysis.facets.layers import FUNCTIONAL_DROPOUT
from mllint.analysis.facets.views import stored_back, tensor_store, unshared, viewed
from mllint.analysis.objects.constants import construction_constants
from mllint.analysis.program.callers import MAX_SITES, Callers
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.effects import MAX_DEPTH, Effect, Reach, takes_self
from mllint.analysis.program.hierarchy import self_classes
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.folding import fold, runs_under
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.values import STACK_FUNCTIONS, ValueKinds

TENSOR_TYPES = {"torch.Tensor", "torch.FloatTensor", "torch.LongTensor"}


class _InPlace(Effect):
    words = re.compile(r"\w_\(|\+=|-=|\*=|/=|\]\s*=[^=]")

    def sink(self, ctx, node: ast.AST) -> ast.AST | None:
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            return node.target
        targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets if isinstance(node, ast.Assign) else []
        stored = next((t for t in targets if tensor_store(ctx, t)), None)  # `x[mask] = 0`, `x[:, 0] *= s`
        if stored is not None:
            return stored.value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method.endswith("_") and not method.startswith("_") and method not in FLAG_METHODS:
                return node.func.value
        return None

    def keeps(self, ctx, expr: ast.AST) -> ast.AST | None:
        return viewed(ctx, expr)


class _Dropout(Effect):
    words = re.compile(r"dropout")

    def sink(self, ctx, node: ast.AST) -> ast.AST | None:
        if not leaves_training(ctx, node):
            return None
        function = ctx.scopes.enclosing_function(node)
        return None if function is None or reads_mode(ctx, function) else node

    def passes(self, ctx, call: ast.Call) -> bool:
        """A call that hands the mode over (`training=self.training`, `self.training` passed), or that sits in
        a function reading the mode (`if self.training: h = noisy(h)`), turns it off."""
        if any(k.arg == "training" for k in call.keywords) or any(_mode_flag(a) for a in call.args):
            return False
        function = ctx.scopes.enclosing_function(call)
        return function is None or not reads_mode(ctx, function)


INPLACE = _InPlace()
DROPOUT = _Dropout()


def leaves_training(ctx, call: ast.AST) -> bool:
    """Is `call` a functional dropout that leaves `training` to its default True (no `training` argument, no
    `*args`/`**kwargs`, at most `input, p`, and `p` not 0)?"""
    if not isinstance(call, ast.Call) or ctx.qualified_name(call.func) not in FUNCTIONAL_DROPOUT:
        return False
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg in (None, "training") for k in call.keywords):
        return False
    return len(call.args) <= 2 and not is_zero(call_argument(call, 1, "p"))


_READS_MODE: WeakKeyDictionary = WeakKeyDictionary()  # function -> `reads_mode`'s answer (gone with its tree)


def reads_mode(ctx, function: ast.AST) -> bool:
    """Does `function` consult the mode itself (`if self.training:`, `p if training else 0`, `t = self.training`)?
    A read handed to a call (`F.dropout(h, p, training=self.training)`) consults it for that call only.
    Worked out once per function (each of its calls asks)."""
    if function not in _READS_MODE:
        _READS_MODE[function] = any(_mode_flag(node) and not _handed_to_call(ctx, node) for node in ast.walk(function))
    return _READS_MODE[function]


def _handed_to_call(ctx, node: ast.AST) -> bool:
    parent = ctx.scopes.parent(node)
    return isinstance(parent, ast.keyword) or (isinstance(parent, ast.Call) and node in parent.args)


def _mode_flag(node: ast.AST) -> bool:
    """`self.training`, `training`, `is_training`."""
    return (isinstance(node, ast.Attribute) and node.attr == "training") or (isinstance(node, ast.Name) and "training" in node.id)


def is_zero(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Constant) and not isinstance(value.value, bool) and value.value == 0


def taken_somewhere(linted, ctx, function: ast.AST, reach: Reach) -> bool:
    """Do the `if`s around `reach` hold under some call of `function` (its own parameters' defaults when none
    is known)? A test of a parameter the call leaves undecided is the caller's option: not taken."""
    calls = [call for _, call in linted.analysis(Callers).sites_in(ctx, function)]
    return any(reach.taken_under(call, function, strict=False) for call in calls)


def built_to_run(ctx, function: ast.AST, node: ast.AST) -> bool:
    """Does `node`, in a method of a class of the linted file, run under some construction of that class,
    the `if`s around it deciding on attributes `__init__` sets from its parameters (`if self.inplace:` with
    `self.inplace = inplace`, `inplace=False` by default, built only as `NoisyPolicy(10, 2, hidden=32)`)?
    True unless every construction is known and decides against it (no construction found, a subclass, a
    construction with `*args`/`**kwargs`, or an attribute assigned again elsewhere in the class: not known)."""
    cls = ctx.scopes.enclosing_class(function)
    init = own_method(cls, "__init__") if cls is not None else None
    if init is None or len(self_classes(ctx, cls, ctx.analysis(ProjectView))) > 1:
        return True
    sites = [call for _, call in ctx.analysis(Callers).constructions(cls)]
    if not sites or len(sites) >= MAX_SITES:
        return True
    stores = [
        n.attr for n in ast.walk(cls)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) and n.value.id == "self"
    ]  # fmt: skip
    for call in sites:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return True
        constants = {k: v for k, v in construction_constants(call, init).items() if not k.startswith("self.") or stores.count(k[5:]) == 1}
        if runs_under(ctx.scopes, node, lambda branch: fold(branch.test, constants), function):
            return True
    return False


def forward_of_module(ctx, function: ast.AST | None) -> bool:
    return (
        isinstance(function, ast.FunctionDef) and function.name == "forward"
        and ctx.analysis(ModuleClasses).method_of_module(function, ctx) is not None
    )  # fmt: skip


def entry_of_module(linted, ctx, function: ast.AST | None, parameter: str | None = None) -> tuple[object, ast.Call] | None:
    """A call from outside its class of a public method of a module other than `forward` that returns a
    result (`agent.act(obs)`, `model.encode(x)`): such a method takes the caller's tensor as `forward` does.
    A name ending in `_` (`normalize_(x)`) says it works in place; a call on `self` (from the class or a
    subclass: `self.normalize(h)`) is not from outside; with `parameter`, only a call handing it the caller's
    own tensor counts, not a fresh one (`agent.act(torch.tensor(obs))`), nor one whose result the caller stores back
    in its place (`w = model.reweight(w, d)`: it drops what it passed)."""
    if not isinstance(function, ast.FunctionDef) or function.name.startswith("_") or function.name.endswith("_") or function.name == "forward":
        return None
    if ctx.analysis(ModuleClasses).method_of_module(function, ctx) is None:
        return None
    if not any(n.value is not None and ctx.scopes.enclosing_function(n) is function for n in ctx.index.within(function, ast.Return)):
        return None  # a mutator (`reset_noise(eps)`, `zero_state(h)`) changes what it is given on purpose
    cls = ctx.scopes.enclosing_class(function)

    def outside(caller, call: ast.Call) -> bool:
        if _on_self(call) or (caller is ctx and caller.scopes.enclosing_class(call) is cls):
            return False
        if parameter is None:
            return True
        argument = bind_arguments(call, function, takes_self(ctx, function)).get(parameter)
        return argument is not None and not unshared(caller, argument, call) and not stored_back(caller, argument)

    sites = linted.analysis(Callers).sites_in(ctx, function)
    return next(((c, call) for c, call in sites if outside(c, call)), None)


def _on_self(call: ast.Call) -> bool:
    """`self.normalize(h)`, `super().normalize(h)`: a call within the class hierarchy."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    return (isinstance(receiver, ast.Name) and receiver.id == "self") or (
        isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super"
    )


def forward_argument(ctx, expr: ast.AST | None, forward: ast.AST) -> str | None:
    """The tensor argument of `forward` that `expr` (or the storage it views) holds on some path."""
    for _ in range(8):
        if expr is None or isinstance(expr, ast.Name):
            break
        expr = viewed(ctx, expr)
    if not isinstance(expr, ast.Name) or expr.id not in tensor_parameters(ctx, forward):
        return None
    definitions = ctx.analysis(ValueKinds).reaching_definitions(expr)
    return expr.id if any(d.node is forward for d in definitions) else None


def tensor_parameters(ctx, function: ast.AST) -> set[str]:
    """The parameters annotated as tensors, an unannotated first one (after `self`), and those the function
    joins into one tensor as items of a list it writes (`torch.cat([x_t, cond], dim=1)`: `cond` too)."""
    positional = [*function.args.posonlyargs, *function.args.args][1:]
    joined = _joined_names(ctx, function)
    names = set()
    for index, arg in enumerate([*positional, *function.args.kwonlyargs]):
        annotation = ctx.qualified_name(arg.annotation) if arg.annotation is not None else None
        if annotation in TENSOR_TYPES or (arg.annotation is None and ((index == 0 and positional) or arg.arg in joined)):
            names.add(arg.arg)
    return names


_JOINED: WeakKeyDictionary = WeakKeyDictionary()  # function -> `_joined_names`'s answer (gone with its tree)


def _joined_names(ctx, function: ast.AST) -> frozenset[str]:
    """The names written as items of a list or tuple that `torch.cat`/`torch.stack` joins in the function."""
    if function not in _JOINED:
        _JOINED[function] = frozenset(
            item.id for call in ctx.index.within(function, ast.Call) if ctx.qualified_name(call.func) in STACK_FUNCTIONS
            for listed in [call_argument(call, 0, "tensors")] if isinstance(listed, ast.List | ast.Tuple)
            for item in listed.elts if isinstance(item, ast.Name)
        )  # fmt: skip
    return _JOINED[function]


def forward_sites(linted, ctx, function: ast.AST, parameter: str) -> tuple[list[tuple[object, ast.Call, str]], bool]:
    """(the calls in a module's `forward` that hand its tensor argument to `function`'s `parameter`, each
    with its context and the argument's name; whether some call of `function` hands something else), as
    the linted file `linted` finds them."""

    def at(ctx, function, caller, call, enclosing, parameter):
        argument = bind_arguments(call, function, takes_self(ctx, function)).get(parameter)
        entered = forward_of_module(caller, enclosing) or entry_of_module(linted, caller, enclosing)
        name = forward_argument(caller, argument, enclosing) if entered else None
        if name is not None and not forward_of_module(caller, enclosing) and entry_of_module(linted, caller, enclosing, name) is None:
            return SKIPPED, None  # an entry every outside call hands a fresh tensor: no caller's tensor, nor a use of another kind
        return ((caller, call, name), None) if name is not None else (None, _own_parameter(caller, argument, enclosing))

    return _from_forward(linted, ctx, function, parameter, at)


def _own_parameter(ctx, expr: ast.AST | None, function: ast.AST | None) -> str | None:
    if not isinstance(expr, ast.Name) or function is None or expr.id not in {p.arg for p in parameters(function, variadic=False)}:
        return None
    return expr.id if all(d.node is function for d in ctx.analysis(ValueKinds).reaching_definitions(expr)) else None


def forward_callers(linted, ctx, function: ast.AST, kind: Effect) -> tuple[list[tuple[object, ast.Call]], bool]:
    """(the calls in a module's `forward` that run `function`, directly or through project functions, and
    carry `kind`'s effect; whether some other call runs it), as the linted file `linted` finds them."""

    def at(ctx, function, caller, call, enclosing, kind):
        if not kind.passes(caller, call) or (forward_of_module(caller, enclosing) and reads_mode(caller, enclosing)):
            return SKIPPED, None
        if forward_of_module(caller, enclosing):
            return (caller, call), None
        return None, (kind if enclosing is not None and not reads_mode(caller, enclosing) else None)

    return _from_forward(linted, ctx, function, kind, at)


SKIPPED = object()  # a call site that counts neither as found nor as another call


def _from_forward(linted, ctx, function: ast.AST, key, at, depth: int = 0) -> tuple[list, bool]:
    """(what `at` finds at the calls of `function`, also through the project functions that run it under
    their own `key`; whether some other call runs it). `at(ctx, function, caller, call, enclosing, key)`
    gives (an item found at the call or `SKIPPED`, or None; the key the enclosing function's own call sites
    are followed with, or None: another call)."""
    found: list = []
    other = False
    for caller, call in linted.analysis(Callers).sites_in(ctx, function):
        enclosing = caller.scopes.enclosing_function(call)
        item, follow = at(ctx, function, caller, call, enclosing, key)
        if item is not None:
            found += [item] if item is not SKIPPED else []
        elif follow is not None and depth < MAX_DEPTH:
            inner, inner_other = _from_forward(linted, caller, enclosing, follow, at, depth + 1)
            found += inner
            other |= inner_other or not inner
        else:
            other = True
    return found, other
