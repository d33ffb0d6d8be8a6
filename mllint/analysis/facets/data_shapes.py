"""Where the shapes of training data come from: NumPy arrays, datasets and the loaders that batch them.

`TensorDataset(X, y)` and a `Dataset` class of the project (its `__getitem__` run on what `__init__`
stored; a dict it returns is collated key by key) give samples; `DataLoader(dataset, batch_size=B)`
batches them as the default collate does, with a leading batch dimension that is a symbol (the last
batch may be smaller; a `collate_fn` of the project is run by the shape analysis on a list of `B`
samples instead); `for x, y in loader` (also through `enumerate` and `tqdm`) binds one batch. A sample of unknown shape gives a batch of unknown
rank whose first dimension is the batch: `(batch, ...)`. `full_batches` tells code that runs only on
batches of the full size: in a loop over a loader that drops its last, smaller batch.
"""
from __future__ import annotations

import ast

from mllint.analysis.program.callers import constructions
from mllint.analysis.facets.dims import Sym, dim_key
from mllint.analysis.syntax.names import call_argument, callee_name
from mllint.analysis.syntax.scopes import FUNCTION_NODES
from mllint.analysis.facets.tensor_values import Batches, Fields, Items, Number, Samples, Tensor

NUMPY_SIZES_AS_ARGUMENTS = frozenset({"numpy.random.rand", "numpy.random.randn"})
NUMPY_SHAPE_FIRST = frozenset("numpy." + n for n in ("zeros", "ones", "empty", "full", "random.random", "random.random_sample"))
NUMPY_SIZE_THIRD = frozenset("numpy.random." + n for n in ("normal", "uniform", "randint"))
FROM_ARRAY = frozenset({"torch.from_numpy", "torch.as_tensor", "torch.tensor", "numpy.array", "numpy.asarray"})
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
PROGRESS_BARS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm"})
# Calls a loop may wrap its loader in (`enumerate(loader)`, `tqdm(loader, ...)`): the loader is their first argument.
LOADER_WRAPPERS = frozenset({"enumerate", "tqdm", "iter"})


def numpy_shape(interpreter, node: ast.Call, name: str):
    """The shape of a NumPy array built with sizes: `np.random.rand(n, h, w, c)`, `np.zeros((n, d))`."""
    if name in NUMPY_SIZES_AS_ARGUMENTS:
        return interpreter.sizes(node.args) if node.args and not node.keywords else None
    if name in NUMPY_SHAPE_FIRST:
        size = call_argument(node, 0, "size" if name.startswith("numpy.random.") else "shape")
    elif name in NUMPY_SIZE_THIRD:
        size = call_argument(node, 2, "size")
    else:
        return None
    return interpreter.sizes([size]) if size is not None else None


def data_value(interpreter, node: ast.Call, name: str | None, arguments: list) -> object | None:
    """The dataset, loader or iterable of batches a call builds, if it builds one."""
    first = arguments[0] if arguments else None
    if name in TENSOR_DATASETS:
        if not arguments or len(arguments) != len(node.args) or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        return Samples(Items(tuple(_row(a) for a in arguments)))
    if name in DATA_LOADERS:
        dataset = first if node.args else interpreter.value_of(call_argument(node, 0, "dataset"))
        if not isinstance(dataset, Samples) or call_argument(node, 6, "collate_fn") is not None:
            return None
        batch = _batch_dimension(node)
        return Batches(dataset.item if batch is None else collate(dataset.item, batch))
    if name in PROGRESS_BARS and isinstance(first, Batches):
        return first
    if name is None and isinstance(node.func, ast.Name) and node.func.id == "enumerate" and isinstance(first, Batches):
        return Batches(Items((Number(None), first.item)))
    return None


def collate(item: object, batch, key: tuple = ("batch",)) -> object | None:
    """What the default collate makes of samples `item`: tensors and numbers stacked along a new first
    dimension `batch`, tuples and dicts collated element-wise. `key` identifies the batch's value."""
    key = (*key, dim_key(batch))
    if isinstance(item, Items):
        return Items(tuple(collate(v, batch, (*key, i)) for i, v in enumerate(item.values)))
    if isinstance(item, Fields):
        return Fields(tuple((k, collate(v, batch, (*key, k))) for k, v in item.values))
    if isinstance(item, Number):
        return Tensor((batch,), key)
    if isinstance(item, Tensor):
        if item.shape is not None:
            return Tensor((batch, *item.shape), (*key, item.key))
        return Tensor(None, (*key, item.key), item.label, ((batch,), item.ends[1] if item.ends else ()))
    return None


def _row(value: object) -> object | None:
    """One sample of a tensor the dataset indexes along its first dimension."""
    if isinstance(value, Tensor) and value.shape:
        return Tensor(value.shape[1:], ("row", value.key))
    return Tensor(None, ("row", value.key)) if isinstance(value, Tensor) else None


def _batch_dimension(loader: ast.Call):
    size = call_argument(loader, 1, "batch_size")
    if size is None:
        return 1  # the default batch size
    if isinstance(size, ast.Constant) and size.value is None:
        return None
    label = ast.unparse(size) if isinstance(size, (ast.Name, ast.Attribute)) else "batch"
    return Sym(("batch", id(loader)), label)


def full_batches(ctx, node: ast.AST) -> bool:
    """Does `node` run in the iteration of a loop (of its function) over a `DataLoader` built with
    `drop_last=True` and a batch size other than 1 (as the file, or each call site passing the loader,
    tells)? Every batch there has the size asked: its batch dimension is never a lone 1."""
    child = node
    for ancestor in ctx.scopes.ancestors(node):
        if isinstance(ancestor, FUNCTION_NODES):
            return False
        if isinstance(ancestor, (ast.For, ast.AsyncFor)) and child is not ancestor.iter and _drops_last(ctx, ancestor.iter):
            return True
        child = ancestor
    return False


def _drops_last(ctx, iterable: ast.AST) -> bool:
    while isinstance(iterable, ast.Call) and callee_name(iterable) in LOADER_WRAPPERS and iterable.args:
        iterable = iterable.args[0]
    found = [(c, call) for (c, call), _ in constructions(ctx, iterable)]
    return bool(found) and all(
        c.qualified_name(call.func) in DATA_LOADERS and _is_true(call_argument(call, 8, "drop_last"))
        and not _is_one(call_argument(call, 1, "batch_size"))
        for c, call in found
    )  # fmt: skip


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _is_one(node: ast.AST | None) -> bool:
    """No batch size (the default, 1) or a literal 1."""
    return node is None or (isinstance(node, ast.Constant) and node.value == 1)
