"""The shape analysis's interpreter: `Interpreter` runs one function's statements in order (assignments,
branches, loops unrolled to their fixed point, comprehensions, `try`, asserts that tell a size) and
evaluates each expression to a tensor value of `tensor_values` (names, attributes, subscripts, binary
operations, calls of torch and NumPy functions, of layers, of helper functions and of lambdas); `join`
keeps what every path agrees on where paths meet. What a module, dataset or helper of the project makes
it asks the `Shapes` of that module (see `shapes`), which starts it; the operations themselves are
`operations`'s.
"""
from __future__ import annotations

import ast
import dataclasses
import itertools

from mllint.analysis.objects.call_sites import built
from mllint.analysis.program.callers import Callers
from mllint.analysis.program.calls import bind_values
from mllint.analysis.program.hierarchy import inherited_method, made_runner
from mllint.analysis.objects.instances import Instances
from mllint.analysis.objects.turns import turn_keys, variables
from mllint.analysis.facets.broadcasts import Broadcast, column_and_row, written_outer
from mllint.analysis.facets.data_shapes import DATA_LOADERS, as_dataset, data_value, environment_step
from mllint.analysis.facets.distributions import distribution, distribution_method
from mllint.analysis.facets.dims import Dim, Shape, Sym, broadcast, floor_divide, multiply
from mllint.analysis.facets.indexing import index_shape, int_literal, signed_literal, slice_length
from mllint.analysis.facets.layer_shapes import changes_width
from mllint.analysis.syntax.names import call_argument, is_self_attribute
from mllint.analysis.syntax.scopes import FUNCTION_NODES, parameter_defaults, parameters
from mllint.analysis.facets.operations import BROADCAST_METHODS, KEEPS_ENDS, TENSOR_METHODS, TORCH, Operations, keeps_shape, matmul_shape, selected_rows
from mllint.analysis.facets.tables import frame_arithmetic, frame_attribute, frame_item, frame_method, frame_operation, frame_popped, read_table, scaling, splitting, table_rows
from mllint.analysis.facets.vocabulary import ARRAY, ELEMENTWISE, FUNCTIONS, LEGACY, SIZES
from mllint.analysis.facets.tensor_values import (
    MORE, NONE, NUMBER, Absent, Batches, Distribution, Fields, Frame, Items, Keyword, Listed, Number, Samples, Scaler, Size, Tensor, value_shape,
)
from mllint.analysis.syntax.tree import assignment_targets, child_nodes, same_expression
from mllint.analysis.values.runners import handed_back
from mllint.analysis.values.values import canonical_class


KEEPDIM_REDUCTIONS = frozenset("sum mean prod amax amin logsumexp std var nansum nanmean".split())  # one tensor out
MAX_CALL_DEPTH = 3  # module `forward`s interpreted inside one another
MAX_BRANCH_CALLS = 6  # the calls a residual branch is followed through to the value it starts from
_ACTIVE_CLASSES: list[ast.AST] = []  # the classes and helper functions being interpreted, across modules
_LINTED: list = []  # the `Callers` of the linted file those call sites are searched with
MAX_ITEMS = 32  # the items of a tuple or list joined by `+` kept one by one
MAX_LOOP_DEPTH = 3  # nested loops interpreted twice (to reach their fixed point); deeper ones once


CONFLICT = object()  # recorded for a node that evaluated to different values on different passes

SAME_SELECTION = frozenset("roll flip to cuda cpu long int".split())  # an index tensor's methods that keep its entries
NUMPY_SCALARS = frozenset("numpy." + n for n in "float16 float32 float64 double single int8 int16 int32 int64 uint8 bool_".split())
LEAVING = (ast.Break, ast.Continue, ast.Return, ast.Yield)  # a loop body that may leave early is not unrolled
SWAPS = frozenset({"transpose", "swapaxes", "swapdims"})  # of two dims
PYTHON_NUMBERS = frozenset({"float", "int"})
DICT_METHODS = frozenset("items keys values get pop update copy setdefault".split())
NUMBER_FUNCTIONS = frozenset("random." + n for n in "random gauss uniform randint normalvariate expovariate triangular".split())
FOLDS = frozenset({"sum", "min", "max", "abs", "round"})  # of Python numbers, or a list of them: a number
LISTED_BUILTINS = frozenset({"zip", "list", "tuple", "len", "reversed", "sorted", "enumerate"})
OUTER_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)  # element-wise: `(N,)` with `(N, 1)` makes `(N, N)`


def _rows(iterated: object | None, node: ast.AST) -> object | None:
    """What one iteration over a value gives: a batch of a loader, an item of a list, a row of a tensor."""
    if isinstance(iterated, (Batches, Listed)):
        return iterated.item
    if isinstance(iterated, Items) and iterated.values:  # a tuple display: what its items are alike
        return _alike(list(iterated.values), ("row", id(node)))
    if isinstance(iterated, Tensor) and iterated.shape:
        return Tensor(iterated.shape[1:], ("row", id(node)), "row")
    return None


def _concatenated(left: Items | Listed, right: Items | Listed) -> Items | Listed | None:
    """`a + b` of two lists or tuples: the items of both, or a list of what every item of both is alike."""
    if isinstance(left, Items) and isinstance(right, Items) and len(left.values) + len(right.values) <= MAX_ITEMS:
        return Items(left.values + right.values)  # (bounded: a long chain of `+` stays linear)
    items = {v.item for v in (left, right) if isinstance(v, Listed)} | {i for v in (left, right) if isinstance(v, Items) for i in v.values}
    lengths = [v.length if isinstance(v, Listed) else len(v.values) for v in (left, right)]
    return Listed(items.pop(), sum(lengths) if all(isinstance(n, int) for n in lengths) else None) if len(items) == 1 else None


def _repeated(listed: object, times: object) -> Listed | None:
    """`[0.0] * n`: a list of `n` times its items, when they are alike (`n` an int, known or not)."""
    if not isinstance(listed, (Items, Listed)) or isinstance(times, (Items, Listed)):
        return None
    items = [listed.item] if isinstance(listed, Listed) else list(listed.values)
    item = _alike(items, ("repeated", id(listed))) if items else None
    length = listed.length if isinstance(listed, Listed) else len(listed.values)
    count = multiply(length, times.dim) if isinstance(times, Number) else None
    return Listed(item, count) if item is not None else None


def _float_defaults(function: ast.AST) -> set[str]:
    """The parameters whose default is a float (`margin=1.0`): numbers, whatever a call passes."""
    args = function.args
    pairs = [*zip(reversed(args.posonlyargs + args.args), reversed(args.defaults)), *zip(args.kwonlyargs, args.kw_defaults)]
    return {a.arg for a, d in pairs if isinstance(d, ast.Constant) and type(d.value) is float}


def _int_defaults(function: ast.AST) -> set[str]:
    """The parameters whose default is an int (`window=24`): ints, whatever a call passes."""
    args = function.args
    pairs = [*zip(reversed(args.posonlyargs + args.args), reversed(args.defaults)), *zip(args.kwonlyargs, args.kw_defaults)]
    return {a.arg for a, d in pairs if isinstance(d, ast.Constant) and type(d.value) is int}



def _informative(value: object | None) -> bool:
    """Does a value say more than "some value": a known shape or ends, a number, a dataset, ...?"""
    if isinstance(value, Tensor):
        return value.shape is not None or value.ends is not None
    if isinstance(value, Number):
        return value.dim is not None
    if isinstance(value, Items):  # a sample of numbers too (`{"x": [a, b], "y": float(v)}`)
        return any(_informative(v) or isinstance(v, Number) for v in value.values)
    if isinstance(value, Fields):
        return any(_informative(v) or isinstance(v, Number) for _, v in value.values) or _informative(value.rest)
    if isinstance(value, Listed):  # a list of numbers: `torch.tensor(rewards)` is `(n,)`
        return _informative(value.item) or isinstance(value.item, Number)
    return isinstance(value, (Samples, Batches, Frame, Scaler, Distribution))


def _unnamed(value: object | None, function: ast.AST) -> object | None:
    """`value` with each size named after a parameter of `function` made unknown (`(cfg.window, 4)` is
    `(?, 4)`): what a helper returns, run without its call's arguments, says nothing of those."""
    if isinstance(value, Tensor):
        ends = value.ends and tuple(_unnamed_shape(e, function) for e in value.ends)
        return dataclasses.replace(value, shape=_unnamed_shape(value.shape, function), ends=ends)
    if isinstance(value, Number):
        return Number(_unnamed_shape((value.dim,), function)[0])
    if isinstance(value, Items):
        return Items(tuple(_unnamed(v, function) for v in value.values))
    if isinstance(value, Fields):
        return Fields(tuple((k, _unnamed(v, function)) for k, v in value.values), _unnamed(value.rest, function))
    if isinstance(value, Listed):
        return Listed(_unnamed(value.item, function), _unnamed_shape((value.length,), function)[0])
    if isinstance(value, (Samples, Batches)):
        return type(value)(_unnamed(value.item, function))
    return value


def _unnamed_shape(shape: Shape | None, function: ast.AST) -> Shape | None:
    return None if shape is None else tuple(None if _names_parameter(d, id(function)) else d for d in shape)


def _names_parameter(part: object, function: int) -> bool:
    if isinstance(part, Sym):
        return _names_parameter(part.key, function)
    if isinstance(part, tuple):
        return part[:2] == ("parameter", function) or any(_names_parameter(p, function) for p in part if isinstance(p, tuple))
    return False



def _none_defaults(function: ast.AST, bound: dict) -> dict[str, Absent]:
    """The parameters a call that binds `bound` leaves to a default of None: `NONE`."""
    defaults = parameter_defaults(function).items()
    return {name: NONE for name, default in defaults if name not in bound and isinstance(default, ast.Constant) and default.value is None}


REGISTERING = frozenset({"register_buffer", "register_parameter"})
BOUNDED_DRAWS = frozenset({"randint", "integers", "choice"})  # NumPy samplers of one bound or a population
EDGE_SAMPLERS = frozenset({"torch_geometric.utils.negative_sampling", "torch_geometric.utils.batched_negative_sampling"})


class Interpreter(Operations):
    """Runs one function's statements over abstract values."""

    def __init__(self, shapes, function: ast.AST, arguments: dict[str, object], record: bool) -> None:
        self.shapes = shapes  # the `Shapes` of the function's module (which imports this one)
        self.ctx = shapes.ctx
        self.function = function
        self.record = record
        self.returns: list[object] = []
        self.yields: list[object] = []  # what a generator function yields
        self.loop_depth = 0
        self.env: dict[str, object] = {}
        self.seen: dict[ast.AST, object] = {}  # the values of this pass
        self.tracks_self = False  # does assigning `self.x` bind it (running a dataset's `__init__`)?
        self.reads_stored = record  # does `self.x` read what `__init__` stores (a method run for an instance)?
        self.rebound: frozenset[str] = frozenset()  # ... but for these attributes, which other methods store
        self.modules_bound: dict[str, tuple[object, ast.Call]] = {}  # a loop's `layer` -> the layer it is on this pass
        self.turn: tuple[str, object] | None = None  # (key variable, key) of the loop over a dict taken one key at a time
        if isinstance(function, FUNCTION_NODES):
            counts, scalars = _int_defaults(function), _float_defaults(function)
            for arg in parameters(function):
                key = ("parameter", id(function), arg.arg)
                unknown = Number(Sym(key, arg.arg)) if arg.arg in counts else Tensor(None, key, arg.arg)
                unknown = Number(None) if arg.arg in scalars else unknown  # `margin=1.0`: a number
                self.env[arg.arg] = arguments.get(arg.arg) or unknown
        for name, value in arguments.items():  # a nested function's names of the function around it
            self.env.setdefault(name, value)

    def run(self) -> object | None:
        self.block(self.function.body)
        if self.yields:  # a generator: iterating it gives what every `yield` agrees on
            item = _alike(self.yields, ("yielded", id(self.function)))
            return Batches(item) if item is not None and not any(r is not None for r in self.returns) else None
        return _alike(self.returns, ("returned", id(self.function)))

    # Statements. `block` returns True when the block always leaves (return, raise, break, continue).
    def block(self, statements: list[ast.stmt]) -> bool:
        for statement in statements:
            if self.statement(statement):
                return True
        return False

    def statement(self, node: ast.stmt) -> bool:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is not None:
                value = self.eval(node.value)
                for target in assignment_targets(node):
                    self.bind(target, value, node.value)
        elif isinstance(node, ast.AugAssign):
            current = self.eval(node.target)
            value = self.binary(node, node.op, current, self.eval(node.value))
            if isinstance(node.target, ast.Name):
                self.bind(node.target, value, None)
        elif isinstance(node, ast.Expr):
            self.eval(node.value)
            name, value = registered(node.value)
            if self.tracks_self and name is not None:
                self.env[f"self.{name}"] = self.seen.get(value)
            self.forget_in_place_receiver(node.value)
            self.append(node.value)
        elif isinstance(node, ast.Return):
            self.returns.append(self.eval(node.value) if node.value is not None else None)
            return True
        elif isinstance(node, (ast.Raise, ast.Break, ast.Continue)):
            return True
        elif isinstance(node, ast.Assert):
            self.eval(node.test)  # (a probe of a model inside it is a call like any other)
            self.asserted(node.test)
        elif isinstance(node, ast.If):
            self.eval(node.test)
            taken = self.none_tested(node.test)
            return self.branches(node, [node.body, node.orelse]) if taken is None else self.block(node.body if taken else node.orelse)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            self.loop(node)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.eval(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, None, None)
            return self.block(node.body)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self.try_statement(node)
        elif isinstance(node, ast.Match):
            self.eval(node.subject)
            for case in node.cases:
                for name in ast.walk(case.pattern):
                    for attr in ("name", "rest"):
                        if isinstance(getattr(name, attr, None), str):
                            self.forget(getattr(name, attr), case)
            self.branches(node, [case.body for case in node.cases] + [[]])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.forget(node.name, node)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.env.pop(target.id, None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                self.forget((alias.asname or alias.name).split(".")[0], node)
        return False

    def none_tested(self, test: ast.AST) -> bool | None:
        """`p is None` (True) or `p is not None` (False) of a parameter the call leaves to a default of None."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
            return None
        right = test.comparators[0]
        if not (isinstance(right, ast.Constant) and right.value is None and self.env.get(test.left.id) == NONE):
            return None
        return True if isinstance(test.ops[0], ast.Is) else False if isinstance(test.ops[0], ast.IsNot) else None

    def branches(self, node: ast.AST, bodies: list[list[ast.stmt]]) -> bool:
        start, outcomes = self.env, []
        for body in bodies:
            self.env = dict(start)
            if not self.block(body):
                outcomes.append(self.env)
        if not outcomes:
            self.env = start
            return True
        self.env = join(outcomes, node)
        return False

    def loop(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        if isinstance(node, ast.While):
            self.eval(node.test)
        else:
            rows = _rows(self.eval(node.iter), node)
            layers = self.shapes.listed_modules(node.iter) if isinstance(node.target, ast.Name) and not self.modules_bound else None
            if layers is not None and not any(isinstance(n, LEAVING) for s in node.body for n in ast.walk(s)):
                return self.unrolled(node, layers)
            repeated = self.shapes.repeated_module(node.iter) if isinstance(node.target, ast.Name) and not self.modules_bound else None
            if repeated is not None:  # each pass calls a layer that one call built: the passes reach its fixed point
                return self.repeated(node, repeated)
        passes = 2 if self.loop_depth < MAX_LOOP_DEPTH else 1
        self.loop_depth += 1
        start = self.env
        for _ in range(passes):
            self.env = dict(start)
            if not isinstance(node, ast.While):
                self.bind(node.target, rows, None)
            self.block(node.body)
            self.env = join([start, self.env], node)
            start = self.env
        if passes == 1:  # values assigned in the body may differ on the next iteration: forget them
            for name in _assigned_names(node.body):
                self.forget(name, node)
        self.loop_depth -= 1
        if isinstance(node, ast.For) and self.record and self.turn is None and not any(isinstance(n, LEAVING) for s in node.body for n in ast.walk(s)):
            self.turned(node)
        self.block(node.orelse)

    def turned(self, node: ast.For) -> None:
        """A loop over a dict whose keys are known (`turns.turn_keys`) run once more per key, its values
        kept by key (`Shapes.turned`) apart from the loop's own: `crit(out[name], batch[name])` in the turn
        of each `name`."""
        keys = turn_keys(self.ctx, node)
        if keys is None:
            return
        key_name, value_name = variables(node)
        after, seen, iterated = self.env, self.seen, self.eval(node.iter.func.value) if value_name else None
        self.record = False
        for key in keys:
            self.env, self.seen, self.turn = dict(after), {}, (key_name, key)
            self.bind(node.target, None, None)
            if isinstance(iterated, Fields) and iterated.get(key) is not None:
                self.env[value_name] = iterated.get(key)
            self.block(node.body)
            self.shapes.turned.update(((n, key), v) for n, v in self.seen.items())
        self.env, self.seen, self.turn, self.record = after, seen, None, True

    def repeated(self, node: ast.For | ast.AsyncFor, layer: tuple[object, ast.Call]) -> None:
        """`for block in self.blocks: h = h + block(h)` over a `ModuleList` of layers one call builds: the
        loop run as any other, `block` calling that layer."""
        self.modules_bound[node.target.id] = layer
        try:
            self.loop(node)
        finally:
            self.modules_bound.pop(node.target.id, None)

    def unrolled(self, node: ast.For | ast.AsyncFor, layers: list[tuple[object, ast.Call]]) -> None:
        """`for layer in self.layers: x = layer(x)` over a `ModuleList` (or `Sequential`) of layers listed
        where it is built: the body run once per layer, in their order, `layer` calling that one (a loop
        inside it is not unrolled again: the cost stays linear in the layers listed)."""
        for layer in layers:
            self.bind(node.target, None, None)
            self.modules_bound[node.target.id] = layer
            self.block(node.body)
        self.modules_bound.pop(node.target.id, None)
        self.block(node.orelse)

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        """`[trainer.step(x, y) for x, y in loader]`: its expressions evaluated with its variables bound
        to what one iteration gives (in an environment of its own)."""
        mapped = self.mapped(node)
        if mapped is not None:
            return mapped
        outer, self.env = self.env, dict(self.env)
        iterated = [self.eval(generator.iter) for generator in node.generators[:1]]
        for generator in node.generators:
            self.bind(generator.target, _rows(iterated.pop() if iterated else self.eval(generator.iter), generator), None)
            for condition in generator.ifs:
                self.eval(condition)
        values = [self.eval(part) for part in ((node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,))]
        self.env = outer
        only = node.generators[0]
        if isinstance(node, ast.DictComp):
            # its keys unknown: what is stored at a constant key after it is known (`item["labels"] = y`); every
            # key holds what one iteration makes (`{k: DataLoader(ds) for k, ds in splits.items()}`)
            return Fields((), values[1] if _informative(values[1]) else None)
        if not isinstance(node, ast.ListComp) or values[0] is None:
            return None
        if len(node.generators) == 1 and not only.ifs:
            source = self.seen.get(only.iter)
            if isinstance(source, Listed):
                return Listed(values[0], source.length)  # `[s[1] for s in batch]`
            counted = only.iter
            if isinstance(counted, ast.Call) and isinstance(counted.func, ast.Name) and counted.func.id == "range" and len(counted.args) == 1:
                return Listed(values[0], self.dim(counted.args[0]))  # `[(make(i), float(i)) for i in range(n)]`
        return Listed(values[0], None)  # `[emb(x[:, i]) for i, emb in enumerate(self.embs)]`: how many, unknown

    def mapped(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> Items | Fields | None:
        """`(t.to(device) for t in batch)` over a tuple the analysis knows: the tuple of what each item gives;
        `{k: v.to(device) for k, v in batch.items()}` over a dict it knows: the dict of what each value gives."""
        only = node.generators[0]
        if isinstance(node, ast.DictComp) and len(node.generators) == 1 and not only.ifs:
            return self.mapped_fields(node)
        if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(node.generators) != 1 or only.ifs:
            return None
        source = self.eval(only.iter)
        if not isinstance(source, Items) or not source.values or len(source.values) > MAX_ITEMS:
            return None
        outer, values = self.env, []
        for item in source.values:
            self.env = dict(outer)
            self.bind(only.target, item, None)
            values.append(self.eval(node.elt))
        self.env = outer
        return Items(tuple(values))

    def mapped_fields(self, node: ast.DictComp) -> Fields | None:
        only = node.generators[0]
        items = only.iter
        key, target = node.key, only.target
        if not (isinstance(items, ast.Call) and isinstance(items.func, ast.Attribute) and items.func.attr == "items" and not items.args):
            return None
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(key, ast.Name) and isinstance(target.elts[0], ast.Name)):
            return None
        source = self.eval(items.func.value)
        if key.id == target.elts[0].id and not isinstance(source, Fields) and isinstance(target.elts[1], ast.Name) and not self.modules_bound:
            return self.mapped_modules(node)
        if key.id != target.elts[0].id or not isinstance(source, Fields) or source.rest is not None or not source.values:
            return None
        outer, values = self.env, []
        for name, item in source.values:
            self.env = dict(outer)
            self.bind(target, Items((None, item)), None)
            values.append((name, self.eval(node.value)))
        self.env = outer
        return Fields(tuple(values))

    def mapped_modules(self, node: ast.DictComp) -> Fields | None:
        """`{name: head(h) for name, head in self.heads.items()}` over an `nn.ModuleDict` of layers listed
        by key (`Shapes.keyed_modules`): the dict of what the value gives with `head` each layer in turn."""
        only = node.generators[0]
        layers = self.shapes.keyed_modules(only.iter.func.value)
        if layers is None:
            return None
        outer, values, variable = self.env, [], only.target.elts[1].id
        for key, layer in layers:
            self.env = dict(outer)
            self.bind(only.target, None, None)
            self.modules_bound[variable] = layer
            values.append((key, self.eval(node.value)))
        self.modules_bound.pop(variable, None)
        self.env = outer
        return Fields(tuple(values))

    def try_statement(self, node: ast.AST) -> None:
        start = self.env
        self.env = dict(start)
        self.block(node.body)
        self.block(node.orelse)
        outcomes = [self.env]
        for handler in node.handlers:
            self.env = join([start, outcomes[0]], handler)
            if handler.name:
                self.forget(handler.name, handler)
            if not self.block(handler.body):
                outcomes.append(self.env)
        self.env = join(outcomes + [join([start, outcomes[0]], node)], node) if node.finalbody else join(outcomes, node)
        self.block(node.finalbody)

    def forget(self, name: str, node: ast.AST) -> None:
        self.env[name] = Tensor(None, ("assigned", id(node), name), name)

    def forget_in_place_receiver(self, expr: ast.AST) -> None:
        """`x.unsqueeze_(1)`, `x.data.resize_(n).fill_(1)`: an in-place method may change the shape of the
        name it runs on (or of its `.data`); `resize_(sizes)` gives it those sizes."""
        changes = []
        while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr.endswith("_"):
            changes.append(expr)
            expr = expr.func.value
        expr = expr.value if isinstance(expr, ast.Attribute) and expr.attr == "data" else expr
        changes = [c for c in changes if not keeps_shape(c.func.attr)]
        if not isinstance(expr, ast.Name) or not changes:
            return
        last = changes[0]  # (the outermost: the chain's last change)
        sizes = self.sizes(last.args) if last.func.attr == "resize_" and last.args and not last.keywords else None
        if sizes is not None:
            self.env[expr.id] = Tensor(sizes, ("resized", id(last)))
        else:
            self.forget(expr.id, last)

    def asserted(self, test: ast.AST) -> None:
        """`assert x.shape == (n, 32, 32, 3)`, `assert x.shape[1:] == (32, 32, 3)`, `assert x.ndim == 2`: a
        name of unknown rank has that shape after it (a size not stated: as `x.shape[i]` names it)."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            return
        left, right, start = test.left, test.comparators[0], 0
        if isinstance(left, ast.Subscript) and isinstance(left.slice, ast.Slice) and left.slice.upper is left.slice.step is None:
            start, left = int_literal(left.slice.lower) if left.slice.lower is not None else 0, left.value
        named = isinstance(left, ast.Attribute) and left.attr in ("shape", "ndim") and isinstance(left.value, ast.Name)
        current = self.env.get(left.value.id) if named else None
        if not isinstance(current, Tensor) or current.shape is not None or start is None or start < 0:
            return
        if left.attr == "ndim" and int_literal(right) is not None and start == 0:
            stated = [None] * int_literal(right)
        elif left.attr == "shape" and isinstance(right, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in right.elts):
            stated = [None] * start + [self.dim(e) if int_literal(e) != -1 else None for e in right.elts]
        else:
            return
        key, label = current.key, current.label
        dims = tuple(d if d is not None else Sym(("size", key, i), f"{label}.shape[{i}]") for i, d in enumerate(stated))
        self.env[left.value.id] = Tensor(dims, key, label)

    def append(self, expr: ast.AST) -> None:
        """`items.append(v)` (`insert(i, v)`) on a list (`self.items` too, where `__init__` fills one): a list of
        values like `v`, if every other item is alike."""
        receiver = expr.func.value if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) else None
        name = receiver.id if isinstance(receiver, ast.Name) else f"self.{receiver.attr}" if is_self_attribute(receiver) else None
        if name is None:
            return
        listed = self.env.get(name)
        if expr.func.attr in ("append", "extend", "insert") and isinstance(listed, (Items, Listed)):
            added = {"append": 1, "insert": 2}.get(expr.func.attr)  # `ret.insert(0, g)` adds its second argument
            value = self.seen.get(expr.args[-1]) if added == len(expr.args) else None
            current = [listed.item] if isinstance(listed, Listed) else list(listed.values)
            item = _alike([*current, value], ("appended", id(expr))) if value is not None else None
            self.env[name] = Listed(item, None) if item is not None else Tensor(None, ("assigned", id(expr), name), name)

    def bind(self, target: ast.AST, value: object | None, value_node: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            if value is None:
                value = Tensor(None, ("assigned", id(target), target.id), target.id)
            elif isinstance(value, Number) and isinstance(value.dim, Sym):
                value = Number(Sym(value.dim.key, target.id, value.dim.operator, value.dim.operands))
            elif isinstance(value, Tensor) and value.shape is None:
                value = Tensor(None, value.key, target.id, value.ends, max_rank=value.max_rank)
            self.env[target.id] = value
        elif self.tracks_self and is_self_attribute(target):
            self.env[f"self.{target.attr}"] = value
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and isinstance(self.env.get(target.value.id), Fields):
            fields = self.env[target.value.id]  # `out.value = out.value.squeeze(1)` on a record: the field holds what reaches it
            self.env[target.value.id] = Fields(tuple((k, v) for k, v in fields.values if k != target.attr) + ((target.attr, value),), fields.rest)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and isinstance(self.env.get(target.value.id), Fields):
            key, fields = target.slice, self.env[target.value.id]  # `item["labels"] = y` on a dict the analysis knows
            kept = tuple((k, v) for k, v in fields.values if not isinstance(key, ast.Constant) or k != key.value)
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self.env[target.value.id] = Fields(kept + ((key.value, value),))
            elif not fields.values and fields.rest in (None, value) and _informative(value):  # `splits[name] = Dataset(...)`
                self.env[target.value.id] = Fields((), value)  # in a loop filling a new dict
            else:
                self.env[target.value.id] = Tensor(None, ("assigned", id(target), target.value.id))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and isinstance(self.env.get(target.value.id), Listed):
            listed = self.env[target.value.id]  # `out[t] = acc`: a list of such items while they are alike
            item = _alike([listed.item, value], ("stored", id(target))) if value is not None else None
            self.env[target.value.id] = Listed(item, listed.length) if item is not None else Tensor(None, ("assigned", id(target), target.value.id))
        elif isinstance(target, (ast.Tuple, ast.List)):
            elements = target.elts
            if any(isinstance(e, ast.Starred) for e in elements):
                values = [None] * len(elements)
            elif isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(elements):
                values = [self.seen.get(e) for e in value_node.elts]
            elif isinstance(value, Size):
                values = self.unpack_size(value, elements, value_node)
            elif isinstance(value, Items) and len(value.values) == len(elements):
                values = list(value.values)
            elif isinstance(value, Tensor) and value.shape and value.shape[0] in (len(elements), None):
                rest = tuple(d if d is not None else Sym(("size", value.key, i), f"{value.label}.shape[{i}]") for i, d in enumerate(value.shape[1:], 1))
                values = [Tensor(rest, ("row", i, value.key)) for i in range(len(elements))]  # `src, dst = edges` of `(2, E)`
            else:
                values = [None] * len(elements)
            for element, element_value in zip(elements, values):
                self.bind(element.value if isinstance(element, ast.Starred) else element, element_value, None)

    def unpack_size(self, size: Size, elements: list[ast.AST], value_node: ast.AST | None) -> list[object | None]:
        """`B, T, C = x.shape`: the sizes; when x's rank was unknown, it is now known to be 3, and a size not
        known (a convolution's length) is now the symbol its name stands for, in x's shape too."""
        if size.dims is not None and (len(size.dims) != len(elements) or None not in size.dims):
            return [Number(d) for d in size.dims] if len(size.dims) == len(elements) else [None] * len(elements)
        labels = [e.id if isinstance(e, ast.Name) else f"{size.label}[{i}]" for i, e in enumerate(elements)]
        known = size.dims or tuple(size.head[i] if i < len(size.head) else None for i in range(len(elements)))
        dims = tuple(Sym(("size", size.key, i), label) if d is None else d for i, (d, label) in enumerate(zip(known, labels)))
        source = _size_receiver(value_node)
        if isinstance(source, ast.Name) and isinstance(self.env.get(source.id), Tensor) and self.env[source.id].key == size.key:
            self.env[source.id] = Tensor(dims, size.key, source.id)
        return [Number(d) for d in dims]

    # Expressions.
    def eval(self, node: ast.AST) -> object | None:
        value = self.seen[node] = self.evaluate(node)
        if self.record:
            recorded = self.shapes.recorded
            if node in recorded and recorded[node] != value:
                recorded[node] = CONFLICT
            else:
                recorded[node] = value
        return value

    def evaluate(self, node: ast.AST) -> object | None:
        if isinstance(node, ast.Constant):
            if type(node.value) is int:
                return Number(node.value)
            return NUMBER if isinstance(node.value, (float, complex)) else None
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.BinOp):
            return self.binary(node, node.op, self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand)
            if isinstance(node.op, ast.USub) and isinstance(operand, Number) and isinstance(operand.dim, int):
                return Number(-operand.dim)
            if isinstance(operand, Number) and isinstance(node.op, (ast.USub, ast.UAdd)):
                return NUMBER
            if isinstance(node.op, ast.Invert) and isinstance(operand, Tensor) and operand.shape is not None:
                return Tensor(operand.shape, ("call", id(node)), f"~{operand.label}")  # `~mask`: another mask
            if isinstance(node.op, ast.Invert) and isinstance(operand, Frame) and not (operand.accessor or operand.windowed):
                return Frame(operand.shape, ("call", id(node)))  # `~df["held_out"]`: another Series
            return operand if isinstance(operand, Tensor) and isinstance(node.op, (ast.USub, ast.UAdd)) else None
        if isinstance(node, ast.Compare):
            left = self.eval(node.left)
            right = [self.eval(c) for c in node.comparators]
            if len(right) == 1 and (isinstance(left, Tensor) or isinstance(right[0], Tensor)):
                return self.binary(node, ast.Sub(), left, right[0])  # `y == 1`, `x[:, 0] > 0`: element-wise
            return None
        if isinstance(node, ast.IfExp):
            self.eval(node.test)
            body, orelse = self.eval(node.body), self.eval(node.orelse)
            return body if body == orelse else None
        if isinstance(node, ast.NamedExpr):
            value = self.eval(node.value)
            self.bind(node.target, value, node.value)
            return value
        if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return Items(tuple(self.eval(e) for e in node.elts))
        if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            return Fields(tuple((k.value, self.eval(v)) for k, v in zip(node.keys, node.values)))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, ast.Lambda):
            return None  # its own scope: names inside may be other bindings
        if isinstance(node, ast.Yield):
            self.yields.append(self.eval(node.value) if node.value is not None else None)
            return None
        for child in child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child)
        return None

    def name(self, node: ast.Name) -> object | None:
        if node.id in self.env:
            return self.env[node.id]
        values = self.shapes.values.reaching_values(node)
        if values and len(values) == 1 and isinstance(values[0], ast.Constant) and type(values[0].value) is int:
            return Number(values[0].value)  # a module-level constant
        if values and len(values) == 1 and self.ctx.scopes.enclosing_function(values[0]) is None and self.function is not self.ctx.tree:
            held = self.shapes.item_value(values[0])  # a global assigned once at module level (a notebook's loader, its mean)
            if isinstance(held, (Tensor, Batches, Samples)) and _informative(held):
                return held
        return Tensor(None, ("free", node.id), node.id)

    def attribute(self, node: ast.Attribute) -> object | None:
        if self.ctx.qualified_name(node) is not None:  # `torch.float32`, a module's attribute: a number
            return NUMBER if _numbers(self.shapes.constants(node)) else None  # when a config's (`cfg.window` of an imported `cfg`)
        if is_self_attribute(node) and f"self.{node.attr}" in self.env:
            return self.env[f"self.{node.attr}"]
        size = self.shapes.attribute_size(node) if is_self_attribute(node) else None
        if _informative(size):
            return size
        reads = self.tracks_self or self.reads_stored and node.attr not in self.rebound
        stored = self.shapes.stored_attribute(node) if is_self_attribute(node) and reads else None
        if _informative(stored):
            return stored  # (`self.loader = loader`: what `__init__` is passed, before the parameter's symbol)
        if size is not None:
            return size
        if is_self_attribute(node) and _numbers(self.shapes.constants(node)):
            return NUMBER  # `self.gamma = cfg.gamma` of `--gamma` given a float: a scalar factor keeps a shape
        base = self.eval(node.value)
        if isinstance(base, Items) and node.attr in base.names:
            return base.values[base.names.index(node.attr)]  # `x.max(1).values`
        if isinstance(base, Frame):
            return frame_attribute(base, node.attr)
        if isinstance(base, Fields) and base.rest is None and node.attr not in DICT_METHODS:
            return base.get(node.attr)  # a scikit-learn Bunch's `data.target`
        if not isinstance(base, Tensor):
            return None
        if base.shape is None and isinstance(node.value, ast.Name) and _numbers(self.shapes.constants(node)):
            return NUMBER  # `cfg.n_features` of a config whose every call site gives it a number
        if node.attr == "shape":
            return Size(base.shape, base.key, base.label, base.ends[0] if base.ends else ())
        if node.attr in ("T", "mT") and base.shape is not None:
            if node.attr == "T":
                return Tensor(tuple(reversed(base.shape)), ("T", base.key))
            return Tensor(base.shape[:-2] + base.shape[-2:][::-1], ("mT", base.key)) if len(base.shape) >= 2 else None
        if node.attr == "data":
            return base
        return Tensor(None, ("attribute", base.key, node.attr), f"{base.label}.{node.attr}")

    def subscript(self, node: ast.Subscript) -> object | None:
        base = self.eval(node.value)
        index = node.slice
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        for item in items:
            self.eval(item)
        if isinstance(base, Size):
            position = int_literal(index)
            if isinstance(index, ast.Slice) and index.step is None and base.dims is not None:
                bounds = [int_literal(b) if b is not None else None for b in (index.lower, index.upper)]
                written = [b for b in (index.lower, index.upper) if b is not None]
                return Size(base.dims[bounds[0] : bounds[1]], ("sliced", base.key), base.label) if len(written) == len([b for b in bounds if b is not None]) else None
            if position is None:
                return None
            if base.dims is not None:
                return Number(base.dims[position]) if -len(base.dims) <= position < len(base.dims) else None
            return Number(base.leading(position))
        if isinstance(base, Frame):
            return frame_item(self, base, node, items)
        if isinstance(base, Tensor):
            base = table_rows(base, items)
            integers = {id(i) for i in items if isinstance(self.seen.get(i), Number)}
            sources = {id(i): _same_selection(i) for i in items}
            rows = {
                id(i): selected_rows(self.seen[sources[id(i)]], self.ctx.text(sources[id(i)]))
                for i in items if selected_rows(self.seen.get(sources[id(i)]), "") is not None
            }  # fmt: skip
            rows.update((id(i), w) for i in items if isinstance(i, ast.Slice) and (w := self.slice_width(i)) is not None)
            shape = index_shape(base.shape, items, integers, rows) if base.shape is not None else None
            ends = self.indexed_ends(base, items) if base.shape is None else None
            return Tensor(shape, ("index", id(node), base.key), ends=ends)
        position = int_literal(index)
        if isinstance(base, Items) and position is not None and -len(base.values) <= position < len(base.values):
            return base.values[position]
        if isinstance(base, Samples):
            return base.item
        if isinstance(base, Listed):  # every item of a list of samples alike
            return base.item if not isinstance(index, ast.Slice) else Listed(base.item, slice_length(index, base.length))
        if isinstance(base, Fields) and self.turn is not None and isinstance(index, ast.Name) and index.id == self.turn[0]:
            return base.get(self.turn[1])  # `out[name]` in the turn of one key
        key = self.constant_key(index) if isinstance(base, Fields) else None
        if key is not None:
            return base.get(key.value)  # `batch["y"]`, `batch[self.target_key]` of a key set once
        if isinstance(base, Fields) and not isinstance(index, (ast.Constant, ast.Slice)) and (base.values or base.rest is not None):
            held = [v for _, v in base.values] + ([base.rest] if base.rest is not None else [])
            return _alike(held, ("item", id(node)))  # `loaders[split]`: whichever it is, what they all are alike
        return None

    def draws_one_number(self, node: ast.Call, name: str, row) -> bool:
        """Does a NumPy sampler given no size draw one number: of numbers (`np.random.normal(0, 1)`,
        `np.random.rand()`), or of bounds not known to be arrays (`np.random.randint(n)`, `rng.integers(0, n)`,
        `rng.choice(items)`)? An array of means (`np.random.normal(mu, 1)`) sets the shape."""
        if row.kind != SIZES or any(k.arg in (None, row.keyword) for k in node.keywords):
            return False
        if row.spread and node.args or not row.spread and len(node.args) > row.at:
            return False
        given = [self.value_of(a) for a in [*node.args, *(k.value for k in node.keywords)]]
        if name.rpartition(".")[2] in BOUNDED_DRAWS:
            return name.endswith("choice") or not any(isinstance(v, Tensor) and v.shape for v in given)
        return all(isinstance(v, Number) for v in given)

    def constant_key(self, key: ast.AST) -> ast.Constant | None:
        """The one string a dict key is: a literal, or a name or attribute that is that string under
        every call site (`self.label_name` of `__init__(self, label_name="y")`)."""
        if isinstance(key, ast.Constant):
            return key
        found = self.shapes.constants(key) if isinstance(key, (ast.Name, ast.Attribute)) else None
        return ast.Constant(next(iter(found))) if found and len(found) == 1 and isinstance(next(iter(found)), str) else None

    def indexed_ends(self, base: Tensor, items: list[ast.AST]) -> tuple | None:
        """The known first sizes of a tensor of unknown rank indexed by one item: `x[i:i + 1]` is `(1, ...)`,
        `x[None]` adds a leading 1."""
        if len(items) != 1:
            return None
        head, tail = base.ends or ((), ())
        if isinstance(items[0], ast.Constant) and items[0].value is None:
            return (1, *head), tail
        width = self.slice_width(items[0]) if isinstance(items[0], ast.Slice) else None
        width = width if width is not None else slice_length(items[0], head[0] if head else None) if isinstance(items[0], ast.Slice) else None
        return ((width, *head[1:]), tail) if width is not None else None

    def slice_width(self, item: ast.Slice) -> Dim:
        """The width of `[i:i + k]` for a size `k` the analysis knows (`self.ctx`, a parameter); None otherwise."""
        upper = item.upper
        if item.step is not None or item.lower is None or not (isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add)):
            return None
        if ast.unparse(upper.left) != ast.unparse(item.lower):
            return None
        width = self.dim(upper.right)
        return width if isinstance(width, Sym) or (isinstance(width, int) and width > 0) else None

    def binary(self, node: ast.AST, op: ast.operator, left: object | None, right: object | None) -> object | None:
        if isinstance(left, Number) and isinstance(right, Number):
            if isinstance(op, ast.Mult):
                return Number(multiply(left.dim, right.dim))
            if isinstance(op, ast.FloorDiv):
                return Number(floor_divide(left.dim, right.dim))
            if isinstance(left.dim, int) and isinstance(right.dim, int) and isinstance(op, (ast.Add, ast.Sub)):
                return Number(left.dim + right.dim if isinstance(op, ast.Add) else left.dim - right.dim)
            return NUMBER
        if isinstance(op, ast.Add) and isinstance(left, (Items, Listed)) and isinstance(right, (Items, Listed)):
            return _concatenated(left, right)
        if isinstance(op, ast.Mult) and (isinstance(left, (Items, Listed)) or isinstance(right, (Items, Listed))):
            return _repeated(left, right) or _repeated(right, left)  # `[0.0] * len(rewards)`
        key = ("binary", id(node))
        framed = frame_arithmetic(left, right, key) if not isinstance(op, ast.MatMult) else None
        if framed is not None:
            return framed
        if isinstance(op, ast.MatMult):
            return Tensor(matmul_shape(value_shape(left), value_shape(right)), key)
        if isinstance(left, Number) != isinstance(right, Number) and self.number_operand(node, left):
            return NUMBER  # `i + self.window` with `window=168`: an index, no tensor
        if isinstance(left, Tensor) and isinstance(right, Number):
            return Tensor(left.shape, key, ends=left.ends, broadcast_at=left.broadcast_at)
        if isinstance(left, Number) and isinstance(right, Tensor):
            return Tensor(right.shape, key, ends=right.ends, broadcast_at=right.broadcast_at)
        if isinstance(left, Tensor) and isinstance(right, Tensor):
            residual = self.residual(node, left, right) if isinstance(op, (ast.Add, ast.Sub)) else None
            shape = residual or broadcast(left.shape, right.shape)
            ends = None if shape is not None else _joint_ends(left.ends, right.ends) or _ends_against(left, right) or _ends_against(right, left)
            return Tensor(shape, key, ends=ends, broadcast_at=self.outer_broadcast(node, left, right, shape))
        return None

    def outer_broadcast(self, node: ast.AST, left: Tensor, right: Tensor, shape: Shape | None) -> Broadcast | None:
        """Where the `(N, N)` this element-wise operation makes was made: here, of `(N,)` and `(N, 1)` operands
        not written so on purpose; or where an operand of that shape was."""
        found = column_and_row(left, right, True) if isinstance(node, ast.BinOp) and isinstance(node.op, OUTER_OPERATORS) else None
        if found is not None and not written_outer((node.left, node.right), self.ctx, self.shapes.values.reaching_definitions, self.seen.get):
            return Broadcast(self.ctx, node, *found)
        return next((v.broadcast_at for v in (left, right) if v.broadcast_at is not None and v.shape == shape), None)

    def number_operand(self, node: ast.AST, left: object) -> bool:
        """Is an operation on a number and some value a number: is every operand a number, or of unknown shape and
        one of numbers only under every call site (a size from a config: `i + self.window`)? `x + 1` of an
        unknown tensor stays a tensor."""
        if not isinstance(node, ast.BinOp):
            return False
        for operand, value in ((node.left, left), (node.right, self.seen.get(node.right))):
            if not isinstance(value, Number) and (not isinstance(value, Tensor) or _informative(value) or not _numbers(self.shapes.constants(operand))):
                return False
        return True

    def residual(self, node: ast.AST, left: Tensor, right: Tensor) -> Shape | None:
        """`h + blk(h)`, `x + self.drop(attn(self.norm(x)))`, `t + self.attn(h, h, h)[0]` of `h = self.norm(t)`: a
        residual update keeps the shape of what it adds to when the branch's shape is unknown, or known but for
        sizes that are other symbols (the layer's `dim` against the stream's `C`: equal, or the sum would
        raise), the branch being a block run on a value of that shape, unless a layer on the way changes its
        features (`x + g(self.proj(x))` of a `Linear(d, 4 * d)`) and no later one brings them back to its
        input's (`x + self.fc2(act(self.fc1(x)))` of `Linear(d, 4 * d)` then `Linear(4 * d, d)`)."""
        for known, other, branch in ((left, right, getattr(node, "right", None)), (right, left, getattr(node, "left", None))):
            if known.shape is None or other.ends or not _symbols_apart(known.shape, other.shape):
                continue
            widths, swaps = [], []  # the layers on the way that change the features (outermost first), the transposes
            for _ in range(MAX_BRANCH_CALLS):
                branch = branch.value if isinstance(branch, ast.Subscript) and int_literal(branch.slice) == 0 else branch
                bound = self.shapes.values.reaching_values(branch) if isinstance(branch, ast.Name) else None
                branch = bound[0] if bound is not None and len(bound) == 1 else branch  # `h = self.fc2(h)`, then `x + h`
                swapped = _swapped(branch)
                if swapped is not None:  # `mlp(h.transpose(1, 2)).transpose(1, 2)`: mixes along another axis
                    swaps.append(swapped)
                    branch = branch.func.value
                elif not isinstance(branch, ast.Call) or not branch.args:
                    break
                else:
                    if self._widens(branch, known.shape):
                        widths.append(self.shapes.constructor(branch.func)[1])
                    branch = branch.args[0]
                if value_shape(self.seen.get(branch)) == known.shape and _width_restored(widths) and all(swaps.count(t) % 2 == 0 for t in swaps):
                    return known.shape
        return None

    def _widens(self, call: ast.Call, shape: Shape) -> bool:
        made = self.shapes.constructor(call.func)
        return made is not None and changes_width(canonical_class(made[0].qualified_name(made[1].func)) or "", made[1], shape, made[0].analysis(type(self.shapes)).static_dim)

    # Calls.
    def call(self, node: ast.Call) -> object | None:
        name = self.ctx.qualified_name(node.func)
        receiver = None
        if name is None and isinstance(node.func, ast.Attribute):
            receiver = self.eval(node.func.value)
        arguments = [self.eval(a) for a in node.args]
        for keyword in node.keywords:
            self.eval(keyword.value)
        lambda_ = self.lambda_called(node) if name is None else None
        if lambda_ is not None:
            return self.applied(lambda_, arguments)
        builtin = node.func.id if isinstance(node.func, ast.Name) and name is None and node.func.id not in self.env else None
        if builtin in PYTHON_NUMBERS or name in NUMBER_FUNCTIONS or (name or "").startswith("math."):
            return NUMBER
        if builtin in FOLDS and arguments and all(isinstance(a, Number) or isinstance(a, Listed) and isinstance(a.item, Number) for a in arguments):
            return NUMBER
        if builtin == "len" and len(arguments) == 1 and isinstance(arguments[0], (Tensor, Frame)) and arguments[0].shape:
            return Number(arguments[0].shape[0])  # (a frame's rows)
        if builtin == "len" and len(node.args) == 1 and not node.keywords:
            return NUMBER  # an int, of a size not known
        if builtin == "range":  # its items are ints: `[(f(i), 20 + i % 50) for i in range(n)]`
            return Listed(NUMBER, self.dim(node.args[0]) if len(node.args) == 1 else None)
        if builtin in LISTED_BUILTINS:
            listed = self.listed(builtin, node, arguments)
            if listed is not None:
                return listed
        fields = self.shapes.record_fields(node, name)
        if fields is not None:  # `dict(pred=p)`, `Output(pred=p, emb=h)` of a dataclass: its fields' shapes by name
            return Fields(tuple((field, self.seen.get(value)) for field, value in fields.items()))
        if isinstance(receiver, Fields) and node.func.attr in ("get", "pop") and node.args:
            key = self.constant_key(node.args[0])
            if key is None:
                return None
            if node.func.attr == "pop" and isinstance(node.func.value, ast.Name):  # `inputs.pop("labels")`: gone from `inputs`
                self.env[node.func.value.id] = Fields(tuple((k, v) for k, v in receiver.values if k != key.value))
            return receiver.get(key.value)  # `batch.get("y")`, `kwargs.get(self.label_name)`
        if isinstance(receiver, Fields) and node.func.attr in ("items", "values") and not node.args:
            held = _alike([v for _, v in receiver.values] + ([receiver.rest] if receiver.rest is not None else []), ("held", id(node)))
            return Listed(Items((None, held)) if node.func.attr == "items" else held, None) if held is not None else None
        combined = lambda a, b: self.binary(node, ast.Add(), a, b)  # noqa: E731 (element-wise, as `a + b`)
        made = distribution(name, node, self.value_of, combined)
        if made is not None or isinstance(receiver, Distribution):  # `Categorical(logits=z)`, its `log_prob(a)`
            return made or distribution_method(receiver, node, self.value_of, combined) or Tensor(None, ("call", id(node)))
        if isinstance(receiver, Frame):
            return frame_method(node, node.func.attr, receiver) or frame_popped(self, node, receiver) or frame_operation(node, receiver, arguments)
        scaler = scaling(node, name, receiver, arguments) or splitting(node, name, receiver)
        if scaler is not None:
            return scaler
        handed = handed_back(node, self.runner_makers) if receiver is not None else None
        if handed is not None:  # `accelerator.prepare(model, loader)`: each object back, wrapped
            return self.seen.get(handed[0]) if len(handed) == 1 else Items(tuple(self.seen.get(a) for a in handed))
        data = read_table(node, name) or data_value(self, node, name, arguments) or self.shapes.dataset(node.func, arguments + self.keywords(node)) or self.collated(node, name)
        data = data or (environment_step(self.ctx, node, _unpacked_width(self.ctx, node)) if name is None else None)
        if data is not None:
            return data
        helper = self.shapes.own_function(node.func)
        bound_here = self.env.get(node.func.id) if helper is not None else None
        method = self.shapes.own_method(node.func) if helper is None and name is None else None
        if helper is not None and (bound_here is None or bound_here == Tensor(None, ("assigned", id(helper), helper.name))):
            called = self.helper_call(node, helper, arguments)
            if called is not None:
                return called
        elif method is not None:
            called = self.helper_call(node, method, arguments, skips_first=True)
            if called is not None:
                return called
        elif name is None and (instance := self.instance_method(node)) is not None:
            called = self.helper_call(node, instance[1], arguments, instance[0], skips_first=True, held=instance[2], rebound=instance[3])
            if called is not None:
                return called
        elif name is not None:
            found = self.shapes.project_function(name)
            called = self.helper_call(node, found[1], arguments, found[0]) if found is not None else None
            if called is not None:
                return called
        shape: object = None
        row = FUNCTIONS.get(name) if name is not None else None
        first = self.value_of(call_argument(node, row.at, row.keyword)) if name in KEEPS_ENDS else None
        if isinstance(first, Tensor) and first.ends:
            return Tensor(None, ("call", id(node)), ends=first.ends)  # of unknown rank, with known ends
        pair = self.indexed_pair(node, name.removeprefix(TORCH), self.shape_of(call_argument(node, 0, "input")), 1) if name and name.startswith(TORCH) else None
        if isinstance(receiver, Tensor) and name is None:
            pair = self.indexed_pair(node, node.func.attr, receiver.shape, 0)
        if pair is not None:
            return pair
        if name is not None and name.startswith(TORCH):
            shape = self.torch_function(node, name)
            listed = self.value_of(call_argument(node, 0, "tensors")) if shape is None and name == "torch.stack" and len(node.args) + len(node.keywords) == 1 else None
            if isinstance(listed, Listed) and isinstance(listed.item, Tensor):  # a list of tensors of unknown shape, stacked
                return Tensor(None, ("call", id(node)), ends=((listed.length, *listed.item.ends[0]), listed.item.ends[1]) if listed.item.ends else ((listed.length,), ()))
        elif name in EDGE_SAMPLERS:
            shape = (2, None)  # an edge index: a row of sources, a row of targets
        elif name in NUMPY_SCALARS and len(node.args) == 1:  # `np.float32(row["y"])`: a number, or an array cast
            cast = self.value_of(node.args[0])
            if isinstance(cast, Number):
                return NUMBER
            shape = value_shape(cast)
        elif name == "numpy.random.permutation" or isinstance(node.func, ast.Attribute) and node.func.attr == "permutation" and self.shapes.numpy_generator(node.func.value):
            shape = self.permutation(node)
        elif row is not None and row.kind == ELEMENTWISE and isinstance(frame := self.value_of(call_argument(node, row.at, row.keyword)), Frame) and not frame.windowed:
            return Frame(frame.shape, ("call", id(node)))  # `np.exp(df["x"])`: a frame again
        elif row is not None:
            if name.startswith("numpy.random.") and self.draws_one_number(node, name, row):
                return NUMBER
            shape = self.function_shape(node, name, row)
        elif isinstance(node.func, ast.Attribute) and self.shapes.numpy_generator(node.func.value):
            row = FUNCTIONS.get("numpy.random." + node.func.attr)  # `rng.normal(0, 1, size=(n, d))`, `rng.random((n, d))`
            if row is not None and self.draws_one_number(node, node.func.attr, row):
                return NUMBER
            shape = self.function_shape(node, "numpy.random." + node.func.attr, row) if row is not None and row.kind == SIZES else None
        elif name is None and self.position_in_list(node):
            return NUMBER  # `list(df.columns).index(target)`: a Python int
        elif isinstance(receiver, Tensor) and node.func.attr == "item" and not node.args:
            return NUMBER  # a Python number
        elif isinstance(receiver, Tensor) and node.func.attr == "tolist" and not node.args and receiver.shape is not None:
            listed: object = NUMBER  # `rewards.tolist()`: nested lists of Python numbers
            for size in reversed(receiver.shape):
                listed = Listed(listed, size)
            return listed
        elif isinstance(receiver, Tensor) and (node.func.attr in TENSOR_METHODS or keeps_shape(node.func.attr)) and not self.shapes.called_self(node.func.value):
            if receiver.max_rank is not None and keeps_shape(node.func.attr):
                return Tensor(None, ("call", id(node)), receiver.label, max_rank=receiver.max_rank)  # `raw.astype(np.float32)`
            if receiver.shape is None and node.func.attr in BROADCAST_METHODS and len(node.args) == 1 and not node.keywords:
                return self.binary(node, ast.Add(), receiver, arguments[0])  # `x.pow(2)`, `x.mul(w)`: as `x * w`
            known = _ends_of(receiver) if node.func.attr in SWAPS else receiver.ends or ((), ())
            ends = _partial_method(node, node.func.attr, known) if receiver.shape is None else None
            if ends is not None and ends != ((), ()):  # `x.unsqueeze(-1)` of any x: `(..., 1)`
                return Tensor(None, ("call", id(node)), ends=ends)
            if receiver.shape is None and node.func.attr == "flatten" and _from_second(node.args, node.keywords):
                return Tensor((_ends_of(receiver)[0][0], None), ("call", id(node)))  # `(B, ?)` whatever the rank (1 raises)
            result = self.method(node, node.func.attr, receiver)
            if result is not None and not isinstance(result, tuple):
                return result
            shape = result  # None: a tensor of unknown shape (`np.load(f).astype(t)`), which `.view(-1, 1)` may tell
        elif name is None and not any(isinstance(a, ast.Starred) for a in node.args):
            arguments += self.keywords(node)
            own = self.shapes.called_self(node.func)
            if own is not None:
                return self.shapes.class_output(own, arguments)
            bound = self.modules_bound.get(node.func.id) if isinstance(node.func, ast.Name) else None
            constructor = bound or self.shapes.constructor(node.func)
            with self.shapes.as_linted():
                output = constructor[0].analysis(type(self.shapes)).module_output(constructor[1], arguments) if constructor is not None else None
            output = output if output is not None or constructor is not None else self.shapes.library_part_output(node.func, arguments)
            if output is not None:
                return output
            if self.record or is_self_attribute(node.func):
                passed = self.shapes.passed_module_output(node, arguments)
                if passed is not None:
                    return passed
        if shape is None and row is not None and row.kind in (ARRAY, LEGACY) and len(node.args) == 1:
            given = self.value_of(node.args[0])
            ends = _listed_ends(given) or (given.ends if isinstance(given, Tensor) and given.shape is None else None)
            if ends is not None:  # `torch.tensor([w])` of a `w` of unknown rank: `(1, ...)`; `torch.from_numpy(y[i:i + 1])` keeps its ends
                return Tensor(None, ("call", id(node)), ends=ends)
        if isinstance(shape, tuple):
            squeezed = self._squeezed_at(node, receiver, shape)
            unbatched = squeezed if squeezed and receiver.shape[0] == 1 and any(d != 1 for d in receiver.shape) else None
            unbatched = unbatched or (receiver.unbatched_at if isinstance(receiver, Tensor) else None)
            carried = receiver.broadcast_at if isinstance(receiver, Tensor) and receiver.shape == shape else None  # `.pow(2)`
            return Tensor(shape, ("call", id(node)), squeezed_at=squeezed, unbatched_at=unbatched, broadcast_at=carried)
        return Tensor(None, ("call", id(node)), _label(node))

    def position_in_list(self, node: ast.Call) -> bool:
        """Is `node` a position or count a Python list gives (`cols.index(c)`, `names.count(n)`, of a
        `list(...)`, `tuple(...)`, `.tolist()` or list display, also through a name assigned one), or a
        pandas index gives (`df.columns.get_loc(c)`)?"""
        func = node.func
        if not isinstance(func, ast.Attribute) or len(node.args) != 1 or node.keywords:
            return False
        if func.attr == "get_loc":
            return isinstance(func.value, ast.Attribute) and func.value.attr in ("columns", "index")
        listed = func.value
        if isinstance(listed, ast.Name):
            values = self.shapes.values.reaching_values(listed)
            listed = values[0] if values and len(values) == 1 else None
        return func.attr in ("index", "count") and _python_list(listed)

    def lambda_called(self, node: ast.Call) -> ast.Lambda | None:
        """The `lambda` a name called with plain arguments is bound to once (`ds = lambda X, y: TensorDataset(X, y)`)."""
        if not isinstance(node.func, ast.Name) or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        values = self.shapes.values.reaching_values(node.func)
        found = values[0] if values and len(values) == 1 and isinstance(values[0], ast.Lambda) else None
        args = found.args if found is not None else None
        if args is None or args.vararg or args.kwarg or args.kwonlyargs or args.defaults or len(args.posonlyargs + args.args) != len(node.args):
            return None
        return found if found not in _ACTIVE_CLASSES else None

    def applied(self, lambda_: ast.Lambda, arguments: list) -> object | None:
        """The value of a lambda's body with its parameters bound to `arguments`."""
        saved = self.env
        self.env = {**saved, **{a.arg: v for a, v in zip(lambda_.args.posonlyargs + lambda_.args.args, arguments)}}
        _ACTIVE_CLASSES.append(lambda_)
        try:
            return self.eval(lambda_.body)
        finally:
            _ACTIVE_CLASSES.pop()
            self.env = saved

    def runner_makers(self, receiver: ast.expr) -> list[str | None]:
        """The runners the calls that made what `receiver` may be make (`runners.handed_back`)."""
        return [made_runner(c, m, self.shapes.view) for c, m in built(self.ctx, receiver) or ()]

    def keywords(self, node: ast.Call) -> list[Keyword]:
        """The arguments a call passes by name, those of a dict the analysis knows (`**inputs`) too."""
        named = [Keyword(k.arg, self.seen.get(k.value)) for k in node.keywords if k.arg is not None]
        for unpacked in (k.value for k in node.keywords if k.arg is None):
            fields = self.seen.get(unpacked)
            named += [Keyword(key, value) for key, value in fields.values] if isinstance(fields, Fields) else []
            named += [MORE] if not isinstance(fields, Fields) or fields.rest is not None else []
        return named + ([MORE] if any(isinstance(a, ast.Starred) for a in node.args) else [])

    def _squeezed_at(self, node: ast.Call, receiver: object, shape: tuple) -> tuple | None:
        """(this module's context, the call) for a dim-less `squeeze()` that drops a size-1 dimension next
        to a symbolic one."""
        if not (isinstance(node.func, ast.Attribute) and node.func.attr == "squeeze" and not node.args and not node.keywords):
            return None
        if not isinstance(receiver, Tensor) or receiver.shape is None or len(receiver.shape) == len(shape):
            return None
        return self.ctx, node

    def listed(self, builtin: str, node: ast.Call, arguments: list) -> object | None:
        """`zip(*batch)`, `list(xs)`, `len(xs)`, `reversed(xs)` of a list of samples."""
        if builtin == "zip" and len(node.args) == 1 and isinstance(node.args[0], ast.Starred):
            samples = self.value_of(node.args[0].value)
            if isinstance(samples, Listed) and isinstance(samples.item, Items):
                return Items(tuple(Listed(v, samples.length) for v in samples.item.values))
            return None
        if builtin == "zip" and len(arguments) > 1 and all(isinstance(a, Listed) for a in arguments) and not node.keywords:
            lengths = {a.length for a in arguments}  # `zip(rewards, dones)`: pairs of their items
            return Listed(Items(tuple(a.item for a in arguments)), lengths.pop() if len(lengths) == 1 else None)
        first = arguments[0] if len(arguments) == 1 else None
        if not isinstance(first, Listed):
            return None
        if builtin == "enumerate":  # `for k, (tr, va) in enumerate(folds)`: a count with each item
            return Listed(Items((Number(None), first.item)), first.length)
        return Number(first.length) if builtin == "len" else first

    def collated(self, node: ast.Call, name: str | None) -> object | None:
        """A `DataLoader` whose `collate_fn` is a function of the project: its batches are what that
        function returns for a list of `batch_size` samples of the dataset."""
        collate, dataset = call_argument(node, 6, "collate_fn"), call_argument(node, 0, "dataset")
        if name not in DATA_LOADERS or collate is None or dataset is None:
            return None
        samples = as_dataset(self.value_of(dataset))
        function = self.shapes.own_function(collate)
        found = (self.ctx, function) if function is not None else None
        if found is None and isinstance(collate, (ast.Name, ast.Attribute)):
            qualified = self.ctx.qualified_name(collate)
            found = self.shapes.project_function(qualified) if qualified else None
        if not isinstance(samples, Samples) or found is None or not found[1].args.args:
            return None
        batch = Sym(("batch", id(node)), "batch")
        summary = found[0].analysis(type(self.shapes)).helper_output(found[1], {found[1].args.args[0].arg: Listed(samples.item, batch)})
        return Batches(summary[0]) if summary is not None and _informative(summary[0]) else None

    def closure(self, helper: ast.FunctionDef, own: set) -> dict[str, object]:
        """The values this pass gives the names a function defined in it reads from it (`X[ix]` in
        `def ds(ix)` of `load(...)`), where they say something: a shape, or a number (`y - y_mean` of a
        column's mean stays the column's shape)."""
        read = {n.id for n in self.ctx.index.within(helper, ast.Name) if isinstance(n.ctx, ast.Load)} - own
        return {name: self.env[name] for name in read if name in self.env and (_informative(self.env[name]) or isinstance(self.env[name], Number))}

    def instance_method(self, node: ast.Call) -> tuple[object, ast.FunctionDef, dict, frozenset] | None:
        """For `Runner(rewards).returns()` (or `r.returns()` of an `r` built once, or of a parameter `r` its
        function's call sites pass one class's instances for): the method's context and node, with the values
        of the `self.` attributes its instance holds from its construction in this function (`Instances.held`,
        `{"self.rewards": ...}`), those that say something, and the attributes methods of its class other
        than `__init__` store (`Instances.rebound`)."""
        if not isinstance(node.func, ast.Attribute):
            return None
        instances = self.ctx.analysis(Instances)
        instance = instances.built(node.func.value)
        found = instances.objects.class_of(instance) if instance is not None else instances.passed_class(node.func.value)
        method = inherited_method(*found, node.func.attr, self.shapes.view) if found is not None else None
        if method is None or not isinstance(method[1], ast.FunctionDef) or method[1].decorator_list:
            return None
        held = {f"self.{a}": self.value_of(v) for a, v in instances.held(instance).items() if self.ctx.scopes.enclosing_scope(v) is self.ctx.scopes.enclosing_scope(node)} if instance is not None else {}
        held = {a: v for a, v in held.items() if _informative(v) or isinstance(v, Number)}
        return method[0] if method[0] is not self.ctx else None, method[1], held, instances.rebound(*found)

    def helper_call(self, node: ast.Call, helper: ast.FunctionDef, arguments: list, ctx=None, skips_first: bool = False, held=None, rebound=None) -> object | None:
        """A call of a helper function of this file (or of another module of the project, `ctx`; a method
        of `self`'s class when `skips_first`, with what its instance `held` in `self.` attributes, given: the
        other attributes, but those `rebound`, are what its `__init__` stores), given no arguments or one that
        says something (a known shape, a size, a dataset, ...): the helper run with the arguments."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        bound = bind_values(helper, arguments, [(k.arg, self.seen.get(k.value)) for k in node.keywords], skips_first=skips_first)
        passed = {name: value for name, value in bound.items() if value is not None} | (held or {})
        for name, default in parameter_defaults(helper).items():  # a size the call leaves to its default (`T=32`)
            if name not in bound and int_literal(default) is not None:
                passed[name] = Number(int_literal(default))
        passed.update(_none_defaults(helper, bound))
        if ctx is None and self.ctx.scopes.enclosing_scope(helper) is self.function:
            passed.update(self.closure(helper, set(bound)))
        generator = False
        if passed and not any(_informative(value) or isinstance(value, Number) for value in passed.values()):
            generator = any(True for _ in (ctx or self.ctx).index.within(helper, ast.Yield))
            passed = None  # what it yields, or a shape it makes whatever they are (`w.reshape(-1, 1)`), may be known
        shapes = self.shapes if ctx is None else ctx.analysis(type(self.shapes))
        linted = [self.shapes.ctx.analysis(Callers)] if self.shapes.ctx.project is not None else _LINTED[-1:]
        _LINTED.extend(linted)  # another module's helper finds its call sites as the linted file does
        try:
            summary = shapes.helper_output(helper, passed or {}, rebound)
        finally:
            del _LINTED[len(_LINTED) - len(linted):]
        if summary is None:
            return None
        returned = summary[0] if passed is not None or generator else _unnamed(summary[0], helper)
        if passed is None and not generator and not _informative(returned):
            return None
        if self.record:
            self.shapes.helper_values[node] = summary[1]
        return returned

    def value_of(self, node: ast.AST | None) -> object | None:
        """The value of an expression this pass has evaluated (evaluating it if it has not)."""
        if node is None:
            return None
        return self.seen[node] if node in self.seen else self.eval(node)

    def shape_of(self, node: ast.AST | None) -> Shape | None:
        return value_shape(self.value_of(node))


def join(environments: list[dict[str, object]], node: ast.AST) -> dict[str, object]:
    """Where paths meet, a name keeps its value only if every path agrees, and its shape if every path
    agrees on that (`pred = pred.float()` in a loop: another tensor on each iteration, the same shape)."""
    if len(environments) == 1:
        return dict(environments[0])
    names = set().union(*environments)
    joined = {}
    for name in names:
        values = [env.get(name, CONFLICT) for env in environments]
        first = values[0]
        item = _alike([v.item for v in values if isinstance(v, Listed)], ("joined", id(node), name))
        if first is not CONFLICT and all(v is first or v == first for v in values):
            joined[name] = first
        elif item is not None and all(isinstance(v, Listed) or v == Items(()) for v in values):
            joined[name] = Listed(item, None)  # a list appended to on some paths (a loop's)
        elif all(isinstance(v, Fields) for v in values) and _one_filled(values):
            joined[name] = next(v for v in values if v != Fields(()))  # a new dict filled on some paths (a loop's)
        else:
            shapes = {v.shape if isinstance(v, Tensor) else None for v in values}
            shape = shapes.pop() if len(shapes) == 1 else None
            ends = {v.ends if isinstance(v, Tensor) else None for v in values}  # `s` and `s.masked_fill(...)`: one `(..., 1)`
            joined[name] = Tensor(shape, ("joined", id(node), name), name, ends=ends.pop() if len(ends) == 1 else _common_ends(values))
    return joined




def _joint_ends(left: tuple[Shape, Shape] | None, right: tuple[Shape, Shape] | None) -> tuple[Shape, Shape] | None:
    """The known ends of an elementwise result of two tensors of unknown rank (`h + block(h)`): the first
    size both start with (whichever has more dimensions leads with it), and the last sizes they broadcast to."""
    if left is None or right is None:
        return None
    (head_a, tail_a), (head_b, tail_b) = left, right
    head = head_a[:1] if head_a[:1] == head_b[:1] else ()
    width = min(len(tail_a), len(tail_b))
    tail = tuple(a if a == b or b == 1 else b if a == 1 else None for a, b in zip(tail_a[len(tail_a) - width :], tail_b[len(tail_b) - width :]))
    return (head, tail) if head or tail else None


def _ends_against(unknown: Tensor, known: Tensor) -> tuple[Shape, Shape] | None:
    """The known last sizes of an element-wise result of a tensor of unknown rank and one of a known shape
    (`embed(x) + self.pos` of a `(1, T, d)` position table): the known side's sizes other than 1 (the
    other's are 1 or the same there, or missing), the unknown side's where the known one has a 1."""
    if unknown.shape is not None or known.shape is None or not known.shape:
        return None
    tail = unknown.ends[1] if unknown.ends else ()
    sizes = [own if own != 1 else (tail[-i] if i <= len(tail) else None) for i, own in enumerate(reversed(known.shape), 1)]
    known_tail = tuple(reversed(list(itertools.takewhile(lambda d: d is not None, sizes))))
    return ((), known_tail) if known_tail else None


def _common_ends(values: list) -> tuple[Shape, Shape] | None:
    """The ends every path's tensor of unknown rank agrees on (`h` and `h + block(h)` of a loop: `(B, ..., ?)`)."""
    ends = [v.ends if isinstance(v, Tensor) and v.shape is None else None for v in values]
    if None in ends:
        return None
    head = tuple(itertools.takewhile(lambda d: all(len(e[0]) > d[0] and e[0][d[0]] == d[1] for e in ends), enumerate(ends[0][0])))
    tail = tuple(itertools.takewhile(lambda d: all(len(e[1]) > d[0] and e[1][-1 - d[0]] == d[1] for e in ends), enumerate(reversed(ends[0][1]))))
    found = tuple(d for _, d in head), tuple(d for _, d in reversed(tail))
    return found if found != ((), ()) else None


def _one_filled(dicts: list) -> bool:
    """Are the dicts all empty but for one value they all hold alike (a dict some paths fill)?"""
    filled = [d for d in dicts if d != Fields(())]
    return bool(filled) and all(d == filled[0] for d in filled)


def _batch_alike(batches: list, key: tuple) -> Items | None:
    """The batches of several loaders, part by part: tensors of one rank, each size kept where they all agree;
    their batch sizes, where they differ, one symbol of a batch (`(B, d)` and `(B', d)` are `(batch, d)`)."""
    if not all(isinstance(b, Items) and len(b.values) == len(batches[0].values) for b in batches):
        return None
    parts = []
    for position, first in enumerate(batches[0].values):
        shapes = [b.values[position].shape if isinstance(b.values[position], Tensor) else None for b in batches]
        if None in shapes or len({len(s) for s in shapes}) != 1:
            parts.append(None)
            continue
        batch = Sym(("batch", key), "batch")
        parts.append(Tensor(tuple(d if all(s[i] == d for s in shapes) else batch if i == 0 else None for i, d in enumerate(shapes[0])), (*key, position)))
    return Items(tuple(parts)) if any(p is not None for p in parts) else None


def _alike(items: list, key: tuple) -> object | None:
    """What every item of a list is like: the one value they all are, or a tensor of the one known shape
    they all have (`obs = obs + noise` appended on each step: other tensors, one shape); None otherwise."""
    if items and all(i == items[0] for i in items):
        return items[0]
    if items and all(isinstance(i, Items) and len(i.values) == len(items[0].values) for i in items):  # pairs alike part by part
        parts = tuple(_alike([i.values[p] for i in items], (*key, p)) for p in range(len(items[0].values)))
        return Items(parts) if any(p is not None for p in parts) else None
    if items and all(isinstance(i, Batches) for i in items):  # loaders of alike batches (`{"train": ..., "valid": ...}`)
        item = _alike([i.item for i in items], key) or _batch_alike([i.item for i in items], key)
        return Batches(item) if item is not None else None
    if items and all(isinstance(i, Frame) and not i.positional and not i.labelled and not i.windowed and not i.across and len(i.shape) == len(items[0].shape) for i in items):
        return Frame(tuple(d if all(i.shape[p] == d for i in items) else None for p, d in enumerate(items[0].shape)), key)
    if items and all(isinstance(i, Number) for i in items):
        return NUMBER
    shapes = {i.shape if isinstance(i, Tensor) else () if isinstance(i, Number) else None for i in items}  # (a number: 0-d)
    shape = shapes.pop() if len(shapes) == 1 else None
    return Tensor(shape, key) if shape is not None else None


def _unpacked_width(ctx, node: ast.AST) -> int | None:
    """How many names the value of `node` is unpacked into (`obs, r, done, info = ...`), if it is."""
    statement = ctx.scopes.parent(node)
    targets = statement.targets if isinstance(statement, ast.Assign) and statement.value is node else []
    return len(targets[0].elts) if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)) else None


def _size_receiver(node: ast.AST | None) -> ast.AST | None:
    """`x` in `x.shape` or `x.size()`."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args:
        return node.func.value
    return None






def registered(node: ast.AST) -> tuple[str | None, ast.AST | None]:
    """The attribute `self.register_buffer("w", value)` (or `register_parameter`) makes, and its value."""
    if not (isinstance(node, ast.Call) and is_self_attribute(node.func) and node.func.attr in REGISTERING and len(node.args) >= 2):
        return None, None
    name = node.args[0]
    return (name.value, node.args[1]) if isinstance(name, ast.Constant) and isinstance(name.value, str) else (None, None)


def _same_selection(index: ast.AST) -> ast.AST:
    """The index tensor that selects as many rows as `index` does: `idx` for `idx.roll(1)`, `idx.flip(0)`,
    `idx.to(device)` (the same entries, reordered or moved)."""
    while isinstance(index, ast.Call) and isinstance(index.func, ast.Attribute) and index.func.attr in SAME_SELECTION:
        index = index.func.value
    return index



def _numbers(constants: frozenset | None) -> bool:
    return bool(constants) and all(type(c) in (int, float) for c in constants)



def _python_list(node: ast.AST | None) -> bool:
    """A list or tuple display, `list(...)` / `tuple(...)` / `sorted(...)`, or `x.tolist()`."""
    if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Name):
        return node.func.id in ("list", "tuple", "sorted")
    return isinstance(node.func, ast.Attribute) and node.func.attr == "tolist" and not node.args


def _listed_ends(data: object) -> tuple[Shape, Shape] | None:
    """The known first size of an array made of a Python list of values of unknown rank: `[w]` gives
    `(1, ...)`, a list of `n` such values `(n, ...)` (a nest of lists, or one-element tensors, each add
    their own dimensions after it)."""
    if isinstance(data, Items) and data.values and all(isinstance(v, (Tensor, Number)) for v in data.values):
        return (len(data.values),), ()
    if isinstance(data, Listed) and data.length is not None and isinstance(data.item, (Tensor, Number)):
        return (data.length,), ()
    return None


def _label(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_label(node.value)}.{node.attr}"
    return "?"


def _assigned_names(statements: list[ast.stmt]) -> set[str]:
    return {
        node.id
        for statement in statements
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }




def _swapped(node: ast.AST) -> tuple | None:
    """The two dims `x.transpose(a, b)` swaps, in order; None for any other expression."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "transpose" and len(node.args) == 2 and not node.keywords):
        return None
    dims = [signed_literal(a) for a in node.args]
    return tuple(sorted(dims)) if None not in dims else None


def _width_restored(layers: list[ast.Call]) -> bool:
    """Do the `Linear` layers a residual branch runs (outermost first) give back the features the innermost
    takes (`Linear(4 * d, d)` after `Linear(d, 4 * d)`), or change none?"""
    if not layers:
        return True
    made, given = call_argument(layers[0], 1, "out_features"), call_argument(layers[-1], 0, "in_features")
    return len(layers) > 1 and made is not None and given is not None and same_expression(made, given)


def _symbols_apart(known: Shape, other: Shape | None) -> bool:
    """Is `other` unknown, or `known` but where they differ two symbols, a size other than 1 and a symbol
    (the sum is `known` or raises), or an unknown size?"""
    if other is None:
        return True
    pairs = list(zip(known, other))
    return len(known) == len(other) and all(a == b or b is None or isinstance(b, Sym) and (isinstance(a, Sym) or a != 1) for a, b in pairs)


def _keeps_dim(node: ast.Call) -> bool:
    keep = next((k.value for k in node.keywords if k.arg in ("keepdim", "keepdims")), None)
    return isinstance(keep, ast.Constant) and keep.value is True


def _partial_method(node: ast.Call, method: str, ends: tuple) -> tuple | None:
    """The known ends of a method's result on a tensor of unknown rank with known `ends`."""
    head, tail = ends
    if keeps_shape(method):
        return ends
    position = int_literal(call_argument(node, 0, "dim"))
    if method == "unsqueeze" and position == -1:
        return head, tail + (1,)
    if method == "unsqueeze" and position == 0:
        return (1, *head), tail
    if method in KEEPDIM_REDUCTIONS and position == -1 and _keeps_dim(node):
        return head, tail[:-1] + (1,)
    if method == "squeeze" and position == -1 and tail and tail[-1] == 1 and len(node.args) + len(node.keywords) == 1:
        return head, tail[:-1]
    if method in SWAPS and len(node.args) == 2 and not node.keywords:
        moved = [int_literal(a) for a in node.args]  # `x.transpose(1, 2)`: its first size stays, the last may move
        return (head, ()) if all(m is not None and m >= 1 for m in moved) else None
    return None


def _from_second(args: list, keywords: list) -> bool:
    """Are these the arguments of `flatten(1)` (all but the first dimension into one)?"""
    dims = [*args, *(k.value for k in keywords if k.arg == "start_dim")]
    return len(dims) == 1 and int_literal(dims[0]) == 1 and len(args) + len(keywords) == 1


def _ends_of(tensor: Tensor) -> tuple:
    """The known ends of a tensor of unknown rank: its first size is what `x.size(0)` names, if nothing else."""
    head, tail = tensor.ends or ((), ())
    return head or (Sym(("size", tensor.key, 0), f"{tensor.label}.size(0)"),), tail
