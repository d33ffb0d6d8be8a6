"""Constants the code decides on: loops over literal collections run once per item, tests folded where
the names they read are known constants, and the constants a call passes for a function's parameters.

`site_constants(ctx, function)`: the constants every call site of a function passes alike
(`engine.run_epoch(loader, step_per_batch=False)` at its one call site): its branches decided by them are
decided under each call site, so a facet may fold them, and points-to reads a table at that key
(`SCHEDULES[name]` with `make_schedule("onecycle", ...)`).

One answer for every facet: the mode flow and the training-loop model both fold a callee's branches
under `call_constants(call, function)` (`train_epoch(..., step_per_batch=False)`, `run(loader,
mode="val")`), and unroll `for phase in ["train", "val"]` with `unrolled`, so correlated branches stay
correlated.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from weakref import WeakKeyDictionary

from mllint.analysis.program.callers import MAX_SITES, Binding, Callers
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.project import ANY_ATTRIBUTE, STORES_KEY, stored_words
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.folding import SOMETHING, UNKNOWN, ends, fold, known_constant, taken_arms
from mllint.analysis.syntax.names import callee_name
from mllint.analysis.syntax.scopes import parameter_defaults, parameters
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import ValueKinds

_STORED: WeakKeyDictionary = WeakKeyDictionary()  # function -> the names it assigns (gone with its tree)
_STORED_ATTRIBUTES: WeakKeyDictionary = WeakKeyDictionary()  # a file of no project -> the index's words of its stores
MAX_UNROLL = 8  # items of a literal collection a loop over it is run once for (read by the facets' flows)


def call_constants(call: ast.Call, function: ast.AST, known: dict | None = None, skips_first: bool | None = None) -> dict[str, object]:
    """The parameters of `function` that `call` fills with a constant (or a name of the caller `known` as
    one: a loop variable of an unrolled loop), or leaves to a constant default, and that the function
    never rebinds: `{"step_per_batch": False}` for `train_epoch(model, loader, step_per_batch=False)`.
    `skips_first`: the call binds the first parameter itself (default: `passes_self`); a model's call
    `model(x)` binds `forward`'s `self`."""
    known = known or {}
    bound = bind_arguments(call, function, passes_self(call, function) if skips_first is None else skips_first)
    defaults = parameter_defaults(function)
    stored = stored_names(function)
    found = {}
    for parameter in parameters(function, variadic=False):
        name = parameter.arg
        value = bound[name] if name in bound else defaults.get(name)
        if name in stored:
            continue
        if isinstance(value, ast.Constant):
            found[name] = value.value
        elif name in bound and isinstance(value, ast.Name) and value.id in known:
            found[name] = known[value.id]
    return found


def site_constants(ctx, function: ast.AST, linted=None) -> dict[str, object]:
    """The parameters of `function` (of `ctx`) that every call site found in the project fills with the
    same constant (or leaves to the same constant default), and the function never rebinds; empty when it
    has no call site, or more than the callers layer reads."""
    linted = linted or ctx
    sites = [b for b in linted.analysis(Callers).bindings_in(ctx, function) if b.site is not None]
    if not sites or len(sites) >= MAX_SITES:
        return {}
    agreed: dict[str, object] | None = None
    for binding in sites:
        constants = binding_constants(ctx, binding)
        agreed = constants if agreed is None else {k: v for k, v in agreed.items() if k in constants and constants[k] == v}
    return agreed or {}


def binding_constants(ctx, binding: Binding) -> dict[str, object]:
    """The parameters of `binding.function` (of `ctx`) that one call site fills with a constant (or leaves
    to a constant default), also through a parameter of the caller that its own call site fills so
    (`build_act(act)` in `Down.__init__(..., act)`, built as `Down(1, 16, act)` by `TinyUNet(act="lrelu")`),
    and the function never rebinds."""
    stored = {n.id for n in ctx.index.within(binding.function, ast.Name) if isinstance(n.ctx, ast.Store)}
    found, outer = {}, None
    for name, (caller, argument, passage) in binding.arguments.items():
        if name in stored:
            continue
        if isinstance(argument, ast.Constant):
            found[name] = argument.value
        elif isinstance(argument, ast.Name) and not passage.default and binding.outer is not None:
            if outer is None:
                outer = binding_constants(caller, binding.outer) if caller.scopes.enclosing_function(argument) is binding.outer.function else {}
            if argument.id in outer and not caller.analysis(ValueKinds).reaching_values(argument):
                found[name] = outer[argument.id]  # (a parameter the caller never rebinds)
    return found


def stored_names(function: ast.AST) -> frozenset[str]:
    """The names a function (or a function nested in it) assigns, worked out once per function."""
    if function not in _STORED:
        _STORED[function] = frozenset(n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return _STORED[function]


def passes_self(call: ast.Call, function: ast.AST) -> bool:
    """Does `call` bind the method's first parameter itself (`obj.method(...)`, `self.method(...)` of a
    method that is no staticmethod, `obj(...)` of `__call__`, `getattr(obj, name)(...)`), so that its
    arguments fill the parameters after it?"""
    if not isinstance(call.func, ast.Attribute) and getattr(function, "name", None) != "__call__" and got_attribute(call.func) is None:
        return False
    positional = [*function.args.posonlyargs, *function.args.args]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
    return bool(positional) and positional[0].arg in ("self", "cls") and not static


def got_attribute(func: ast.AST) -> ast.AST | None:
    """The object of `getattr(obj, name)` or `getattr(obj, name, default)` (a method read by name; the
    default stands in only when the object has none); None for any other expression."""
    getter = isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr"
    return func.args[0] if getter and len(func.args) in (2, 3) and not func.keywords else None


def method_getter(ctx, func: ast.AST) -> ast.Call | None:
    """The `getattr(obj, name[, default])` a called value is: itself, or the one a local name is bound to
    on every way to the call (`handler = getattr(cb, event, None)`, then `if handler: handler(self)`)."""
    if got_attribute(func) is not None:
        return func
    values = ctx.analysis(ValueKinds).reaching_values(func) if isinstance(func, ast.Name) else None
    return values[0] if values and len(values) == 1 and got_attribute(values[0]) is not None else None


def unrolled(loop: ast.AST, scopes) -> list | None:
    """The items of a loop over a literal collection of constants (`for phase in ["train", "val"]`), run
    once each with the loop variable as that constant; None for any other loop, one longer than
    `MAX_UNROLL`, or one whose body binds the variable itself."""
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name) or not isinstance(loop.iter, ast.List | ast.Tuple):
        return None
    items = loop.iter.elts
    if not 0 < len(items) <= MAX_UNROLL or not all(isinstance(e, ast.Constant) for e in items):
        return None
    name = loop.target.id
    if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for b in loop.body for n in ast.walk(b)):
        return None
    return [e.value for e in items]


def construction_constants(construction: ast.Call, init: ast.AST) -> dict[str, object]:
    """The constants an object's construction gives its `__init__` (`Block(activation="relu")`), also as the
    attributes `__init__` sets from them (`self.activation = activation`: `{"self.activation": "relu"}`), and
    whether an attribute is None: `SOMETHING` when every write on the arms the constants take makes an object
    (`if activation == "relu": self.act = nn.ReLU()`, `self.bn = nn.BatchNorm2d(c) if bn else None` with
    `bn` true), so that `if self.act is not None:` in `forward` is decided."""
    constants = call_constants(construction, init, skips_first=True)
    for attribute, values in taken_writes(init, dict(constants)).items():
        kinds = [known_constant(v, constants) if isinstance(v, ast.Name | ast.Constant) else _made_or_none(v, constants) for v in values]
        if UNKNOWN not in kinds and all(k is kinds[0] or k == kinds[0] for k in kinds):
            constants[f"self.{attribute}"] = kinds[0]
    return constants


def taken_writes(init: ast.AST, constants: dict) -> dict[str, list[ast.AST]]:
    """Attribute name -> the values `__init__` writes to `self.<name>` on the arms the constants take
    (`if act == "relu": self.act = nn.ReLU()` under `{"act": "relu"}`: `nn.ReLU()` alone)."""
    written: dict[str, list[ast.AST]] = {}
    for target, value in _taken_writes(init.body, constants):
        written.setdefault(target.attr, []).append(value)
    return written


def _taken_writes(block: list[ast.stmt], constants: dict) -> Iterator[tuple[ast.Attribute, ast.AST]]:
    """(`self.x`, the value) of each single write to an attribute of `self` on the arms the constants take."""
    for statement in block:
        if isinstance(statement, ast.If):
            for arm in taken_arms(statement, lambda branch: fold(branch.test, constants)):
                yield from _taken_writes(arm, constants)
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                        yield target, node.value


def _made_or_none(value: ast.AST, constants: dict):
    """None for a `None` literal, `SOMETHING` for a call (an object made), through `a if c else b` the
    constants decide; UNKNOWN otherwise."""
    while isinstance(value, ast.IfExp):
        held = fold(value.test, constants)
        if held is None:
            return UNKNOWN
        value = value.body if held else value.orelse
    if isinstance(value, ast.Constant) and value.value is None:
        return None
    return SOMETHING if isinstance(value, ast.Call) else UNKNOWN


def field_constants(construction: ast.Call, cls: ast.ClassDef, home) -> dict[str, object]:
    """The constants an object of a class of `home` whose fields make its constructor (a dataclass, an attrs
    class, a NamedTuple: no `__init__`) holds as `self.<field>`: what the construction passes for a field,
    else the field's constant default (`loss: str = "ce"`, `field(default="ce")`); fields a method of the
    class writes, or other code of the project may (`stored_in_project`), are left out, and every default
    when the construction spreads a mapping (`**overrides`)."""
    if any(isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == "__init__" for s in cls.body):
        return {}
    fields = [s for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    if len(construction.args) > len(fields) or any(isinstance(a, ast.Starred) for a in construction.args):
        return {}
    written = {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    passed = {**{f.target.id: a for f, a in zip(fields, construction.args)}, **{k.arg: k.value for k in construction.keywords}}
    spread = any(k.arg is None for k in construction.keywords)
    constants = {}
    for field in fields:
        name = field.target.id
        value = passed.get(name, None if spread else declared_default(home, field.value))
        if name not in written and isinstance(value, ast.Constant) and not stored_in_project(home, name):
            constants[f"self.{name}"] = value.value
    return constants


def stored_in_project(ctx, attribute: str) -> bool:
    """May code of the project of `ctx` (the file alone when it has none) store `attribute` on some object
    other than `self`: `cfg.head = d.get("head", cfg.head)` through a helper's parameter, `setattr(cfg, k, v)`
    over a loaded file, `vars(args).update(json.load(f))`? Then a config field or an option may hold other
    than its default, whichever object the store reaches (`ProjectIndex.modules_storing`, by the text)."""
    index = ctx.project or ctx.read_for
    if index is not None:
        return bool(index.modules_storing(attribute))
    if ctx not in _STORED_ATTRIBUTES:
        _STORED_ATTRIBUTES[ctx] = frozenset(stored_words(ctx.source.text.encode()))
    return bool(_STORED_ATTRIBUTES[ctx] & {f".{attribute}{STORES_KEY}", ANY_ATTRIBUTE})


def declared_default(ctx, value: ast.AST | None) -> ast.AST | None:
    """What a dataclass field's default makes: `= 3`, `field(default=3)`, `field(default_factory=lambda:
    {...})` (the lambda's body); None for a field without one, or another factory."""
    if not (isinstance(value, ast.Call) and ctx.qualified_name(value.func) in ("dataclasses.field", "attr.ib", "attrs.field")):
        return value
    keywords = {k.arg: k.value for k in value.keywords}
    factory = keywords.get("default_factory") or keywords.get("factory")
    return keywords.get("default") or (factory.body if isinstance(factory, ast.Lambda) and not factory.args.args else None)


def reachable_returns(function: ast.AST, constants: dict) -> list[ast.AST]:
    """The values `function` returns on the branches the constants leave open (`if self.activation ==
    "relu": return F.relu(x)` under `{"self.activation": "relu"}`; a `return` after an `if` decided to
    return is not reached)."""
    return _returns(function.body, constants)[0]


def bound_on_taken_arms(function: ast.AST, returned: ast.Return, constants: dict) -> list[ast.AST] | None:
    """The values the name a top-level `return x` of `function` returns may be bound to there, the `if`s
    the constants decide running one arm (`x = self.conv(x)`, `if self.act is not None: x = self.act(x)`,
    `return x` under `{"self.act": SOMETHING}`: `self.act(x)`); None when another statement (a loop, a
    `try`, an unpacking) may bind it, or `returned` is not a top-level `return` of a name."""
    if returned not in function.body or not isinstance(returned.value, ast.Name):
        return None
    found = _bound_after(function.body[: function.body.index(returned)], returned.value.id, constants, [])
    return found or None


def _bound_after(block: list[ast.stmt], name: str, constants: dict, bound: list[ast.AST] | None) -> list[ast.AST] | None:
    """The values `name` may be bound to after `block`, `bound` before it; None when unknown."""
    for statement in block:
        if bound is None:
            return None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            bound = [statement.value] if statement.targets[0].id == name else bound
        elif isinstance(statement, ast.If):
            decide = lambda branch: fold(branch.test, constants)  # noqa: E731
            after = [_bound_after(arm, name, constants, bound) for arm in taken_arms(statement, decide) if not ends(arm, decide)]
            bound = None if None in after else list({id(v): v for values in after for v in values}.values())
        elif any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(statement)):
            return None
    return bound


def _returns(block: list[ast.stmt], constants: dict) -> tuple[list[ast.AST], bool]:
    """(the values returned in `block`, does it surely return)."""
    found: list[ast.AST] = []
    decide = lambda branch: fold(branch.test, constants)  # noqa: E731
    for statement in block:
        if isinstance(statement, ast.Return):
            return found + ([statement.value] if statement.value is not None else []), True
        if isinstance(statement, ast.If):
            results = [_returns(arm, constants) for arm in taken_arms(statement, decide)]
            found += [v for values, _ in results for v in values]
            if all(surely for _, surely in results):  # (an undecided `if` without `else` runs on past)
                return found, True
        elif isinstance(statement, ast.Match):
            found += [v for case in statement.cases for v in _returns(case.body, constants)[0]]
        elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt | ast.ExceptHandler):
                    found += _returns([s for h in inner for s in (h.body if isinstance(h, ast.ExceptHandler) else [h])], constants)[0]
    return found, False


# What keeps a constant tensor's sign: moving it, and the calls that make one of a number.
MOVING = frozenset({"cuda", "to", "float", "cpu", "double", "half"})
TENSOR_MAKERS = frozenset({"tensor", "Tensor", "FloatTensor", "DoubleTensor"})
FILLERS = frozenset({"full", "full_like", "new_full"})  # calls that make a tensor filled with their second argument
ZERO_MAKERS = frozenset({"zeros", "zeros_like", "new_zeros"})


def is_zero(values: ValueKinds, node: ast.AST, depth: int = 0) -> bool:
    """Is the value a zero whatever the tensors it reads: `0.0`, `torch.zeros(())`, `g.new_zeros(n)`,
    `torch.tensor(0.0, device=d)`, a product by one (`logits.sum() * 0.0`), a name assigned one?"""
    if depth > MAX_DEPTH:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool) and node.value == 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return is_zero(values, node.left, depth + 1) or is_zero(values, node.right, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MOVING | {"sum", "mean"}:
        return is_zero(values, node.func.value, depth + 1)  # `zero.cuda()`, `(logits * 0).sum()`
    if isinstance(node, ast.Call) and callee_name(node) in ZERO_MAKERS:
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "zero_" and not node.args:
        return True  # `p.data.new(p.size()).zero_()`: zeros whatever it fills
    if isinstance(node, ast.Call) and node.args and callee_name(node) in TENSOR_MAKERS | {"new_tensor"}:
        return is_zero(values, node.args[0], depth + 1)
    if isinstance(node, ast.Name):
        assigned = values.reaching_values(node)
        return assigned is not None and len(assigned) == 1 and is_zero(values, assigned[0], depth + 1)
    return False


def constant_sign(values: ValueKinds, node: ast.AST, depth: int = 0) -> int:
    """The sign of `one = torch.tensor(1.)`, `mone = one * -1`, `-one`, `torch.FloatTensor([-1])`,
    `torch.full_like(x, -1)`; 0: unknown."""
    if depth > MAX_DEPTH:
        return 0
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return (node.value > 0) - (node.value < 0)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -constant_sign(values, node.operand, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) == 1:
        return constant_sign(values, node.elts[0], depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        return constant_sign(values, node.left, depth + 1) * constant_sign(values, node.right, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MOVING:
        return constant_sign(values, node.func.value, depth + 1)  # `one.cuda()`, `one.to(device)`
    if isinstance(node, ast.Call) and node.args and callee_name(node) in TENSOR_MAKERS:
        return constant_sign(values, node.args[0], depth + 1)
    if isinstance(node, ast.Call) and callee_name(node) in FILLERS:  # `torch.full_like(score, FAKE)`
        filled = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "fill_value"), None)
        return constant_sign(values, filled, depth + 1) if filled is not None else 0
    if isinstance(node, ast.Name):
        assigned = values.reaching_values(node)
        if assigned is not None and len(assigned) == 1:
            return constant_sign(values, assigned[0], depth + 1)
        qualified = values.ctx.qualified_name(node)  # `from utils import mone`
        found = values.ctx.analysis(ProjectView).global_value(qualified) if qualified and values.ctx.project is not None else None
        return constant_sign(found[0].analysis(ValueKinds), found[1], depth + 1) if found is not None else 0
    return 0
