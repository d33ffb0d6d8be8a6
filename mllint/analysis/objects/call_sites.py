"""Call-site parameters: what a parameter of a function is under one call site of it, never mixed across
call sites (a finding holds under one call site, and names it).

A `callers.Binding` is one call site's arguments for the parameters of one function (`__init__` through
`Trainer(...)`, a method through `trainer.fit(...)`, a setter through `engine.set_optimizer(opt)`).

- `under(ctx, expr, binding)`: the objects `expr` may be, each parameter of `binding.function` (and an item
  or attribute of one: `criterions[i]`, `cfg.loss`) replaced by the objects the call site passes, read in
  the caller; an argument that is the caller's own parameter is read under the caller's own binding
  (`binding.outer`). A parameter of any other function stays a parameter object, and is recorded as
  needing a binding (`ValueKinds.unbound`, which `callers.per_call_site` reads).
- `built(ctx, expr, binding)`: the calls that made those objects; `makers(ctx, expr)`: `built` as the file
  tells, else under each call site in turn.

The budget is the points-to layer's (`MAX_OBJECTS` objects per expression) and the callers layer's
(`MAX_SITES` call sites per function, `MAX_CALLER_DEPTH` callers up).
"""
from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Iterator
from weakref import WeakKeyDictionary

from mllint.analysis.objects.constants import binding_constants, declared_default, stored_in_project, stored_names
from mllint.analysis.objects.points_to import FUNCTIONS, MAX_OBJECTS, NAMESPACES, NONE, Obj, Objects, argparse_default, class_bindings, union
from mllint.analysis.objects.turns import in_turn
from mllint.analysis.syntax.folding import UNKNOWN, after_exit, arms, fold, fold_reads, known_constant, runs, runs_under
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.program.callers import Binding, Callers, per_call_site, sited_throughout
from mllint.analysis.program.hierarchy import made_runner
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import ValueKinds

MAX_CONVERSIONS = 3  # conversions of conversions (`bool(int(x))`) followed


def under(ctx, expr: ast.AST, binding: Binding | None, linted: Objects | None = None, turn: tuple | None = None) -> frozenset | None:
    """The objects `expr` (of `ctx`) may be under `binding` (and in the `turn` of a loop over a dict); None
    when unknown. `linted`: the points-to of the linted file, whose project view another module's is read through."""
    objects = linted._of(ctx) if linted is not None else ctx.analysis(Objects)
    return substituted(objects, in_turn(objects, expr, *turn) if turn else objects.points_to(expr), binding)


def substituted(objects: Objects, found: frozenset | None, binding: Binding | None) -> frozenset | None:
    """`found` (objects of `objects`' file) with the parameters of `binding.function` (and their items and attributes) replaced by what
    the call site passes."""
    if found is None:
        return None
    result: set[Obj] = set()
    for obj in found:
        inner: frozenset | None = frozenset({obj})
        if obj.kind == "parameter":
            passed = _passed(obj, binding)
            inner = under(*passed, objects) if passed is not None else inner
        elif obj.kind == "field" and obj.root().kind == "parameter":  # `criterions[i]`, `cfg.loss`, `model.encoder.head` of a parameter
            passed = _passed(obj.root(), binding)
            if passed is not None:
                caller = objects._of(passed[0])
                bases = under(*passed, objects)
                for name in obj.path():
                    members = [_home(caller, base).member(base, name) for base in bases - {NONE}] if bases else [None]
                    bases = union(*members)
                inner = substituted(caller, bases, passed[2])
        if inner is None:
            return None
        result |= inner
    return frozenset(result) if len(result) <= MAX_OBJECTS else None


def _home(objects: Objects, obj: Obj) -> Objects:
    """The objects of the file that made `obj` (its writes `args.flag = True` are there), else `objects`."""
    return objects._of(obj.ctx) if obj.kind == "made" and obj.ctx is not None else objects


def replaced_by_call(ctx, made: list[tuple[object, ast.Call]] | None) -> bool:
    """Is one of the objects these calls `made` handed, in the file that makes it, to a function that
    replaces a part of it (`Objects.replaced_by_call`)?"""
    objects = ctx.analysis(Objects)
    return any(objects._of(home).replaced_by_call(constructor) for home, constructor in made or ())


def built(ctx, expr: ast.AST, binding: Binding | None = None, linted: Objects | None = None, turn: tuple | None = None) -> list[tuple[object, ast.Call]] | None:
    """The calls (with their contexts) that made what `expr` may be under `binding`, `None` set aside; what
    a setter or `__init__` writes to a module's attribute counts as what made it (`held`). None when one of
    the objects is not made by a call, or unknown. `turn`: (a loop over a dict, a key), read in that turn
    (`turns.in_turn`)."""
    objects = linted._of(ctx) if linted is not None else ctx.analysis(Objects)
    made = _made_calls(objects, under(ctx, expr, binding, linted, turn), binding)
    if made and len(made) > 1 and binding is not None:
        made = [(home, call) for home, call in made if _runs_under_binding(home, call, binding)] or made
    return _on_taken_branches(made, linted.ctx if linted is not None else ctx) if made and len(made) > 1 else made


def _runs_under_binding(ctx, call: ast.Call, binding: Binding) -> bool:
    """Is `call` made under the constants the call site `binding` passes to the function around it (`self.crit
    = nn.BCEWithLogitsLoss()` under `if kind == "vanilla":` in `__init__`, of an instance made with `kind="vanilla"`)?"""
    function = ctx.scopes.enclosing_function(call)
    bound = binding.of(function) if function is not None else None
    constants = _passed_constants(ctx, bound) if bound is not None else None
    return not constants or runs_under(ctx.scopes, call, lambda branch: fold(branch.test, constants))


def _passed_constants(ctx, binding: Binding) -> dict[str, object]:
    """`binding_constants`, with the arguments the configuration decides (`possible_constants`: a config dict's
    `cfg["gan_loss"]`), passed on through the parameters of callers their own call sites fill."""
    found, stored = binding_constants(ctx, binding), stored_names(binding.function)
    for name, (caller, argument, passage) in binding.arguments.items():
        value = UNKNOWN if name in found or name in stored or passage.default else _decided_argument(caller, argument, binding.outer)
        found.update({name: value} if value is not UNKNOWN else {})
    return found


def _decided_argument(caller, argument: ast.AST, outer: Binding | None):
    """The one constant an argument may be: what the caller's own call site `outer` passes for the parameter it
    names, or else every constant it may be agreeing; UNKNOWN when not one."""
    if isinstance(argument, ast.Name) and outer is not None and caller.scopes.enclosing_function(argument) is outer.function:
        passed = outer.argument(argument.id)
        unchanged = passed is not None and not passed[2].default and not caller.analysis(ValueKinds).reaching_values(argument)
        return _decided_argument(passed[0], passed[1], outer.outer) if unchanged else UNKNOWN
    values = possible_constants(caller, argument) if not isinstance(argument, ast.Starred) else None
    return next(iter(values)) if values is not None and len(values) == 1 else UNKNOWN


def _on_taken_branches(made: list[tuple[object, ast.Call]], linted) -> list[tuple[object, ast.Call]]:
    """Of the calls that made what an expression may be, those the configuration's constants leave
    (`decided`): a call bound to a name in an arm of an `if` they decide against is never made (`if
    args.sched == "onecycle": ... else: StepLR(...)` with the option's default "step"), and an earlier
    binding of the name is not what it holds after an arm they decide for rebinds it (`if cfg.act ==
    "sigmoid": net = nn.Sequential(net, nn.Sigmoid())`, nothing reading `net` between the two)."""
    kept = [
        (ctx, call) for ctx, call in made
        if runs(_arms_around(ctx, call), lambda branch: decided(ctx, branch, linted)) and not _after_taken_exit(ctx, call, linted)
    ]  # fmt: skip
    rebound = [found for ctx, call in kept if (found := _taken_rebinding(ctx, call, linted)) is not None]
    return [(ctx, call) for ctx, call in kept if not any(_killed(ctx, call, *found) for found in rebound)] or made


def _arms_around(ctx, call: ast.Call) -> Iterator[tuple[ast.If | ast.IfExp, bool]]:
    """(each `if`, and `a if c else b`, around `call` in its own scope, is `call` in the arm its test holds
    for): `model = Conv() if args.arch == "conv" else MLP()` makes `MLP()` only with the default "mlp"."""
    return arms(ctx.scopes.ancestors(call), call)


def _after_taken_exit(ctx, call: ast.Call, linted) -> bool:
    """Does the statement of `call` follow an `if` the constants decide for an arm that ends in `return` or
    `raise` (`after_exit`, with the option's default "step")? Then it never runs."""
    statement = ctx.scopes.statement(call)
    return after_exit(ctx.scopes.ancestors(statement), statement, lambda branch: decided(ctx, branch, linted))


def _bound_name(ctx, call: ast.Call) -> tuple[ast.Assign, str] | None:
    """(the statement, the name) of `name = call`."""
    statement = ctx.scopes.parent(call)
    if isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement, statement.targets[0].id
    return None


def _taken_rebinding(ctx, call: ast.Call, linted) -> tuple[object, ast.If, ast.Assign, str] | None:
    """(its context, the `if`, the statement, the name) when `name = call` stands in the body of an `if`
    the constants decide to take, at the top of that body."""
    bound = _bound_name(ctx, call)
    branch = ctx.scopes.parent(bound[0]) if bound is not None else None
    if not isinstance(branch, ast.If) or bound[0] not in branch.body or decided(ctx, branch, linted) is not True:
        return None
    return ctx, branch, *bound


def _killed(ctx, call: ast.Call, home, branch: ast.If, rebinding: ast.Assign, name: str) -> bool:
    """Is `name = call` a binding the taken `branch` rebinds before anything reads it again: in the same
    block before the `if`, with no read or binding of the name between it and the rebinding but the
    rebinding's own value (`nn.Sequential(net, ...)`)?"""
    bound = _bound_name(ctx, call)
    if ctx is not home or bound is None or bound[1] != name or ctx.scopes.parent(bound[0]) is not ctx.scopes.parent(branch):
        return False
    statement = bound[0]
    if (statement.lineno, statement.col_offset) >= (branch.lineno, branch.col_offset):
        return False
    scope = ctx.scopes.enclosing_scope(branch) or ctx.tree
    start, end = (statement.end_lineno, statement.end_col_offset), (rebinding.lineno, rebinding.col_offset)
    inside = set(ast.walk(rebinding.value))
    return not any(
        n.id == name and start <= (n.lineno, n.col_offset) < end and n not in inside for n in ctx.index.within(scope, ast.Name)
    )  # fmt: skip


_DECIDED: WeakKeyDictionary = WeakKeyDictionary()  # linted file -> {an `if`'s test: its decision}
MAX_OPERANDS = 3  # names a test reads that are followed to their constants


def decided(ctx, branch: ast.If, linted=None) -> bool | None:
    """True or False when the constants the names its test reads may be (`possible_constants`: an option's
    default, a config field's, what every call site passes) decide an `if` alike; None when not (a test
    of anything else, a name with no default, constants that take both arms)."""
    return decided_test(ctx, branch.test, linted)


def decided_test(ctx, test: ast.AST, linted=None) -> bool | None:
    """`decided` of a test: `cfg.head == "softmax"` with the config field defaulting to "softmax" is True."""
    known = _DECIDED.setdefault(linted or ctx, {})
    if test not in known:
        known[test] = _decide(ctx, test, linted)
    return known[test]


def _decide(ctx, test: ast.AST, linted) -> bool | None:
    read = _reads(ctx, test)
    if not read or len(read) > MAX_OPERANDS or any(isinstance(n, ast.Call) for n in ast.walk(test)):
        return None
    if any(_overridden_on_a_branch(c, n.attr) for n in read if isinstance(n, ast.Attribute) for c in {ctx, linted or ctx}):
        return None
    values = []
    for node in read:  # (the first unknown operand decides: the others are not worked out)
        values.append(possible_constants(ctx, node, linted))
        if values[-1] is None or len(values[-1]) > MAX_OBJECTS:
            return None
    folded = {fold_reads(test, read, combination) for combination in itertools.product(*values)}
    return folded.pop() if len(folded) == 1 else None


def branch_note(ctx, call: ast.Call, linted=None) -> str:
    """What a message says of a construction the configuration's constants chose a branch for (`decided`):
    ", with the default `args.sched` = 'step'"; "" when none did."""
    return _default_note([(ctx, branch) for branch, _ in _arms_around(ctx, call)], linted)


def chosen_note(ctx, exprs: list[ast.AST], binding: Binding | None = None) -> str:
    """`branch_note` of what the configuration's constants chose the objects `exprs` may be among (`built`
    kept fewer than made them: `net = nn.Linear(4, 1)` then `if args.act == "sigmoid": net = ...`)."""
    branches = []
    for expr in exprs:
        made = _made_calls(ctx.analysis(Objects), under(ctx, expr, binding), binding)
        if made and len(made) > 1 and len(_on_taken_branches(made, ctx)) < len(made):
            branches += [(home, branch) for home, call in made for branch, _ in _arms_around(home, call)]
    return _default_note(branches, ctx)


def _default_note(branches: list[tuple[object, ast.If]], linted) -> str:
    reads = []
    for ctx, branch in branches:
        if decided(ctx, branch, linted) is not None:
            for node in _reads(ctx, branch.test):
                values = possible_constants(ctx, node, linted) or ()
                reads += [f"`{ctx.text(node)}` = {next(iter(values))!r}"] if len(values) == 1 else []
    return f", with the default {' and '.join(dict.fromkeys(reads))}" if reads else ""


def _reads(ctx, test: ast.AST) -> list[ast.AST]:
    """The names, attributes and items a test reads (not their parts)."""
    return [n for n in ast.walk(test) if isinstance(n, ast.Name | ast.Attribute | ast.Subscript) and not isinstance(ctx.scopes.parent(n), ast.Attribute | ast.Subscript)]


_OVERRIDDEN: WeakKeyDictionary = WeakKeyDictionary()  # file -> the attributes it sets on a branch


def _overridden_on_a_branch(ctx, name: str) -> bool:
    """Does the file set an attribute `name` on a branch (`if args.fast: args.sched = "onecycle"`)? What
    the option then holds is the default or the override: the objects layer tells only the override.
    The file's attributes are read once, not per test."""
    if ctx not in _OVERRIDDEN:
        _OVERRIDDEN[ctx] = frozenset(
            node.attr for node in ctx.index.of_type(ast.Attribute)
            if isinstance(node.ctx, ast.Store) and not isinstance(ctx.scopes.parent(ctx.scopes.statement(node)), (*FUNCTIONS, ast.Module))
        )  # fmt: skip
    return name in _OVERRIDDEN[ctx]


_LOADS: WeakKeyDictionary = WeakKeyDictionary()  # file -> {a call: the loads that may be what it makes}


def loads_of(ctx, made: ast.Call) -> list[ast.AST]:
    """The names and attributes the file reads that may be the object the call `made` of the file makes, as
    points-to tells (`criterion`, an alias of it, `self.criterion`), but for the value of an assignment (an
    alias: its own loads count); every load's objects read once per file."""
    if ctx not in _LOADS:
        objects, found = ctx.analysis(Objects), {}
        for node in ctx.index.of_type(ast.Name, ast.Attribute):
            parent = ctx.scopes.parent(node)
            if isinstance(node.ctx, ast.Load) and not (isinstance(parent, ast.Assign | ast.AnnAssign) and parent.value is node):
                for obj in objects.points_to(node) or ():
                    if obj.kind == "made" and obj.ctx is ctx:
                        found.setdefault(obj.node, []).append(node)
        _LOADS[ctx] = found
    return _LOADS[ctx].get(made, [])


def _made_calls(objects: Objects, found: frozenset | None, binding: Binding | None, resolving: frozenset = frozenset()) -> list[tuple[object, ast.Call]] | None:
    """`resolving`: the fields whose makers are being looked for around this call; one held again, through
    what holds it, is unknown (`self.conv = fuse(self.conv.conv)` holds `self.conv` by itself)."""
    if not found:
        return None
    calls: list[tuple[object, ast.Call]] = []
    for obj in found - {NONE}:
        if obj.kind == "made" and isinstance(obj.node, ast.Call):
            calls.append(Construction(obj.ctx, obj.node, obj.site))
            continue
        home = objects._of(obj.ctx)
        inner = None
        item_of_field = obj.kind == "field" and obj.name.startswith("[") and obj.base.kind == "field"  # `self.criteria["ce"]`
        if obj.kind == "field" and obj not in resolving and (item_of_field or home.instance_class(obj.base) in home.module_classes):
            held = home.held(obj)
            inner = _made_calls(home, substituted(home, held, binding), binding, resolving | {obj}) if held else None
        elif obj.kind == "field" and obj not in resolving and obj.base.kind == "field":
            inner = _submodule_fields(home, obj, binding, resolving | {obj})
        if inner is None:
            return None
        calls += inner
    return calls or None


def _submodule_fields(objects: Objects, field: Obj, binding: Binding | None, resolving: frozenset) -> list[tuple[object, ast.Call]] | None:
    """`self.backbone.features`: what the class of the module `self.backbone` was made by writes to its
    `features` (nothing on the way wrote it, or points-to would have said)."""
    bases = _made_calls(objects, frozenset({field.base}), binding, resolving)
    calls: list[tuple[object, ast.Call]] = []
    for ctx, call in bases or ():
        written = objects.class_field(Obj("made", call, ctx=ctx), field.name)
        inner = _made_calls(objects._of(ctx), written, binding, resolving) if written else None
        if inner is None:
            return None
        calls += inner
    return calls or None


def makers(ctx, expr: ast.AST, linted=None) -> Iterator[tuple[list[tuple[object, ast.Call]], Binding | None]]:
    """`built(ctx, expr)` as the file tells, or else under each call site's binding of the function (or
    the class's method) whose parameter it needs, one at a time: (the calls, the binding or None).
    `linted`: the linted file, when `ctx` is another module of the project (its call sites are found from there)."""
    objects = linted.analysis(Objects) if linted is not None else None
    return per_call_site(ctx, expr, lambda binding: built(ctx, expr, binding, objects), linted)


def made_by_runner(ctx, receiver: ast.AST) -> bool:
    """Is `receiver` made by a runner (`Accelerator(...)`, a subclass of the project's: `made_runner`), whatever
    its name, as the file tells or as a call site of its function passes it (`makers`)?"""
    if not isinstance(receiver, ast.Name | ast.Attribute):
        return False
    view = ctx.analysis(Objects).view
    return any(made and all(made_runner(c, m, view) for c, m in made) for made, _ in makers(ctx, receiver))


def attribute_makers(ctx, root: ast.Name, attributes: list[str]) -> Iterator[tuple[list[tuple[object, ast.Call]], Binding | None]]:
    """`makers` of `root.a.b` spelled by no node of the file, only by the names of a called function's
    event renamed to the caller's (`trainer.scheduler` of `on_batch_end(self, trainer)` run as
    `cb.on_batch_end(self)`: `self.scheduler` of the loop's method)."""
    objects = ctx.analysis(Objects)

    def ask(binding: Binding | None) -> list[tuple[object, ast.Call]] | None:
        found = under(ctx, root, binding)
        for name in attributes:
            found = union(*(objects.member(base, name) for base in found - {NONE})) if found else None
        return _made_calls(objects, substituted(objects, found, binding), binding)

    return per_call_site(ctx, root, ask)


def classes_of(ctx, expr: ast.AST, linted=None) -> Iterator[tuple[tuple[object, ast.ClassDef], Binding | None]]:
    """The project classes (with their modules' contexts) of the objects `expr` may be, as the file tells
    or under each call site in turn (`model` of `def add_adapters(model, d)` called with `Encoder()` of
    another module; `cb` of `for cb in self.callbacks` with `callbacks=[KeepBest(...), StopEarly(...)]`)."""
    objects = ctx.analysis(Objects)
    for made, binding in makers(ctx, expr, linted):
        for home, call in made:
            found = objects.class_of(Obj("made", call, ctx=home))
            if found is not None:
                yield found, binding


_CONSTANTS: WeakKeyDictionary = WeakKeyDictionary()  # linted file -> {an expression: its possible constants}


def possible_constants(ctx, expr: ast.AST, linted=None) -> frozenset | None:
    """Every constant `expr` may be, as the file tells or under every call site of the function (or the
    class's `__init__`) whose parameters it needs, the signature's defaults standing for callers the project
    does not have: `{30}` of `step_size=args.lr_step` with `add_argument("--lr-step", default=30)`; None when
    it may be something else, or is unknown under any call site. `linted`: the linted file, when `ctx` is
    another module of the project (its call sites are found from there). Worked out once per expression;
    it records no function as needing a binding (`ValueKinds.unbound`): no binding changes its answer."""
    known = _CONSTANTS.setdefault(linted or ctx, {})
    if expr not in known:
        kinds = [c.analysis(ValueKinds) for c in dict.fromkeys((ctx, linted or ctx))]
        recording = [k.unbound for k in kinds]
        for k in kinds:
            k.unbound = None
        try:
            known[expr] = _possible_constants(ctx, expr, linted)
        finally:
            for k, unbound in zip(kinds, recording):
                k.unbound = unbound
    return known[expr]


def _possible_constants(ctx, expr: ast.AST, linted) -> frozenset | None:
    found, bindings = _bindings_needed(ctx, expr, linted)
    if found is not None or not bindings:
        return found
    # Call sites all the way up decide, else the nearest call sites (a caller of its own known by its
    # annotations or defaults), else the signature's defaults.
    bindings = [b for b in bindings if sited_throughout(b)] or [b for b in bindings if b.site is not None] or bindings
    answers = [_constant_under(ctx, expr, b) for b in bindings]
    return None if None in answers else frozenset().union(*answers)


def dict_keys(ctx, expr: ast.AST, binding: Binding | None = None) -> frozenset | None:
    """The constant keys the dicts `expr` may be hold under `binding`: of a dict literal (`dict(...)` too), of a
    comprehension over a tuple or list of constants (`{s: load(s) for s in ("train", "val", "test")}`, or a
    module's `SPLITS`),
    wherever it was made (returned by a helper of another module, passed in by a call site); None when one
    of them is not such a dict, or a key is not a constant."""
    objects = ctx.analysis(Objects)
    found = under(ctx, expr, binding)
    if not found:
        return None
    keys: set = set()
    for obj in found:
        literal = obj.node if obj.kind == "made" else None
        if isinstance(literal, ast.Call) and obj.ctx.qualified_name(literal.func) == "dict" and not literal.args:
            literal = ast.Dict([ast.Constant(k.arg) if k.arg else None for k in literal.keywords], [k.value for k in literal.keywords])
        if isinstance(literal, ast.Dict) and None not in literal.keys and all(isinstance(k, ast.Constant) for k in literal.keys):
            keys |= {k.value for k in literal.keys}
        elif isinstance(literal, ast.DictComp) and len(literal.generators) == 1:
            loop = literal.generators[0]
            listed = _constant_under(obj.ctx, loop.iter, None) if not loop.ifs else None  # `("train", "val")`, `SPLITS`
            named = isinstance(loop.target, ast.Name) and isinstance(literal.key, ast.Name) and literal.key.id == loop.target.id
            if not listed or len(listed) != 1 or not isinstance(next(iter(listed)), tuple) or not named:
                return None
            keys |= set(next(iter(listed)))
        else:
            return None
        if objects._of(obj.ctx)._added_to(obj, 0):
            return None  # filled further by `d[k] = v`
    return frozenset(keys)


def passed_argument(call: ast.Call, position: int, keyword: str, default: ast.AST) -> ast.AST | None:
    """What `call` passes for a parameter (at `position`, or by `keyword`): the argument, or for a call that
    may pass it in a `**kwargs` splat (`nn.ReLU(**act_kwargs)`), the splat's item read as a call reads it
    (`act_kwargs.get("inplace", False)`, `default` the parameter's default); None when it passes none."""
    found = call_argument(call, position, keyword)
    splats = [k.value for k in call.keywords if k.arg is None]
    if found is not None or len(splats) != 1 or len(call.args) > position:
        return found
    get = ast.Attribute(value=splats[0], attr="get", ctx=ast.Load())
    return ast.copy_location(ast.Call(func=get, args=[ast.Constant(keyword), default], keywords=[]), splats[0])


class Construction(tuple):
    """(the context, a call that made an object), as `built` gives it, with `site`: the call of the project
    function that returned what the call made, when the objects layer followed one (`build(CFG["loss"],
    "loss")` of `return table[cfg["type"]](**args)`); None when not."""

    site: ast.Call | None = None

    def __new__(cls, ctx, call: ast.Call, site: ast.AST | None = None) -> "Construction":
        made = super().__new__(cls, (ctx, call))
        made.site = site if isinstance(site, ast.Call) else None
        return made


def constructed_classes(made: tuple, linted=None) -> frozenset | None:
    """`made_classes` of a pair `built` gives, a table's key read at the call of the builder that returned
    it when that is known (`Construction.site`)."""
    return made_classes(*made, linted, site=getattr(made, "site", None))


def made_classes(ctx, call: ast.Call, linted=None, site: ast.Call | None = None) -> frozenset | None:
    """`Objects.constructed` of a call of `ctx`, a table's key the file does not decide read as the constants
    it may be: `LOSSES[name](**kw)` in `get_loss(name)` called with `cfg.loss`, a config field defaulting to
    "nll", makes `torch.nn.NLLLoss`; so for a name bound to the table's entry (`act = ACTIVATIONS[cfg.get("act",
    "sigmoid")]`, then `act()`) and for the class `getattr(nn, cfg.out_act)()` names. `linted`: the linted
    file, when `ctx` is another module of the project."""
    objects = ctx.analysis(Objects)
    func = call.func
    named = _named_classes(ctx, _bound_callee(ctx, func), linted, site)
    if named is not None:
        return named
    item = table_item(ctx, func)
    if item is not None and item is not func:
        func = item
        call = ast.copy_location(ast.Call(func=func, args=call.args, keywords=call.keywords), call)
    key = objects._key_of(func.slice) if isinstance(func, ast.Subscript) else None
    keys = frozenset({key}) if key is not None else _keys_at(ctx, func.slice, site, linted) if isinstance(func, ast.Subscript) else None
    binding = _site_binding(ctx, func.value, site, linted) if isinstance(func, ast.Subscript) else None
    filed = objects.filed_in_registry(under(ctx, func.value, binding, linted and linted.analysis(Objects)), keys or {None}) if binding is not None else None
    return filed if filed is not None else objects.constructed(ctx, call, keys)


def _keys_at(ctx, key: ast.AST, site: ast.Call | None, linted) -> frozenset | None:
    """The constants a table's key may be: under the one call `site` of the function around it (`kind` and
    `cfg["type"]` of `build(CFG["model"], "model")`, not those of its other calls), when that decides
    them; else under every call site (`possible_constants`)."""
    binding = _site_binding(ctx, key, site, linted)
    found = _constant_under(ctx, key, binding) if binding is not None else None
    return found if found else possible_constants(ctx, key, linted)


def _site_binding(ctx, node: ast.AST, site: ast.Call | None, linted) -> Binding | None:
    """The binding of the function around `node` by its one call `site`; None without one."""
    function = ctx.scopes.enclosing_function(node) if site is not None else None
    bindings = (linted or ctx).analysis(Callers).bindings_in(ctx, function) if function is not None else []
    return next((b for b in bindings if b.call is site), None)


def table_item(ctx, func: ast.AST) -> ast.Subscript | None:
    """The table read a call calls: `MODELS[name]` of `MODELS[name](...)` or `MODELS.get(name)(...)`, or of
    `cls(...)` with `cls` bound only to such a read; None for any other callee."""
    func = _bound_callee(ctx, func)
    return func if isinstance(func, ast.Subscript) else ctx.analysis(Objects).read_by_get(func)


def _bound_callee(ctx, func: ast.AST) -> ast.AST | None:
    """What a call calls: the callee itself, or for a name the one value bound to it (`cls = MODELS[name]`,
    `ctor = getattr(lr_scheduler, cfg.name)`); None for a name bound otherwise."""
    if isinstance(func, ast.Name):
        bound = ctx.analysis(ValueKinds).reaching_values(func)
        return bound[0] if bound is not None and len(bound) == 1 else None
    return func


def _named_classes(ctx, func: ast.AST, linted=None, site: ast.Call | None = None) -> frozenset | None:
    """The classes `getattr(module, name)` names (`getattr(nn, cfg.out_act)` with the config field defaulting
    to "Sigmoid": `torch.nn.Sigmoid`), or under the one call `site` of the function around it, the module and
    the name it passes (`getattr(namespace, spec["name"])` of `build(nn, CFG["loss"])`); None for any other expression."""
    names = getattr_names(ctx, func, linted)
    module = ctx.qualified_name(func.args[0]) if names is not None else None
    if module is not None:
        return frozenset(f"{module}.{n}" for n in names)
    binding = _site_binding(ctx, func, site, linted) if _is_getattr(ctx, func) else None
    if binding is None:
        return None
    modules = ctx.analysis(Objects).names(under(ctx, func.args[0], binding, linted and linted.analysis(Objects)))
    names = _constant_under(ctx, func.args[1], binding)
    if not modules or len(modules) != 1 or not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
        return None
    return frozenset(f"{next(iter(modules))}.{n}" for n in names)


def getattr_names(ctx, call: ast.AST, linted=None) -> frozenset | None:
    """The attributes `getattr(obj, name)` (of `ctx`) may read, one for each string its name may be
    (`possible_constants`: `{"layer1", "layer2"}` in `for name in cfg.frozen` with `frozen=["layer1",
    "layer2"]`); None for any other expression, a literal name (points-to reads it), or a name not known."""
    if not _is_getattr(ctx, call) or isinstance(call.args[1], ast.Constant):
        return None
    names = possible_constants(ctx, call.args[1], linted)
    return names if names and all(isinstance(n, str) and n.isidentifier() for n in names) else None


def _is_getattr(ctx, call: ast.AST) -> bool:
    """Is `call` the builtin `getattr(obj, name)` without a default?"""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "getattr" and len(call.args) == 2):
        return False
    return not call.keywords and ctx.qualified_name(call.func) in (None, "getattr", "builtins.getattr")


def constant_everywhere(ctx, expr: ast.AST) -> bool:
    """Is `expr` a constant whatever the callers pass: as the file tells, or under every call site of the
    function (or the class's `__init__`) whose parameters it needs, the signature's defaults included
    (`self.p_loss` with `self.p_loss = p_loss` and `p_loss=3` that no call site passes)?"""
    found, bindings = _bindings_needed(ctx, expr)
    return found is not None or (bool(bindings) and all(_constant_under(ctx, expr, b) is not None for b in bindings))


def _bindings_needed(ctx, expr: ast.AST, linted=None) -> tuple[frozenset | None, list[Binding]]:
    """(the constants `expr` is as the file tells, or else the bindings of the functions whose parameters it needs)."""
    if isinstance(expr, ast.Constant):
        return frozenset({expr.value}), []
    values = ctx.analysis(ValueKinds)
    outer, values.unbound = values.unbound, []
    try:
        found, failed = _constants_of(ctx, under(ctx, expr, None), None, 0)
        needed = values.unbound
    finally:
        values.unbound = outer
    if found is not None or (failed is not None and _binding_free(failed)):
        return found, []  # (no constant under any binding either)
    callers = (linted or ctx).analysis(Callers)
    return None, [b for function in needed for b in callers.bindings_in(ctx, function)]


def _constant_under(ctx, expr: ast.AST, binding: Binding | None, depth: int = 0) -> frozenset | None:
    """The constants the objects `expr` may be under `binding` are (a tuple or list written out of constants
    as a tuple); None when one of them is no constant."""
    if isinstance(expr, ast.Constant):
        return frozenset({expr.value})
    return _constants_of(ctx, under(ctx, expr, binding), binding, depth)[0]


def _constants_of(ctx, objs: frozenset | None, binding: Binding | None, depth: int) -> tuple[frozenset | None, Obj | None]:
    """`_constant_under` of the objects `objs` of an expression of `ctx`, and the first of them found no constant."""
    objects = ctx.analysis(Objects)
    values: set = set()
    for obj in objs or ():
        found = _object_constants(objects, obj, binding, depth)
        if found is None:
            return None, obj
        values |= found
    return (frozenset(values) if values else None), None


def _binding_free(obj: Obj) -> bool:
    """Is `obj` made by the file (a call, a literal) or an attribute of such? No binding replaces it
    (`substituted` replaces parameters) nor changes what `_object_constants` reads it as."""
    return obj.kind == "made" or (obj.kind == "field" and obj.base.kind == "made")


def _object_constants(objects: Objects, obj: Obj, binding: Binding | None, depth: int) -> set | None:
    """The constants one object may be: a constant made, an attribute of a module that its writes set to
    one, a config field's default (`_class_default`, `argparse_default`), a conversion of one, an item of
    a tuple or list of constants (`name` of `for name in cfg.frozen`); None when not only constants."""
    if obj.kind == "field" and obj.name == "[]" and obj.base is not None and depth < MAX_DEPTH:
        listed = _object_constants(objects, obj.base, binding, depth + 1)
        if listed is None or not all(isinstance(v, tuple) for v in listed):
            return None
        return {item for v in listed for item in v}
    nested = _default_instance(objects, obj.base) if obj.kind == "field" and obj.base.kind == "field" and obj.base.base.kind == "made" else None
    if nested is not None:  # `cfg.model.head_activation` with `model: ModelConfig = field(default_factory=ModelConfig)`
        obj = Obj("field", name=obj.name, base=nested, ctx=nested.ctx)
    inner = {obj}
    if obj.kind == "field" and obj.base.kind != "made":  # a module's attribute (`self.inplace`): what its writes put there
        home = objects._of(obj.ctx)
        held = home.held(obj)
        inner = substituted(home, held, binding) if held and obj not in held else None
    values: set = set()
    for value in inner or (None,):
        if value is not None and value.kind == "field" and value.base.kind == "made":  # an attribute nothing writes
            default = _class_default(objects._of(value.ctx), value) or argparse_default(value)
            if default is not None and stored_in_project(value.ctx, value.name):
                return None  # `apply(cfg, path)` may set it: not the default alone
            written = _written_field(objects, value, binding) if default is None and inner == {obj} and depth < MAX_DEPTH else None
            if written:  # `args.sigmoid_out = True` after `parse_args()`: what the writes put there
                found = [_object_constants(objects, w, binding, depth + 1) for w in written]
                if None in found:
                    return None
                values |= set().union(*found)
                continue
            value = default or value
        converted = (_converted(value, depth) or _computed(value, depth)) if value is not None else None
        if converted is not None:
            values |= converted
            continue
        listed = known_constant(value.node, {}) if value is not None and isinstance(value.node, ast.Tuple | ast.List) else UNKNOWN
        if listed is not UNKNOWN:  # `features=("sqft", "rooms")`: a tuple of constants
            values.add(listed)
            continue
        if value is None or value.kind != "made" or not isinstance(value.node, ast.Constant):
            return None
        values.add(value.node.value)
    return values


def _written_field(objects: Objects, field: Obj, binding: Binding | None) -> frozenset | None:
    """What writes put in an attribute of a made object with no default (`args.sigmoid_out = True` after
    `args = parse_args()`), seen where the object is made and where the call site passes it from."""
    homes = {field.base.ctx, *(a[0] for a in (binding.arguments.values() if binding is not None else ()))} - {None}
    held = [objects._of(home).held(field) for home in homes]
    return None if None in held else frozenset().union(*held) - {field}


# Builtins of one constant whose result is a constant: the conversions, and `len` of a tuple or list of constants.
CONVERSIONS = {"bool": bool, "int": int, "float": float, "str": str, "len": len}


def _converted(value: Obj, depth: int) -> frozenset | None:
    """The constants a builtin conversion of constants makes (`bool(args.inplace_relu)` with the option's
    `default=1`: True; `len(C["targets"])` with `"targets": ["price"]`: 1), read where the conversion is
    written; None for any other object."""
    call = value.node if value.kind == "made" else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and len(call.args) == 1 and not call.keywords):
        return None
    convert = CONVERSIONS.get(call.func.id)
    if convert is None or depth >= MAX_CONVERSIONS or call.func.id in value.ctx.scopes.bound_anywhere():
        return None
    inner = _constant_under(value.ctx, call.args[0], None, depth + 1)
    try:
        return frozenset(convert(v) for v in inner) if inner is not None else None
    except (TypeError, ValueError):
        return None


ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv}
MAX_COMPUTED = 16  # constants an arithmetic expression of several-valued operands may give


def _computed(value: Obj, depth: int) -> frozenset | None:
    """The constants arithmetic on constants makes, read where it is written: `cfg["epochs"] * 0.5` with
    `cfg = {"epochs": 90}` gives 45.0, and a list comprehension over a tuple of constants makes a tuple
    (`[int(epochs * f) for f in (0.5, 0.75)]`: `(45, 67)`); None for any other object, and for a product
    of two settings neither of which is a share (`EPOCHS * STEPS`: a count in neither's unit, as a name such as
    `total_steps` says)."""
    node = value.node if value.kind == "made" else None
    if not isinstance(node, ast.BinOp | ast.ListComp) or depth >= MAX_CONVERSIONS:
        return None
    return _fold(value.ctx, node, {}, depth + 1)


def _fold(ctx, node: ast.AST, names: dict, depth: int) -> frozenset | None:
    """The constants `node` may be, the comprehension variables `names` standing for one constant each."""
    if isinstance(node, ast.Name) and node.id in names:
        return frozenset({names[node.id]})
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        left, right = _fold(ctx, node.left, names, depth), _fold(ctx, node.right, names, depth)
        if left is None or right is None or len(left) * len(right) > MAX_COMPUTED:
            return None
        if isinstance(node.op, ast.Mult) and not any(_literal(n, names) or _shares(v) for n, v in ((node.left, left), (node.right, right))):
            return None  # `epochs * steps_per_epoch`: a product of settings counts neither's unit
        try:
            return frozenset(ARITHMETIC[type(node.op)](a, b) for a in left for b in right if _number(a) and _number(b)) or None
        except ArithmeticError:
            return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CONVERSIONS and names:
        if len(node.args) != 1 or node.keywords or node.func.id in ctx.scopes.bound_anywhere():
            return None
        inner = _fold(ctx, node.args[0], names, depth)
        try:
            return frozenset(CONVERSIONS[node.func.id](v) for v in inner) if inner is not None else None
        except (TypeError, ValueError):
            return None
    if isinstance(node, ast.ListComp):
        return _comprehended(ctx, node, names, depth)
    if names and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)):
        return None  # reads a comprehension variable the layer below does not know
    return _constant_under(ctx, node, None, depth)


def _comprehended(ctx, node: ast.ListComp, names: dict, depth: int) -> frozenset | None:
    """The tuple a list comprehension over a tuple of constants makes, each item one constant."""
    loop = node.generators[0]
    if len(node.generators) != 1 or loop.ifs or not isinstance(loop.target, ast.Name):
        return None
    listed = _fold(ctx, loop.iter, names, depth)
    if not listed or len(listed) != 1 or not isinstance(items := next(iter(listed)), tuple) or len(items) > MAX_COMPUTED:
        return None
    made = [_fold(ctx, node.elt, {**names, loop.target.id: item}, depth) for item in items]
    return frozenset({tuple(next(iter(m)) for m in made)}) if all(m is not None and len(m) == 1 for m in made) else None


def _literal(node: ast.AST, names: dict) -> bool:
    """Is `node` written out of constants, or of comprehension variables over them (`0.5`, `f` of `for f
    in (0.5, 0.75)`): a factor that scales a setting, not another setting?"""
    return all(
        isinstance(n, ast.Name) and n.id in names or not isinstance(n, ast.Name | ast.Attribute | ast.Subscript | ast.Call)
        for n in ast.walk(node)
    )  # fmt: skip


def _shares(values: frozenset) -> bool:
    """Are the values all fractions in (0, 1): a share of what they multiply (`args.epochs * args.decay_every`
    with `default=0.25`), in its unit?"""
    return all(type(v) is float and 0 < v < 1 for v in values)


def _number(value: object) -> bool:
    return type(value) in (int, float)


def _class_default(objects: Objects, field: Obj) -> Obj | None:
    """What an attribute of an object made by a project class holds when its constructor does not set
    it: the class's own binding (`inplace: bool = True` of a dataclass, an attrs class or a NamedTuple,
    `inplace = True`); the argument for that field when the call passes one (by keyword, or by position
    for a class whose fields make its constructor), and a `SimpleNamespace(inplace=True)`'s keyword."""
    call = field.base.node
    if isinstance(call, ast.Call) and field.base.ctx.qualified_name(call.func) in NAMESPACES:
        passed = next((k.value for k in call.keywords if k.arg == field.name), None)
        unpacked = [k.value for k in call.keywords if k.arg is None]
        if passed is None and len(unpacked) == 1 and not call.args:  # `SimpleNamespace(**DEFAULTS)`: the mapping's item
            return _mapping_item(objects._of(field.base.ctx), unpacked[0], field.name)
        return Obj("made", passed, ctx=field.base.ctx) if _literal_constant(passed) and not call.args else None
    found = objects._of(field.base.ctx).class_of(field.base) if isinstance(call, ast.Call) else None
    if found is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    home, cls = found
    if field.name in objects._of(home).stored_attributes(cls):
        return None  # written by a method: not the default
    fields = [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    if call.args and (any(isinstance(s, FUNCTIONS) and s.name == "__init__" for s in cls.body) or len(call.args) > len(fields)):
        return None
    passed = dict(zip(fields, call.args)).get(field.name) or next((k.value for k in call.keywords if k.arg == field.name), None)
    if passed is not None or any(k.arg is None for k in call.keywords):
        return Obj("made", passed, ctx=field.base.ctx) if _literal_constant(passed) else None
    bound = (declared_default(home, v) for t, v in class_bindings(cls.body) if isinstance(t, ast.Name) and t.id == field.name)
    value = next((v for v in bound if _literal_constant(v)), None)
    return Obj("made", value, ctx=home) if value is not None else None


_FACTORY_CALLS: WeakKeyDictionary = WeakKeyDictionary()  # `default_factory=ModelConfig` -> the call `ModelConfig()` it stands for


def _default_instance(objects: Objects, field: Obj) -> Obj | None:
    """The instance of a project class a config field holds by its class's default when the constructor
    call passes none: `model: ModelConfig = field(default_factory=ModelConfig)` (the factory called with no
    arguments) or `= ModelConfig()`; None for anything else."""
    call = field.base.node
    found = objects._of(field.base.ctx).class_of(field.base) if isinstance(call, ast.Call) else None
    if found is None or call.args or any(k.arg in (None, field.name) for k in call.keywords):
        return None
    home, cls = found
    if any(isinstance(s, FUNCTIONS) and s.name == "__init__" for s in cls.body):
        return None
    if any(isinstance(n, ast.Attribute) and n.attr == field.name and isinstance(n.ctx, ast.Store) for n in ast.walk(cls)):
        return None
    bound = [v for t, v in class_bindings(cls.body) if isinstance(t, ast.Name) and t.id == field.name]
    value = bound[0] if len(bound) == 1 else None
    if isinstance(value, ast.Call) and home.qualified_name(value.func) == "dataclasses.field":
        factory = next((k.value for k in value.keywords if k.arg == "default_factory"), None)
        if not isinstance(factory, ast.Name):
            return None
        if factory not in _FACTORY_CALLS:
            _FACTORY_CALLS[factory] = ast.copy_location(ast.Call(func=factory, args=[], keywords=[]), factory)
        value = _FACTORY_CALLS[factory]
    if not (isinstance(value, ast.Call) and not value.args and not value.keywords):
        return None
    made = Obj("made", value, ctx=home)
    return made if objects._of(home).class_of(made) is not None else None


def _mapping_item(objects: Objects, mapping: ast.AST, key: str) -> Obj | None:
    """The constant at `key` of the dicts `mapping` may be (with what is stored there later), when one."""
    found = union(*(objects._elements(d, key, 0) for d in objects.points_to(mapping) or {None} if d is not None))
    value = next(iter(found)) if found and len(found) == 1 else None
    return value if value is not None and value.kind == "made" and _literal_constant(value.node) else None


def _literal_constant(node: ast.AST | None) -> bool:
    """A constant, or a tuple or list written out of constants (`frozen=["layer1", "layer2"]`)."""
    return isinstance(node, ast.Constant) or isinstance(node, ast.Tuple | ast.List) and known_constant(node, {}) is not UNKNOWN


def _passed(obj: Obj, binding: Binding | None) -> tuple[object, ast.AST, Binding | None] | None:
    """(the caller's context, the argument, the caller's binding) a call site passes for a parameter."""
    binding = binding.of(obj.node) if binding is not None else None
    if binding is None:
        unbound = obj.ctx.analysis(ValueKinds).unbound
        if unbound is not None and obj.node not in unbound:
            unbound.append(obj.node)
        return None
    passed = binding.argument(obj.name)
    if passed is None:
        return _splat_item(binding, obj.name)
    caller, argument, passage = passed
    return caller, argument, None if passage.default else binding.outer


def _splat_item(binding: Binding, name: str) -> tuple[object, ast.AST, Binding | None] | None:
    """What a call spreading several dicts passes for a parameter (`build(model, **cfg["optim"],
    **cfg["sched"])`): the item of the one dict whose constant keys hold its name (`dict_keys` where the
    call site reads it); None when none or several may."""
    call = binding.call
    splats = [k.value for k in call.keywords if k.arg is None] if call is not None else []
    if len(splats) < 2:
        return None
    holding = [s for s in splats if name in (dict_keys(binding.caller, s, binding.outer) or ())]
    if len(holding) != 1 or any(dict_keys(binding.caller, s, binding.outer) is None for s in splats):
        return None
    items = _SPLAT_ITEMS.setdefault(holding[0], {})
    if name not in items:
        items[name] = ast.copy_location(ast.Subscript(value=holding[0], slice=ast.Constant(name), ctx=ast.Load()), holding[0])
    return binding.caller, items[name], binding.outer


_SPLAT_ITEMS: WeakKeyDictionary = WeakKeyDictionary()  # a spread dict -> {a key: the item node standing for it}

