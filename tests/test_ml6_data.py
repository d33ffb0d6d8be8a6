"""The shapes the analysis gives data: NumPy arrays, datasets and loaders, shapes of unknown rank with
known ends, sizes set in `__init__`, helper functions run with their arguments."""
import ast

import pytest

from mllint.analysis.facets.dims import format_ends, format_shape
from mllint.analysis.program.project import ModuleName
from mllint.analysis.facets.shapes import Shapes
from mllint.analysis.facets.tensor_values import Tensor
from mllint.context import FileContext
from mllint.source import SourceText

HEADER = (
    "import numpy as np\nimport torch\nfrom torch import nn\n"
    "from torch.utils.data import DataLoader, Dataset, TensorDataset\n"
)


def shape_of(source: str, expression: str, module: ModuleName | None = None) -> str | None:
    """The shape (or known ends) the analysis gives the last read of `expression` in `source` (the file
    of `module`, whose calls the analysis searches)."""
    source = HEADER + source
    ctx = FileContext("example.py", SourceText(source), ast.parse(source), module)
    reads = [n for n in ctx.index.nodes if isinstance(n, ast.expr) and not isinstance(getattr(n, "ctx", None), ast.Store)]
    value = ctx.analysis(Shapes).value([n for n in reads if ast.unparse(n) == expression][-1])
    if not isinstance(value, Tensor):
        return None
    if value.shape is not None:
        return format_shape(value.shape)
    return format_ends(value.ends) if value.ends else None


LOADER = "def f(n, b):\n    loader = DataLoader(TensorDataset(torch.randn(n, 4), torch.randn(n)), batch_size=b)\n"


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        ("def f(n, h, w):\n    a = np.random.rand(n, h, w, 3)\n    return a\n", "a", "(n, h, w, 3)"),
        ("def f(n):\n    a = torch.from_numpy(np.zeros((n, 2))).float() / 255.0\n    return a\n", "a", "(n, 2)"),
        ("def f(n):\n    a = torch.as_tensor(np.random.normal(0, 1, size=n))\n    return a\n", "a", "(n,)"),
        (LOADER + "    for x, y in loader:\n        return x, y\n", "x", "(b, 4)"),
        (LOADER + "    for x, y in loader:\n        return x, y\n", "y", "(b,)"),
        (LOADER + "    for i, (x, y) in enumerate(loader):\n        return y.to('cpu').float()\n", "y.to('cpu').float()", "(b,)"),
        (LOADER + "    for batch in loader:\n        x, y = batch\n        return y\n", "y", "(b,)"),
        (LOADER + "    for batch in loader:\n        return batch[1]\n", "batch[1]", "(b,)"),
        # The default batch size is 1; `batch_size=None` does not batch.
        ("def f(n):\n    for x, y in DataLoader(TensorDataset(torch.randn(n, 4), torch.randn(n))):\n        return y\n", "y", "(1,)"),
        ("def f(n):\n    for x, y in DataLoader(TensorDataset(torch.randn(n, 4), torch.randn(n)), batch_size=None):\n        return y\n", "y", "()"),
        # A sample of unknown shape: a batch of unknown rank, `(b, ...)`; a Linear layer gives its last dimension.
        ("def f(t, b):\n    for x, in DataLoader(TensorDataset(t), batch_size=b):\n        return x\n", "x", "(b, ...)"),
        ("def f(t, b):\n    for x, in DataLoader(TensorDataset(t), batch_size=b):\n        return nn.Linear(4, 1)(x)\n", "nn.Linear(4, 1)(x)", "(b, ..., 1)"),
        ("def f(t, b):\n    for x, in DataLoader(TensorDataset(t), batch_size=b):\n        return nn.Linear(4, 1)(x).squeeze(-1)\n", "nn.Linear(4, 1)(x).squeeze(-1)", "(b, ...)"),
        ("def f(t, b):\n    for x, in DataLoader(TensorDataset(t), batch_size=b):\n        return nn.Linear(4, 1)(x)[:, 0]\n", "nn.Linear(4, 1)(x)[:, 0]", None),
        # Dict samples, collated key by key; `dict(...)` and `.get` too; a `collate_fn` (DataLoader's 7th
        # argument) makes batches of its own.
        (
            "class D(Dataset):\n    def __init__(self, n):\n        self.x = torch.randn(n, 3)\n"
            "    def __getitem__(self, i):\n        return {'x': self.x[i], 'y': torch.tensor([float(i)])}\n"
            "def f(n, b):\n    for batch in DataLoader(D(n), batch_size=b):\n        return batch['y']\n",
            "batch['y']", "(b, 1)",
        ),
        (
            "class D(Dataset):\n    def __init__(self, n):\n        self.x = torch.randn(n, 3)\n"
            "    def __getitem__(self, i):\n        return dict(x=self.x[i], y=i)\n"
            "def f(n, b):\n    for batch in DataLoader(D(n), batch_size=b):\n        return batch.get('x')\n",
            "batch.get('x')", "(b, 3)",
        ),
        (LOADER.replace("batch_size=b)", "b, False, None, None, 0, collate)") + "    for x, y in loader:\n        return y\n", "y", None),
        # Rows picked by an index tensor: the same symbol for every tensor it indexes.
        ("def f(n):\n    x, y = torch.randn(n, 4), torch.randn(n)\n    idx = torch.randperm(n)[:8]\n    return y[idx]\n", "y[idx]", "(len(idx),)"),
        # A negated mask (`~` of a tensor or a Series) selects rows as the mask does, a symbol of its own.
        ("def f(n):\n    x = torch.randn(n, 4)\n    keep = torch.rand(n) > 0.5\n    return x[~keep]\n", "x[~keep]", "(len(~keep), 4)"),
        ("import pandas as pd\ndef f(path):\n    t = pd.read_csv(path)\n    a = t[['u', 'v']].to_numpy()\n    return a[~t['w'].isin([0])]\n", "a[~t['w'].isin([0])]", "(len(~t['w'].isin([0])), 2)"),
        # A group-by aggregation: one row per group; a count not known is still one dimension.
        ("import pandas as pd\ndef f(path):\n    t = pd.read_csv(path)\n    return t.groupby('k')['v'].mean().to_numpy()\n",
         "t.groupby('k')['v'].mean().to_numpy()", "(rows,)"),
        ("def f(a):\n    p = np.random.permutation(len(a))\n    return p\n", "p", "(?,)"),
        ("def f(a):\n    m = a.mean()\n    return m\n", "m", "()"),
        # A listed MLP whose last display, out of the loop, ends in its output `Linear` and an activation.
        ("def f(b, widths):\n    layers, d = [], 4\n    for w in widths:\n        layers.append(nn.Linear(d, w))\n        d = w\n"
         "    layers += [nn.Linear(d, 1), nn.Sigmoid()]\n    return nn.Sequential(*layers)(torch.randn(b, 4))\n", "nn.Sequential(*layers)(torch.randn(b, 4))", "(b, 1)"),
        # A Dataset class: `__getitem__` run on what `__init__` stored.
        (
            "class D(Dataset):\n    def __init__(self, x):\n        self.x = torch.from_numpy(x)\n"
            "    def __getitem__(self, i):\n        return self.x[i], float(i)\n"
            "def f(n, b):\n    for x, y in DataLoader(D(np.ones((n, 5))), batch_size=b):\n        return x, y\n",
            "y", "(b,)",
        ),
        # A helper function run with its arguments.
        ("def make(n, k):\n    return torch.randn(n, k)\ndef f(m):\n    x = make(m, 3)\n    return x\n", "x", "(m, 3)"),
        ("def make(n):\n    return torch.randn(n, 3)\ndef f(m):\n    x = make(m)\n    return x\n", "x", "(?, 3)"),  # a size of its own parameter: unknown, the rest kept
        # Given nothing informative, a helper's result counts when no symbol is in it.
        ("def make(a):\n    return np.asarray(a).reshape(-1, 1)\ndef f(m):\n    x = make(m)\n    return x\n", "x", "(?, 1)"),
        # Pooling keeps batch and channels; an MLP listed in a loop and ending in an activation keeps the rank.
        ("def f(b):\n    return nn.MaxPool2d(2)(torch.randn(b, 3, 8, 8))\n", "nn.MaxPool2d(2)(torch.randn(b, 3, 8, 8))", "(b, 3, 4, 4)"),
        ("def f(b, widths):\n    layers, d = [], 4\n    for w in widths:\n        layers += [nn.Linear(d, w), nn.SiLU()]\n        d = w\n"
         "    return nn.Sequential(*layers)(torch.randn(b, 4))\n", "nn.Sequential(*layers)(torch.randn(b, 4))", "(b, ?)"),
        # A batch size of one, stated or the default, is 1.
        ("def f(n):\n    for x, y in DataLoader(TensorDataset(torch.randn(n, 4), torch.randn(n)), batch_size=1):\n        return y\n", "y", "(1,)"),
    ],
)
def test_shapes_from_data(source, expression, shape):
    assert shape_of(source, expression) == shape


BRANCHED = (
    "class D(Dataset):\n    def __init__(self, x, n):\n        self.x, self.n = torch.randn(x, 3), n\n        self.rng = np.random.default_rng(0)\n"
    "    def __getitem__(self, i):\n        if i % 2:\n            return self.x[i], {draw}, 0.0\n        return self.x[i], i // 2, 1.0\n"
    "def f(x, b):\n    for a, k, y in DataLoader(D(x, 9), batch_size=b):\n        return a, k, y\n"
)


@pytest.mark.parametrize(
    ("draw", "expression", "shape"),
    [
        # Returns of a branching function joined: alike tuples part by part, a number alike a 0-d tensor.
        ("i", "a", "(b, 3)"),
        ("i", "y", "(b,)"),
        # A NumPy sampler given no size draws one number (of a bound, a population, or numbers)...
        ("self.rng.integers(self.n)", "k", "(b,)"),
        ("np.random.randint(0, self.n)", "k", "(b,)"),
        ("np.random.choice(self.x[:, 0])", "k", "(b,)"),
        ("np.random.normal(0.0, 1.0)", "k", "(b,)"),
        # ... but an array of bounds or means sets its shape; a size makes an array.
        ("np.random.normal(self.x, 1.0)", "k", None),
        ("self.rng.integers(self.n, size=2)", "k", None),
    ],
)
def test_branching_samples(draw, expression, shape):
    assert shape_of(BRANCHED.format(draw=draw), expression) == shape


def test_sizes_from_init_parameters():
    source = (
        "class A(nn.Module):\n    def __init__(self, dim, heads):\n        super().__init__()\n"
        "        self.heads = heads\n        self.d = dim // heads\n        self.q = nn.Linear(dim, 3 * dim)\n"
        "    def forward(self, x):\n        B, T, C = x.shape\n        y = self.q(x).view(B, T, self.heads, self.d)\n        return y\n"
    )
    assert shape_of(source, "self.q(x)") == "(B, T, 3 * dim)"
    assert shape_of(source, "y") == "(B, T, heads, dim // heads)"


MEAN_MODEL = (
    "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.Linear(3, 1)\n"
    "    def forward(self, x, mask=None):\n        return self.l(x)\n"
)


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        # Constructors with keywords that keep the shape; slices `[i:i + k]` of a size the code knows.
        ("def f():\n    t = torch.arange(10, dtype=torch.float32, device='cpu')\n    return t\n", "t", "(10,)"),
        ("def f(s, k):\n    x = torch.randn(100)\n    w = x[s:s + k]\n    return w\n", "w", "(k,)"),
        ("def f(s, k):\n    x = torch.randn(100)\n    w = x[s:k]\n    return w\n", "w", "(?,)"),
        # Comparisons and `where` broadcast; a NumPy generator's size given positionally.
        ("def f(n):\n    y = torch.randn(n)\n    m = torch.where(y > 0, 1.0, 0.0)\n    return m\n", "m", "(n,)"),
        ("def f(n):\n    y = np.zeros(n)\n    w = np.where(y == 1, 5.0, 1.0).reshape(-1, 1)\n    return w\n", "w", "(n, 1)"),
        ("def f(n, d):\n    rng = np.random.default_rng(0)\n    a = rng.standard_normal((n, d))\n    return a\n", "a", "(n, d)"),
        ("def f(n, d):\n    rng = np.random.default_rng(0)\n    a = rng.normal(0, 1, (n, d))\n    return a\n", "a", "(n, d)"),
        # A loss's result: reduced by default, per sample for `reduction="none"` (cross-entropy drops the classes).
        ("def f(b):\n    l = nn.CrossEntropyLoss(reduction='none')(torch.randn(b, 5), torch.randint(0, 5, (b,)))\n    return l\n", "l", "(b,)"),
        ("def f(b):\n    l = F.cross_entropy(torch.randn(b, 5, 7), torch.randint(0, 5, (b, 7)), reduction='none')\n    return l\n", "l", "(b, 7)"),
        ("def f(b):\n    l = nn.MSELoss()(torch.randn(b, 1), torch.randn(b, 1))\n    return l\n", "l", "()"),
        ("def f(b, r):\n    l = nn.MSELoss(reduction=r)(torch.randn(b, 1), torch.randn(b, 1))\n    return l\n", "l", None),
        # Adaptive pools; padded sequences.
        ("def f(b):\n    p = nn.AdaptiveAvgPool2d(1)(torch.randn(b, 8, 7, 7))\n    return p\n", "p", "(b, 8, 1, 1)"),
        ("def f(b):\n    p = nn.AdaptiveMaxPool1d(4)(torch.randn(b, 8, 30))\n    return p\n", "p", "(b, 8, 4)"),
        ("def f(b):\n    xs = [torch.randn(5, 3) for _ in range(b)]\n    p = nn.utils.rnn.pad_sequence(xs, batch_first=True)\n    return p\n", "p", "(b, ?, 3)"),
        ("def f(b):\n    xs = [torch.randn(5, 3) for _ in range(b)]\n    p = nn.utils.rnn.pad_sequence(xs)\n    return p\n", "p", "(?, b, 3)"),
        # Rows picked by a rolled index: as many as the index picks.
        ("def f(n):\n    x = torch.randn(n, 4)\n    idx = torch.randperm(n)[:8]\n    r = x[idx.roll(1)]\n    return r\n", "r", "(len(idx), 4)"),
        # A list of samples is a dataset; `pop` takes a key out of a batch, `**batch` passes the rest by name.
        (
            "def f(b):\n    data = [{'x': torch.randn(3), 'y': torch.rand(())} for _ in range(100)]\n"
            "    for batch in DataLoader(data, batch_size=b):\n        return batch['y']\n",
            "batch['y']", "(b,)",
        ),
        (
            MEAN_MODEL + "def f(b):\n    batch = {'x': torch.randn(b, 3), 'y': torch.randn(b)}\n    y = batch.pop('y')\n"
            "    out = M()(**batch)\n    return out, y\n",
            "out", "(b, 1)",
        ),
        (MEAN_MODEL + "def f(b):\n    out = M()(x=torch.randn(b, 3))\n    return out\n", "out", "(b, 1)"),
        # What `__init__` alone leaves in `self.x`, read in another method; nothing when another method assigns it.
        ("class T:\n    def __init__(self, n):\n        self.a, self.b = torch.randn(n, 2), 0\n    def get(self):\n        return self.a\n", "self.a", "(n, 2)"),
        (
            "class T:\n    def __init__(self, n):\n        self.a = torch.randn(n, 2)\n    def grow(self):\n        self.a = torch.randn(4)\n"
            "    def get(self):\n        return self.a\n",
            "self.a", None,
        ),
    ],
)
def test_shapes_of_more_sources(source, expression, shape):
    assert shape_of(source.replace("F.", "nn.functional."), expression) == shape


TABLES = "import pandas as pd\nCOLUMNS = ['a', 'b']\n"


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        # NumPy reductions along `axis=`.
        ("def f(n):\n    a = np.random.rand(n, 3).sum(axis=1)\n    return a\n", "a", "(n,)"),
        ("def f(n):\n    a = np.random.rand(n, 3).mean(axis=-1, keepdims=True)\n    return a\n", "a", "(n, 1)"),
        # pandas frames: a column is a Series, a list of columns a frame; `.iloc` indexes as an array.
        (TABLES + "def f(p):\n    df = pd.read_csv(p)\n    return df['y'].values\n", "df['y'].values", "(rows,)"),
        (TABLES + "def f(p):\n    df = pd.read_csv(p)\n    return df[['y']].to_numpy()\n", "df[['y']].to_numpy()", "(rows, 1)"),
        (TABLES + "def f(p):\n    df = pd.read_csv(p)\n    return df[COLUMNS].values\n", "df[COLUMNS].values", "(rows, 2)"),
        (TABLES + "def f(p):\n    df = pd.read_csv(p).dropna()\n    return df.iloc[:, -1:].values\n", "df.iloc[:, -1:].values", "(rows, 1)"),
        (TABLES + "def f(p):\n    df = pd.read_csv(p)\n    return df.iloc[:, 0].values\n", "df.iloc[:, 0].values", "(rows,)"),
        (TABLES + "def f(p, c):\n    df = pd.read_csv(p)\n    return df[c].values\n", "df[c].values", None),
        # A list display names one column per item, whatever the items hold; `drop` keeps two dimensions.
        (TABLES + "def f(p, c):\n    df = pd.read_csv(p)\n    return df[[c]].values\n", "df[[c]].values", "(rows, 1)"),
        (TABLES + "def f(p, c):\n    df = pd.read_csv(p)\n    return df[c,].values\n", "df[c,].values", None),
        (TABLES + "def f(p, c):\n    df = pd.read_csv(p)\n    return df.drop(columns=[c]).values\n", "df.drop(columns=[c]).values", "(rows, ?)"),
        (TABLES + "def f(p):\n    df = pd.get_dummies(pd.read_csv(p))\n    return df.values\n", "df.values", "(rows, ?)"),
        # A Python list of column names of unknown length (a comprehension) selects a frame.
        (TABLES + "def f(p):\n    df = pd.read_csv(p)\n    cols = [c for c in df.columns if c != 'y']\n    return df[cols].values\n",
         "df[cols].values", "(rows, ?)"),
        (TABLES + "def f(p):\n    df = pd.read_csv(p)\n    return df.values\n", "df.values", "(rows, ?)"),
        # A table read from text has at most two dimensions: an index of two items tells it has two.
        ("def f(p):\n    raw = np.loadtxt(p, delimiter=',').astype(np.float32)\n    return raw[:, -1:]\n", "raw[:, -1:]", "(raw.shape[0], 1)"),
        ("def f(p):\n    raw = np.loadtxt(p)\n    return raw[:, 0]\n", "raw[:, 0]", "(raw.shape[0],)"),
        ("def f(p):\n    raw = np.loadtxt(p)\n    return raw[0]\n", "raw[0]", None),
        ("def f(p):\n    raw = np.genfromtxt(p, ndmin=2)\n    return raw\n", "raw", "(rows, columns)"),
        ("def f(p):\n    raw = np.loadtxt(p, usecols=2)\n    return raw\n", "raw", "(rows,)"),
        ("def f(p):\n    raw = np.loadtxt(p, unpack=True)\n    return raw[:, 0]\n", "raw[:, 0]", None),
        ("def f(p):\n    raw = np.load(p)\n    return raw[:, 0]\n", "raw[:, 0]", None),
    ],
)
def test_tables(source, expression, shape):
    assert shape_of(source, expression) == shape


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        # Python lists of numbers: stdlib `random` and `math` give numbers, a slice of a list is a list,
        # `+` joins lists, `sum` of numbers is a number.
        ("import random\ndef f():\n    r = [random.gauss(0, 1) for _ in range(4)]\n    return torch.tensor(r[:-1] + [sum(r)])\n",
         "torch.tensor(r[:-1] + [sum(r)])", "(4,)"),
        ("import math\ndef f(xs):\n    return torch.tensor([math.exp(1.0)])\n", "torch.tensor([math.exp(1.0)])", "(1,)"),
        # A list appended to in a loop: a list of what is appended, when every item is alike.
        ("def f(n):\n    out = []\n    for _ in range(n):\n        out.append(torch.randn(3))\n    return torch.stack(out)\n",
         "torch.stack(out)", "(?, 3)"),
        ("def f(n):\n    out = [torch.randn(2)]\n    for _ in range(n):\n        out.append(torch.randn(3))\n    return torch.stack(out)\n",
         "torch.stack(out)", None),
        ("def f(n):\n    out = []\n    for _ in range(n):\n        out.extend(torch.randn(3))\n    return torch.stack(out)\n",
         "torch.stack(out)", None),
    ],
)
def test_python_lists(source, expression, shape):
    assert shape_of(source, expression) == shape


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        # An assert states the shape of a value of unknown rank (sizes not stated: as `x.shape[i]` names them).
        ("def f(p):\n    x = np.load(p)\n    assert x.shape[1:] == (32, 32, 3)\n    return x\n", "x", "(x.shape[0], 32, 32, 3)"),
        ("def f(p, n):\n    x = np.load(p)\n    assert x.shape == (n, 2)\n    return x\n", "x", "(n, 2)"),
        ("def f(p):\n    x = np.load(p)\n    assert x.ndim == 2\n    return x\n", "x", "(x.shape[0], x.shape[1])"),
        ("def f(p):\n    x = np.load(p)\n    assert x.shape[0] == 4\n    return x\n", "x", None),
        ("def f(p):\n    x = np.load(p)\n    assert x.ndim >= 2\n    return x\n", "x", None),
        ("def f(p):\n    x = np.zeros((3, 3))\n    assert x.shape == (3, 3)\n    return x\n", "x", "(3, 3)"),
    ],
)
def test_asserted_shapes(source, expression, shape):
    assert shape_of(source, expression) == shape


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        # A tensor method on a value of unknown shape keeps it a tensor: a view then states its rank.
        ("def f(p):\n    y = np.load(p).astype(np.float32).reshape(-1, 1)\n    return y\n", "y", "(?, 1)"),
        ("def f(a):\n    y = torch.from_numpy(a[:, -1]).float().view(-1, 1)\n    return y\n", "y", "(?, 1)"),
        # Nested lists: `torch.tensor([[v] for ...])` is `(n, 1)`; a number alone is `()`.
        ("def f(n):\n    return torch.tensor([[float(i)] for i in range(n)])\n", "torch.tensor([[float(i)] for i in range(n)])", "(n, 1)"),
        ("def f(rows):\n    return torch.tensor([float(r) for r in rows])\n", "torch.tensor([float(r) for r in rows])", "(?,)"),
        ("def f(v):\n    return torch.tensor(float(v))\n", "torch.tensor(float(v))", "()"),
        # `cat`/`stack` of a list some of whose tensors are unknown: the rank and sizes of the known ones.
        ("def f(x, fs):\n    parts = [g(x) for g in fs] + [torch.randn(8, 3)]\n    return torch.cat(parts, dim=1)\n", "torch.cat(parts, dim=1)", "(8, ?)"),
        ("def f(x, fs):\n    return torch.cat([torch.randn(8, 3)] + [g(x) for g in fs], dim=-1)\n", "torch.cat([torch.randn(8, 3)] + [g(x) for g in fs], dim=-1)", "(8, ?)"),
        ("def f(x, fs):\n    parts = [torch.randn(8, 3)]\n    parts.append(torch.randn(8))\n    return torch.cat(parts, dim=1)\n", "torch.cat(parts, dim=1)", None),
        ("def f(xs):\n    out = []\n    for x in xs:\n        out.append(torch.as_tensor(x))\n    return torch.stack(out)\n", "torch.stack(out)", "(?, ...)"),
        # An int parameter every call leaves to its default; a loop-built MLP ending in Linear.
        ("class M(nn.Module):\n    def __init__(self, d, k=1):\n        super().__init__()\n        self.fc = nn.Linear(d, k)\n"
         "    def forward(self, x):\n        return self.fc(x)\ndef f():\n    m = M(4)\n    return m(torch.randn(5, 4))\n", "m(torch.randn(5, 4))", "(5, 1)"),
        ("class M(nn.Module):\n    def __init__(self, d, k=1):\n        super().__init__()\n        self.fc = nn.Linear(d, k)\n"
         "    def forward(self, x):\n        return self.fc(x)\ndef f(n):\n    M(4, k=n)\n    m = M(4)\n    return m(torch.randn(5, 4))\n", "m(torch.randn(5, 4))", "(5, k)"),
        ("def mlp(d, hs, out=1):\n    layers, w = [], d\n    for h in hs:\n        layers += [nn.Linear(w, h), nn.ReLU()]\n        w = h\n"
         "    layers.append(nn.Linear(w, out))\n    return nn.Sequential(*layers)\ndef f():\n    net = mlp(4, [8])\n    return net(torch.randn(5, 4))\n", "net(torch.randn(5, 4))", "(5, 1)"),
        ("def mlp(d, hs, out=1):\n    layers, w = [], d\n    for h in hs:\n        layers += [nn.Linear(w, h), nn.Flatten()]\n        w = h\n"
         "    layers.append(nn.Linear(w, out))\n    return nn.Sequential(*layers)\ndef f():\n    net = mlp(4, [8])\n    return net(torch.randn(5, 4))\n", "net(torch.randn(5, 4))", None),
    ],
)
def test_shape_sources(source, expression, shape):
    assert shape_of(source, expression, ModuleName("example", False)) == shape


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        # A generator of batches; `range` gives ints; `.item()` a number; items appended alike in shape.
        ("def gen(n):\n    for _ in range(n):\n        x = torch.randn(8, 3)\n        yield x, x.sum(dim=1)\n"
         "def f(n):\n    for x, y in gen(n):\n        return y\n", "y", "(8,)"),
        ("def f(n):\n    return torch.tensor([[i % 5] for i in range(n)])\n", "torch.tensor([[i % 5] for i in range(n)])", "(n, 1)"),
        ("def f(xs):\n    r = []\n    for x in xs:\n        r.append(-torch.randn(3).sum().item())\n    return torch.tensor(r)\n", "torch.tensor(r)", "(?,)"),
        ("def f(n):\n    s, out = torch.randn(6), []\n    for _ in range(n):\n        out.append(s)\n        s = s + torch.randn(6)\n    return torch.stack(out)\n",
         "torch.stack(out)", "(?, 6)"),
    ],
)
def test_more_shape_sources(source, expression, shape):
    assert shape_of(source, expression, ModuleName("example", False)) == shape


ROW_DATASET = (
    "import pandas as pd\nFEATS = ['a', 'b', 'c']\n"
    "class Rows(Dataset):\n    def __init__(self, path):\n        self.df = pd.read_csv(path)\n"
    "    def __getitem__(self, i):\n        row = self.df.iloc[i]\n"
    "        return {'x': torch.tensor(row[FEATS].values), 'y': np.float32(row['y']), 'z': np.array([row['y']])}\n"
    "def f(b):\n    for batch in DataLoader(Rows('t.csv'), batch_size=b):\n        return batch['x'], batch['y'], batch['z']\n"
)
ROLLOUT = (
    "import gymnasium as gym\n"
    "def f(make):\n    env = {}\n    rewards = []\n    for t in range(10):\n        obs, r, term, trunc, info = env.step(0)\n"
    "        rewards.append(r)\n    out, g = [], 0.0\n    for r in reversed(rewards):\n        g = r + 0.9 * g\n        out.insert(0, g)\n"
    "    return torch.tensor(out)\n"
)


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        # A list display's nesting is the rank `np.array` and `torch.tensor` give it; a NumPy scalar cast keeps a number.
        ("def f(n):\n    s = np.random.rand(n)\n    return np.array([s[0]], dtype=np.float32)\n", "np.array([s[0]], dtype=np.float32)", "(1,)"),
        ("def f(n):\n    s = np.random.rand(n)\n    return np.asarray([[s[0]], [s[1]]])\n", "np.asarray([[s[0]], [s[1]]])", "(2, 1)"),
        (ROW_DATASET, "batch['x']", "(b, 3)"),
        (ROW_DATASET, "batch['y']", "(b,)"),
        (ROW_DATASET, "batch['z']", "(b, 1)"),
        # The rewards of one environment's steps are numbers: their discounted returns a vector.
        (ROLLOUT.replace("env = {}", "env = gym.make('CartPole-v1')"), "torch.tensor(out)", "(?,)"),
        (ROLLOUT.replace("env = {}", "env = gym.wrappers.TimeLimit(gym.make('CartPole-v1'), 50)"), "torch.tensor(out)", "(?,)"),
        (ROLLOUT.replace("env = {}", "env = gym.make_vec('CartPole-v1', 4)"), "torch.tensor(out)", None),  # arrays of rewards
        (ROLLOUT.replace("env = {}", "env = make()"), "torch.tensor(out)", None),
        # Sizes unpacked from a slice of a known shape.
        ("def f(n):\n    x = torch.randn(n, 5, 3)\n    t, c = x.shape[1:]\n    return x.view(n, c, t)\n", "x.view(n, c, t)", "(n, 3, 5)"),
    ],
)
def test_rows_lists_and_rewards(source, expression, shape):
    assert shape_of(source, expression) == shape
