"""Shapes of tabular data: pandas frames and the NumPy arrays a text table is read into.

A frame read or built by pandas (`pd.read_csv(path)`, `pd.DataFrame(...)`) has a symbol for its rows; a
column `df["y"]` (or `df.y`) is a Series `(rows,)`, a list of columns `df[["y"]]` (or a name the module assigns such
a list, `df[FEATURES]`, also imported, or a parameter every call site gives one; a list display of any names, `df[[target]]`; a configuration entry, `df[cfg["target"]]`, by the constants it may hold) a frame of that many columns, `df.iloc[...]` indexes it as an array
(`df.iloc[i]` is a row: a Series over the columns, whose labels `row["y"]` give a value and `row[FEATURES]` a Series); `.values`
and `.to_numpy()` give the array. Methods that change only values (`fillna(0)`, `replace(0, 1.0)`, `clip(...)`,
`VALUE_ONLY`) keep its shape, a Series over a frame's columns too (`df.std().replace(0, 1.0)`). Methods that keep
the columns (`dropna()`, `sample(frac=1)`, ...) give a frame of other rows, and so does a slice of its rows (`df[:n_train]`); `drop(...)`, `set_index(...)` and `select_dtypes(...)` a frame of columns not known (of the same rows when only columns are named), and `pd.get_dummies(...)` a frame. `np.loadtxt` / `np.genfromtxt` read at most two dimensions: two with `ndmin=2` or a
listed `usecols=(0, 1, 2)` (of that many columns), one with a single `usecols=3`; otherwise an index of two items (`raw[:, -1:]`) tells there are two.
A scikit-learn scaler's `transform` keeps the shape of what it scales.
"""
from __future__ import annotations

import ast

from mllint.analysis.facets.dims import Sym
from mllint.analysis.facets.indexing import index_shape, int_literal
from mllint.analysis.facets.tensor_values import NUMBER, Fields, Frame, Items, Listed, Number, Scaler, Splitter, Tensor
from mllint.analysis.syntax.names import call_argument

READERS = frozenset("pandas." + n for n in "read_csv read_table read_parquet read_excel read_feather read_pickle read_json DataFrame get_dummies".split())
TEXT_TABLES = frozenset({"numpy.loadtxt", "numpy.genfromtxt"})
SKLEARN_LOADERS = frozenset("sklearn.datasets." + n for n in "load_iris load_diabetes load_breast_cancer load_wine load_digits fetch_california_housing fetch_covtype".split())
SKLEARN_GENERATORS = frozenset("sklearn.datasets." + n for n in "make_regression make_classification make_blobs make_moons make_circles make_friedman1 make_hastie_10_2".split())
SAME_COLUMNS = frozenset("dropna sample reset_index sort_values sort_index drop_duplicates head tail query rename take nlargest nsmallest".split())
# Methods that change values entry by entry and keep the index and the columns: of a frame, a Series, or a
# Series over a frame's columns (`df.std().replace(0, 1.0)` still standardises `df` column by column).
VALUE_ONLY = frozenset("replace clip fillna abs round astype copy where mask interpolate ffill bfill".split())
OTHER_COLUMNS = frozenset({"drop", "select_dtypes", "assign", "set_index"})  # a frame still, of columns not known
PROPERTIES = frozenset("T at attrs axes columns dtypes empty flags iat iloc index loc ndim shape size style values plot sparse".split())  # a frame's, not its columns
ACCESSORS = frozenset({"dt", "str"})  # a Series' element-wise accessors: `s.dt.total_seconds()` is a Series again
MASKS = frozenset("isna notna isnull notnull isin between duplicated".split())  # a Series' boolean masks
NOT_ELEMENTWISE = frozenset("get_dummies extract extractall partition rpartition split rsplit cat isocalendar components".split())
SCALERS = frozenset("sklearn.preprocessing." + n for n in "StandardScaler MinMaxScaler MaxAbsScaler RobustScaler Normalizer QuantileTransformer PowerTransformer".split())
SCALINGS = frozenset({"transform", "fit_transform", "inverse_transform"})  # of a scaler: the array's shape
SPLITTERS = frozenset("sklearn.model_selection." + n for n in (
    "KFold StratifiedKFold GroupKFold StratifiedGroupKFold TimeSeriesSplit ShuffleSplit StratifiedShuffleSplit "
    "GroupShuffleSplit RepeatedKFold RepeatedStratifiedKFold"
).split())
FITS = frozenset({"fit", "partial_fit"})  # return the estimator
ANY = "any"  # a list of columns of unknown length
ARRAYS = frozenset({"to_numpy", "__array__"})
REDUCTIONS = frozenset("max min mean median sum std var".split())
WINDOWS = frozenset({"resample", "rolling", "expanding", "ewm", "groupby"})  # what their aggregations give: rows by the window
SAME_ROWS = frozenset({"rolling", "expanding", "ewm"})  # one result per row
WINDOW_AGGREGATIONS = REDUCTIONS | {"first", "last", "count"}
OPERATOR_METHODS = frozenset("add sub mul div truediv".split())  # `df.sub(mu)`: `df - mu`


def frame_arithmetic(left: object, right: object, key: tuple) -> Frame | None:
    """A frame with a number (`df["year"] - 2000`), with a frame of its shape (`df["a"] / df["b"]`), or a
    table with a Series over its columns (`(df - df.mean()) / df.std()`): a frame of the table's shape."""
    frames = [v for v in (left, right) if isinstance(v, Frame) and not v.positional and not v.labelled and not v.windowed]
    others = [v for v in (left, right) if not isinstance(v, Frame)]
    if not frames or not all(isinstance(v, Number) for v in others):
        return None
    tables = [f for f in frames if not f.across]
    if len(tables) == 1 and len(tables[0].shape) == 2 and all(f.shape[0] in (None, tables[0].shape[1]) for f in frames if f.across):
        return Frame(tables[0].shape, key)
    if len({(f.shape, f.across) for f in frames}) != 1:
        return None
    return Frame(frames[0].shape, key, across=frames[0].across)


def read_table(node: ast.Call, name: str | None) -> object | None:
    """A frame pandas reads or builds, a table NumPy reads from text, or the arrays a scikit-learn data set
    loader (not as a frame; a Bunch of `data` and `target` without `return_X_y=True`) or generator returns:
    `X` `(n, features)`, `y` `(n,)`."""
    key = ("table", id(node))
    if name in READERS:
        return Frame((Sym(("size", key, 0), "rows"), None), key)
    if name in SKLEARN_LOADERS or name in SKLEARN_GENERATORS:
        return _sklearn_arrays(node, name, key)
    if name not in TEXT_TABLES or call_argument(node, 99, "unpack") is not None:
        return None
    rows = Sym(("size", key, 0), "rows")
    if isinstance(call_argument(node, 99, "usecols"), ast.Constant) and int_literal(call_argument(node, 99, "ndmin")) in (None, 0, 1):
        return Tensor((rows,), key, "table")
    if int_literal(call_argument(node, 99, "ndmin")) == 2:
        return Tensor((rows, Sym(("size", key, 1), "columns")), key, "table")
    columns = call_argument(node, 99, "usecols")
    if isinstance(columns, (ast.Tuple, ast.List)) and len(columns.elts) > 1 and not any(isinstance(c, ast.Starred) for c in columns.elts):
        return Tensor((rows, len(columns.elts)), key, "table")  # `usecols=(0, 1, 2)`: that many columns
    return Tensor(None, key, "table", max_rank=2)


def _sklearn_arrays(node: ast.Call, name: str, key: tuple) -> Items | None:
    keywords = {k.arg: k.value for k in node.keywords}
    if None in keywords or node.args or _literal(keywords.get("as_frame")) is True:
        return None
    if name in SKLEARN_GENERATORS and int_literal(keywords.get("n_targets", ast.Constant(1))) != 1:
        return None  # `make_regression(n_targets=3)`: y is `(n, 3)`
    rows = int_literal(keywords.get("n_samples")) or Sym(("size", key, 0), "n_samples")
    features = int_literal(keywords.get("n_features")) or Sym(("size", key, 1), "n_features")
    arrays = Tensor((rows, features), (*key, "X"), "X"), Tensor((rows,), (*key, "y"), "y")
    if name in SKLEARN_LOADERS and _literal(keywords.get("return_X_y")) is not True:
        return Fields((("data", arrays[0]), ("target", arrays[1])))  # a Bunch: `bunch.data`, `bunch["target"]`
    return Items(arrays)


def _literal(node: ast.AST | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def scaling(node: ast.Call, name: str | None, receiver: object, arguments: list) -> object | None:
    """A scikit-learn scaler (`StandardScaler()`, fitted: `.fit(X)` is the scaler) and what it scales:
    `scaler.transform(X)` (`fit_transform`, `inverse_transform`) is an array of X's shape (a frame's too)."""
    if name in SCALERS:
        return Scaler(name)
    if not isinstance(receiver, Scaler):
        return None
    if node.func.attr in FITS:
        return receiver
    array = arguments[0] if len(arguments) == 1 and not node.keywords else None
    if node.func.attr in SCALINGS and isinstance(array, (Tensor, Frame)) and array.shape is not None:
        return Tensor(array.shape, ("call", id(node)))
    return None


def splitting(node: ast.Call, name: str | None, receiver: object) -> object | None:
    """A scikit-learn cross-validation splitter (`KFold(5)`, `TimeSeriesSplit(...)`) and its folds:
    `splitter.split(X)` gives a (train, test) pair of one-dimensional arrays of row positions per fold."""
    if name in SPLITTERS:
        return Splitter(name)
    if not isinstance(receiver, Splitter) or not isinstance(node.func, ast.Attribute) or node.func.attr != "split":
        return None
    key = ("call", id(node))
    parts = (Tensor((Sym(("size", key, part), label),), (*key, part), label) for part, label in enumerate(("train", "test")))
    return Listed(Items(tuple(parts)), None)


def table_rows(table: Tensor, items: list[ast.AST]) -> Tensor:
    """A table of at most two dimensions indexed with two items has two: their sizes, as `shape` names them."""
    if table.shape is None and table.max_rank == len(items) and not any(isinstance(i, ast.Constant) and i.value in (None, Ellipsis) for i in items):
        return Tensor(tuple(Sym(("size", table.key, i), f"{table.label}.shape[{i}]") for i in range(len(items))), table.key, table.label)
    return table


def frame_attribute(frame: Frame, attribute: str) -> object | None:
    if frame.labelled or frame.windowed:
        return None
    if frame.accessor:
        return None if attribute in NOT_ELEMENTWISE else Frame(frame.shape, ("accessor", attribute, frame.key))
    if attribute in ACCESSORS and len(frame.shape) == 1 and not frame.positional:
        return Frame(frame.shape, ("accessor", attribute, frame.key), accessor=True)
    if attribute == "values":
        return Tensor(frame.shape, ("values", frame.key))
    if attribute == "iloc" and not frame.positional:
        return Frame(frame.shape, frame.key, positional=True)
    if attribute == "loc" and not frame.positional and not frame.labelled:
        return Frame(frame.shape, frame.key, labelled=True)
    if len(frame.shape) == 2 and not frame.positional and not frame.across and attribute not in PROPERTIES and not attribute.startswith("_"):
        return Frame(frame.shape[:1], ("column", attribute, frame.key))  # `df.price`: a column by its name
    return None


def frame_method(node: ast.Call, method: str, frame: Frame) -> object | None:
    if method in VALUE_ONLY and not (frame.positional or frame.labelled or frame.windowed or frame.accessor):
        return Frame(frame.shape, ("call", id(node)), across=frame.across)
    if frame.positional or frame.labelled or frame.across and method not in ARRAYS:
        return None
    if frame.windowed:  # `df.resample("1h").mean()`, `s.rolling(20).std()`: a frame of the window's shape
        return Frame(frame.shape, ("call", id(node))) if method in WINDOW_AGGREGATIONS and not node.args else None
    if method in WINDOWS:
        rows = frame.shape[0] if method in SAME_ROWS else Sym(("size", ("table", id(node)), 0), "rows")
        columns = (None,) if method == "groupby" and len(frame.shape) == 2 else frame.shape[1:]  # (a key column becomes the index)
        return Frame((rows, *columns), ("table", id(node)), windowed=True)
    if method in REDUCTIONS and len(frame.shape) == 2 and not node.args and all(k.arg in ("numeric_only", "skipna", "ddof") for k in node.keywords):
        return Frame(frame.shape[1:], ("call", id(node)), across=True)  # `df.mean()`: one value per column
    if frame.accessor:  # `s.dt.total_seconds()`, `s.str.len()`: one value per row
        return None if method in NOT_ELEMENTWISE or any(k.arg == "expand" for k in node.keywords) else Frame(frame.shape, ("call", id(node)))
    if method in ARRAYS:
        return Tensor(frame.shape, ("values", frame.key))
    if method in REDUCTIONS and len(frame.shape) == 1 and not node.args and not node.keywords:
        return NUMBER  # `df["year"].max()`: one value of a Series
    if method in MASKS and len(frame.shape) == 1:
        return Frame(frame.shape, ("call", id(node)))  # `is_val = df["id"].isin(ids)`: a mask of its rows
    if method in SAME_COLUMNS or method in OTHER_COLUMNS:
        key = ("table", id(node))
        if method in OTHER_COLUMNS and not node.args and [k.arg for k in node.keywords] in (["columns"], ["include"], ["exclude"]):
            return Frame((frame.shape[0], None), key)  # the same rows: `drop(columns=...)`, `select_dtypes(include=...)`
        return Frame((Sym(("size", key, 0), "rows"), *(frame.shape[1:] if method in SAME_COLUMNS else (None,))), key)
    return None


def frame_operation(node: ast.Call, frame: Frame, arguments: list) -> Frame | None:
    """`df.sub(df.mean()).div(df.std())`: the arithmetic operators' methods, along the columns (no `axis`)."""
    if node.func.attr not in OPERATOR_METHODS or len(arguments) != 1 or node.keywords:
        return None
    return frame_arithmetic(frame, arguments[0], ("call", id(node)))


def frame_popped(interpreter, node: ast.Call, frame: Frame) -> Frame | None:
    """`df.pop("y")`: the column taken out of a frame, a Series of its rows."""
    if node.func.attr != "pop" or len(node.args) != 1 or node.keywords or len(frame.shape) != 2 or frame.positional or frame.labelled:
        return None
    return Frame(frame.shape[:1], ("index", id(node), frame.key)) if _columns(interpreter, node.args[0]) == () else None


def frame_item(interpreter, frame: Frame, node: ast.Subscript, items: list[ast.AST]) -> object | None:
    """`df["y"]`, `df[["a", "b"]]`, `df[FEATURES]`, `df.iloc[:, -1]`."""
    key = ("index", id(node), frame.key)
    if frame.windowed:  # `df.groupby("id")["y"]`, `df.resample("1h")[["a", "b"]]`: those columns, windowed alike
        selected = _columns(interpreter, items[0]) if len(items) == 1 and len(frame.shape) == 2 else None
        if selected is None:
            return None
        return Frame((frame.shape[0], *(() if selected == () else (selected if selected != ANY else None,))), key, windowed=True)
    if frame.positional:
        integers = {id(i) for i in items if isinstance(interpreter.seen.get(i), Number)}
        rows = {id(items[0]): Sym(("size", key, 0), "rows")} if _index_array(interpreter.seen.get(items[0])) else {}
        shape = index_shape(frame.shape, items, integers, rows)  # `df.iloc[idx[:n]]`: the rows an index array picks
        if shape == ():
            return NUMBER  # `df.iloc[i, -1]`: one cell
        return Frame(shape, key) if shape is not None and 1 <= len(shape) <= 2 else None
    if frame.labelled:
        return _located(interpreter, frame, items, key)
    if len(items) != 1 or len(frame.shape) not in (1, 2):
        return None
    if isinstance(items[0], ast.Slice) or _row_filter(interpreter, items[0], frame.shape[0]):  # other rows, the same columns
        return Frame((Sym(("size", key, 0), "rows"), *frame.shape[1:]), key)
    selected = _columns(interpreter, items[0])
    if selected is None:
        return None
    if len(frame.shape) == 1:  # a Series by its labels (`row["price"]` of `row = df.iloc[i]`): a value, or a Series of those
        return NUMBER if selected == () else Frame((selected if selected != ANY else None,), key)
    return Frame(frame.shape[:1], key) if selected == () else Frame((frame.shape[0], selected if selected != ANY else None), key)


def _located(interpreter, frame: Frame, items: list[ast.AST], key: tuple) -> Frame | None:
    """`df.loc[mask]`, `df.loc[:1000]`, `df.loc[mask, "y"]`, `df.loc[mask, ["a", "b"]]`: other rows, the
    same columns or those named."""
    rows = items[0]
    if not (isinstance(rows, ast.Slice) or _row_filter(interpreter, rows, frame.shape[0]) or _index_array(interpreter.seen.get(rows))) or len(items) > 2:
        return None
    selected = _columns(interpreter, items[1]) if len(items) == 2 and len(frame.shape) == 2 else None
    if len(items) == 2 and not (isinstance(items[1], ast.Slice) and items[1].lower is None and items[1].upper is None):
        if selected is None:
            return None
        return Frame((Sym(("size", key, 0), "rows"),) if selected == () else (Sym(("size", key, 0), "rows"), selected if selected != ANY else None), key)
    return Frame((Sym(("size", key, 0), "rows"), *frame.shape[1:]), key)


def _index_array(value: object) -> bool:
    """A one-dimensional array or a Python list of labels or positions: it picks rows (`df.iloc[perm[:n]]`,
    `df.loc[train_ids]`)."""
    if isinstance(value, Listed):
        return isinstance(value.item, Number)
    return isinstance(value, Tensor) and value.shape is not None and len(value.shape) == 1


def _row_filter(interpreter, index: ast.AST, rows: object) -> bool:
    """Is `index` a boolean mask of rows: a comparison, a mask method (`isna()`, `isin(...)`), `~`, `&` / `|`
    of masks, a Series (`df[mask]`), or an array of the frame's rows (`rng.random(len(df)) < 0.9`)?"""
    if isinstance(index, ast.Name):  # `mask = (df["city"] == c) & df["y"].notna()`, then `df.loc[mask, cols]`
        bound = interpreter.shapes.values.reaching_values(index)
        index = bound[0] if bound is not None and len(bound) == 1 and isinstance(bound[0], (ast.Compare, ast.BinOp, ast.UnaryOp)) else index
    if isinstance(index, ast.Compare):
        return True
    if isinstance(index, ast.Call) and isinstance(index.func, ast.Attribute) and index.func.attr in MASKS:
        return True  # `df[df.y.notna()]`
    if isinstance(index, ast.UnaryOp):
        return isinstance(index.op, ast.Invert) and _row_filter(interpreter, index.operand, rows)
    if isinstance(index, ast.BinOp):
        return isinstance(index.op, (ast.BitAnd, ast.BitOr)) and _row_filter(interpreter, index.left, rows) and _row_filter(interpreter, index.right, rows)
    value = interpreter.seen.get(index)
    if isinstance(value, Tensor):
        return value.shape is not None and len(value.shape) == 1 and value.shape[0] is not None and value.shape[0] == rows
    return isinstance(value, Frame) and len(value.shape) == 1 and not value.positional and not value.accessor and not value.labelled


def _columns(interpreter, index: ast.AST) -> int | tuple | str | None:
    """How many columns an index names: () for one column (a string), the count for a list of strings,
    `ANY` for a Python list of unknown length (`cols = [c for c in df.columns if ...]`, passed in)."""
    if isinstance(index, ast.BinOp) and isinstance(index.op, ast.Add):  # `NUMERIC + ["price"]`, `prefix + "_y"`
        parts = [_columns(interpreter, side) for side in (index.left, index.right)]
        if parts == [(), ()]:
            return ()
        if all(isinstance(p, int) or p == ANY for p in parts):
            return sum(parts) if all(isinstance(p, int) for p in parts) else ANY
        return None
    listed = interpreter.seen.get(index)
    if isinstance(listed, Listed):  # (a tuple would be one key of a multi-level header)
        return listed.length if isinstance(listed.length, int) and listed.length > 0 else ANY
    copied = isinstance(index, ast.Call) and isinstance(index.func, ast.Name) and index.func.id in ("list", "tuple") and len(index.args) == 1
    if copied and isinstance(index.args[0], ast.Name):  # `df[list(features)]`
        keys = interpreter.shapes.constants(index.args[0]) if interpreter.shapes.values.reaching_values(index.args[0]) is None else None
        named = _named(keys)
        return named if named != () else None
    if isinstance(index, ast.Name):
        values = interpreter.shapes.values.reaching_values(index)
        if values is None:  # a parameter (`target="price"`, `num_cols` given `NUM`), an imported list of names
            return _named(interpreter.shapes.constants(index))
        index = values[0] if len(values) == 1 else None
    if isinstance(index, (ast.Attribute, ast.Subscript)):  # `df[cfg.target]`, `df[cfg["target"]]`: one column when every value it may be names one
        return _named(interpreter.shapes.constants(index))
    if isinstance(index, ast.Constant) and isinstance(index.value, str):
        return ()
    if isinstance(index, (ast.List, ast.Tuple)) and index.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in index.elts):
        return len(index.elts)
    if isinstance(index, ast.List) and index.elts and not any(isinstance(e, ast.Starred) for e in index.elts):
        return len(index.elts)  # `df[[target]]`: a list display names one column per item, whatever they hold
    return None


def _named(keys: frozenset | None) -> int | tuple | None:
    """The columns every constant an index may be names: () for one (a string), the count for lists of
    strings of one length."""
    if keys and all(isinstance(k, str) for k in keys):
        return ()
    counts = {len(k) if isinstance(k, tuple) and all(isinstance(c, str) for c in k) else None for k in keys or ()}
    return counts.pop() if len(counts) == 1 and None not in counts and 0 not in counts else None
