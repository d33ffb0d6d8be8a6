import ast
import re

from mllint.analysis.values.values import ValueKinds
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line

FITTING_METHODS = frozenset({"fit", "fit_transform"})
# scikit-learn modules whose classes learn statistics of the data they transform.
TRANSFORMER_MODULES = (
    "sklearn.preprocessing.", "sklearn.decomposition.", "sklearn.feature_selection.", "sklearn.impute.",
    "sklearn.feature_extraction.", "sklearn.random_projection.", "sklearn.kernel_approximation.",
)  # fmt: skip
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

PART_WORDS = ("train", "test", "val", "eval", "holdout")
COLUMN_NAME = re.compile(r"col|feature|field|attr|name", re.IGNORECASE)


class StatisticsBeforeSplit(Rule):
    """
    ## What it does
    Reports statistics fitted on a whole data set that is split into training and evaluation parts
    afterwards, in the same function or script: a scikit-learn transformer (`StandardScaler`, `PCA`,
    `SimpleImputer`...) fitted with `fit` / `fit_transform`, or a normalisation written out
    (`X = (X - X.mean(0)) / X.std(0)`), followed by `train_test_split`, `cross_val_score` (and the other
    cross-validation helpers), `torch.utils.data.random_split`, a splitter's `.split(X)`, or slicing
    into two parts (`X[:n]` and `X[n:]`) of that data or of anything computed from it. Statistics of
    the training part only (`scaler.fit(X_train)`), and transformers inside a `Pipeline` handed to
    `cross_val_score` or `GridSearchCV`, are fine and not reported.

    ## Why is this bad?
    The evaluation rows took part in the statistics the training data is transformed with: their mean,
    spread, components or imputed values leak into training, and the reported score is better than
    what the model will do on new data. Nothing fails.

    ## Example
    ```python
    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = np.random.rand(100, 3), np.random.rand(100)
    X = StandardScaler().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(X, y)
    ```

    ## Use instead
    ```python
    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = np.random.rand(100, 3), np.random.rand(100)
    X_train, X_test, y_train, y_test = train_test_split(X, y)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    ```

    ## Fix safety
    There is no fix: the split has to move before the statistics, which may reorder much of the code.
    """

    code = "ML805"
    name = "statistics-before-split"
    message = "`{fit}` computes statistics of `{data}` before it is split (line {line}): the evaluation part leaks into training; split first and fit on the training part"
    severity = Severity.ERROR
    requires_any_text = ("split", "[:")

    def visit_Call(self, node: ast.Call) -> None:
        data = self._fitted_data(node)
        if data is None:
            return
        statement = _statement(self.ctx, node)
        tainted = {data}
        holds_statistic = statement.value is node and self._statistic_of(node) is not None  # `mean = X.mean(0)`
        if isinstance(statement, ast.Assign) and not holds_statistic:
            tainted |= {_key(t) for t in statement.targets} - {None}
        split = self._later_split(statement, tainted)
        if split is not None:
            self.report(node, self.message.format(fit=one_line(self.ctx.text(node), 50), data=data, line=split.lineno))

    def _fitted_data(self, call: ast.Call) -> str | None:
        """The data a transformer is fitted on, or a statistic is computed of, when it then transforms it."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in FITTING_METHODS and call.args:
            constructed = self.ctx.analysis(ValueKinds).constructed_class(func.value)
            constructor = func.value if isinstance(func.value, ast.Call) else None
            name = constructed or (self.ctx.qualified_name(constructor.func) if constructor is not None else None)
            return _whole(call.args[0]) if name and name.startswith(TRANSFORMER_MODULES) else None
        data = self._statistic_of(call)
        if data is None:
            return None
        statement = _statement(self.ctx, call)
        if not isinstance(statement, ast.Assign):
            return None
        statistics = [c for c in self._statistic_calls(statement.value) if self._statistic_of(c) == data]
        if call not in statistics or min(statistics, key=lambda c: (c.lineno, c.col_offset)) is not call:
            return None  # one finding per statement, at its first statistic
        if _reads(statement.value, data, outside=statistics):
            return data  # the statement transforms the data: `X = (X - X.mean(0)) / X.std(0)`
        # `mean, std = X.mean(0), X.std(0)`, then an assignment computed from both: `X = (X - mean) / std`.
        held = {_key(n) for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        scope = self.ctx.scopes.enclosing_function(statement) or self.ctx.tree
        for later in self.ctx.index.within(scope, ast.Assign):
            if later.lineno > statement.end_lineno and _reads_any(later.value, held) and _reads(later.value, data):
                return data
        return None

    def _statistic_of(self, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in STATISTIC_METHODS and self.ctx.qualified_name(func) is None:
            return _whole(func.value)
        if self.ctx.qualified_name(func) in STATISTIC_FUNCTIONS and call.args:
            return _whole(call.args[0])
        return None

    def _statistic_calls(self, expr: ast.AST) -> list[ast.Call]:
        return [n for n in ast.walk(expr) if isinstance(n, ast.Call) and self._statistic_of(n) is not None]

    def _later_split(self, statement: ast.AST, tainted: set[str]) -> ast.AST | None:
        """The first split of tainted data after `statement`, following assignments computed from it."""
        scope = self.ctx.scopes.enclosing_function(statement) or self.ctx.tree
        halves: dict[tuple[str, str], set[str]] = {}
        for node in self.ctx.index.within(scope, ast.Assign, ast.Call, ast.Subscript):
            if (node.lineno, node.col_offset) <= (statement.end_lineno, statement.end_col_offset):
                continue
            if isinstance(node, ast.Call) and any(_key(a) in tainted for a in self._split_data(node)):
                return node
            if isinstance(node, ast.Subscript) and _key(node.value) in tainted and self._names_a_part(node):
                half = _half(self.ctx, node.slice)
                if half is not None:
                    side, bound = half
                    halves.setdefault((_key(node.value), bound), set()).add(side)
                    if len(halves[(_key(node.value), bound)]) == 2:
                        return node
            if isinstance(node, ast.Assign) and _reads_any(node.value, tainted):
                tainted |= {_key(t) for t in node.targets} - {None}
        return None

    def _names_a_part(self, subscript: ast.Subscript) -> bool:
        """Is the slice assigned to a name that says training or evaluation data (`X_train = X[:n]`)?"""
        statement = _statement(self.ctx, subscript)
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        return any(word in self.ctx.text(t).lower() for t in targets for word in PART_WORDS)

    def _split_data(self, call: ast.Call) -> list[ast.AST]:
        name = self.ctx.qualified_name(call.func)
        if name in SPLITS:
            position = SPLITS[name]
            return list(call.args) if position is None else call.args[position : position + 1]
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "split" and call.args:
            splitter = self.ctx.analysis(ValueKinds).constructed_class(func.value) or ""
            return call.args[:1] if splitter.startswith("sklearn.model_selection.") else []
        return []


def _statement(ctx, node: ast.AST) -> ast.AST:
    while not isinstance(node, ast.stmt):
        node = ctx.scopes.parent(node)
    return node


def _key(node: ast.AST) -> str | None:
    """What names a data set: `X`, `self.data`, and `df` for `df[cols]`."""
    while isinstance(node, ast.Subscript):
        node = node.value
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _whole(node: ast.AST) -> str | None:
    """The key of a whole data set: `X`, `df[cols]`, `df["age"]` (columns keep every row); None for a
    part of the rows (`X[:n]`, `X[train_idx]`)."""
    inner = node
    while isinstance(inner, ast.Subscript):
        index = inner.slice
        columns = isinstance(index, ast.Constant) and isinstance(index.value, str)
        columns |= isinstance(index, ast.List) and all(isinstance(e, ast.Constant) for e in index.elts)
        columns |= isinstance(index, (ast.Name, ast.Attribute)) and bool(COLUMN_NAME.search(_key(index) or ""))
        if not columns:
            return None
        inner = inner.value
    return _key(node)


def _reads(expr: ast.AST, data: str, outside: list[ast.AST] = ()) -> bool:
    """Does `expr` read `data` other than inside the `outside` sub-expressions?"""
    skipped = {id(n) for o in outside for n in ast.walk(o)}
    return any(id(n) not in skipped and _key(n) == data for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))


def _reads_any(expr: ast.AST, keys: set[str]) -> bool:
    return any(_key(n) in keys for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))


def _half(ctx, index: ast.AST) -> tuple[str, str] | None:
    """`[:n]` -> ("head", "n"), `[n:]` -> ("tail", "n"); the first dimension only."""
    if isinstance(index, ast.Tuple) and index.elts:
        index = index.elts[0]
    if not isinstance(index, ast.Slice) or index.step is not None:
        return None
    if index.lower is None and index.upper is not None:
        return "head", ctx.text(index.upper)
    if index.upper is None and index.lower is not None:
        return "tail", ctx.text(index.lower)
    return None
