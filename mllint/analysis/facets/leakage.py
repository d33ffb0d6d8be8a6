"""Statistics of a whole data set computed before it is split (ML805).

A fit is a scikit-learn transformer fitted on a data set, or statistics of it (`X.mean(0)`) that
transform it; a split is `train_test_split` and its kin, a splitter's `.split(X)`, or the head and tail
of one bound (`X[:n]`, `X[n:]`; pandas' `X.head(n)`, `X.tail(k)`) taken as parts. Data is named by its key (`X`, `self.data`, `df` for
`df[cols]`); what an assignment computes from fitted data is fitted data too.

One pass per scope indexes what each of its nodes reads, binds and splits; a backward sweep over it keeps,
for each key and position, the first split reached when the key holds fitted data from there on, and the
attributes of `self` it reaches. A query costs a binary search, so a script with many statistics stays
linear. A file with nothing that can split (`may_split`: no head and tail of one key, no flag's bounds,
no split call or splitting helper) is not searched for fits. Helpers count where they are: a function of the module or project, or `self.method` of the class,
that fits, splits or returns statistics of a parameter; a fit of `self.data` in one method of a class
and a split of it in another.
"""
from __future__ import annotations

import ast
import re
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.objects.call_sites import built, classes_of, dict_keys, makers
from mllint.analysis.objects.constants import binding_constants, fold
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.program.callers import Callers, per_call_site
from mllint.analysis.program.effects import Effect, ParameterEffects, Reach, takes_self
from mllint.analysis.program.calls import Callee, CallResolver, bind_arguments
from mllint.analysis.program.project_view import followed_view, place_in
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.folding import EXITS, arms, ends, runs
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.values import ValueKinds, canonical_class
from mllint.source import one_line

FITTING_METHODS = frozenset({"fit", "fit_transform"})
# scikit-learn modules whose classes learn statistics of the data they transform.
TRANSFORMER_MODULES = (
    "sklearn.preprocessing.", "sklearn.decomposition.", "sklearn.feature_selection.", "sklearn.impute.",
    "sklearn.feature_extraction.", "sklearn.random_projection.", "sklearn.kernel_approximation.",
    "sklearn.pipeline.", "sklearn.compose.",  # pipelines and column transformers of them
)  # fmt: skip
# Transformers of those modules whose fit learns nothing from the rows (it checks the input's width at most).
STATELESS_TRANSFORMERS = frozenset({
    "sklearn.preprocessing.FunctionTransformer", "sklearn.preprocessing.Normalizer", "sklearn.preprocessing.Binarizer",
    "sklearn.preprocessing.PolynomialFeatures", "sklearn.feature_extraction.FeatureHasher",
    "sklearn.feature_extraction.text.HashingVectorizer",
})  # fmt: skip
VOCABULARY_ENCODERS = (".LabelEncoder", ".OrdinalEncoder", ".OneHotEncoder", ".LabelBinarizer", ".MultiLabelBinarizer")
STATISTIC_METHODS = frozenset({"mean", "std", "var", "min", "max", "median", "quantile", "nanmean", "nanstd"})
STATISTIC_FUNCTIONS = frozenset(
    f"{library}.{name}" for library in ("numpy", "torch") for name in ("mean", "std", "var", "min", "max", "median", "nanmean", "nanstd", "amin", "amax")
)  # fmt: skip
# Splitting functions and the position of the data they split (every positional argument: None).
SPLITS = {
    "sklearn.model_selection.train_test_split": None,
    "sklearn.model_selection.cross_val_score": 1,
    "sklearn.model_selection.cross_validate": 1,
    "sklearn.model_selection.cross_val_predict": 1,
    "torch.utils.data.random_split": 0,
}
BOUND_SPLITS = frozenset({"numpy.split", "numpy.array_split", "torch.tensor_split"})
PART_WORDS = ("train", "test", "val", "eval", "holdout")
PART_WORD = re.compile(r"(?<![a-z])(train\w*|test\w*|val|valid|validation|eval|holdout)(?![a-z])", re.IGNORECASE)
SPLITTER_WORDS = ("split", "divide", "partition")  # a function returning parts: `def divide(data):`
COLUMN_NAME = re.compile(r"col|feature|field|attr|name", re.IGNORECASE)
MAX_DATA_DEPTH = 8  # names and project functions followed back to a table read from a file
READER_TEXT = re.compile(rb"read_|loadtxt|genfromtxt")  # a module whose functions may return a table they read
# What a project module must mention for its helpers to be read.
HELPER_TEXT = re.compile(rb"fit|mean|std|var\(|min\(|max\(|median|quantile|split|\[:")
ROW_KEEPING = frozenset({"reshape", "astype", "to_numpy", "copy", "squeeze", "flatten", "ravel", "float", "numpy"})
TABLE_PARTS = frozenset({"head", "tail"})  # first or last rows of a table: `df.head(n)` of a read table is data
ROW_KEEPING_ATTRIBUTES = frozenset({"values"})  # `df[cols].values`
# pandas methods that give back the table cleaned or reindexed, still every row that matters (`df.dropna()`).
TABLE_KEEPING = frozenset({"dropna", "drop_duplicates", "fillna", "interpolate", "sort_values", "sort_index", "reset_index", "set_index", "rename"})
RESHAPING = ROW_KEEPING | {"transpose", "permute", "view", "contiguous", "movedim", "swapaxes"}  # the same values
AXES_MOVING = frozenset({"reshape", "view", "flatten", "ravel", "squeeze", "transpose", "permute", "movedim", "swapaxes"})
RESHAPING_FUNCTIONS = frozenset(
    f"{library}.{name}" for library in ("numpy", "torch") for name in ("reshape", "transpose", "flatten", "moveaxis", "movedim", "swapaxes", "permute")
) | {"einops.rearrange"}  # fmt: skip
# Conversions that hold the same rows as what they convert, both ways: a split of either is a split of both.
CONVERSIONS = frozenset({
    "torch.as_tensor", "torch.from_numpy", "torch.tensor", "torch.Tensor", "torch.FloatTensor", "numpy.asarray",
    "numpy.array", "numpy.ascontiguousarray", "numpy.asanyarray",
})  # fmt: skip
EXTREMES = frozenset({"min", "max", "amin", "amax", "nanmin", "nanmax"})  # an origin a shift may take
ROW_WISE_FUNCTIONS = CONVERSIONS | {
    f"{module}.{name}" for module in ("numpy", "torch") for name in ("abs", "absolute", "log", "log1p", "sqrt", "square", "exp", "nan_to_num", "clip", "clamp")
}  # `np.abs(X).max(0)`: a statistic of `X`'s rows
CONVERTING_METHODS = ROW_KEEPING | {"to", "cpu", "double", "detach", "to_numpy", "tolist"}
# Transforms that keep a table's rows (pandas, numpy docs): `df.drop(columns=...)`, elementwise functions.
KEEPING_ROWS = ROW_KEEPING | {"clip", "fillna", "replace", "round", "abs", "to_numpy", "copy", "infer_objects", "select_dtypes"}
ELEMENTWISE = frozenset(
    f"numpy.{name}" for name in (
        "log", "log1p", "log2", "log10", "exp", "expm1", "sqrt", "abs", "absolute", "clip", "nan_to_num", "asarray",
        "array", "ascontiguousarray", "float32", "float64", "sign", "square", "tanh", "arcsinh",
    )
)  # fmt: skip
LOOPS = (ast.For, ast.comprehension, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
NEVER = 1 << 62  # no split reached
# The words of a name that say which part of a split it holds (`X_tr`, `test_df`, `valData`).
PART_ABBREVIATIONS = {
    **dict.fromkeys(("train", "training", "tr", "trn"), "train"), **dict.fromkeys(("test", "testing", "te", "tst"), "test"),
    **dict.fromkeys(("val", "valid", "validation", "va", "dev", "eval", "holdout"), "eval"),
}
INDEXERS = frozenset({"loc", "iloc"})  # pandas' row indexers: `df.loc[mask]` is rows of `df`
EVALUATION_FITS = frozenset({"fit", "fit_transform", "partial_fit"})
TRAIN_TEST_SPLIT = "sklearn.model_selection.train_test_split"  # training and held-out part of each array, in turn
FOLD_HOLDERS = frozenset({"list", "tuple", "iter", "next"})  # what the folds of a splitter pass through
FOLD_COLUMN = re.compile(r"fold", re.IGNORECASE)  # `df["kfold"]`: the fold each row is held out in
# A split's whole name as a string (`load_split(root, "test")`); a column `"test_score"` is no split.
SPLIT_NAMES = frozenset({"test", "testing", "val", "valid", "validation", "dev", "eval", "evaluation", "holdout", "heldout"})
DECOMPOSITIONS = ("sklearn.decomposition.",)  # fitted on evaluation data to draw it, a figure is all they make
PLOTTING_MODULES = ("matplotlib.", "seaborn.", "plotly.", "bokeh.")
PLOTTING_METHODS = frozenset({"scatter", "plot", "imshow", "hist", "bar", "annotate", "text", "scatterplot", "add_trace", "contourf"})
DATA_READERS = frozenset(
    [f"pandas.read_{kind}" for kind in ("csv", "table", "parquet", "excel", "feather", "pickle", "json", "sql")]
    + ["numpy.loadtxt", "numpy.genfromtxt"]  # text tables (`np.load` may read one sample)
)  # fmt: skip
CONCATENATIONS = frozenset({
    "pandas.concat", "numpy.concatenate", "numpy.concat", "numpy.vstack", "numpy.row_stack", "numpy.hstack", "torch.cat", "torch.concat",
    "torch.concatenate", "torch.vstack",
})
EVENTS = (ast.Assign, ast.Call, ast.Subscript, ast.Return, ast.Expr)
RETURNED = "<returned>"  # the data a helper returns fitted (`load_series()`), as `fitted_data` names it


@dataclass
class _Flow:
    """One scope's nodes (`EVENTS`, in pre-order) and what the backward sweep found for each key."""

    events: list[ast.AST]
    order: dict[ast.AST, int]
    reads: dict[int, frozenset[str]]  # assignment's index -> the keys its value reads
    readers: dict[str, list[int]]  # key -> the assignments reading it, in order
    parts: frozenset[str] = frozenset()  # names holding a part of split indices (`tr` of `te, tr = idx[:n], idx[n:]`)
    splits: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)  # key -> (-index, first split)
    reached: dict[str, tuple[list[int], list[frozenset[str]]]] = field(default_factory=dict)  # key -> self keys
    both: dict[tuple[str, str], int] = field(default_factory=dict)  # (held, data) -> last assignment reading both
    same: dict[str, frozenset[str]] = field(default_factory=dict)  # key -> the keys holding its rows converted

    def first_split(self, key: str, start: int) -> int:
        """The index of the first split reached when `key` holds fitted data from `start` on."""
        return _at(self.splits.get(key), start, NEVER)

    def self_keys(self, key: str, start: int) -> frozenset[str]:
        return _at(self.reached.get(key), start, frozenset())


def _at(history, start: int, default):
    if history is None:
        return default
    position = bisect_right(history[0], -start) - 1
    return history[1][position] if position >= 0 else default


class Leakage:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        view = followed_view(ctx)
        self.calls = CallResolver(ctx, view if view.index is not None else None)
        self._flows: dict[ast.AST, _Flow] = {}
        self._summaries: dict[tuple[ast.AST, str], object] = {}  # (helper, what) -> `summary`'s answer
        self._callees: dict[ast.Call, Callee | None] = {}  # the project function each call runs
        self._statistics: dict[ast.AST, list[ast.Call]] = {}
        self._first_statistics: dict[tuple[ast.AST, str], ast.Call] = {}  # (scope, data) -> its first statistic fitted on evaluation data
        self._parts: dict[ast.AST, bool] = {}
        self._kept: dict[ast.ClassDef, dict[str, ast.AST]] = {}
        self._assigned: dict[ast.AST, dict[str, list[ast.AST]]] = {}  # function -> name -> the values assigned to it
        self._own_calls: dict[ast.ClassDef, dict[str, list[ast.Call]]] = {}  # class -> method -> `self.method(...)` calls

    @cached_property
    def values(self) -> ValueKinds:  # not needed for a helper's summary in most modules read
        return self.ctx.analysis(ValueKinds)

    def fitted_before_split(self, call: ast.Call) -> tuple[str, ast.AST] | None:
        """(the data, the split) when `call` fits statistics of the whole of a data set split afterwards.
        A method that returns data it fitted, split after its class calls it (`self.X = self.read_data()`,
        then `self.divide()`), is reported at its fit, where the statistics are computed, not at the call."""
        if not self.may_split:
            return None
        returned = self._returns_fitted(call)
        if returned is not None and self._own_method(call, returned[0]):
            return None
        data = self.fitted_data(call)
        if data is None:
            return None
        callee = self.callee(call) if returned is None else None
        if callee is not None and self._own_method(call, callee) and data in self._helper_keys(call, "fits"):
            return None  # `self.normalize(X)`, a method of its class fitting its argument: reported at its fit
        found = self._fitted_before_split(call, data)
        return found if found is not None else self._split_by_own_caller(call, data)

    @cached_property
    def may_split(self) -> bool:
        """Can anything in this file split data: a slice, `np.split`, a split function or splitter, a helper
        of the project that splits? Every report needs one after its fit; most files have none, and the
        fits cost more to rule out than the splits (no statistics, classes or returned data)."""
        sides = defaultdict(set)
        for subscript in self.ctx.index.of_type(ast.Subscript):
            index = subscript.slice
            if isinstance(index, ast.Slice) and isinstance(index.lower, (ast.Name, ast.Subscript)) and isinstance(index.upper, (ast.Name, ast.Subscript)):
                return True  # `data[border1:border2]`, bounds a flag may pick
            half = _half(self.ctx, index)
            if half is not None:
                sides[(_key(subscript.value),)].add(half[0])
            elif (other := _complement(index, self.ctx)) is not None:
                sides[(_key(subscript.value), *other[1])].add(other[0])
        for call in self.ctx.index.of_type(ast.Call):
            queried = _queried(self.ctx, call)
            if queried is not None:
                sides[(queried[0], *queried[1][1])].add(queried[1][0])
            elif (taken := _taken_end(self.ctx, call)) is not None:
                sides[(taken[0], "ends")].add(taken[1][0])  # `df.head(n)` and `df.tail(k)`, whatever the bounds
        if any(len(side) >= 2 for key, side in sides.items() if key[0] is not None):
            return True  # a head and a tail of one key: `X[:n]`, `X[n:]`; `X[mask]`, `X[~mask]`
        tuples = (t for t in self.ctx.index.of_type(ast.Tuple) if len(t.elts) >= 2)
        if any(_slices_of_one(t.elts) for t in tuples):
            return True  # `idx[:a], idx[a:b], idx[b:]`
        calls = self.ctx.index.of_type(ast.Call)
        return any(_split_at_bounds(self.ctx, c) or self.split_data(c) or self._returns_parts(c) for c in calls)

    def _own_method(self, call: ast.Call, callee: Callee) -> bool:
        cls = self.ctx.scopes.enclosing_class(call)
        return callee.ctx is self.ctx and cls is not None and is_self_attribute(call.func) and self._method_of(callee.function) is cls

    def _method_of(self, function: ast.AST | None) -> ast.ClassDef | None:
        cls = self.ctx.scopes.enclosing_class(function) if function is not None else None
        return cls if cls is not None and self.ctx.scopes.enclosing_scope(function) is cls else None

    def _split_by_own_caller(self, fit: ast.Call, data: str) -> tuple[str, ast.AST] | None:
        """(the data, the split) for the fit a method returns when a call of it by its own class is split after."""
        method = self.ctx.scopes.enclosing_function(fit)
        cls = self._method_of(method)
        returned = cls is not None and self.summary(method, "returns_fitted") is fit
        if cls is None or not (returned or data in self.summary(method, "fits")):
            return None
        if cls not in self._own_calls:
            calls = (c for c in self.ctx.index.within(cls, ast.Call) if is_self_attribute(c.func))
            self._own_calls[cls] = defaultdict(list)
            for c in calls:
                self._own_calls[cls][c.func.attr].append(c)
        for site in self._own_calls[cls].get(method.name, ()):
            argument = None if returned else bind_arguments(site, method, True).get(data)
            key = RETURNED if returned else _whole(argument, self.ctx) if argument is not None else None
            found = self._fitted_before_split(site, key) if key is not None else None
            if found is not None:
                return data, found[1]
        return None

    def _fitted_before_split(self, call: ast.Call, data: str) -> tuple[str, ast.AST] | None:
        statement = self._statement(call)
        tainted = {data}
        holds_statistic = getattr(statement, "value", None) is call and self.statistic_of(call) is not None  # `mean = X.mean(0)`
        if isinstance(statement, ast.Assign) and not holds_statistic:
            targets = [t for target in statement.targets for t in _unpacked(target)]
            positions = self._returned_positions(call) if data == RETURNED and statement.value is call else None
            if positions is not None and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Tuple):
                targets = [t for i, t in enumerate(statement.targets[0].elts) if i in positions]  # `img, gt = load()`
            tainted |= {_key(t) for t in targets} - {None}
        outer = self.ctx.scopes.parent(call)
        if isinstance(outer, ast.Call) and call in self.split_data(outer):  # `make_loaders(load_series())`
            return data, outer
        flow = self._flow(self._scope(statement))
        start = flow.order[self.ctx.index.within(statement, *EVENTS)[-1]] + 1
        first = min(flow.first_split(key, start) for key in tainted)
        if first != NEVER:
            return data, flow.events[first]
        split = self._split_in_other_method(statement, flow, tainted, start)
        return None if split is None else (data, split)

    def _split_in_other_method(self, statement: ast.AST, flow: _Flow, tainted: set[str], start: int) -> ast.AST | None:
        """A split, in another method of the class, of an attribute of `self` the fitted data reaches."""
        method = self.ctx.scopes.enclosing_function(statement)
        cls = self.ctx.scopes.enclosing_class(statement)
        if method is None or cls is None or self.ctx.scopes.enclosing_scope(method) is not cls:
            return None
        reached = {k for k in tainted if k.startswith("self.")}.union(*(flow.self_keys(k, start) for k in tainted))
        for other in cls.body:
            if other is method or not isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef)) or not reached:
                continue
            other_flow = self._flow(other)
            first = min(other_flow.first_split(key, 0) for key in reached)
            if first != NEVER:
                return other_flow.events[first]
        return None

    # Fits on evaluation data (ML804).
    def fitted_on_evaluation(self, call: ast.Call) -> list[tuple[str, object]]:
        """Why a scikit-learn object's `fit`/`fit_transform` reads evaluation data (`X_test`, a
        concatenation of it, one of a loop over literal split names, or what a call site passes), with the
        call site (a `callers.Binding`) it holds under (None: whatever the callers pass)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in EVALUATION_FITS and call.args):
            return []
        return list(per_call_site(self.ctx, call, lambda binding: self._fit_on_evaluation(call, binding)))

    def _fit_on_evaluation(self, call: ast.Call, binding) -> str | None:
        evidence = self._evaluation_data(call.args[0], call, binding)  # first: it asks for the bindings it needs
        made = built(self.ctx, call.func.value, binding)
        if made is None and binding is not None:  # the data passed to this method, the object by a setter's call
            made = [m for found, other in makers(self.ctx, call.func.value) if other is not None for m in found or ()]
        classes = {canonical_class(ctx.qualified_name(constructor.func)) or "" for ctx, constructor in made or ()}
        if classes and all(c.startswith(DECOMPOSITIONS) for c in classes) and self._drawn(call, binding):
            return None  # a projection of evaluation data for a figure: nothing reaches the score
        return evidence if _learns_statistics(classes) else None

    def _evaluation_data(self, data: ast.AST, call: ast.Call, binding, depth: int = 0, filtered: bool = False) -> str | None:
        """Why `data` (read at `call`) is evaluation data; None when nothing says so. `filtered`: rows a boolean
        filter keeps are read (`full[full["is_train"] == 1]`, directly or in a helper): of a concatenation of
        training and evaluation data, which rows they are is not known, so it does not count."""
        while isinstance(data := _table_of(data), (ast.Subscript, ast.Call)) and not _names_evaluation(data) and _joined(self.ctx, data) is None:
            if isinstance(data, ast.Subscript) and (held := self._held_out_rows(data)) is not None:
                return held
            effects = self.ctx.analysis(ParameterEffects)
            given = data.value if isinstance(data, ast.Subscript) else effects.returned_argument(data, EVALUATION_FIT)
            if given is None:  # `impute(X_test)`, a project function giving back rows of what it is given, is that data
                break
            filtered = filtered or (_row_filter(data.slice) if isinstance(data, ast.Subscript) else effects.returned_argument(data, UNFILTERED_ROWS) is None)
            data = given
        if _names_evaluation(data) and not self._column_of_table(data):
            return f"`{self.ctx.text(data)}`"
        if (parts := _joined(self.ctx, data)) is not None and not filtered:
            named = next((p for p in parts if _names_evaluation(p)), None)
            return f"`{self.ctx.text(data)}`, which holds `{self.ctx.text(named)}`" if named is not None else None
        if not isinstance(data, ast.Name) or depth > 2:
            return None
        function = self.ctx.scopes.enclosing_function(data)
        if function is not None and data.id in {p.arg for p in parameters(function, variadic=False)}:
            return self._passed_evaluation(data, function, call, binding)
        split = self._split_of_loop(data, call) or self._split_of_items(data, call, binding) or self._item_of_loop(data, call, binding, depth) or self.held_out(data)
        if split is not None:
            return split
        values = self.values.reaching_values(data) or []
        return next((e for v in values if (e := self._evaluation_data(v, call, binding, depth + 1, filtered)) is not None), None)

    def statistics_of_evaluation(self, call: ast.Call) -> str | None:
        """Why a statistic across the rows that then transforms the data it is of (`mu = test[cols].mean()`, then
        `(test[cols] - mu) / sd`) reads a whole evaluation set read from a file: `fit_transform` by hand. The
        first such statistic of the data in its scope answers; the others (`sd = test[cols].std()`) are its kin."""
        evidence = self._evaluation_statistic(call)
        if evidence is None:
            return None
        key = (self._scope(call), self.statistic_of(call))
        if key not in self._first_statistics:
            calls = self.ctx.index.within(key[0], ast.Call)
            self._first_statistics[key] = next(
                c for c in calls if self._scope(c) is key[0] and self.statistic_of(c) == key[1] and self._evaluation_statistic(c) is not None
            )  # fmt: skip
        return evidence if self._first_statistics[key] is call else None

    def _evaluation_statistic(self, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in STATISTIC_METHODS and self.ctx.qualified_name(func) is None:
            data = func.value
        elif self.ctx.qualified_name(func) in STATISTIC_FUNCTIONS and call.args:
            data = call.args[0]
        else:
            return None
        whole = self.statistic_of(call)
        if whole is None or self.fitted_data(call) is None or not self._scales(call, whole) or not self.data_set(data):
            return None
        return self._evaluation_data(data, call, None)

    def _scales(self, statistic: ast.Call, data: str) -> bool:
        """Is the statistic, or a name it is bound to, an operand of arithmetic with `data` (`(x - x.mean(0))`,
        `mu = x.mean(0)` then `(x.fillna(mu) - mu) / sd`), not only reported or compared with another statistic?"""
        statement = self._statement(statistic)
        held = _binds(statement) - {None}
        uses = [statistic] + [
            n for n in self.ctx.index.within(self._scope(statement), ast.Name)
            if n.id in held and isinstance(n.ctx, ast.Load) and n.lineno > statement.end_lineno
        ]  # fmt: skip
        return any(self._combined_with(use, data) for use in uses)

    def _combined_with(self, node: ast.AST, data: str) -> bool:
        """Is `node` one side of arithmetic whose other side reads `data`, directly or through enclosing arithmetic?"""
        parent = self.ctx.scopes.parent(node)
        while isinstance(parent, ast.BinOp) and isinstance(parent.op, ARITHMETIC):
            other = parent.right if parent.left is node else parent.left
            if _reads(other, data):
                return True
            node, parent = parent, self.ctx.scopes.parent(parent)
        return False

    def held_out(self, name: ast.Name) -> str | None:
        """Why `name` holds the held-out part of a split: the second index of each fold a scikit-learn splitter
        yields (`va` of `for tr, va in kf.split(X):`, through `enumerate`, `next`, or a name holding
        `list(kf.split(X))`), or an odd item of what `train_test_split` returns (`b` of `a, b = train_test_split(X)`)."""
        found = self.values.unpacked_from(name)
        if found is None or len(found[2]) != 1:
            return None
        _, source, (position,) = found
        if isinstance(source, ast.Call) and self.ctx.qualified_name(source.func) == TRAIN_TEST_SPLIT and position % 2:
            return f"`{name.id}`, a held-out part of `{one_line(self.ctx.text(source), 40)}`"
        folds = self._folds(source)
        if folds is not None and position == 1:
            return f"`{name.id}`, the held-out rows of each fold of `{one_line(self.ctx.text(folds), 40)}`"
        return None

    def _folds(self, source: ast.AST) -> ast.Call | None:
        """The splitter's `.split(...)` call `source` yields the folds of: itself, a name holding it, `list`,
        `tuple`, `iter` or `next` of it."""
        for _ in range(MAX_DATA_DEPTH):
            if isinstance(source, ast.Name):
                values = self.values.reaching_values(source) or []
                source = values[0] if len(values) == 1 else None
            elif isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id in FOLD_HOLDERS and source.args:
                source = source.args[0]
            else:
                break
        if not (isinstance(source, ast.Call) and _method(source) == "split" and source.args):
            return None
        splitter = self.values.constructed_class(source.func.value) or ""
        return source if splitter.startswith("sklearn.model_selection.") else None

    def _held_out_argument(self, argument: ast.AST) -> bool:
        """Is an argument a held-out part of a split, or rows of one (`X[va_idx]`)?"""
        if isinstance(argument, ast.Subscript):
            return self._held_out_rows(argument) is not None
        return isinstance(argument, ast.Name) and self.held_out(argument) is not None

    def _held_out_rows(self, rows: ast.Subscript) -> str | None:
        """Why a selection of rows is the held-out part of a split: taken by a held-out index (`X[va_idx]`,
        `df.iloc[test_idx]`, `df.loc[va, cols]`), or where a fold column equals the fold (`df[df.fold == k]`;
        `!=` keeps the training rows)."""
        index = rows.slice.elts[0] if isinstance(rows.slice, ast.Tuple) and rows.slice.elts else rows.slice
        if isinstance(index, ast.Name) and (held := self.held_out(index)) is not None:
            return f"`{one_line(self.ctx.text(rows), 40)}`: {held}"
        if isinstance(index, ast.Compare) and len(index.ops) == 1 and isinstance(index.ops[0], ast.Eq) and FOLD_COLUMN.search(_column_name(index.left)):
            return f"`{one_line(self.ctx.text(rows), 40)}`, the rows of the held-out fold"
        return None

    def _passed_evaluation(self, data: ast.Name, function: ast.AST, call: ast.Call, binding) -> str | None:
        """A parameter holding what a call site passes: evaluation data there, with the conditions around
        the fit true for that call's constant arguments (`prepare(X_val, fit=True)` for `if fit:`)."""
        binding = binding.of(function) if binding is not None else None
        if binding is None:
            unbound = self.values.unbound
            if unbound is not None and function not in unbound:
                unbound.append(function)
            return None
        passed = binding.argument(data.id)
        if passed is None or passed[2].default or not _names_evaluation(passed[1]):
            return None
        constants = binding_constants(self.ctx, binding)
        for test in self._conditions(call, function):
            if fold(test, constants) is not True:
                return None
        if binding.call is not None and binding.caller is not None and binding.caller.analysis(Leakage).fits_through_helper(binding.call):
            return None  # reported at that call, which hands the data over
        return f"`{passed[0].text(passed[1])}` passed as `{data.id}` at {binding.place}"

    def _split_of_loop(self, data: ast.Name, call: ast.Call) -> str | None:
        """`X, y = splits[name]` in `for name in ["train", "val", "test"]:` with the fit under no test of
        `name`: the fit runs on every split."""
        for loop in self.ctx.scopes.ancestors(call):
            if isinstance(loop, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return None
            items = self.values.literal_items(loop.iter) if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) else None
            if items is None:
                continue
            names = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            variable = loop.target.id
            if not any(_names_evaluation(ast.Name(n)) for n in names):
                continue
            if any(variable in {n.id for n in ast.walk(t) if isinstance(n, ast.Name)} for t in self._conditions(call, loop)):
                return None
            for definition in self.values.reaching_definitions(data):
                statement = self._statement(definition.node)
                value = getattr(statement, "value", None)
                if value is not None and any(
                    isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name) and n.slice.id == variable for n in ast.walk(value)
                ):  # fmt: skip
                    return f"`{self.ctx.text(data)}`, each split of the loop over `{self.ctx.text(loop.iter)}`"
        return None

    def _split_of_items(self, data: ast.Name, call: ast.Call, binding) -> str | None:
        """`x` of `for name, (x, y) in splits.items():` (or of `splits.values()`) with the fit under no test of
        `name`, where the keys of `splits` name evaluation splits (`dict_keys`: a dict a helper returns, or
        one a call site passes): the fit runs on every split."""
        definitions = self.values.reaching_definitions(data)
        loops = {self._loop_of(d.node) for d in definitions}
        loop = loops.pop() if len(loops) == 1 else None
        if not (loop is not None and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Attribute)):
            return None
        method, target = loop.iter.func.attr, loop.target
        if method == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            key, target = target.elts
        elif method != "values":
            return None
        else:
            key = None
        around = self.ctx.scopes.parent(loop) if isinstance(loop, ast.comprehension) else loop  # (the comprehension)
        if not all(d.node in set(ast.walk(target)) for d in definitions) or around not in set(self.ctx.scopes.ancestors(call)):
            return None
        keys = dict_keys(self.ctx, loop.iter.func.value, binding)
        evaluation = [k for k in keys or () if isinstance(k, str) and _names_evaluation(ast.Name(k))]
        if not any(self._runs_in_turn(loop, call, {key.id: ast.Constant(k)} if isinstance(key, ast.Name) else {}) for k in evaluation):
            return None
        listed = ", ".join(f'"{k}"' for k in sorted(k for k in keys if isinstance(k, str)))
        return f"`{self.ctx.text(data)}`, each split of the loop over `{self.ctx.text(loop.iter)}` (keys {listed})"

    def _loop_of(self, target: ast.AST) -> ast.For | ast.comprehension | None:
        """The `for` statement or comprehension whose target binds `target`."""
        node = target
        while (node := self.ctx.scopes.parent(node)) is not None and not isinstance(node, ast.stmt | ast.comprehension):
            pass
        return node if isinstance(node, ast.For | ast.comprehension) and target in set(ast.walk(node.target)) else None

    def _conditions(self, node: ast.AST, outer: ast.AST) -> list[ast.AST]:
        """The tests of the `if`s (and conditional expressions) around `node`, up to `outer`, that hold where it stands."""
        tests, child = [], node
        for ancestor in self.ctx.scopes.ancestors(node):
            if ancestor is outer:
                break
            if isinstance(ancestor, ast.If):
                tests.append(ancestor.test if child not in ancestor.orelse else ast.UnaryOp(ast.Not(), ancestor.test))
            elif isinstance(ancestor, ast.IfExp) and child is not ancestor.test:  # `fit_transform(x) if name == "train" else ...`
                tests.append(ancestor.test if child is ancestor.body else ast.UnaryOp(ast.Not(), ancestor.test))
            child = ancestor
        return tests

    # What a call fits, splits or computes.
    def fitted_data(self, call: ast.Call) -> str | None:
        """The data a transformer is fitted on, or a statistic is computed of, when it then transforms it,
        or a helper fits on."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in FITTING_METHODS and call.args:
            constructed = self.values.constructed_class(func.value)
            constructor = func.value if isinstance(func.value, ast.Call) else None
            name = constructed or (self.ctx.qualified_name(constructor.func) if constructor is not None else None)
            if name and _learns_statistics({name}, vocabulary=False):
                return _whole(call.args[0], self.ctx)
        helper = self._helper_data(call, "fits") or self._fresh_data(call)
        if helper is not None:
            return helper
        if self._returns_fitted(call) is not None:
            return RETURNED
        data = self.statistic_of(call)
        if data is None:
            return None
        statement = self._statement(call)
        if not isinstance(statement, (ast.Assign, ast.Return)):
            return None  # a helper's `return (x - x.mean(0)) / x.std(0)` transforms too
        statistics = [c for c in self._statistic_calls(statement) if self.statistic_of(c) == data]
        if call not in statistics or min(statistics, key=lambda c: (c.lineno, c.col_offset)) is not call:
            return None  # one finding per statement, at its first statistic
        if _reads(statement.value, data, outside=statistics):  # `X = (X - X.mean(0)) / X.std(0)` transforms
            return None if all(self._scales_nothing(c, c) for c in statistics) else data
        # `mean, std = X.mean(0), X.std(0)`, then an assignment computed from both: `X = (X - mean) / std`.
        held = _binds(statement) - {None}
        flow = self._flow(self._scope(statement))
        return data if any(self._reads_later(flow, h, data, statement.end_lineno) and not self._held_scales_nothing(flow, h, call) for h in held) else None

    def _held_scales_nothing(self, flow: _Flow, held: str, statistic: ast.Call) -> bool:
        """Is `held` read only where it scales nothing (`cut = df.day.max() - gap`, then `df[df.day < cut]`;
        `t0 = df.ts.min()`, then `df.ts - t0`)?"""
        uses = [n for i in flow.readers.get(held, ()) for n in ast.walk(flow.events[i].value) if _key(n) == held]
        return bool(uses) and all(self._scales_nothing(n, statistic) for n in uses)

    def _scales_nothing(self, node: ast.AST, statistic: ast.Call) -> bool:
        """Is the statistic at `node` a bound of a comparison that selects rows (a split point or a filter), or
        an extreme the values are only shifted by (`df.ts - df.ts.min()`, a time origin), no transformation
        fitted on the rows?"""
        return self._selects_rows(node) or (_method(statistic) in EXTREMES and self._shifted_by(node))

    def _shifted_by(self, node: ast.AST) -> bool:
        """Is `node` subtracted from the values or they from it, with nothing but a unit scaling the difference
        (`(t_end - df.ts) / 86400`)?"""
        parent = self.ctx.scopes.parent(node)
        if not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Sub)):
            return False
        while isinstance(parent, (ast.BinOp, ast.UnaryOp)):
            if isinstance(parent, ast.BinOp) and not isinstance(parent.op, (ast.Add, ast.Sub)) and not isinstance(parent.right, ast.Constant):
                return False
            parent = self.ctx.scopes.parent(parent)
        return True

    def _selects_rows(self, node: ast.AST) -> bool:
        """Is `node` an operand of a comparison that indexes rows (`df[df.day >= node]`, `x[(x > a) & (x < b)]`)
        or makes a mask (`recent = df.day > node`)?"""
        parent = self.ctx.scopes.parent(node)
        while isinstance(parent, (ast.BinOp, ast.UnaryOp)):
            node, parent = parent, self.ctx.scopes.parent(parent)
        if not isinstance(parent, ast.Compare):
            return False
        node, parent = parent, self.ctx.scopes.parent(parent)
        while isinstance(parent, (ast.BoolOp, ast.BinOp, ast.UnaryOp)):
            node, parent = parent, self.ctx.scopes.parent(parent)
        if isinstance(parent, ast.Subscript):
            return node is parent.slice
        return isinstance(parent, ast.Assign) and all(isinstance(t, ast.Name) for t in parent.targets)

    def statistic_of(self, call: ast.Call) -> str | None:
        """The data a statistic across its rows is computed of (`X.mean(0)`, `np.std(X)`; not the per-sample
        `imgs.mean(1, keepdim=True)`), or that a helper returns statistics of."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in STATISTIC_METHODS and self.ctx.qualified_name(func) is None:
            if func.attr == "max" and self._is_count(call):
                return None
            across = _across_rows(call, 1 if func.attr == "quantile" else 0) or not self._rows_first(func.value)
            return _whole(func.value, self.ctx) if across else None
        if self.ctx.qualified_name(func) in STATISTIC_FUNCTIONS and call.args:
            return _whole(call.args[0], self.ctx) if _across_rows(call, 1) or not self._rows_first(call.args[0]) else None
        return self._helper_data(call, "statistics")

    def _is_count(self, call: ast.Call) -> bool:
        """Is a maximum a count, the largest id plus one (`int(y.max()) + 1`, `y.max().item() + 1`): the size of
        an output layer or a vocabulary, which transforms no data?"""
        node, parent = call, self.ctx.scopes.parent(call)
        while True:
            if isinstance(parent, ast.Attribute) and parent.attr == "item" and isinstance(self.ctx.scopes.parent(parent), ast.Call):
                node = self.ctx.scopes.parent(parent)  # `y.max().item()`
            elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "int" and parent.args[:1] == [node]:
                node = parent  # `int(y.max())`
            else:
                break
            parent = self.ctx.scopes.parent(node)
        return isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add) and parent.left is node and int_literal(parent.right) == 1

    def _rows_first(self, expr: ast.AST, depth: int = 0) -> bool:
        """Are the rows of `expr` along its first axis, as no reshaping moved them (`x.permute(1, 0, 2, 3)`,
        `torch.flatten(torch.movedim(x, 1, 0), 1)`, `x.T`), through conversions and the names bound to it?"""
        if depth > MAX_DATA_DEPTH:
            return False
        if isinstance(expr, ast.Call) and (_method(expr) in AXES_MOVING or self.ctx.qualified_name(expr.func) in RESHAPING_FUNCTIONS):
            return False
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
            return False
        if isinstance(expr, ast.Call) and _method(expr) in RESHAPING:  # `x.astype(np.float32)`: its layout
            return self._rows_first(expr.func.value, depth + 1)
        values = self.values.reaching_values(expr) if isinstance(expr, ast.Name) else None
        return all(self._rows_first(v, depth + 1) for v in values or ())

    def _statistic_calls(self, statement: ast.AST) -> list[ast.Call]:
        if statement not in self._statistics:
            calls = self.ctx.index.within(statement.value, ast.Call)
            self._statistics[statement] = [c for c in calls if self.statistic_of(c) is not None]
        return self._statistics[statement]

    def split_data(self, call: ast.Call) -> list[ast.AST]:
        """The data a call splits into parts."""
        name = self.ctx.qualified_name(call.func)
        if name in SPLITS:
            position = SPLITS[name]
            return list(call.args) if position is None else call.args[position : position + 1]
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "split" and call.args:
            splitter = self.values.constructed_class(func.value) or ""
            if splitter.startswith("sklearn.model_selection."):
                return call.args[:1]
        return self._helper_arguments(call, "splits")

    def _returned_positions(self, call: ast.Call) -> frozenset[int] | None:
        """Which items of the tuple a helper returns hold the data it fitted (`return img, gt` after
        normalising `img`: {0}); None when a `return` is not a tuple."""
        callee, fit = self._returns_fitted(call)
        helper = callee.ctx.analysis(Leakage)
        statement = helper._statement(fit)
        keys = {helper.fitted_data(fit)} | (_binds(statement) - {None})
        positions: set[int] = set()
        for returned in callee.ctx.index.within(callee.function, ast.Return):
            if not isinstance(returned.value, ast.Tuple):
                return None
            positions |= {i for i, e in enumerate(returned.value.elts) if _read_keys(e) & keys or e is fit or fit in ast.walk(e)}
        return frozenset(positions)

    def _returns_fitted(self, call: ast.Call):
        """(the callee, the fit) when a project function called here returns data of its own (read from a
        file, made) that it fitted on as a whole (`series = load_series()`); None else."""
        callee = self.callee(call)
        fit = callee.ctx.analysis(Leakage).summary(callee.function, "returns_fitted") if callee is not None else None
        return (callee, fit) if fit is not None else None

    def _fresh_data(self, call: ast.Call) -> str | None:
        """The text of data made in place that a helper fits on (`encode(tidy(pd.read_csv(path)))`): what it
        gives back holds it, as for a named argument."""
        made = next((a for a in self._helper_arguments(call, "fits") if isinstance(_rows_of(a), ast.Call)), None)
        return None if made is None else self.ctx.text(made)

    def _helper_data(self, call: ast.Call, what: str) -> str | None:
        return next(iter(self._helper_keys(call, what)), None)

    def _helper_keys(self, call: ast.Call, what: str) -> list[str]:
        return [k for a in self._helper_arguments(call, what) if (k := _whole(a, self.ctx)) is not None]

    def _helper_arguments(self, call: ast.Call, what: str) -> list[ast.AST]:
        """The arguments a project function called here fits, splits or returns statistics of (`what`); for
        a class of the project constructed here, the arguments whose statistics its `__init__` keeps for
        its other methods (`what` "fits")."""
        if not isinstance(call.func, (ast.Name, ast.Attribute)) or (not call.args and not call.keywords):
            return []  # a call that passes nothing passes no data
        callee = self.callee(call)
        if callee is None:
            constructed = self.constructed(call) if what == "fits" else None
            if constructed is None:
                return []
            _, _, init, names = constructed
            return [argument for name, argument in bind_arguments(call, init, True).items() if name in names and argument is not None]
        names = callee.ctx.analysis(Leakage).summary(callee.function, what)
        if not names:
            return []
        skips_first = isinstance(call.func, ast.Attribute)
        bound = bind_arguments(call, callee.function, skips_first)
        return [argument for name, argument in bound.items() if name in names and argument is not None]

    def fitted_inside(self, call: ast.Call) -> str | None:
        """Where a project function or a constructed project class that `call` runs fits the data: "in
        `SensorDataset.__init__`, dataset.py:8", "in `select_features`, features.py:6"; None for a fit
        written here."""
        if not isinstance(call.func, (ast.Name, ast.Attribute)):
            return None
        returned = self._returns_fitted(call)
        callee = self.callee(call)
        if returned is not None:
            callee, fit = returned
        elif callee is not None:
            helper = callee.ctx.analysis(Leakage)
            fits = helper.summary(callee.function, "fits")
            found = [c for c in callee.ctx.index.within(callee.function, ast.Call) if helper.fitted_data(c) in fits]
            fit = min(found, key=helper._vocabulary_only, default=None)  # the first that learns more than labels
        else:
            constructed = self.constructed(call)
            if constructed is None:
                return None
            home, cls, _, fits = constructed
            return f"in `{cls.name}.__init__`, {place_in(self.ctx, home, min(fits.values(), key=lambda c: c.lineno))}"
        return None if fit is None else f"in `{callee.function.name}`, {place_in(self.ctx, callee.ctx, fit)}"

    def _vocabulary_only(self, fit: ast.Call) -> bool:
        """Does the fit learn only the labels it sees (`LabelEncoder().fit_transform(df[col])`)?"""
        receiver = fit.func.value if isinstance(fit.func, ast.Attribute) else None
        return receiver is not None and (self.values.constructed_class(receiver) or "").endswith(VOCABULARY_ENCODERS)

    def constructed(self, call: ast.Call) -> tuple[object, ast.ClassDef, ast.AST, dict[str, ast.AST]] | None:
        """For `SensorDataset(signals, labels)` of a project class: (its module's context, the class, its
        `__init__`, the parameters whose statistics it fits: a transformer, or `self.mean = signals.mean(0)`
        that another method reads, each with the fit)."""
        objects = self.ctx.analysis(Objects)
        found = objects.points_to(call)
        classes = {objects.class_of(obj) for obj in found} if found else {None}
        if len(classes) != 1 or None in classes:
            return None
        home, cls = classes.pop()
        init = own_method(cls, "__init__")
        fits = home.analysis(Leakage).kept_statistics(cls, init) if init is not None else None
        return (home, cls, init, fits) if fits else None

    def kept_statistics(self, cls: ast.ClassDef, init: ast.AST) -> dict[str, ast.AST]:
        """The parameters of a class's `__init__` it fits on, or keeps statistics of in `self` attributes that
        another method of the class reads, each with the call that does so."""
        if cls not in self._kept:
            self._kept[cls] = {}  # while it is read: a class built inside its own `__init__` fits nothing more
            self._kept[cls] = self._kept_statistics(cls, init)
        return self._kept[cls]

    def _kept_statistics(self, cls: ast.ClassDef, init: ast.AST) -> dict[str, ast.AST]:
        names = {p.arg for p in parameters(init, variadic=False)}
        read_elsewhere = {
            node.attr for other in cls.body if other is not init and isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in self.ctx.index.within(other, ast.Attribute) if is_self_attribute(node) and isinstance(node.ctx, ast.Load)
        }  # fmt: skip
        found: dict[str, ast.AST] = {}
        for call in self.ctx.index.within(init, ast.Call):
            if self._scope(call) is not init:
                continue
            data = self.fitted_data(call)
            if data is None:
                data = self.statistic_of(call)
                statement = self._statement(call)
                kept = isinstance(statement, ast.Assign) and any(
                    is_self_attribute(t) and t.attr in read_elsewhere for target in statement.targets for t in _unpacked(target)
                )
                data = data if kept else None
            if data in names and data not in found:
                found[data] = call
        return found

    def callee(self, call: ast.Call) -> Callee | None:
        """The project function a call runs (resolved once per call)."""
        if call not in self._callees:
            named = isinstance(call.func, (ast.Name, ast.Attribute))
            self._callees[call] = self.calls.resolve(call, followed=HELPER_TEXT, reexported=True) if named else None
        return self._callees[call]

    def summary(self, function: ast.AST, what: str):
        """What a helper does to the data its parameters hold, one question at a time, each worked out
        when first asked (only "splits" needs the helper's flow): the parameters it fits on as a whole
        ("fits"), splits into parts ("splits"), returns statistics of ("statistics"); "parts": whether it
        returns parts of split indices (non-empty when it does); "returns_fitted":
        the fit of data of its own it returns fitted as a whole (`return minmax(raw)`), or None. While a
        question is worked out, a recursive helper does nothing."""
        key = (function, what)
        if key in self._summaries:
            return self._summaries[key]
        self._summaries[key] = None if what == "returns_fitted" else frozenset()
        names = {p.arg for p in parameters(function, variadic=False)}
        calls = [c for c in self.ctx.index.within(function, ast.Call) if self._scope(c) is function]
        returns = self.ctx.index.within(function, ast.Return)
        returned = {_key(n) for r in returns if r.value is not None for n in ast.walk(r.value)} if what in ("statistics", "returns_fitted") else set()
        if what == "fits":  # only a call that passes a parameter whole can fit on it; not a statistic kept by nothing
            shown = _keeps_nothing(self.ctx, function)  # `def preview(df): print((df - df.mean()) / df.std())`
            found = frozenset({self.fitted_data(c) for c in calls if _passes_any(self.ctx, c, names) and not (shown and self.statistic_of(c))} & names)
        elif what == "splits":
            flow = self._flow(function)
            found = frozenset(n for n in names if flow.first_split(n, 0) != NEVER)
        elif what == "parts":  # every `return` a tuple of row slices of one key: `perm[:a], perm[a:b], perm[b:]`
            tuples = [self._tuple_returned(r.value) for r in returns if self._scope(r) is function]
            found = frozenset({"parts"}) if tuples and all(t is not None and _slices_of_one(t.elts) for t in tuples) else frozenset()
        elif what == "statistics":  # of a parameter, or of a reshaped view of one (`flat = x.flatten(1)`)
            views = _views_of(self.ctx, self.ctx.index.within(function, ast.Assign), names)
            found = frozenset(
                views[data] for c in calls if _passes_any(self.ctx, c, views.keys()) and (data := self.statistic_of(c)) in views
                and (isinstance(statement := self._statement(c), ast.Return) or _binds(statement) & returned)
            )  # fmt: skip
        else:
            found = next((  # what it returns is the fitted result, or the data fitted on (`scaler.fit(X)`, `return X, y`)
                c for c in calls if (isinstance(statement := self._statement(c), ast.Return) or (_binds(statement) & returned) or _passes_any(self.ctx, c, returned))
                and (data := self.fitted_data(c)) is not None and data not in names
                and (isinstance(statement, ast.Return) or _binds(statement) & returned or data in returned)
                and self._fitted_before_split(c, data) is None and not self._split_part(c)
            ), None)  # fmt: skip
        self._summaries[key] = found
        return found

    def _split_part(self, fit: ast.Call) -> bool:
        """Is what `fit` fits on a part a split gave on every way to it (`scaler.fit(X_tr)` with `X_tr, X_te,
        ... = train_test_split(X, y)`): statistics of the training part, not of the whole?"""
        method = _method(fit)
        if (method in FITTING_METHODS or self.ctx.qualified_name(fit.func) in STATISTIC_FUNCTIONS) and fit.args:
            data = _rows_of(fit.args[0])
        else:
            data = _rows_of(fit.func.value) if method in STATISTIC_METHODS else None
        values = self.values.reaching_values(data) if isinstance(data, ast.Name) else None
        return bool(values) and all(
            isinstance(v, ast.Subscript) and isinstance(v.value, ast.Call) and self.ctx.qualified_name(v.value.func) in SPLITS for v in values
        )  # fmt: skip

    def _tuple_returned(self, value: ast.AST | None) -> ast.Tuple | None:
        """The tuple literal a `return` gives, written there or bound to the name it returns."""
        if isinstance(value, ast.Name):
            assigned = self.values.reaching_values(value)
            value = assigned[0] if assigned is not None and len(assigned) == 1 else None
        return value if isinstance(value, ast.Tuple) and len(value.elts) >= 2 else None

    def fits_through_helper(self, call: ast.Call) -> tuple[str, str, Reach] | None:
        """(why the data is evaluation data, the helper, where it fits) when `call` hands evaluation data to a
        project function or method that fits a scikit-learn object on it, directly or through the project
        functions it calls (`preprocess(test_df)` whose `if scaler is None:` branch, taken when the call
        leaves `scaler` out, runs `StandardScaler().fit(X)` on `df.drop(columns=...).to_numpy()`)."""
        if not (call.args or call.keywords) or not isinstance(call.func, (ast.Name, ast.Attribute)):
            return None
        arguments = [*call.args, *(k.value for k in call.keywords)]
        looped = any(isinstance(a, LOOPS) for a in self.ctx.scopes.ancestors(call))  # each split of a loop
        named = any(isinstance(a, ast.Constant) and _names_split(a.value) for a in arguments)  # `load_split(root, "test")`
        if not looped and not named and not any(_names_evaluation(_rows_of(a)) or self._held_out_argument(_rows_of(a)) for a in arguments):
            return None
        callee = self._project_callee(call)
        if callee is None:
            return None
        effects = callee.ctx.analysis(ParameterEffects)
        bound = bind_arguments(call, callee.function, takes_self(callee.ctx, callee.function))
        for name, reaches in effects.of(callee.function, EVALUATION_FIT).items():
            evidence = self._evaluation_data(bound[name], call, None) if bound.get(name) is not None else None
            reach = next((r for r in reaches if self._handed_fit(call, callee, r)), None) if evidence else None
            if reach is not None:
                return evidence, callee.function.name, reach
        return self._fits_through_method(call, callee, bound) or self._fits_named_split(call, callee, bound)

    def _fits_named_split(self, call: ast.Call, callee: Callee, bound: dict[str, ast.AST]) -> tuple[str, str, Reach] | None:
        """A helper that loads the split a parameter names and fits on it, given an evaluation split's name
        (`load_split(root, "test")`, or each name of a loop over literal names): the data it fits is read
        from what the name selects (`X = read(os.path.join(root, split))`)."""
        named = {name: e for name, argument in bound.items() if argument is not None and (e := self._split_name(argument, call))}
        if not named:
            return None
        helper = callee.ctx.analysis(Leakage)
        for reach in callee.ctx.analysis(ParameterEffects).anywhere(callee.function, EVALUATION_FIT):
            if reach.calls or not self._handed_fit(call, callee, reach):
                continue
            name = next((n for n in helper._read_parameters(callee.function, reach.node.args[0]) if n in named), None)
            if name is not None:
                return named[name], callee.function.name, reach
        return None

    def _split_name(self, argument: ast.AST, call: ast.Call) -> str | None:
        """Why `argument` names an evaluation split: a literal (`"test"`), or the variable of a loop over
        literal names with the call under no test of it."""
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            return f"the split `{self.ctx.text(argument)}`" if _names_split(argument.value) else None
        found = self.values.loop_items(argument) if isinstance(argument, ast.Name) else None
        if found is None or not any(isinstance(e, ast.Constant) and _names_split(e.value) for e in found[1]):
            return None
        return f"each split of the loop over `{self.ctx.text(found[0].iter)}`" if self._untested(found[0], call) else None

    def _item_of_loop(self, data: ast.Name, call: ast.Call, binding, depth: int) -> str | None:
        """`df` of `for name, df in (("train", tr), ("test", te)):` (a loop over literals, or `zip` of them)
        bound to evaluation data in a turn that runs the fit (`_runs_in_turn`)."""
        found = self.values.loop_items(data)
        turns = self.values.loop_turns(found[0]) if found is not None else None
        if not turns or any(data.id not in turn for turn in turns):
            return None
        item = next(
            (t[data.id] for t in turns if self._runs_in_turn(found[0], call, t) and self._evaluation_data(t[data.id], call, binding, depth + 1) is not None),
            None,
        )  # fmt: skip
        loop = one_line(self.ctx.text(found[0].iter), 60)
        return None if item is None else f"`{data.id}`, which the loop over `{loop}` binds to `{self.ctx.text(item)}`"

    def _untested(self, loop: ast.For | ast.comprehension, call: ast.Call) -> bool:
        """Does `call` run in each turn of `loop`, under no test of a variable the loop binds?"""
        return self._runs_in_turn(loop, call, dict.fromkeys(n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)))

    def _runs_in_turn(self, loop: ast.For | ast.comprehension, call: ast.Call, turn: dict[str, ast.AST | None]) -> bool:
        """Does `call` run in a turn of `loop` whose variables hold `turn`'s items (None: not known)? The
        `if`s around it and the `if ...: continue` ahead of it in the turn are folded (`folding`) with the
        variables bound to constant items, and the flags the turn sets from them first (`is_train = split
        == "train"`); a test of them left open does not run it (`if split.startswith("train"):`)."""
        around = self.ctx.scopes.parent(loop) if isinstance(loop, ast.comprehension) else loop
        if around not in set(self.ctx.scopes.ancestors(call)):
            return False
        constants = {name: item.value for name, item in turn.items() if isinstance(item, ast.Constant)}
        ahead = self._ahead(call, around)
        before = {id(n) for s in ahead for n in ast.walk(s)}
        carried = {  # set in a turn after the call, read by the next (`if first: ...; first = False`)
            t.id for n in ast.walk(around) if isinstance(n, (ast.Assign, ast.AugAssign)) and id(n) not in before
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)
        }  # fmt: skip
        dependent = set(turn) | carried
        for statement in ahead:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                name, derived = statement.targets[0].id, bool(dependent & _read_names(statement.value))
                held = fold(statement.value, constants) if derived else None
                dependent.discard(name)
                constants.pop(name, None)
                if derived:
                    dependent.add(name)
                    constants.update({name: held} if held is not None else {})
        decide = lambda branch: fold(branch.test, constants)  # noqa: E731
        if any(isinstance(s, ast.If) and ends([s], decide, (ast.Continue, *EXITS)) for s in ahead):
            return False  # `if split != "train": continue`
        tests = [*getattr(loop, "ifs", ())]
        if any(fold(t, constants) is False or (fold(t, constants) is None and dependent & _read_names(t)) for t in tests):
            return False
        return runs(arms(self.ctx.scopes.ancestors(call), call, around), decide, lambda branch: not dependent & _read_names(branch.test))

    def _ahead(self, node: ast.AST, outer: ast.AST) -> list[ast.stmt]:
        """The statements that run before `node` in the blocks around it, up to `outer`'s body, outermost first."""
        statements, child = [], node
        for ancestor in self.ctx.scopes.ancestors(node):
            for block in (getattr(ancestor, f, None) for f in ("body", "orelse", "finalbody")):
                if isinstance(block, list) and child in block:
                    statements = block[: block.index(child)] + statements
            if ancestor is outer:
                break
            child = ancestor
        return statements

    def _read_parameters(self, function: ast.AST, expr: ast.AST) -> set[str]:
        """The parameters of `function` that `expr` is computed from, through its assignments (any place)."""
        if function not in self._assigned:
            assigned = defaultdict(list)
            for assign in self.ctx.index.within(function, ast.Assign):
                for name in {n.id for t in assign.targets for n in ast.walk(t) if isinstance(n, ast.Name)}:
                    assigned[name].append(assign.value)
            self._assigned[function] = assigned
        assigned, seen = self._assigned[function], set()
        todo = [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)]
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += [n.id for value in assigned.get(name, ()) for n in ast.walk(value) if isinstance(n, ast.Name)]
        return seen & {p.arg for p in parameters(function, variadic=False)}

    def _handed_fit(self, call: ast.Call, callee: Callee, reach: Reach) -> bool:
        """Does the fit at `reach` run under `call`, learn statistics, and read data that is not evaluation data
        where it stands (`scaler.fit(X_test)` is reported there)?"""
        return reach.taken_under(call, callee.function) and self._counts(call, reach)

    def _counts(self, call: ast.Call, reach: Reach) -> bool:
        """`_handed_fit` once the fit is known to run under `call`."""
        fit = reach.node
        if reach.calls and (inner := reach.calls[0])[0].analysis(Leakage).fits_through_helper(inner[1]) is not None:
            return False  # reported at that call: `per_part(valid_df)` handing `valid_df` on to `featurize(valid_df)`
        return (
            self._learns(call, reach) and not _per_window(reach.ctx, fit)
            and reach.ctx.analysis(Leakage)._evaluation_data(fit.args[0], fit, None) is None and not self._for_a_figure(call, reach)
        )  # fmt: skip

    def _fits_through_method(self, call: ast.Call, callee: Callee, bound: dict[str, ast.AST]) -> tuple[str, str, Reach] | None:
        """A method the helper runs on an object the call passes, told by what the object is here
        (`make_split(val_df, pre, fit=True)` running `if fit: pre.fit(df)`, `pre = Preprocessor()`), fitting
        on evaluation data the call passes on through it."""
        home = callee.ctx
        for inner in home.index.within(callee.function, ast.Call):
            receiver = inner.func.value if isinstance(inner.func, ast.Attribute) else None
            passed = bound.get(receiver.id) if isinstance(receiver, ast.Name) and home.scopes.enclosing_function(inner) is callee.function else None
            method = self._method_on(passed, inner.func.attr, sites=True) if passed is not None else None
            if method is None or not Reach(home, inner).taken_under(call, callee.function):
                continue
            handed = bind_arguments(inner, method.function, True)
            for name, reaches in method.ctx.analysis(ParameterEffects).of(method.function, EVALUATION_FIT).items():
                argument = handed.get(name)
                while argument is not None and not isinstance(argument, ast.Name):
                    argument = EVALUATION_FIT.keeps(home, argument)  # `pre.fit(df[cols])`: still `df`
                data = bound.get(argument.id) if argument is not None else None
                evidence = self._evaluation_data(data, call, None) if data is not None else None
                whole = [Reach(r.ctx, r.node, ((home, inner), *r.calls)) for r in reaches if r.taken_under(inner, method.function)]
                reach = next((r for r in whole if self._counts(call, r)), None) if evidence else None
                if reach is not None:
                    return evidence, callee.function.name, reach
        return None

    def _drawn(self, fit: ast.Call, binding) -> bool:
        """Does only a figure show the fit's output: here, or where the call site `binding` holds under
        takes what the fit's function gives back?"""
        where = self.plotted(fit)
        function = self.ctx.scopes.enclosing_function(fit)
        site = binding.of(function) if binding is not None and function is not None else None
        if where == "returned" and site is not None and site.call is not None and site.caller is not None:
            return site.caller.analysis(Leakage).plotted(site.call) == "plotted"
        return where == "plotted"

    def _for_a_figure(self, call: ast.Call, reach: Reach) -> bool:
        """Is the fit at `reach` a decomposition made in the helper whose output only a figure shows: in the
        helper, or given back by it (`coords = project(test_feats)`) to a call only plotted?"""
        made = built(reach.ctx, reach.node.func.value)
        classes = {canonical_class(ctx.qualified_name(constructor.func)) or "" for ctx, constructor in made or ()}
        if not (classes and all(c.startswith(DECOMPOSITIONS) for c in classes)):
            return False
        where = reach.ctx.analysis(Leakage).plotted(reach.node)
        return where == "plotted" or (where == "returned" and not reach.calls and self.plotted(call) == "plotted")

    def plotted(self, expr: ast.AST, depth: int = 0) -> str | None:
        """Where the value of `expr` goes when only a figure shows it: "plotted" (passed to matplotlib,
        seaborn or plotly, or to an axes' `scatter`/`plot`..., directly, picked from, or through the names it
        is bound to) or "returned" (given back by its function on the way); None when it goes anywhere else."""
        node, parent = expr, self.ctx.scopes.parent(expr)
        while isinstance(parent, (ast.Subscript, ast.Attribute, ast.Starred)) and parent.value is node and not _called(self.ctx, parent):
            node, parent = parent, self.ctx.scopes.parent(parent)  # `coords[:, 0]`, `*coords.T`
        if isinstance(parent, ast.keyword):  # `sns.scatterplot(x=coords[:, 0], ...)`
            node, parent = parent, self.ctx.scopes.parent(parent)
        if isinstance(parent, ast.Call) and node is not parent.func and _plots(self.ctx, parent):
            return "plotted"
        if isinstance(parent, ast.Return) or (isinstance(parent, ast.Tuple) and isinstance(self.ctx.scopes.parent(parent), ast.Return)):
            return "returned"
        if not (isinstance(parent, ast.Assign) and parent.value is node and depth < 2):
            return None
        scope = self._scope(parent)
        names = {t.id for target in parent.targets for t in _unpacked(target) if isinstance(t, ast.Name)}
        if not names or any(not isinstance(t, ast.Name) for target in parent.targets for t in _unpacked(target)):
            return None
        uses = [n for n in self.ctx.index.within(scope, ast.Name) if n.id in names and isinstance(n.ctx, ast.Load) and self._scope(n) is scope]
        found = {self.plotted(use, depth + 1) for use in uses}
        return found.pop() if len(found) == 1 else None

    def _learns(self, call: ast.Call, reach: Reach) -> bool:
        """Does the object fitted at `reach` learn statistics: made on the way to its fit, or handed down to it
        as an argument by the calls on the way from `call` (`make_windows(part, scaler)`)?"""
        expr, home = reach.node.func.value, reach.ctx
        made_here: list[tuple[object, ast.AST]] = []
        for caller, site in reversed([(self.ctx, call), *reach.calls]):
            fresh = _made_unless_given(home, expr) if isinstance(expr, ast.Name) else None
            if fresh is None:
                break
            made_here += fresh  # `if scaler is None: scaler = StandardScaler()`: made here, or the one passed in
            function = home.scopes.enclosing_function(expr)
            expr, home = bind_arguments(site, function, takes_self(home, function)).get(expr.id), caller
            if expr is None:
                return False
        made = built(home, expr)
        if made is None and isinstance(expr, ast.Name):  # made on the path to the fit: `if scaler is None: scaler = StandardScaler()`
            values = [d.value for d in home.analysis(ValueKinds).reaching_definitions(expr)]
            made = [(home, v) for v in values] if values and all(isinstance(v, ast.Call) for v in values) else None
        made = made + made_here if made is not None else None
        return _learns_statistics({canonical_class(ctx.qualified_name(constructor.func)) or "" for ctx, constructor in made or ()})

    def _project_callee(self, call: ast.Call) -> Callee | None:
        """The project function `call` runs, or the method of the one project class its receiver holds."""
        callee = self.ctx.analysis(ParameterEffects).callee(call)
        if callee is not None or not isinstance(call.func, ast.Attribute):
            return callee
        return self._method_on(call.func.value, call.func.attr)

    def _method_on(self, receiver: ast.AST, name: str, sites: bool = False) -> Callee | None:
        """The method `name` of the one project class the object `receiver` is here (with `sites`, also under
        the call sites of its function: `self.coder` of `self.coder = coder`, built with `FeatureCoder()`)."""
        objects = self.ctx.analysis(Objects)
        found = objects.points_to(receiver)
        classes = {objects.class_of(obj) for obj in found} if found else {None}
        if None in classes and sites:
            classes = {found for found, _ in classes_of(self.ctx, receiver)}
        if len(classes) != 1 or None in classes:
            return None
        home, cls = classes.pop()
        method = own_method(cls, name)
        return Callee(method, home) if method is not None else None

    def _indexed_by_helper(self, call: ast.Call, parts: frozenset[str]) -> set[str]:
        """The data of this module a function of it indexes by a parameter that `call` fills with a part of
        split indices (`tensors(tr_idx)` with `def tensors(ix): return X[ix], y[ix]`)."""
        if not parts or not any(_key(a) in parts for a in [*call.args, *(k.value for k in call.keywords)]):
            return set()
        callee = self.ctx.analysis(ParameterEffects).callee(call)
        if callee is None or callee.ctx is not self.ctx:
            return set()
        indexed = self.ctx.analysis(ParameterEffects).of(callee.function, INDEXED_BY)
        bound = bind_arguments(call, callee.function, takes_self(callee.ctx, callee.function)) if indexed else {}
        return {  # data of the module, indexed in the function or in one of this module it hands the parameter to
            key for name, reaches in indexed.items() if _key(bound.get(name)) in parts
            for r in reaches if r.ctx is self.ctx and all(home is self.ctx for home, _ in r.calls) and (key := _key(r.node.value)) is not None
            and key.split(".")[0] not in self.ctx.scopes.local_bindings(self.ctx.scopes.enclosing_function(r.node))
        }  # fmt: skip

    def _column_of_table(self, data: ast.AST) -> bool:
        """Is the split name a key of a table's column (`train_long["val"]`, `labs["test"]` of a table read
        from a file), not of a container of splits (`splits["val"]`)?"""
        keyed = _split_keyed(data)
        if keyed is None:
            return False
        base = keyed
        while isinstance(base, ast.Subscript):
            base = base.value
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
        return "train" in _parts_named(name) or self.data_set(keyed)

    def data_set(self, expr: ast.AST, depth: int = 0) -> bool:
        """Does `expr` hold a whole data set read from a file (`pd.read_csv(path)`, `np.load(path)`), a part a
        split gives of one (`y_tr` of `train_test_split(X, y)`), rows of one by index (`df.iloc[idx]`) or a
        column by label (`df["price"]`, `df.pop("y")`), through names, conversions and row-keeping forms?"""
        while True:
            expr = _rows_of(expr)
            if isinstance(expr, ast.Call) and self.ctx.qualified_name(expr.func) in ELEMENTWISE | CONVERSIONS and expr.args:
                expr = expr.args[0]  # `np.log1p(df["price"])`, `torch.tensor(df.pop("y").values)`
            elif isinstance(expr, ast.Call) and _method(expr) == "pop" and len(expr.args) == 1:
                expr = expr.func.value
            elif isinstance(expr, ast.Call) and _method(expr) in TABLE_KEEPING | TABLE_PARTS:
                expr = expr.func.value  # `pd.read_csv(path).dropna(subset=cols)`: the table cleaned, `df.head(n)`
            elif isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Call) and isinstance(expr.slice, ast.Constant):
                return self.ctx.qualified_name(expr.value.func) in SPLITS  # an item of `train_test_split(X, y)`
            elif isinstance(expr, ast.Subscript) and _labels(self.ctx, expr.slice):
                indexer = isinstance(expr.value, ast.Attribute) and expr.value.attr in INDEXERS
                expr = expr.value.value if indexer else expr.value  # `df["price"]`, `df.loc[:, "price"]`
            elif isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr in INDEXERS and self._assigned_index(expr.slice):
                expr = expr.value.value  # `df.iloc[idx]`: rows of it (not `df.iloc[i]` of a loop)
            else:
                break
        if isinstance(expr, ast.Call) and self.ctx.qualified_name(expr.func) in DATA_READERS:
            return True
        if isinstance(expr, ast.Call):  # what a project function returns: `df = load_table(path)`
            named = isinstance(expr.func, (ast.Name, ast.Attribute)) and depth < MAX_DATA_DEPTH
            callee = self.calls.resolve(expr, followed=READER_TEXT, reexported=True) if named else None
            returned = function_returns(callee.function) if callee is not None else None
            return bool(returned) and all(callee.ctx.analysis(Leakage).data_set(r, depth + 1) for r in returned)
        values = self.values.reaching_values(expr) if isinstance(expr, ast.Name) and depth < MAX_DATA_DEPTH else None
        if values is None and isinstance(expr, ast.Name) and depth < MAX_DATA_DEPTH:
            # a parameter every call site fills with a data set (`preview(read(path))`)
            return _filled_at_every_site(self.ctx, expr, lambda ctx, argument: ctx.analysis(Leakage).data_set(argument, depth + 1))
        return bool(values) and all(self.data_set(v, depth + 1) for v in values)

    def _assigned_index(self, index: ast.AST) -> bool:
        """A name assigned on every way to it (no loop variable or parameter): indices of rows, not one row."""
        return isinstance(index, ast.Name) and self.values.reaching_values(index) is not None

    # The index of a scope.
    def _flow(self, scope: ast.AST) -> _Flow:
        if scope not in self._flows:
            self._flows[scope] = self._build(scope)
        return self._flows[scope]

    def _build(self, scope: ast.AST) -> _Flow:
        events = self.ctx.index.within(scope, *EVENTS)
        reads: dict[int, frozenset[str]] = {}
        readers: dict[str, list[int]] = defaultdict(list)
        for i, node in enumerate(events):
            if isinstance(node, (ast.Assign, ast.Return, ast.Expr)) and node.value is not None:
                reads[i] = _read_keys(node.value)
                for key in reads[i]:
                    readers[key].append(i)
        flow = _Flow(events, {node: i for i, node in enumerate(events)}, reads, dict(readers), self._index_parts(scope))
        flow.same = self._same_data(events)
        self._sweep(flow)
        return flow

    def _sweep(self, flow: _Flow) -> None:
        """From the last node back: the first split each key reaches, and the `self` keys it reaches."""
        first: dict[str, int] = {}
        reached: dict[str, frozenset[str]] = {}
        halves: dict[tuple[str, str], dict[str, int]] = {}

        def lower(key: str, split: int, at: int) -> None:
            for same in flow.same.get(key, (key,)):  # `full = torch.as_tensor(spectra)`: a split of either
                if split < first.get(same, NEVER):
                    first[same] = split
                    history = flow.splits.setdefault(same, ([], []))
                    history[0].append(-at)  # the sweep goes backwards: -index ascends
                    history[1].append(split)

        def selected(key: str, side: tuple[str, frozenset[str]], node: ast.AST, at: int) -> None:
            # A mask and its complement, or a comparison and its opposite, held as two parts
            # (`arr[mask], arr[~mask]`, `df[df.t < cut]` and `df.query("t >= @cut")`).
            sides = halves.setdefault((key, *side[1]), {})
            sides[side[0]] = at
            if any(self._apart(flow.events[j], node) for other, j in sides.items() if other != side[0]):
                lower(key, max(sides.values()), at)

        def halved(key: str, half: tuple[str, frozenset[str]], node: ast.AST, i: int) -> None:
            """A head and a tail of one bound, or of a bound and one offset from it, overlapping or not
            (`series[:cut]`, `series[cut - w:]`; not `y[:n]`, `y[-n:]`); or of any bounds, when assignments name
            both parts (`train = X[:n_train]`, `test = X[n_train + n_val:]`)."""
            named = ["named"] if self._named_by_target(node) else []
            for bound in (*half[1], *named):
                sides = halves.setdefault((key, bound), {})
                sides[half[0]] = i
                if len(sides) == 2:
                    lower(key, max(sides.values()), i)

        for i in range(len(flow.events) - 1, -1, -1):
            node = flow.events[i]
            if isinstance(node, ast.Assign):
                targets = _binds(node) - {None}
                split = min((first.get(t, NEVER) for t in targets), default=NEVER)
                attributes = frozenset(t for t in targets if t.startswith("self.")).union(*(reached.get(t, ()) for t in targets))
                for key in flow.reads[i]:
                    if split != NEVER:
                        lower(key, split, i)
                    if attributes - reached.get(key, frozenset()):
                        reached[key] = reached.get(key, frozenset()) | attributes
                        history = flow.reached.setdefault(key, ([], []))
                        history[0].append(-i)
                        history[1].append(reached[key])
            elif isinstance(node, ast.Call) and (queried := _queried(self.ctx, node)) is not None:
                selected(queried[0], queried[1], node, i)
            elif isinstance(node, ast.Call) and (taken := _taken_end(self.ctx, node)) is not None:
                if self._names_a_part(node):  # `table.head(n)`, `table.tail(k)`: as `table[:n]`, `table[-k:]`
                    halved(taken[0], taken[1], node, i)
            elif isinstance(node, ast.Call):
                for key in {k for a in self.split_data(node) for k in _split_keys(a)} | self._indexed_by_helper(node, flow.parts):
                    lower(key, i, i)
            elif isinstance(node, ast.Subscript):
                key = _key(node.value)
                half = _half(self.ctx, node.slice) if key is not None else None
                if key is not None and (self._chosen_part(node.slice) or _key(node.slice) in flow.parts):
                    lower(key, i, i)  # one part of several: by a flag's bounds, or by a part of split indices
                elif half is None and key is not None and (other := _complement(node.slice, self.ctx)) is not None:
                    selected(key, other, node, i)
                elif half is not None and self._names_a_part(node):
                    halved(key, half, node, i)

    def _same_data(self, events: list[ast.AST]) -> dict[str, frozenset[str]]:
        """Each key of a scope bound to a conversion of the whole of another (`full = torch.as_tensor(spectra)`,
        `x = df[cols].values`), with those it converts or that convert it, at any distance."""
        groups: dict[str, frozenset[str]] = {}
        for node in events:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target, source = _key(node.targets[0]), self._converted(node.value)
            if target is not None and source is not None and target != source:
                group = groups.get(target, frozenset({target})) | groups.get(source, frozenset({source}))
                groups.update(dict.fromkeys(group, group))
        return groups

    def _converted(self, value: ast.AST) -> str | None:
        """The whole data set a conversion holds the rows of: `spectra` of `torch.as_tensor(spectra,
        dtype=...)`, `np.asarray(df[cols])`, `x.numpy()`; None for a part (`torch.tensor(x[:n])`)."""
        converted = False
        while True:
            if isinstance(value, ast.Call) and value.args and self.ctx.qualified_name(value.func) in CONVERSIONS:
                value = value.args[0]
            elif isinstance(value, ast.Call) and _method(value) in CONVERTING_METHODS:
                value = value.func.value
            elif isinstance(value, ast.Attribute) and value.attr in ROW_KEEPING_ATTRIBUTES:
                value = value.value
            else:
                return _whole(value, self.ctx) if converted else None
            converted = True

    def _index_parts(self, scope: ast.AST) -> frozenset[str]:
        """The names bound to one part of indices split into several: `te, tr = idx[:n], idx[n:]`,
        `tr, te = train_test_split(idx)`, and each of `parts = np.split(idx, [a, b])` in a loop over it.
        `np.array_split(idx, n_batches)`, batches by a count, is no split into parts."""
        parts: set[str] = set()
        collections: set[str] = set()
        for assign in self.ctx.index.within(scope, ast.Assign):
            value, targets = assign.value, assign.targets
            if isinstance(value, ast.Tuple) and len(value.elts) >= 2 and _slices_of_one(value.elts):
                parts |= {n.id for t in targets for n in _unpacked(t) if isinstance(n, ast.Name)}
            elif isinstance(value, ast.Call) and (self.ctx.qualified_name(value.func) in SPLITS or _split_at_bounds(self.ctx, value) or self._returns_parts(value, targets)):
                parts |= {n.id for t in targets if not isinstance(t, ast.Name) for n in _unpacked(t) if isinstance(n, ast.Name)}
                collections |= {t.id for t in targets if isinstance(t, ast.Name)}
        if collections:
            loops = self.ctx.index.within(scope, ast.For, ast.comprehension)
            parts |= {loop.target.id for loop in loops if isinstance(loop.target, ast.Name) and _key(loop.iter) in collections}
        return frozenset(parts)

    def _returns_parts(self, call: ast.Call, targets: list[ast.AST] = ()) -> bool:
        """Is the call (unpacked into `targets`, when given) of a project helper that returns parts of one
        key's rows (`return perm[n_te:], perm[:n_te]` with `perm = rng.permutation(n)`)?"""
        if targets and not any(isinstance(t, ast.Tuple) for t in targets):
            return False
        callee = self.callee(call) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
        return callee is not None and bool(callee.ctx.analysis(Leakage).summary(callee.function, "parts"))

    def _reads_later(self, flow: _Flow, held: str, data: str, line: int) -> bool:
        """Does an assignment after `line` read both `held` and `data`?"""
        if (held, data) not in flow.both:
            readers, same = flow.readers.get(held, []), flow.same.get(data, {data})
            flow.both[(held, data)] = next((i for i in reversed(readers) if same & flow.reads[i]), -1)
        last = flow.both[(held, data)]
        return last >= 0 and flow.events[last].lineno > line

    def _names_a_part(self, subscript: ast.Subscript) -> bool:
        """Is the slice a part: assigned to a name that says training or evaluation data (`X_train = X[:n]`),
        kept with the other parts in one tuple (`self.parts = (x[:cut], x[cut - w:])`), returned by a
        function whose name says it splits (`def divide(data): return data[:n], data[n:]`), or taken under
        a test that names a part (`if flag == "train":`)?"""
        statement = self._statement(subscript)
        if any(_says_part(text) or _parts_named(text) for text in map(self.ctx.text, getattr(statement, "targets", ()))):
            return True
        if self._keyed_part(subscript):
            return True
        if _held_apart(self.ctx, subscript):
            return True
        function = self.ctx.scopes.enclosing_function(statement)
        if isinstance(statement, ast.Return) and _says_part(getattr(function, "name", ""), SPLITTER_WORDS + PART_WORDS):
            return True
        for ancestor in self.ctx.scopes.ancestors(subscript):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(ancestor, (ast.If, ast.IfExp)) and self._test_names_part(ancestor.test):
                return True
        return False

    def _apart(self, first: ast.AST, second: ast.AST) -> bool:
        """Are two selections of rows held as different parts: returned together by a function whose name
        says it splits (`def split_by_date(...): return arr[mask], arr[~mask]`), taken by a mask whose name
        says a part and by its complement (`arr[is_train]`, `arr[~is_train]`), or named for different
        parts (`train_df = df[m]`, `test_df = df[~m]`; not `pos = X[m]`, `neg = X[~m]`, nor two training subsets)?"""
        statement = self._statement(first)
        if statement is self._statement(second) and isinstance(statement, ast.Return):
            function = self.ctx.scopes.enclosing_function(statement)
            if _says_part(getattr(function, "name", ""), SPLITTER_WORDS + PART_WORDS):
                return True
        if any(_part_mask(s) for s in (first, second)):
            return True
        words = [self._part_named(s) for s in (first, second)]
        return all(words) and words[0] != words[1]

    def _part_named(self, subscript: ast.AST) -> str | None:
        """The part ("train", "test", "eval") the name a selection is bound to (or its dict key, or the value
        it selects by: `df[df.split == "test"]`) says."""
        condition = subscript.slice if isinstance(subscript, ast.Subscript) else None
        texts = [n.value for n in ast.walk(condition) if isinstance(n, ast.Constant) and isinstance(n.value, str)] if condition else []
        node, parent = self._holder(subscript)
        if isinstance(parent, ast.Dict) and node in parent.values and isinstance(key := parent.keys[parent.values.index(node)], ast.Constant):
            texts.append(str(key.value))
        elif isinstance(parent, ast.Assign):
            texts += [self.ctx.text(t) for t in (_positional(t, parent.value, subscript) for t in parent.targets) if t is not None]
        words = set().union(*(_parts_named(text) for text in texts))
        return words.pop() if len(words) == 1 else None

    def _named_by_target(self, subscript: ast.Subscript) -> bool:
        """Is the slice assigned to a name one of whose words is a part (`train_series`, `X_test`; not
        `loss_value`), or kept under such a key (`{"train": idx[n:], "test": idx[:n]}`)?"""
        statement = self._statement(subscript)
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        return any(PART_WORD.search(self.ctx.text(t)) for t in targets) or self._keyed_part(subscript)

    def _keyed_part(self, node: ast.AST) -> bool:
        """Is `node` (or the tuple holding it) a value of a dict literal under a key that names a part?"""
        node, parent = self._holder(node)
        if not isinstance(parent, ast.Dict) or node not in parent.values:
            return False
        key = parent.keys[parent.values.index(node)]
        return isinstance(key, ast.Constant) and isinstance(key.value, str) and bool(PART_WORD.search(key.value))

    def _holder(self, node: ast.AST) -> tuple[ast.AST, ast.AST]:
        """The expression that holds a part as one value, and its parent: the tuple it is kept in, or the call
        it is handed to (`SlidingWindow(values[:a], t)`, `TensorDataset(x[:n], y[:n])`)."""
        parent = self.ctx.scopes.parent(node)
        while isinstance(parent, ast.Tuple) or (isinstance(parent, ast.Call) and node in parent.args):
            node, parent = parent, self.ctx.scopes.parent(parent)
        return node, parent

    def _chosen_part(self, index: ast.AST) -> bool:
        """`data[border1:border2]` with both bounds picked by one flag from lists of bounds
        (`border1, border2 = border1s[self.set_type], border2s[self.set_type]`): one part of several."""
        if not isinstance(index, ast.Slice) or index.lower is None or index.upper is None or index.step is not None:
            return False
        flag = self._picked(index.lower)
        return flag is not None and flag == self._picked(index.upper)

    def _picked(self, bound: ast.AST) -> str | None:
        """The flag a bound is picked by from a literal list of bounds (`border1s[flag]`), or from a literal
        table of bound pairs (`lo, hi = borders[flag]`, `borders = {"train": (0, n), "test": (n, m)}`), as text."""
        if isinstance(bound, ast.Name):
            pair = self._picked_pair(bound)
            if pair is not None:
                return pair
            values = self.values.reaching_values(bound)
            flags = {self._picked(v) if isinstance(v, ast.Subscript) else None for v in values or [None]}
            return flags.pop() if len(flags) == 1 else None
        table = self._table(bound)
        return self.ctx.text(bound.slice) if isinstance(table, (ast.List, ast.Tuple)) and len(table.elts) >= 2 else None

    def _picked_pair(self, bound: ast.Name) -> str | None:
        definitions = self.values.reaching_definitions(bound)
        target = definitions[0].node if len(definitions) == 1 else None
        pair = self.ctx.scopes.parent(target) if target is not None else None
        statement = self.ctx.scopes.parent(pair) if isinstance(pair, ast.Tuple) and len(pair.elts) == 2 else None
        table = self._table(statement.value) if isinstance(statement, ast.Assign) else None
        rows = table.values if isinstance(table, ast.Dict) else table.elts if isinstance(table, (ast.List, ast.Tuple)) else []
        pairs = len(rows) >= 2 and all(isinstance(r, (ast.Tuple, ast.List)) and len(r.elts) == 2 for r in rows)
        return self.ctx.text(statement.value.slice) if pairs else None

    def _table(self, picked: ast.AST) -> ast.AST | None:
        """The literal a flag picks from: `borders` of `borders[flag]` (not a constant index or a slice)."""
        if not isinstance(picked, ast.Subscript) or isinstance(picked.slice, (ast.Constant, ast.Slice)):
            return None
        table = picked.value
        if isinstance(table, ast.Name):
            values = self.values.reaching_values(table)
            table = values[0] if values and len(values) == 1 else None
        return table

    def _test_names_part(self, test: ast.AST) -> bool:
        if test not in self._parts:
            named = [n.value for n in ast.walk(test) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            named += [_key(n) or "" for n in ast.walk(test) if isinstance(n, (ast.Name, ast.Attribute))]
            self._parts[test] = any(_says_part(text) for text in named)
        return self._parts[test]

    def _statement(self, node: ast.AST) -> ast.AST:
        while not isinstance(node, ast.stmt):
            node = self.ctx.scopes.parent(node)
        return node

    def _scope(self, node: ast.AST) -> ast.AST:
        return self.ctx.scopes.enclosing_function(node) or self.ctx.tree


def _names_evaluation(node: ast.AST) -> bool:
    """`X_test`, `valData`, `df_val["x"]`, `splits.test`: the words of the name say evaluation data; so does a
    literal key that is a split's name (`splits["val"]`, `data.get("test")`, `arrays["X_test"]`)."""
    while isinstance(node, ast.Subscript) or (isinstance(node, ast.Call) and _method(node) == "get" and node.args):
        key = node.slice if isinstance(node, ast.Subscript) else node.args[0]
        if isinstance(key, ast.Constant) and _split_key(key.value):
            return True
        node = node.value if isinstance(node, ast.Subscript) else node.func.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return bool(_parts_named(name) & {"test", "eval"})


def _split_keyed(node: ast.AST) -> ast.AST | None:
    """The container a literal split key reads (`splits` of `splits["val"]`), when the key is why `node` names
    evaluation data; None otherwise."""
    while isinstance(node, ast.Subscript) or (isinstance(node, ast.Call) and _method(node) == "get" and node.args):
        key = node.slice if isinstance(node, ast.Subscript) else node.args[0]
        node = node.value if isinstance(node, ast.Subscript) else node.func.value
        if isinstance(key, ast.Constant) and _names_split(key.value):
            return node  # a split's whole name, which a table's column may also be (not `"X_test"`)
    return None


def _split_key(value: object) -> bool:
    """`"val"`, `"X_test"`: a key naming an evaluation split, or a data letter's part of one (not `"test_score"`)."""
    return _names_split(value) or (isinstance(value, str) and re.fullmatch(r"[xXyY]_?[A-Za-z]+", value) is not None and bool(_parts_named(value) & {"test", "eval"}))


def _parts_named(text: str) -> set[str]:
    """The parts the words of a name say: `X_train`, `valData`, `y_te`, and a data letter joined to the
    part's word (`Xtr`, `ytest`)."""
    parts = set()
    for word in map(str.lower, re.findall(r"[a-z]+|[A-Z][a-z]*", text)):
        for candidate in (word, word[1:] if len(word) > 2 and word[0] in "xy" else ""):
            if candidate in PART_ABBREVIATIONS:
                parts.add(PART_ABBREVIATIONS[candidate])
    return parts


def _names_split(value: object) -> bool:
    """`"test"`, `"Val"`: a string that is the whole name of an evaluation split."""
    return isinstance(value, str) and value.strip().lower() in SPLIT_NAMES


def _across_rows(call: ast.Call, position: int) -> bool:
    """Does a reduction run over the rows: no axis (every element; pandas' default), or axes, literal, that
    hold the first (`0`, `(0, 2, 3)`, `"index"`); not `x.mean(1)`, `x.std(dim=-1)`. `position`: where a
    positional axis stands (after the data of `np.mean(x, 1)`, after `q` of `x.quantile(q, 1)`)."""
    axis = next((k.value for k in call.keywords if k.arg in ("axis", "dim")), None)
    if axis is None and len(call.args) > position:
        axis = call.args[position]
    if axis is None or (isinstance(axis, ast.Constant) and (axis.value is None or isinstance(axis.value, bool))):
        return True  # every element; `x.std(False)`: torch's old `unbiased`
    axes = axis.elts if isinstance(axis, (ast.Tuple, ast.List)) else [axis]
    named = [a.value for a in axes if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    numbers = [int_literal(a) for a in axes if not (isinstance(a, ast.Constant) and isinstance(a.value, str))]
    if None in numbers:
        return True  # an axis not known: a statistic, as before
    return 0 in numbers or "index" in named or "rows" in named


def _method(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def _says_part(text: str, words: tuple[str, ...] = PART_WORDS) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in words)


def _binds(statement: ast.AST) -> set[str | None]:
    """The keys an assignment binds, through tuples (`self.X, self.y = X, y`)."""
    if not isinstance(statement, ast.Assign):
        return set()
    return {_key(n) for t in statement.targets for n in _unpacked(t)}


def _unpacked(target: ast.AST) -> list[ast.AST]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _unpacked(e.value if isinstance(e, ast.Starred) else e)]
    return [target]


def _key(node: ast.AST) -> str | None:
    """What names a data set: `X`, `self.data`, and `df` for `df[cols]`."""
    while isinstance(node, ast.Subscript) or (isinstance(node, ast.Attribute) and node.attr in INDEXERS):
        node = node.value  # `df.loc[rows]`, `df.loc`: rows of `df`
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _column_name(node: ast.AST) -> str:
    """The column a table's attribute or literal key reads (`fold` of `df.fold`, `df["fold"]`); "" else."""
    if isinstance(node, ast.Attribute):
        return node.attr
    key = node.slice if isinstance(node, ast.Subscript) else None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else ""


def _whole(node: ast.AST, ctx) -> str | None:
    """The key of a whole data set: `X`, `df[cols]`, `df["age"]` (columns keep every row), `df[NUMERIC]` with
    a name holding a list of labels; None for a part of the rows (`X[:n]`, `X[train_idx]`).
    Reshaping, conversions and element-wise functions keep the rows (`X.reshape(-1, 1)`, `np.abs(X)`)."""
    node = _rows_of(node)
    while isinstance(node, ast.Call) and node.args and ctx.qualified_name(node.func) in ROW_WISE_FUNCTIONS:
        node = _rows_of(node.args[0])
    inner = node
    while isinstance(inner, ast.Subscript):
        index = inner.slice
        columns = isinstance(index, ast.Constant) and isinstance(index.value, str)
        columns |= isinstance(index, ast.List) and all(isinstance(e, ast.Constant) for e in index.elts)
        columns |= isinstance(index, (ast.Name, ast.Attribute)) and bool(COLUMN_NAME.search(_key(index) or ""))
        columns |= isinstance(index, ast.Name) and _holds_labels(ctx, index)
        columns |= isinstance(index, ast.Tuple) and bool(index.elts) and _every_row(index.elts[0])  # `X[:, :-1]`
        if not columns:
            return None
        inner = inner.value
    return _key(node)


def _keeps_nothing(ctx, function: ast.AST) -> bool:
    """Does the function give nothing back and store nothing outside its names (no `return value`, `yield`,
    attribute or item store, `global`)? What it computes can only be shown."""
    kinds = (ast.Return, ast.Yield, ast.YieldFrom, ast.Attribute, ast.Subscript, ast.Global, ast.Nonlocal)
    for node in ctx.index.within(function, *kinds):
        if isinstance(node, ast.Return) and node.value is None:
            continue
        if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Store):
            continue
        return False
    return True


def _labels(ctx, index: ast.AST) -> bool:
    """Does an index select columns by label: `"price"`, `["a", "b"]`, a name holding such a list?"""
    if isinstance(index, ast.Constant):
        return isinstance(index.value, str)
    if isinstance(index, ast.List):
        return bool(index.elts) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in index.elts)
    if isinstance(index, ast.Tuple) and len(index.elts) == 2 and _every_row(index.elts[0]):  # `df.loc[:, "price"]`
        return _labels(ctx, index.elts[1])
    return isinstance(index, ast.Name) and _holds_labels(ctx, index)


def _holds_labels(ctx, name: ast.Name, depth: int = 0) -> bool:
    """Does `name` hold a literal list of column labels on every way to it (`NUMERIC = ["age", "fare"]`, also
    imported from another module of the project, or given by every call site for a parameter)?"""
    values = ctx.analysis(ValueKinds).reaching_values(name)
    qualified = ctx.qualified_name(name) if values is None else None
    imported = followed_view(ctx).global_value(qualified) if qualified else None
    if values is None and imported is None:
        return _passed_labels(ctx, name, depth)
    values = [imported[1]] if imported is not None else values
    return bool(values) and all(_label_list(v) for v in values)


def _label_list(value: ast.AST) -> bool:
    return isinstance(value, (ast.List, ast.Tuple)) and bool(value.elts) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
    )  # fmt: skip


def _passed_labels(ctx, name: ast.Name, depth: int) -> bool:
    """A parameter every call site fills with a list of labels (`report(df, FEATS)` for `def report(frame, cols)`)."""
    return depth < MAX_DATA_DEPTH and _filled_at_every_site(
        ctx, name, lambda home, argument: _label_list(argument) or isinstance(argument, ast.Name) and _holds_labels(home, argument, depth + 1)
    )  # fmt: skip


def _filled_at_every_site(ctx, name: ast.Name, accepts) -> bool:
    """Is `name` a parameter that every call site of its function fills, not by the default, with an argument
    `accepts(caller's context, argument)`?"""
    function = ctx.scopes.enclosing_function(name)
    if function is None or name.id not in {p.arg for p in parameters(function, variadic=False)}:
        return False
    passed = [binding.argument(name.id) for binding in ctx.analysis(Callers).bindings(function) if binding.site is not None]
    return bool(passed) and all(p is not None and not p[2].default and accepts(p[0], p[1]) for p in passed)


def _rows_of(node: ast.AST) -> ast.AST:
    """What a conversion that keeps the rows converts: `X` for `X.reshape(-1, 1)`, `df[cols]` for `df[cols].values`,
    `df` for `df.drop(columns=["y"])`."""
    while True:
        if isinstance(node, ast.Call) and (_method(node) in ROW_KEEPING or (_method(node) == "drop" and _drops_columns(node))):
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr in ROW_KEEPING_ATTRIBUTES:
            node = node.value
        else:
            return node


def _joined(ctx, data: ast.AST) -> list[ast.AST] | None:
    """The parts a concatenation joins: `pd.concat([a, b])`, `np.vstack((a, b))`, `np.append(a, b, axis=0)`,
    `np.r_[a, b]`, `a.append(b)` of a table; None for anything else."""
    if isinstance(data, ast.Subscript) and ctx.qualified_name(data.value) == "numpy.r_":
        return data.slice.elts if isinstance(data.slice, ast.Tuple) else [data.slice]
    if not isinstance(data, ast.Call):
        return None
    name = ctx.qualified_name(data.func)
    if name in CONCATENATIONS:
        return [e for a in data.args[:1] for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
    if name == "numpy.append":
        return data.args[:2]
    if name is None and _method(data) == "append" and len(data.args) == 1:  # `train_df.append(val_df)`: a new table
        return [data.func.value, data.args[0]]
    return None


def _table_of(node: ast.AST) -> ast.AST:
    """What a row-keeping conversion or a table cleaning gives rows of: `df` for `df[cols].fillna(0).values`."""
    while isinstance(node := _rows_of(node), ast.Call) and _method(node) in TABLE_KEEPING:
        node = node.func.value
    return node


def _split_keys(data: ast.AST) -> set[str]:
    """The data a split divides: `X`, or what a dataset built in place holds (`TensorDataset(x, y)`)."""
    if isinstance(data, ast.Call):
        return {k for a in [*data.args, *(kw.value for kw in data.keywords)] for k in _split_keys(a)}
    key = _key(data)
    return {key} if key is not None else set()


def _views_of(ctx, assignments: list[ast.Assign], names: set[str]) -> dict[str, str]:
    """Each of `names` as itself, and the names bound to a reshaped whole of one, in order (`flat =
    x.transpose(0, 1).flatten(1)`, `torch.flatten(x, 1)`: "flat" -> "x")."""
    views = {name: name for name in names}
    for assign in assignments:
        value = assign.value
        while isinstance(value, ast.Call):
            if ctx.qualified_name(value.func) in RESHAPING_FUNCTIONS and value.args:
                value = value.args[0]
            elif _method(value) in RESHAPING:
                value = value.func.value
            else:
                break
        source = _key(value) if isinstance(value, ast.Name) else None
        if source in views and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name):
            views[assign.targets[0].id] = views[source]
    return views


def _held_apart(ctx, subscript: ast.Subscript) -> bool:
    """Is the slice an item of a tuple of slices of one key bound whole to one name or attribute
    (`self.parts = (x[:cut], x[cut - w:])`), not unpacked (`left, right = ...`, often put back together)?"""
    items = ctx.scopes.parent(subscript)
    statement = ctx.scopes.parent(items) if isinstance(items, ast.Tuple) else None
    return (
        isinstance(statement, ast.Assign) and statement.value is items and len(items.elts) >= 2 and _slices_of_one(items.elts)
        and all(isinstance(t, (ast.Name, ast.Attribute)) for t in statement.targets)
    )  # fmt: skip


def _slices_of_one(items: list[ast.AST]) -> bool:
    """Are `items` row slices of one key (`idx[:n_te], idx[n_te:n_te + n_va], idx[n_te + n_va:]`)?"""
    keys = {_key(e.value) if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice) else None for e in items}
    return len(keys) == 1 and None not in keys


def _split_at_bounds(ctx, call: ast.Call) -> bool:
    """`np.split(idx, [a, b])`: split at a literal list of bounds, into parts."""
    return ctx.qualified_name(call.func) in BOUND_SPLITS and len(call.args) == 2 and isinstance(call.args[1], (ast.List, ast.Tuple))


def _every_row(index: ast.AST) -> bool:
    return isinstance(index, ast.Slice) and index.lower is None and index.upper is None and index.step is None


def _passes_any(ctx, call: ast.Call, names: set[str]) -> bool:
    """Does a call pass the whole of one of `names` (as an argument or as its receiver)? Only such a call
    can fit on it, take its statistics, or hand it to a helper that does."""
    operands = [*call.args, *(k.value for k in call.keywords)]
    operands += [call.func.value] if isinstance(call.func, ast.Attribute) else []
    return any(_whole(operand, ctx) in names for operand in operands)


def _read_names(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def _read_keys(expr: ast.AST) -> frozenset[str]:
    return frozenset(_key(n) for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute))) - {None}


def _reads(expr: ast.AST, data: str, outside: list[ast.AST] = ()) -> bool:
    """Does `expr` read `data` other than inside the `outside` sub-expressions?"""
    skipped = {id(n) for o in outside for n in ast.walk(o)}
    return any(id(n) not in skipped and _key(n) == data for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))


def _positional(target: ast.AST, value: ast.AST, item: ast.AST) -> ast.AST | None:
    """The target `item` of `value` is bound to: the target itself, or its element in the place of what holds
    `item` when both are tuples of one length (`train, test = x[m], x[~m]`, `tr, te = DS(x[m]), DS(x[~m])`)."""
    if isinstance(value, ast.Tuple) and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(value.elts):
        return next((t for t, v in zip(target.elts, value.elts) if any(n is item for n in ast.walk(v))), None)
    return target if not isinstance(value, ast.Tuple) else None


def _queried(ctx, call: ast.Call) -> tuple[str, tuple[str, frozenset[str]]] | None:
    """(the key, the side) of `df.query("date < @cutoff")`: the rows a query string selects (`_complement`)."""
    query = call.args[0] if _method(call) == "query" and len(call.args) == 1 else None
    key = _key(call.func.value) if query is not None else None
    if key is None or not (isinstance(query, ast.Constant) and isinstance(query.value, str)):
        return None
    try:
        condition = ast.parse(query.value.replace("@", "").strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    side = _complement(condition)
    return (key, side) if side is not None else None


def _complement(index: ast.AST, ctx=None) -> tuple[str, frozenset[str]] | None:
    """A selection of rows and the side of it whose other side selects the rest: `m` -> ("in", {"m"}), `~m`
    or `np.logical_not(m)` -> ("out", ...); `df.t < cut` -> ("below", ...), `df.t >= cut` -> ("above", ...);
    `df.split == "train"` -> ("== 'train'", ...), `df.fold != k` -> ("!= k", ...)."""
    text = ctx.text if ctx is not None else ast.unparse  # a query string's condition has no place in the file
    negated = isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert)
    if isinstance(index, ast.Call) and ctx is not None and (ctx.qualified_name(index.func) or "").endswith(".logical_not") and len(index.args) == 1:
        negated = True
        index = index.args[0]
    elif negated:
        index = index.operand
    if isinstance(index, (ast.Name, ast.Attribute)):
        return ("out" if negated else "in"), frozenset({"mask " + text(index)})
    if not (isinstance(index, ast.Compare) and len(index.ops) == 1):
        return None
    op, left, right = index.ops[0], text(index.left), text(index.comparators[0])
    if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        below = isinstance(op, (ast.Lt, ast.LtE)) ^ (left > right) ^ negated  # `cut > df.t` is `df.t < cut`
        return ("below" if below else "above"), frozenset({"compare " + " ".join(sorted((left, right)))})
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(index.comparators[0], (ast.Constant, ast.Name, ast.Attribute)):
        equal = isinstance(op, ast.Eq) != negated
        return f"{'==' if equal else '!='} {right}", frozenset({"equal " + left})
    return None


def _taken_end(ctx, call: ast.Call) -> tuple[str, tuple[str, frozenset[str]]] | None:
    """(the key, as `_half` gives it) for `table.head(n)` / `table.tail(k)` of pandas: the first or last rows."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("head", "tail") and len(call.args) == 1 and not call.keywords):
        return None
    key = _key(func.value) if ctx.qualified_name(func) is None else None
    bound = call.args[0]
    offset = isinstance(bound, ast.BinOp) and isinstance(bound.op, (ast.Add, ast.Sub))
    return (key, (func.attr, frozenset({ctx.text(bound), *([ctx.text(bound.left)] if offset else [])}))) if key else None


def _half(ctx, index: ast.AST) -> tuple[str, frozenset[str]] | None:
    """`[:n]` -> ("head", {"n"}), `[n - w:]` -> ("tail", {"n - w", "n"}): the side, and the bound's text
    with the position it is offset from; the first dimension only."""
    if isinstance(index, ast.Tuple) and index.elts:
        index = index.elts[0]
    if not isinstance(index, ast.Slice) or index.step is not None:
        return None
    if index.lower is None and index.upper is not None:
        side, bound = "head", index.upper
    elif index.upper is None and index.lower is not None:
        side, bound = "tail", index.lower
    else:
        return None
    offset = isinstance(bound, ast.BinOp) and isinstance(bound.op, (ast.Add, ast.Sub))
    return side, frozenset({ctx.text(bound), *([ctx.text(bound.left)] if offset else [])})


class _EvaluationFit(Effect):
    """A scikit-learn object's `fit`/`fit_transform` on what a parameter holds, through row-keeping forms."""

    words = re.compile(r"fit")

    def sink(self, ctx, node: ast.AST) -> ast.AST | None:
        """Any `fit` of an object: which ones learn statistics, `Leakage._learns` tells where a call hands it over."""
        return node.args[0] if isinstance(node, ast.Call) and _method(node) in EVALUATION_FITS and node.args else None

    def keeps(self, ctx, expr: ast.AST) -> ast.AST | None:
        if isinstance(expr, ast.Subscript):  # columns (`df[cols]`, `X[:, :k]`) or rows of it: its data still
            return expr.value
        if isinstance(expr, ast.Attribute) and expr.attr in ROW_KEEPING_ATTRIBUTES:
            return expr.value
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ARITHMETIC):  # `np.sign(x) * np.log1p(np.abs(x))`
            return expr.right if isinstance(expr.left, ast.Constant) else expr.left
        if not isinstance(expr, ast.Call):
            return None
        function = ctx.qualified_name(expr.func)
        if function is not None:  # `np.abs(x)`, not a method `df.abs()`
            return expr.args[0] if expr.args and function in ELEMENTWISE else None
        method = _method(expr)
        return expr.func.value if method in KEEPING_ROWS or (method == "drop" and _drops_columns(expr)) else None


EVALUATION_FIT = _EvaluationFit()


class _UnfilteredRows(_EvaluationFit):
    """What `_EvaluationFit` keeps, a boolean row filter (`df[df["is_train"] == 1]`) left out."""

    def keeps(self, ctx, expr: ast.AST) -> ast.AST | None:
        return None if isinstance(expr, ast.Subscript) and _row_filter(expr.slice) else super().keeps(ctx, expr)


UNFILTERED_ROWS = _UnfilteredRows()


def _part_mask(rows: ast.AST) -> bool:
    """Are rows taken by a mask whose name says a part (`X[is_train]`, `X[~test_mask]`), or by its complement?
    `valid` alone says which values are usable (`x[valid]`, `x[~valid] = 0`), no part."""
    index = rows.slice if isinstance(rows, ast.Subscript) else None
    index = index.operand if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert) else index
    return isinstance(index, ast.Name) and bool(_parts_named(index.id)) and "valid" not in index.id.lower()


def _row_filter(index: ast.AST) -> bool:
    """A boolean mask of rows written in place: `df.a > 0`, `(m1) & (m2)`, `~df.a.isna()`, `df.k.isin(keys)`
    (first of `df.loc[mask, cols]`); a name (`df[cols]`) is not known to be one."""
    index = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return True
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.BitAnd, ast.BitOr)):
        return True
    return isinstance(index, ast.Compare) or (isinstance(index, ast.Call) and _method(index) in ("isin", "isna", "notna", "notnull", "isnull", "between"))


class _IndexedBy(Effect):
    """`X[ix]`: rows of data taken by what a parameter holds."""

    words = re.compile(r"\[")

    def sink(self, ctx, node: ast.AST) -> ast.AST | None:
        return node.slice if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Name) else None


INDEXED_BY = _IndexedBy()


def _made_unless_given(ctx, name: ast.Name) -> list[tuple[object, ast.Call]] | None:
    """The calls that bind `name` on the ways where it does not hold its function's parameter, when it holds
    that parameter on some way to it and a call's result on the others (`if scaler is None: scaler =
    StandardScaler()`, `scaler = scaler or StandardScaler()`, `scaler if scaler is not None else ...`); None
    when it never holds the parameter or holds something else."""
    function = ctx.scopes.enclosing_function(name)
    if function is None:
        return None
    made, given = [], False
    for definition in ctx.analysis(ValueKinds).reaching_definitions(name):
        if definition.node is function:
            given = True
            continue
        for value in _alternatives(definition.value):
            if isinstance(value, ast.Name) and value.id == name.id:
                given = True
            elif isinstance(value, ast.Call):
                made.append((ctx, value))
            else:
                return None
    return made if given else None


def _alternatives(value: ast.AST | None) -> list[ast.AST | None]:
    """What an expression may evaluate to, through conditional expressions and `or`: `a if c else b` is `a` or `b`."""
    if isinstance(value, ast.IfExp):
        return [*_alternatives(value.body), *_alternatives(value.orelse)]
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return [v for operand in value.values for v in _alternatives(operand)]
    return [value]


def _drops_columns(call: ast.Call) -> bool:
    """`df.drop(columns=...)`, `df.drop(cols, axis=1)`: rows kept."""
    axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
    return any(k.arg == "columns" for k in call.keywords) or (isinstance(axis, ast.Constant) and axis.value in (1, "columns"))


def _per_window(ctx, fit: ast.Call) -> bool:
    """Is `fit` a fresh object's fit on one window of rows, once per turn of a loop (`for start in ...: w =
    series[start:start + n]; StandardScaler().fit_transform(w)`)? Per-sample normalisation: it learns
    nothing across the rows of what the helper is given."""
    loop = next((a for a in ctx.scopes.ancestors(fit) if isinstance(a, (ast.For, ast.While, *LOOPS))), None)
    if loop is None or not isinstance(fit.func, ast.Attribute):
        return False
    inside = set(ast.walk(loop))

    def made_here(node: ast.AST, made) -> bool:  # every value of `node` made in the loop, as `made` says
        if isinstance(node, ast.Name):
            definitions = ctx.analysis(ValueKinds).reaching_definitions(node)
            return bool(definitions) and all(d.node in inside and d.value is not None and made(d.value) for d in definitions)
        return made(node)

    def window(value: ast.AST) -> bool:  # `series[start:start + n]`, `x[i]` in `for i in range(...)` (not `df[[col]]`)
        if not isinstance(value, ast.Subscript):
            return False
        counted = isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == "range"
        return isinstance(value.slice, ast.Slice) or (
            counted and isinstance(value.slice, ast.Name) and isinstance(loop.target, ast.Name) and value.slice.id == loop.target.id
        )  # fmt: skip

    return made_here(fit.func.value, lambda v: isinstance(v, ast.Call)) and made_here(fit.args[0], window)


def _called(ctx, node: ast.AST) -> bool:
    parent = ctx.scopes.parent(node)
    return isinstance(parent, ast.Call) and parent.func is node


def _plots(ctx, call: ast.Call) -> bool:
    """A call that draws: of matplotlib, seaborn or plotly, or an axes' plotting method (`ax.scatter(...)`)."""
    name = ctx.qualified_name(call.func) or ""
    return name.startswith(PLOTTING_MODULES) or (not name and _method(call) in PLOTTING_METHODS)


def _learns_statistics(classes: set[str], vocabulary: bool = True) -> bool:
    """Are these (every class an object may be) scikit-learn transformers, whose fit learns statistics of the
    data it is given (a scaler, an encoder, a decomposition, a pipeline of them)? Estimators, calibrators and
    embeddings for a plot are fitted on validation data on purpose; stateless transformers (`Normalizer`,
    `FunctionTransformer(np.log1p)`) learn nothing. `vocabulary=False`: label and category encoders do not
    count either (fitted on the full label set before a split, as the catalogue allows)."""
    return bool(classes) and all(
        c.startswith(TRANSFORMER_MODULES) and c not in STATELESS_TRANSFORMERS and (vocabulary or not c.endswith(VOCABULARY_ENCODERS))
        for c in classes
    )  # fmt: skip
