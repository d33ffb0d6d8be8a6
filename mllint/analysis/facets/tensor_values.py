"""The abstract values of the shape analysis: tensors with what is known of their shape, sizes, Python
numbers, and the containers data flows through (tuples, datasets, loaders)."""
from __future__ import annotations

from dataclasses import dataclass, field

from mllint.analysis.facets.dims import Dim, Shape, Sym, column_against_batch, format_ends, format_shape


@dataclass(frozen=True)
class Tensor:
    """A value, usually a tensor: its shape (None: unknown rank) and the identity of the value, which
    the symbols for its sizes (`x.size(0)`) are keyed by. Unknown values of any type are Tensors too.
    A tensor of unknown rank may have known `ends`: its first and last dimensions, `((B,), (1,))` for
    `(B, ..., 1)` (at least as many dimensions as both name)."""

    shape: Shape | None
    key: tuple
    label: str = field(default="?", compare=False)
    ends: tuple[Shape, Shape] | None = None
    fresh: bool = field(default=False, compare=False)  # a parameter made in `__init__`: no data laid out yet
    squeezed_at: tuple | None = field(default=None, compare=False)  # a dim-less `squeeze()` made it: (its context, the call)
    max_rank: int | None = None  # of unknown rank, at most this many dimensions (a table `np.loadtxt` reads)
    # A dim-less `squeeze()` dropped the leading size-1 dimension of a batch of one on the way (its context,
    # the call): kept through the layers and methods after it, so its first dimension is no batch.
    unbatched_at: tuple | None = field(default=None, compare=False)
    broadcast_at: object = field(default=None, compare=False)  # the `broadcasts.Broadcast` that made this `(N, N)`


@dataclass(frozen=True)
class Frame:
    """A pandas DataFrame `(rows, columns)` (None: columns unknown) or Series `(rows,)`; `positional` for
    its `.iloc`, which indexes it as an array; `accessor` for a Series' `.dt` / `.str`."""

    shape: Shape
    key: tuple
    positional: bool = False
    accessor: bool = False
    labelled: bool = False  # its `.loc`, which selects rows by a mask or a slice of labels, and columns by name
    windowed: bool = False  # `df.resample("1h")`, `df.rolling(k)`: an aggregation gives a frame of this shape
    across: bool = False  # a Series over a frame's columns (`df.mean()`): arithmetic with the frame keeps its shape


@dataclass(frozen=True)
class Scaler:
    """A scikit-learn scaler (`StandardScaler()`), fitted or not: what it scales keeps its shape."""

    name: str


@dataclass(frozen=True)
class Splitter:
    """A scikit-learn cross-validation splitter (`KFold(5)`): its `split(X)` gives positions of rows."""

    name: str


@dataclass(frozen=True)
class Size:
    """`x.shape` / `x.size()`: the dimensions, or None with the tensor's key when its rank is unknown."""

    dims: Shape | None
    key: tuple
    label: str = field(default="?", compare=False)
    head: Shape = field(default=(), compare=False)  # the known first sizes of a tensor of unknown rank

    def leading(self, position: int) -> Dim:
        """Size `position` of a tensor of unknown rank: a known first size, else the symbol naming it."""
        return self.head[position] if 0 <= position < len(self.head) else Sym(("size", self.key, position), f"{self.label}.shape[{position}]")


@dataclass(frozen=True)
class Number:
    """A Python number; `dim` is its value as a size (None for floats and unknowns)."""

    dim: Dim


NUMBER = Number(None)


@dataclass(frozen=True)
class Items:
    """A tuple or list of values: `return x, y`, a batch `(inputs, targets)`; `names` of a named tuple's
    fields (`x.max(1)` is `(values, indices)`)."""

    values: tuple
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Absent:
    """`None`, the default a call leaves a parameter (`stats=None`): `if stats is None:` runs its body."""


NONE = Absent()


@dataclass(frozen=True)
class Fields:
    """A dict literal with constant string keys: a sample `{"x": x, "y": y}`, the batch collated of it."""

    values: tuple[tuple[str, object], ...]
    rest: object = None  # the value at every other key: a dict comprehension's, a dict filled at keys not read

    def get(self, key: object) -> object | None:
        return next((v for k, v in self.values if k == key), self.rest)


@dataclass(frozen=True)
class Distribution:
    """A `torch.distributions` distribution: its batch of distributions, as a tensor of that shape (known,
    or of unknown rank with known ends), and the shape of one event (`Categorical` of `(B, A)` logits:
    `(B,)` and `()`; `Normal` of `(B, A)` means: `(B, A)` and `()`; `Independent` of that over 1
    dimension: `(B,)` and `(A,)`)."""

    batch: Tensor
    event: Shape


@dataclass(frozen=True)
class Keyword:
    """An argument a module is called with by name (`model(x, mask=m)`, each key of `model(**inputs)`)."""

    name: str
    value: object


MORE = Keyword("**", None)  # among a call's arguments: `*args` / `**kwargs` the analysis cannot read may pass more


@dataclass(frozen=True)
class Listed:
    """A Python list of `length` values like `item`: the samples a `collate_fn` gets, what it builds of them."""

    item: object
    length: Dim


@dataclass(frozen=True)
class Samples:
    """A dataset: indexing it gives `item`."""

    item: object


@dataclass(frozen=True)
class Batches:
    """An iterable of batches (a `DataLoader`, `enumerate` of one): iterating it gives `item`."""

    item: object


def unknown_rank_column(left: Tensor, right: Tensor) -> tuple[str, str, str, int] | None:
    """A `(B, ..., 1)` of unknown rank set against `(B,)`, either way round: the two shapes and what they
    broadcast to, as text, and the side of the column (0: left, 1: right)."""
    a, b = left.shape, right.shape
    if a is None and b is not None and left.ends is not None and column_against_batch(left.ends, b):
        return format_ends(left.ends), format_shape(b), format_ends((b, b)), 0
    if b is None and a is not None and right.ends is not None and column_against_batch(right.ends, a):
        return format_shape(a), format_ends(right.ends), format_ends((a, a)), 1
    return None


def value_shape(value: object | None) -> Shape | None:
    """The shape of a value, when it is a tensor of known rank."""
    return value.shape if isinstance(value, Tensor) else None


def nested_shape(value: object | None) -> Shape | None:
    """The shape `torch.tensor` / `np.array` give a nest of Python lists: `()` for a number, a tensor's
    own, `(n, *item)` for a list of n values alike (`[[y] for y in ys]` is `(len(ys), 1)`)."""
    if isinstance(value, Number):
        return ()
    if isinstance(value, Tensor):
        return value.shape
    if isinstance(value, Listed):
        item = nested_shape(value.item)
        return (value.length, *item) if item is not None else None
    if isinstance(value, Items) and value.values:
        shapes = {nested_shape(v) for v in value.values}
        item = shapes.pop() if len(shapes) == 1 else None
        return (len(value.values), *item) if item is not None else None
    return None
