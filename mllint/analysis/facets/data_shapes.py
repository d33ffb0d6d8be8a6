"""Where the shapes of training data come from: datasets and the loaders that batch them (the NumPy and
torch functions that make arrays are rows of `vocabulary`).

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

from mllint.analysis.objects.call_sites import built, makers
from mllint.analysis.program.callers import constructions
from mllint.analysis.facets.dims import Sym, dim_key
from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.syntax.names import call_argument, callee_name
from mllint.analysis.syntax.scopes import FUNCTION_NODES
from mllint.analysis.facets.tensor_values import NUMBER, Batches, Fields, Frame, Items, Listed, Number, Samples, Tensor
from mllint.analysis.values.values import ValueKinds

COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
SPLITTERS = frozenset({"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"})  # parts of a dataset
ARRAY_SPLITTER = "sklearn.model_selection.train_test_split"  # two parts of each array, rows split
SUBSETS = frozenset({"torch.utils.data.Subset", "torch.utils.data.dataset.Subset"})
BATCH_SAMPLERS = frozenset({"torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler"})
PROGRESS_BARS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm"})
# Calls a loop may wrap its loader in (`enumerate(loader)`, `tqdm(loader, ...)`): the loader is their first argument.
LOADER_WRAPPERS = frozenset({"enumerate", "tqdm", "iter"})
RESHAPES = frozenset({"view", "reshape"})
ENVIRONMENT_MAKERS = frozenset({"gym.make", "gymnasium.make"})  # one environment (`make_vec`, `gym.vector.make`: many)
ENVIRONMENT_WRAPPERS = ("gym.wrappers.", "gymnasium.wrappers.")


# torchvision's datasets of small images: a sample's `(channels, height, width)` once `ToTensor()` made it
# a tensor, with an int label.
IMAGE_DATASETS = {
    **dict.fromkeys(("MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST"), (1, 28, 28)),
    **dict.fromkeys(("CIFAR10", "CIFAR100", "SVHN"), (3, 32, 32)),
}
# The transforms (of `torchvision.transforms` and its `v2`) whose effect on an image's size is known: those
# that make a tensor of it, those that keep its size, those that cut or scale it to a side given (`Resize(n)`
# scales the shorter side: these images are square) and `Grayscale`, which sets the channels.
TO_TENSOR = frozenset({"ToTensor", "PILToTensor", "ToImage"})
SIZE_KEEPING = frozenset({
    "Normalize", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "RandomAffine", "ColorJitter",
    "RandomErasing", "ConvertImageDtype", "ToDtype", "AutoAugment", "RandAugment", "TrivialAugmentWide",
    "RandomGrayscale", "GaussianBlur", "RandomInvert", "RandomAutocontrast", "RandomEqualize",
})  # fmt: skip
SIZING = frozenset({"Resize", "RandomCrop", "CenterCrop", "RandomResizedCrop"})
TRANSFORMS = ("torchvision.transforms.", "torchvision.transforms.v2.")


def data_value(interpreter, node: ast.Call, name: str | None, arguments: list) -> object | None:
    """The dataset, loader or iterable of batches a call builds, if it builds one."""
    first = arguments[0] if arguments else None
    if name and name.startswith("torchvision.datasets.") and name.rsplit(".", 1)[-1] in IMAGE_DATASETS:
        return library_samples(interpreter.ctx, node, IMAGE_DATASETS[name.rsplit(".", 1)[-1]])
    if name in TENSOR_DATASETS:
        tensors = spread_arguments(interpreter, node)
        return Samples(Items(tuple(_row(a) for a in tensors))) if tensors else None
    if name in SUBSETS and isinstance(first, Samples):
        return first  # its samples are the dataset's
    if name in SPLITTERS and isinstance(first, Samples):
        lengths = call_argument(node, 1, "lengths")  # `tr, te = random_split(ds, [500, 100])`: datasets of its samples
        return Items((first,) * len(lengths.elts)) if isinstance(lengths, (ast.List, ast.Tuple)) else None
    if name == ARRAY_SPLITTER and arguments and len(arguments) == len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args):
        return Items(tuple(_split_part(a, (id(node), i, part)) for i, a in enumerate(arguments) for part in (0, 1)))
    if name in DATA_LOADERS:
        dataset = as_dataset(first if node.args else interpreter.value_of(call_argument(node, 0, "dataset")))
        if not isinstance(dataset, Samples) or call_argument(node, 6, "collate_fn") is not None:
            return None
        batch = _batch_dimension(node)
        return Batches(dataset.item if batch is None else collate(dataset.item, batch))
    if name in PROGRESS_BARS and isinstance(first, Batches):
        return first
    if name is None and isinstance(node.func, ast.Name) and node.func.id == "enumerate" and isinstance(first, Batches):
        return Batches(Items((Number(None), first.item)))
    return None


def spread_arguments(interpreter, call: ast.Call) -> list | None:
    """The values of a call's positional arguments, a tuple the analysis knows spread in their place
    (`TensorDataset(*make_arrays(n))`); None when an argument spreads anything else."""
    values = []
    for argument in call.args:
        spread = isinstance(argument, ast.Starred)
        value = interpreter.value_of(argument.value if spread else argument)
        if spread and not isinstance(value, Items):
            return None
        values += value.values if spread else [value]
    return values


def library_samples(ctx, dataset: ast.Call, image: tuple[int, int, int]) -> Samples | None:
    """The samples `(image, label)` of a torchvision dataset whose images are `image` as stored, made a
    tensor by its `transform` (their label unknown under a `target_transform`); None when the transform is
    not known to make a tensor of known size."""
    shape = transformed(ctx, call_argument(dataset, 2, "transform"), image)
    if shape is None:
        return None
    label = NUMBER if call_argument(dataset, 3, "target_transform") is None else None
    return Samples(Items((Tensor(shape, ("sample", id(dataset))), label)))


def transformed(ctx, transform: ast.AST | None, image: tuple[int, int, int], depth: int = 0) -> tuple | None:
    """The shape a `transform` (a transform of `TRANSFORMS`, a `Compose` of a list of them, or a name bound
    to one once) gives an image of `image`; None unless it ends in a tensor of known size."""
    if isinstance(transform, ast.Name) and depth == 0:
        values = ctx.analysis(ValueKinds).reaching_values(transform)
        return transformed(ctx, values[0], image, 1) if values and len(values) == 1 else None
    kind = _transform_kind(ctx, transform)
    listed = call_argument(transform, 0, "transforms") if kind == "Compose" else None
    steps = listed.elts if isinstance(listed, ast.List) else [transform] if kind not in (None, "Compose") else None
    channels, sides, tensor = image[0], image[1:], False
    for step in steps or ():
        kind = _transform_kind(ctx, step)
        if kind in TO_TENSOR:
            tensor = True
        elif kind in SIZING:
            sides = _sides(call_argument(step, 0, "size"))
        elif kind == "Grayscale":
            given = call_argument(step, 0, "num_output_channels")
            channels = 1 if given is None else int_literal(given)
        elif kind not in SIZE_KEEPING:
            return None
        if sides is None or channels is None:
            return None
    return (channels, *sides) if tensor else None


def _transform_kind(ctx, node: ast.AST | None) -> str | None:
    """`Resize` of `transforms.Resize(64)`: the class a call of `TRANSFORMS` builds."""
    name = ctx.qualified_name(node.func) if isinstance(node, ast.Call) else None
    return name.rsplit(".", 1)[-1] if name and name.startswith(TRANSFORMS) else None


def _sides(size: ast.AST | None) -> tuple[int, int] | None:
    """The (height, width) a size argument gives a square image: `n`, `(h, w)` or `[n]`."""
    if int_literal(size) is not None:
        return int_literal(size), int_literal(size)
    sides = [int_literal(e) for e in size.elts] if isinstance(size, (ast.Tuple, ast.List)) else []
    if None in sides or len(sides) not in (1, 2):
        return None
    return (sides[0], sides[-1])


def _split_part(array: object, key: tuple) -> object:
    """One part of an array `train_test_split` splits: its rows unknown, its other sizes the array's."""
    if isinstance(array, Frame):
        return Frame((None, *array.shape[1:]), ("split", key), array.positional)
    shape = array.shape if isinstance(array, Tensor) else None
    return Tensor((None, *shape[1:]) if shape else None, ("split", key))


def environment_step(ctx, node: ast.Call, width: int | None) -> Items | None:
    """`obs, reward, *flags = env.step(action)` of one environment (`gym.make(...)`, wrapped or not; a
    vector environment's rewards are arrays): its reward is a Python number. `width`: how many names the
    result is unpacked into (4 or 5, by the library's version)."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "step" and width in (4, 5)):
        return None
    found = [made for made, _ in makers(ctx, node.func.value)]  # built here, or passed by every call site
    if not found or not all(made and all(_single_environment(c, call) for c, call in made) for made in found):
        return None
    return Items(tuple(NUMBER if i == 1 else None for i in range(width)))


def _single_environment(ctx, call: ast.Call, depth: int = 0) -> bool:
    name = ctx.qualified_name(call.func) or ""
    if name in ENVIRONMENT_MAKERS:
        return True
    wrapped = call.args[0] if call.args else None
    if name.startswith(ENVIRONMENT_WRAPPERS) and ".vector" not in name and isinstance(wrapped, ast.Call) and depth < 3:
        return _single_environment(ctx, wrapped, depth + 1)  # `RecordEpisodeStatistics(gym.make(...))`
    return False


def as_dataset(value: object) -> object:
    """What a `DataLoader` indexes: a dataset, or a Python list of samples as one."""
    return Samples(value.item) if isinstance(value, Listed) else value


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
        return Tensor(None, (*key, item.key), item.label, ((batch, *item.ends[0]), item.ends[1]) if item.ends else ((batch,), ()))
    return None


def _row(value: object) -> object | None:
    """One sample of a tensor the dataset indexes along its first dimension."""
    if isinstance(value, Tensor) and value.shape:
        return Tensor(value.shape[1:], ("row", value.key))
    return Tensor(None, ("row", value.key)) if isinstance(value, Tensor) else None


def _batch_dimension(loader: ast.Call):
    size = call_argument(loader, 1, "batch_size")
    if size is None or (isinstance(size, ast.Constant) and size.value == 1):
        return 1  # the default batch size, or one stated: every batch holds one sample
    if isinstance(size, ast.Constant) and size.value is None:
        return None
    label = ast.unparse(size) if isinstance(size, (ast.Name, ast.Attribute)) else "batch"
    return Sym(("batch", id(loader)), label)


def full_batches(ctx, node: ast.AST) -> bool:
    """Does `node` run in the iteration of a loop (of its function) over a `DataLoader` built with
    `drop_last=True` (or a `BatchSampler` that drops it) and a batch size other than 1 (as the file, or
    each call site passing the loader, tells), or after the iteration skips a batch of one (`if
    x.size(0) == 1: continue`, or under `if len(x) > 1:`)? Its batch dimension is never a lone 1 there."""
    child, guarded = node, False
    for ancestor in ctx.scopes.ancestors(node):
        if isinstance(ancestor, FUNCTION_NODES):
            return False
        guarded |= isinstance(ancestor, ast.If) and child in ancestor.body and _tests_size(ancestor.test, SIZE_ABOVE_ONE)
        if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While)) and child is not getattr(ancestor, "iter", None):
            if guarded or _skips_singletons(ancestor, child):
                return True  # a test of the iteration's batch
            if not isinstance(ancestor, ast.While) and _drops_last(ctx, ancestor.iter):
                return True
        if isinstance(ancestor, COMPREHENSIONS) and child not in ancestor.generators and _drops_last(ctx, ancestor.generators[0].iter):
            return True  # `[loss(model(x), y) for x, y in loader]`
        child = ancestor
    return False


def through_outer(binding, full) -> bool:
    """Is the call of `binding`, or a call its arguments came through (`model(x)` around `self.pool(h)`), run
    on `full` batches only (`full(the caller's context, the call, the binding of the function around it)`)?"""
    while binding is not None:
        if binding.caller is not None and binding.call is not None and full(binding.caller, binding.call, binding.outer):
            return True
        binding = binding.outer
    return False


def full_or_even(ctx, call: ast.Call, outer, shape_of) -> bool:
    """Can `call` never be given a batch of one: every batch of the loop running it is full (`full_batches`),
    or comes from a `DataLoader` that drops its last batch or whose literal batch size divides the rows of
    its `TensorDataset` (50 rows in batches of 25), or the call is given a tensor of a literal batch above
    one (a probe, `net(torch.randn(8, 3, 32, 32))`)? The loaders are those of the call site that passed the
    model (`outer`), when the loop's function has one. `shape_of(ctx, expr)`: the shape analysis's answer."""
    if full_batches(ctx, call):
        return True
    given = shape_of(ctx, call.args[0]) if call.args and not isinstance(call.args[0], ast.Starred) else None
    if given and isinstance(given[0], int) and given[0] > 1 and all(isinstance(d, int) for d in given):
        return True
    loop = next((a for a in ctx.scopes.ancestors(call) if isinstance(a, (ast.For, ast.AsyncFor, *FUNCTION_NODES))), None)
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    iterable = loop.iter.args[0] if isinstance(loop.iter, ast.Call) and callee_name(loop.iter) in LOADER_WRAPPERS and loop.iter.args else loop.iter
    loaders = _loaders(ctx, iterable, outer)
    return bool(loaders) and all(c.qualified_name(k.func) in DATA_LOADERS and (drops_last(c, k) or _divides(c, k, shape_of)) for c, k in loaders)


def _divides(ctx, loader: ast.Call, shape_of) -> bool:
    size = int_literal(call_argument(loader, 1, "batch_size"))
    dataset = call_argument(loader, 0, "dataset")
    made = [(c, k) for (c, k), _ in constructions(ctx, dataset)] if dataset is not None else []
    if not size or size < 2 or len(made) != 1 or made[0][0].qualified_name(made[0][1].func) not in TENSOR_DATASETS:
        return False
    rows = shape_of(made[0][0], made[0][1].args[0]) if made[0][1].args else None
    return bool(rows) and isinstance(rows[0], int) and rows[0] % size == 0


def reshaped_to_size(ctx, expr: ast.AST) -> bool:
    """Is `expr` (or what a name holding it was assigned on every way) reshaped to a stated number of rows,
    `out.view(batch_size, 1)`, `x.reshape(cfg.batch_size, -1)`? A smaller batch fails at the reshape: the
    rows it has are the size stated, not a lone sample's (a size read from the data, `x.size(0)`, `len(y)`
    or -1, may be 1)."""
    if isinstance(expr, ast.Name):
        values = ctx.analysis(ValueKinds).reaching_values(expr)
        return bool(values) and all(not isinstance(v, ast.Name) and reshaped_to_size(ctx, v) for v in values)
    if callee_name(expr) not in RESHAPES or not isinstance(expr.func, ast.Attribute) or not expr.args:
        return False
    rows = expr.args[0].elts[0] if isinstance(expr.args[0], ast.Tuple) and expr.args[0].elts else expr.args[0]
    if isinstance(rows, ast.Constant):
        return isinstance(rows.value, int) and rows.value > 1
    return isinstance(rows, (ast.Name, ast.Attribute)) and not _is_batch_size(rows)


def _skips_singletons(loop: ast.AST, statement: ast.AST) -> bool:
    """Does an `if` of the loop's body before `statement` leave the iteration on a batch of one?"""
    for before in loop.body[: loop.body.index(statement)] if statement in loop.body else ():
        if isinstance(before, ast.If) and _tests_size(before.test, SIZE_ONE) and before.body:
            if isinstance(before.body[-1], (ast.Continue, ast.Break, ast.Return, ast.Raise)):
                return True
    return False


# A comparison of a size with a number: (operator, number) pairs meaning "one" or "more than one".
SIZE_ONE = frozenset({(ast.Eq, 1), (ast.LtE, 1), (ast.Lt, 2)})
SIZE_ABOVE_ONE = frozenset({(ast.Gt, 1), (ast.GtE, 2), (ast.NotEq, 1)})


def _tests_size(test: ast.AST, meaning: frozenset) -> bool:
    """`x.size(0) == 1`, `len(x) < 2`, `x.shape[0] > 1` (with the size on the left), as `meaning` says."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.comparators[0], ast.Constant):
        return False
    return (type(test.ops[0]), test.comparators[0].value) in meaning and _is_batch_size(test.left)


def _is_batch_size(node: ast.AST) -> bool:
    """`len(x)`, `x.size(0)`, `x.shape[0]`, `x.size()[0]` of a name `x`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return len(node.args) == 1 and isinstance(node.args[0], ast.Name)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
        node, first = node.value, True
    else:
        first = isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0
    if isinstance(node, ast.Call) and (first or not node.args):
        node = node.func if callee_name(node) == "size" else None
    elif not (isinstance(node, ast.Attribute) and node.attr == "shape" and first):
        return False
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)


def _drops_last(ctx, iterable: ast.AST) -> bool:
    while isinstance(iterable, ast.Call) and callee_name(iterable) in LOADER_WRAPPERS and iterable.args:
        iterable = iterable.args[0]
    found = _loaders(ctx, iterable)
    return bool(found) and all(c.qualified_name(call.func) in DATA_LOADERS and drops_last(c, call) for c, call in found)


def _loaders(ctx, iterable: ast.AST, outer=None) -> list[tuple[object, ast.Call]]:
    """The calls that built what a loop iterates (under the call site `outer`, if given): as `constructions`
    tells, else as the objects layer does (a builder's tuple unpacked: `train_dl, val_dl = make_loaders()`);
    empty when any is unknown."""
    found = [(c, k) for (c, k), _ in constructions(ctx, iterable, outer)]
    if found:
        return found
    if outer is not None:
        return built(ctx, iterable, outer) or []
    for made, _ in makers(ctx, iterable):
        if not made:
            return []
        found += made
    return found


def drops_last(ctx, loader: ast.Call) -> bool:
    """Does a `DataLoader` give only full batches of more than one: `drop_last=True`, or a `BatchSampler`
    built with `drop_last=True` as its `batch_sampler`?"""
    sampler = call_argument(loader, 3, "batch_sampler")
    if sampler is None:
        return _is_true(call_argument(loader, 8, "drop_last")) and not _is_one(call_argument(loader, 1, "batch_size"))
    found = [(c, call) for (c, call), _ in constructions(ctx, sampler)] if not isinstance(sampler, ast.Call) else [(ctx, sampler)]
    return bool(found) and all(
        c.qualified_name(call.func) in BATCH_SAMPLERS and _is_true(call_argument(call, 2, "drop_last"))
        and not _is_one(call_argument(call, 1, "batch_size"))
        for c, call in found
    )  # fmt: skip


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _is_one(node: ast.AST | None) -> bool:
    """No batch size (the default, 1) or a literal 1."""
    return node is None or (isinstance(node, ast.Constant) and node.value == 1)
