"""The vocabulary of shape-making functions of torch and NumPy: one row per spelling, saying how the
shape of a call's result follows from its arguments. Adding a spelling is adding a row.

A `Row` names a `kind` and where its argument is (`at`, a position, or `keyword`):
- SIZES: sizes given at `at`, one tensor of them (`torch.zeros(2, 3)`, `np.zeros((2, 3))`,
  `np.random.normal(0, 1, size)`); `spread`: the sizes may also be given one by one (torch, `np.random.rand`).
  With no size given, the result is a number (`np.random.normal()`): nothing is said.
- LEGACY: `torch.Tensor(2, 3)` (sizes) or `torch.FloatTensor(array)` (the array's shape).
- ARRAY: the shape of the array-like at `at` (`torch.tensor(x)`, `np.asarray(x)`).
- ELEMENTWISE: the shape of the argument at `at`, entry by entry (`np.sin`, `torch.exp`, `np.clip`).
- LIKE: a new tensor of the shape of the argument at `at` (`zeros_like`, `torch.bernoulli`).
- BROADCAST: the broadcast of the arguments at the positions of `method` (numbers count as `()`).
- STEPS: one dimension of the count at `at`, `default` when none is given (`linspace`, `logspace`).
- RANGE: `arange(stop)` / `arange(start, stop[, step])`.
- EYE: `(n, m)`, `m` at `at` (or `n` again).
- METHOD: the tensor method `method` on the argument at `at` with the arguments after it (`np.sum(a,
  axis=1)` is `a.sum(axis=1)`, `np.expand_dims(a, 1)` is `a.unsqueeze(1)`, `torch.mv(a, v)` is `a.matmul(v)`).
- EINSUM: from its equation and the operands' ranks.
- JOIN: `cat`/`concatenate` (`method` "cat"), `stack`, and NumPy's `hstack`/`vstack`/`column_stack`.
- POOL: a functional pool over the last `default` dimensions of the argument at 0: to the output size at
  `at` when adaptive (`F.adaptive_avg_pool2d(x, 1)`), else to sizes not worked out (`F.max_pool2d(x, 2)`).

NumPy's random generators (`rng = np.random.default_rng()`) take their rows from `numpy.random.<method>`.
"""
from __future__ import annotations

from dataclasses import dataclass

# Methods (and torch functions) that return (values, indices) given a dimension (`sort`, `topk`: always).
INDEXED = frozenset({"max", "min", "median", "mode", "sort", "topk", "kthvalue", "cummax", "cummin"})
PAIR_NAMES = ("values", "indices")
SIZES, LEGACY, ARRAY, ELEMENTWISE, LIKE, BROADCAST = "sizes", "legacy", "array", "elementwise", "like", "broadcast"
STEPS, RANGE, EYE, METHOD, EINSUM, JOIN, POOL = "steps", "range", "eye", "method", "einsum", "join", "pool"


@dataclass(frozen=True)
class Row:
    kind: str
    at: int = 0
    keyword: str | None = None
    method: str | tuple | None = None  # a METHOD row's method, a JOIN row's form, BROADCAST's positions, an adaptive POOL
    spread: bool = False
    default: int | None = None  # STEPS: the count when none is given; POOL: how many dimensions it pools


FUNCTIONAL = "torch.nn.functional."


def _rows(prefixes: str, names: str, row: Row) -> dict[str, Row]:
    return {prefix + name: row for prefix in prefixes.split() for name in names.split()}


def _methods(prefixes: str, pairs: str) -> dict[str, Row]:
    """`name:method` pairs (a bare name: the method of that name)."""
    found = {}
    for pair in pairs.split():
        name, _, method = pair.partition(":")
        found.update(_rows(prefixes, name, Row(METHOD, method=method or name)))
    return found


_MATH = (
    "exp log log1p log2 log10 sqrt rsqrt sigmoid tanh relu abs square clamp clip neg sign softmax log_softmax "
    "nan_to_num expm1 sin cos tan sinh cosh asin acos atan arcsin arccos arctan arctanh erf floor ceil round trunc "
    "reciprocal exp2 logit"
)
_NUMPY_MATH = (
    "exp log log1p log2 log10 sqrt abs absolute tanh expm1 square sign floor ceil round rint trunc sin cos tan "
    "sinh cosh arcsin arccos arctan arctanh negative reciprocal exp2 clip nan_to_num isnan isfinite logical_not "
    "deg2rad rad2deg cbrt fabs"
)
_FUNCTIONAL = (
    "relu relu6 gelu silu mish sigmoid tanh softmax log_softmax dropout elu selu leaky_relu softplus hardswish "
    "normalize layer_norm logsigmoid hardtanh softsign tanhshrink"
)
_REDUCTIONS = "sum mean prod amax amin logsumexp nansum nanmean std var all any argmax argmin norm"

FUNCTIONS: dict[str, Row] = {
    **_rows("torch.", "zeros ones empty rand randn", Row(SIZES, 0, "size", spread=True)),
    **_rows("torch.", "full", Row(SIZES, 0, "size")),
    **_rows("torch.", "randint", Row(SIZES, -1, "size")),  # `randint(high, size)`, `randint(low, high, size)`
    **_rows("torch.", "normal", Row(SIZES, 2, "size")),  # `normal(mean, std, size)` of two numbers
    **_rows("numpy.", "zeros ones empty full", Row(SIZES, 0, "shape")),
    **_rows("numpy.random.", "rand randn", Row(SIZES, 0, spread=True)),
    **_rows("numpy.random.", "random random_sample sample ranf standard_normal standard_exponential", Row(SIZES, 0, "size")),
    **_rows("numpy.random.", "choice poisson exponential geometric rayleigh standard_t chisquare pareto power zipf", Row(SIZES, 1, "size")),
    **_rows("numpy.random.", "normal uniform randint binomial beta gamma laplace logistic lognormal gumbel wald", Row(SIZES, 2, "size")),
    **_rows("numpy.random.", "integers", Row(SIZES, 2, "size")),  # a `Generator`'s
    **_rows("torch.", "Tensor FloatTensor DoubleTensor LongTensor IntTensor BoolTensor HalfTensor", Row(LEGACY)),
    **_rows("torch.", "tensor as_tensor from_numpy asarray", Row(ARRAY, 0, "data")),
    **_rows("numpy.", "array asarray asanyarray ascontiguousarray copy", Row(ARRAY, 0, "a")),
    **_rows("torch.", _MATH, Row(ELEMENTWISE, 0, "input")),
    **_rows(FUNCTIONAL, _FUNCTIONAL, Row(ELEMENTWISE, 0, "input")),
    **_rows("numpy.", _NUMPY_MATH, Row(ELEMENTWISE, 0, "x")),
    **_rows("torch.", "zeros_like ones_like empty_like full_like rand_like randn_like randint_like bernoulli", Row(LIKE, 0, "input")),
    **_rows("torch.nn.", "Parameter parameter.Parameter", Row(LIKE, 0, "data")),
    **_rows("torch.autograd.", "Variable variable.Variable", Row(LIKE, 0, "data")),  # the legacy wrapper
    **_rows("numpy.", "zeros_like ones_like empty_like full_like", Row(LIKE, 0, "a")),
    **_rows("torch.", "add sub subtract mul multiply div divide true_divide pow maximum minimum fmax fmin atan2 hypot", Row(BROADCAST, method=(0, 1))),
    **_rows("numpy.", "add subtract multiply divide true_divide floor_divide power maximum minimum fmax fmin hypot arctan2", Row(BROADCAST, method=(0, 1))),
    **_rows("torch. numpy.", "where", Row(BROADCAST, method=(0, 1, 2))),
    **_rows("torch.", "linspace logspace", Row(STEPS, 2, "steps")),
    **_rows("numpy.", "linspace logspace geomspace", Row(STEPS, 2, "num", default=50)),
    **_rows("torch. numpy.", "arange", Row(RANGE)),
    **_rows("torch.", "eye", Row(EYE, 1, "m")),
    **_rows("numpy.", "eye", Row(EYE, 1, "M")),
    **_methods("torch.", _REDUCTIONS + " unsqueeze squeeze flatten permute transpose swapaxes swapdims t reshape "
               "cumsum cumprod flip roll matmul mm bmm mv:matmul dot:matmul gather"),
    **_methods("numpy.", _REDUCTIONS.replace("logsumexp ", "") + " max:amax min:amin average:mean median:mean "
               "squeeze expand_dims:unsqueeze ravel:flatten reshape transpose swapaxes matmul dot:matmul "
               "cumsum cumprod flip roll"),
    **_rows("torch. numpy.", "einsum", Row(EINSUM)),
    **_rows("torch.", "cat concat concatenate", Row(JOIN, method="cat")),
    **_rows("numpy.", "concatenate", Row(JOIN, method="cat")),
    **_rows("torch. numpy.", "stack", Row(JOIN, method="stack")),
    **_rows("torch. numpy.", "hstack vstack column_stack", Row(JOIN)),  # `method`: the function's own name
    **{f"{FUNCTIONAL}{kind}_pool{n}d": Row(POOL, 1, "kernel_size", default=n) for kind in ("max", "avg") for n in (1, 2, 3)},
    **{f"{FUNCTIONAL}adaptive_{kind}_pool{n}d": Row(POOL, 1, "output_size", method="adaptive", default=n)
       for kind in ("max", "avg") for n in (1, 2, 3)},
}

# Tensor methods spelled another way: NumPy's `a.ravel()` flattens.
METHOD_ALIASES = {"ravel": "flatten"}
# Keywords of a NumPy function a tensor method spells otherwise (`np.sum(a, axis=1)`).
KEYWORD_ALIASES = {"axis": "dim", "keepdims": "keepdim", "newshape": "shape"}


def rows_of(kind: str, prefix: str = "") -> frozenset[str]:
    """The names of the functions whose row is of `kind` (and whose name starts with `prefix`)."""
    return frozenset(name for name, row in FUNCTIONS.items() if row.kind == kind and name.startswith(prefix))
