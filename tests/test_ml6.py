"""Exact findings, messages and fixes of the shape rules (ML6), and the shape analysis they rest on."""
import ast

import pytest

from mllint.analysis.facets.dims import format_shape
from mllint.analysis.facets.shapes import Shapes
from mllint.context import FileContext
from mllint.source import SourceText

HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


def positions(findings):
    return [(f.code, f.start.line, f.start.column) for f in findings]


def shape_of(source: str, expression: str) -> str | None:
    """The shape the analysis gives the last read of `expression` in `source` (a module-level source
    reads it once more at its end)."""
    source = HEADER + source + ("" if source.startswith("def") else expression + "\n")
    ctx = FileContext("example.py", SourceText(source), ast.parse(source))
    reads = [n for n in ctx.index.nodes if isinstance(n, ast.expr) and not isinstance(getattr(n, "ctx", None), ast.Store)]
    node = [n for n in reads if ast.unparse(n) == expression][-1]
    shape = ctx.analysis(Shapes).shape(node)
    return None if shape is None else format_shape(shape)


@pytest.mark.parametrize(
    ("source", "expression", "shape"),
    [
        ("x = torch.randn(3, 1)\n", "x", "(3, 1)"),
        ("x = torch.zeros((2, 5)).unsqueeze(0)\n", "x", "(1, 2, 5)"),
        ("x = torch.ones(2, 1, 5).squeeze(1)\n", "x", "(2, 5)"),
        ("x = torch.full((4, 2), 0.5).T\n", "x", "(2, 4)"),
        ("x = torch.arange(6).view(2, -1)\n", "x", "(2, 3)"),
        # `gather` gives its index's shape, of the receiver's rank; another rank is not guessed.
        ("x = torch.randn(8, 4).gather(1, torch.zeros(8, dtype=torch.long).unsqueeze(1))\n", "x", "(8, 1)"),
        ("x = torch.gather(torch.randn(8, 4), 1, torch.zeros(8, 2, dtype=torch.long))\n", "x", "(8, 2)"),
        ("x = torch.randn(8, 4).gather(1, torch.zeros(8, dtype=torch.long))\n", "x", None),
        # A distribution's methods: `log_prob` broadcasts the value's non-event dims against the batch.
        ("x = torch.distributions.Categorical(logits=torch.randn(8, 4)).log_prob(torch.zeros(8))\n", "x", "(8,)"),
        ("x = torch.distributions.Categorical(probs=torch.rand(8, 4)).entropy()\n", "x", "(8,)"),
        ("x = torch.distributions.Normal(torch.randn(8, 3), 1.0).log_prob(torch.randn(8, 3))\n", "x", "(8, 3)"),
        ("x = torch.distributions.Normal(torch.zeros(3), torch.ones(8, 1)).sample((5,))\n", "x", "(5, 8, 3)"),
        ("x = torch.distributions.Independent(torch.distributions.Normal(torch.randn(8, 3), 1.0), 1).log_prob(torch.randn(8, 3))\n", "x", "(8,)"),
        ("x = torch.distributions.OneHotCategorical(logits=torch.randn(8, 4)).sample()\n", "x", "(8, 4)"),
        ("x = torch.distributions.Normal(torch.randn(8, 3), torch.randn(4)).entropy()\n", "x", None),
        ("def f(a, h):\n    b, t, c = a.shape\n    x = a.view(b, t, h, -1)\n    return x\n", "x", "(b, t, h, c // h)"),
        ("def f(a, h):\n    b, t, c = a.shape\n    x = a.view(b, t, h, -1).transpose(1, 2).reshape(b, t, -1)\n    return x\n", "x", "(b, t, c)"),
        ("def f(a):\n    b, t, c = a.shape\n    x = a.view(b, -1)\n    return x\n", "x", "(b, t * c)"),
        ("def f(a):\n    b, t, c = a.shape\n    x = a.view(b, t, c // 2, 2).reshape(b, -1)\n    return x\n", "x", "(b, (2 * t) * (c // 2))"),
        ("def f(a):\n    x = a.view(2, -1)\n    return x\n", "x", "(2, ?)"),
        ("x = torch.tensor([[1.0, -2.0], [3.0, 4.0]])[:, None]\n", "x", "(2, 1, 2)"),
        ("x = torch.empty(2, 3, 4).permute(2, 0, 1).flatten(1)\n", "x", "(4, 6)"),
        ("x = torch.rand(2, 3, 4).mean(dim=-1, keepdim=True)\n", "x", "(2, 3, 1)"),
        ("x = torch.cat([torch.rand(2, 3), torch.rand(5, 3)])\n", "x", "(7, 3)"),
        ("x = torch.stack([torch.rand(2, 3), torch.rand(2, 3)], dim=1)\n", "x", "(2, 2, 3)"),
        ("x = torch.rand(8, 2, 3) @ torch.rand(3, 4)\n", "x", "(8, 2, 4)"),
        ("def f(n):\n    x = torch.randn(n, 1) * torch.randn(n)\n    return x\n", "x", "(n, n)"),
        ("def f(a):\n    b, t, c = a.shape\n    return a\n", "a", "(b, t, c)"),
        ("def f(a):\n    x = torch.zeros(a.size(0), 1) + torch.ones(a.shape[0])\n    return x\n", "x", "(a.size(0), a.shape[0])"),
        ("m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\ny = m(torch.rand(5, 4))\n", "y", "(5, 1)"),
        ("e = nn.Embedding(10, 3)\ny = e(torch.zeros(2, 7))\n", "y", "(2, 7, 3)"),
        ("c = nn.Conv2d(3, 16, 3)\ny = nn.Flatten()(c(torch.rand(2, 3, 8, 8)))\n", "y", "(2, 576)"),
        ("def f(b, n, p):\n    y = nn.Conv2d(3, 8, p, p)(torch.rand(b, 3, n, n))\n    return y\n", "y", "(b, 8, n // p, n // p)"),
        ("def f(b):\n    y = nn.Conv1d(3, 8, 5, padding=2)(torch.rand(b, 3, 40)).transpose(1, 2)\n    return y\n", "y", "(b, 40, 8)"),
        ("def f(x):\n    y = nn.Conv1d(3, 8, 3)(x.transpose(1, 2))\n    return y\n", "y", "(x.size(0), 8, L)"),
        ("def f(b):\n    y = torch.min(torch.rand(b, 1), torch.rand(b, 1)) + torch.rand(b)\n    return y\n", "y", "(b, b)"),
        ("def f(b, blk):\n    h = torch.rand(b, 4)\n    h = h + blk(h)\n    return h\n", "h", "(b, 4)"),
        ("def f(b, n):\n    y, _ = nn.GRU(4, 8, n, batch_first=True)(torch.rand(b, 5, 4))\n    return y\n", "y", "(b, 5, 8)"),
        ("x = torch.rand(5, 3).median(dim=0).values\n", "x", "(3,)"),  # (values, indices) pairs
        ("x = torch.max(torch.rand(5, 3), dim=1)[0]\n", "x", "(5,)"),
        ("x, i = torch.rand(5, 3).min(1, keepdim=True)\n", "i", "(5, 1)"),
        ("x = torch.rand(5, 3).topk(2, dim=1).values\n", "x", "(5, 2)"),
        ("x = torch.sort(torch.rand(5, 3), descending=True).indices\n", "x", "(5, 3)"),
        ("x = torch.rand(5, 3).max()\n", "x", None),
        # Unknown stays unknown: parameters, branches that disagree, loops that change a value.
        ("def f(x):\n    return x\n", "x", None),
        ("def f(c):\n    x = torch.rand(2) if c else torch.rand(3)\n    return x\n", "x", None),
        ("def f(c):\n    x = torch.rand(2)\n    if c:\n        x = torch.rand(3)\n    return x\n", "x", None),
        ("x = torch.rand(2)\nfor i in range(3):\n    x = x.unsqueeze(0)\n", "x", None),
        ("def f(n):\n    x = torch.rand(n, 1).squeeze()\n    return x\n", "x", "(n,)"),  # a batch is taken for more than one
        ("def f(n):\n    x = torch.rand(n, 2)[:, :1].squeeze()\n    return x\n", "x", "(n,)"),  # a slice of a known width
        ("def f(n, k):\n    x = torch.rand(n, 2)[:, :k].squeeze()\n    return x\n", "x", None),
        ("def f(n, i):\n    x = torch.rand(n, 5)[:, i:i + 2]\n    return x\n", "x", "(n, 2)"),
        ("def f(n):\n    x = torch.rand(n, 5)[:, -1:]\n    return x\n", "x", "(n, 1)"),
        ("def f(n):\n    import numpy as np\n    x = np.random.rand(n, 3).sum(1, keepdims=True)\n    return x\n", "x", "(n, 1)"),
        ("def f(n):\n    import numpy as np\n    x = np.concatenate([np.zeros((n, 2)), np.ones((n, 1))], axis=1)\n    return x\n", "x", "(n, 3)"),
        ("def f(n):\n    x = torch.rand(n, 4).cumsum(1)\n    return x\n", "x", "(n, 4)"),
        ("def f(n):\n    for x in torch.rand(n, 4).split(8):\n        print(x[:, 0])\n", "x[:, 0]", "(len(? chunk),)"),
    ],
)
def test_shapes(source, expression, shape):
    assert shape_of(source, expression) == shape


def test_a_module_class_of_the_file_is_followed_into_its_forward():
    source = (
        "class Head(nn.Module):\n"
        "    def __init__(self, hidden):\n"
        "        super().__init__()\n"
        "        self.proj = nn.Linear(hidden, 1)\n"
        "    def forward(self, x):\n"
        "        return self.proj(torch.relu(x))\n"
        "y = Head(16)(torch.rand(4, 16))\n"
    )
    assert shape_of(source, "y") == "(4, 1)"


def test_regression_loss_broadcast_message_and_fix(lint, fix):
    source = HEADER + "def f(n):\n    pred = torch.randn(n, 1)\n    y = torch.randn(n)\n    return F.mse_loss(pred, y)\n"
    [finding] = lint(source, "ML601")
    assert positions([finding]) == [("ML601", 7, 12)]
    assert finding.message == (
        "`F.mse_loss`: input (n, 1) and target (n,) broadcast to (n, n): every prediction is compared with every target"
    )
    fixed = fix(source, "ML601", unsafe=True)
    assert fixed == source.replace("F.mse_loss(pred, y)", "F.mse_loss(pred.squeeze(-1), y)")
    assert lint(fixed, "ML601") == []
    assert fix(source, "ML601") == source  # unsafe only


def test_the_fix_squeezes_whichever_side_has_the_extra_dimension(fix):
    source = HEADER + "y = torch.randn(8, 1)\nloss = nn.L1Loss()(torch.randn(8), y + 1)\n"
    assert fix(source, "ML601", unsafe=True).endswith("nn.L1Loss()(torch.randn(8), (y + 1).squeeze(-1))\n")


def test_other_larger_broadcasts_are_reported_without_a_fix(lint):
    source = HEADER + "loss = F.smooth_l1_loss(torch.randn(8, 1, 3), torch.randn(8, 3))\n"
    [finding] = lint(source, "ML601")
    assert "broadcast to (8, 8, 3)" in finding.message and finding.fix is None


@pytest.mark.parametrize(
    "statement",
    [
        "loss = F.mse_loss(torch.randn(8, 1), torch.randn(8, 1))",
        "loss = F.mse_loss(torch.randn(8, 3), torch.randn(3))",  # target broadcast, not larger than both
        "loss = F.mse_loss(torch.randn(1, 1), torch.randn(1))",
        "loss = F.mse_loss(model(x), torch.randn(8))",
        "loss = F.cross_entropy(torch.randn(8, 1), torch.randn(8))",
    ],
)
def test_regression_losses_that_do_not_blow_up_are_not_reported(lint, statement):
    assert lint(HEADER + statement + "\n", "ML601") == []


def test_different_symbols_are_not_compared(lint):
    source = HEADER + "def f(a, b):\n    return F.mse_loss(torch.randn(a, 1), torch.randn(b))\n"
    assert positions(lint(source, "ML601")) == [("ML601", 5, 12)]  # (a, 1) vs (b,) is (a, b) whatever a, b
    source = HEADER + "def f(a, b):\n    return ((torch.randn(a, 1) - torch.randn(b)) ** 2).mean()\n"
    assert lint(source, "ML602") == []  # not known to differ only by the trailing 1


def test_broadcast_then_reduce_follows_a_variable(lint):
    source = HEADER + (
        "def f(n):\n"
        "    diff = torch.randn(n, 1) - torch.randn(n)\n"
        "    return diff.pow(2).mean()\n"
        "def g(n):\n"
        "    diff = torch.randn(n, 1) - torch.randn(n)\n"
        "    return diff\n"
    )
    [finding] = lint(source, "ML602")
    assert positions([finding]) == [("ML602", 5, 12)]
    assert finding.message == "`torch.randn(n, 1) - torch.randn(n)`: (n, 1) and (n,) broadcast to (n, n) before the reduction"


def test_view_as_transpose_through_an_inferred_dimension(lint):
    source = HEADER + "def f(x):\n    b, t, c = x.shape\n    return x.view(b, -1, t)\n"
    findings = lint(source, "ML603")
    assert positions(findings) == [("ML603", 6, 12)]
    assert "views (b, t, c) as (b, c, t)" in findings[0].message


def test_view_as_transpose(lint):
    source = HEADER + (
        "def f(x):\n"
        "    b, t, c = x.shape\n"
        "    y = x.view(b, c, t)\n"
        "    z = x.reshape(x.size(0), x.size(2), x.size(1))\n"
        "    w = x.view(b, t, c)\n"
        "    return x.view(b, -1)\n"
    )
    findings = lint(source, "ML603")
    assert positions(findings) == [("ML603", 6, 9), ("ML603", 7, 9)]
    assert findings[0].message == (
        "`x.view(...)` views (b, t, c) as (b, c, t): a view does not reorder dimensions (c moved); use transpose/permute"
    )


def test_squeeze_without_dim(lint, fix):
    source = HEADER + "def f(n, y):\n    return F.binary_cross_entropy_with_logits(torch.randn(n, 1).squeeze(), y)\n"
    [finding] = lint(source, "ML604")
    assert positions([finding]) == [("ML604", 5, 47)]
    assert str(finding.severity.label) == "info"
    assert fix(source, "ML604", unsafe=True) == source.replace(".squeeze()", ".squeeze(1)")
    untouched = HEADER + "def f(x, y):\n    return F.cross_entropy(x.squeeze(), y)\n"
    assert fix(untouched, "ML604", unsafe=True) == untouched
    broadcast = HEADER + "def f(n, y):\n    return F.mse_loss(torch.randn(n, 1).squeeze(), y)\n"
    assert lint(broadcast, "ML604") == []  # `()` against `(1,)`: the same value
    elsewhere = HEADER + "def f(x):\n    return x.squeeze().tolist()\n"
    assert lint(elsewhere, "ML604") == []


@pytest.mark.parametrize(
    "source",
    [
        "match x:\n    case [a, *rest]:\n        y = a.view(2, 1)\n",
        "while (n := n - 1):\n    x = x.view(n, -1)\n",
        "try:\n    x = torch.randn(2)\nexcept* ValueError as e:\n    x = e\nF.mse_loss(x, x.unsqueeze(-1))\n",
        "def f(*a, **k):\n    return F.mse_loss(*a, **k).squeeze()\n",
        "x = torch.randn(2, 3)[..., None, 0]\ny = x.view()\nz = x[::2].reshape(*x.shape)\n",
        "for x, in y:\n    del x\nclass A:\n    w = torch.ones(2).view(1, 2)\n",
        "x = " + "(" * 50 + "torch.rand(2)" + ")" * 50 + ".view(1, 2)\n",
    ],
)
def test_odd_syntax_never_crashes(lint, source):
    assert [f.code for f in lint(HEADER + source) if f.code == "ML009"] == []


def test_numpy_transpose_with_every_axis_is_a_permutation(lint):
    source = HEADER + (
        "def tiles(image, rows, cols):\n"
        "    c, h, w = image.shape\n"
        "    image = image.reshape(c, rows, h // rows, cols, w // cols)\n"
        "    image = image.transpose(1, 3, 0, 2, 4)\n"
        "    return image.reshape(rows * cols, c, h // rows, w // cols)\n"
    )
    assert lint(source, "ML603") == []


def test_squeeze_in_forward_needs_a_known_batch_like_dimension(lint):
    source = HEADER + (
        "class Net(nn.Module):\n"
        "    def forward(self, x):\n"
        "        total = x.sum(0)\n"
        "        return torch.squeeze(total / 2) + x.squeeze().item()\n"
    )
    assert lint(source, "ML604") == []


def test_lambdas_and_class_bodies_stay_unknown(lint):
    source = HEADER + "f = lambda n: (d := torch.randn(n, 1) - torch.randn(n)).sum()\nclass A:\n    d = torch.randn(3, 1) - torch.randn(3)\n    s = d.sum()\n"
    assert lint(source) == []  # lambdas and class bodies are not interpreted: unknown, and no crash


def test_a_parameter_made_in_init_is_laid_out_by_its_view(lint):
    """`nn.Parameter(torch.empty(head_dim, heads))` viewed as `(1, 1, heads, head_dim)`: the values are what
    training makes of them, so the view reorders nothing (speechbrain's relative-position biases). Its
    known shape still counts elsewhere: the squeeze of a `(B, 1, C)` query output is reported."""
    source = HEADER + (
        "class Attention(nn.Module):\n"
        "    def __init__(self, dim=64, heads=4, classes=10):\n"
        "        super().__init__()\n"
        "        self.heads = heads\n"
        "        self.head_dim = dim // heads\n"
        "        self.bias = nn.Parameter(torch.empty(self.head_dim, self.heads))\n"
        "        self.query = nn.Parameter(torch.randn(1, 1, dim))\n"
        "        self.fc = nn.Linear(dim, classes)\n"
        "    def forward(self, x):\n"
        "        b = self.bias.view(1, 1, self.heads, self.head_dim)\n"
        "        q = self.query.expand(x.size(0), -1, -1)\n"
        "        return self.fc(q).squeeze()\n"
    )
    assert [f.code for f in lint(source) if f.code.startswith("ML6")] == ["ML604"]


@pytest.mark.parametrize(
    ("expression", "shape"),
    [  # one or more spellings per kind of row of `vocabulary.FUNCTIONS`
        ("np.zeros((4, 2))", "(4, 2)"),
        ("np.random.rand(4, 2)", "(4, 2)"),
        ("np.random.normal(0, 1, 7)", "(7,)"),
        ("np.random.binomial(1, 0.5, size=(3, 2))", "(3, 2)"),
        ("np.random.choice(10, 4)", "(4,)"),
        ("np.random.normal(0, 1)", None),  # a number
        ("np.random.default_rng(0).uniform(0, 1, size=5)", "(5,)"),  # a generator's method, by the same row
        ("torch.randint(0, 5, (6,))", "(6,)"),
        ("torch.normal(0.0, 1.0, size=(3,))", "(3,)"),
        ("torch.FloatTensor(np.zeros(5))", "(5,)"),
        ("torch.Tensor(2, 3)", "(2, 3)"),
        ("np.sin(np.linspace(0, 1, 9))", "(9,)"),
        ("np.linspace(0, 1)", "(50,)"),
        ("torch.logspace(0, 1, 4)", "(4,)"),
        ("np.clip(np.arange(8), 0, 3)", "(8,)"),
        ("np.arange(2, 8)", "(6,)"),
        ("np.eye(3)", "(3, 3)"),
        ("torch.eye(3, 5)", "(3, 5)"),
        ("np.zeros_like(np.ones((2, 7)))", "(2, 7)"),
        ("torch.bernoulli(torch.rand(4, 1))", "(4, 1)"),
        ("np.maximum(np.ones((5, 1)), 0)", "(5, 1)"),
        ("torch.pow(torch.ones(3, 1), 2)", "(3, 1)"),
        ("np.where(np.ones(4) > 0, np.ones((3, 1)), 0.0)", "(3, 4)"),
        ("np.mean(np.ones((5, 3)), axis=1)", "(5,)"),
        ("np.sum(np.ones((5, 3)), axis=0, keepdims=True)", "(1, 3)"),
        ("torch.sum(torch.ones(5, 3), 1)", "(5,)"),
        ("np.dot(np.ones((5, 3)), np.ones(3))", "(5,)"),
        ("torch.mv(torch.ones(5, 3), torch.ones(3))", "(5,)"),
        ("np.expand_dims(np.ones(5), 1)", "(5, 1)"),
        ("np.squeeze(np.ones((5, 1)), axis=1)", "(5,)"),
        ("np.reshape(np.ones((5, 2)), (-1,))", "(10,)"),
        ("np.transpose(np.ones((2, 3, 4)))", "(4, 3, 2)"),
        ("np.ones((5, 1)).ravel()", "(5,)"),
        ("np.einsum('nd,d->n', np.ones((5, 3)), np.ones(3))", "(5,)"),
        ("torch.einsum('ij,jk', torch.ones(2, 3), torch.ones(3, 4))", "(2, 4)"),
        ("torch.einsum('...d,d->...', torch.ones(2, 3), torch.ones(3))", None),
        ("np.hstack([np.ones(3), np.ones(4)])", "(7,)"),
        ("np.vstack([np.ones(3), np.ones(3)])", "(2, 3)"),
        ("np.column_stack([np.ones(3), np.ones(3)])", "(3, 2)"),
        ("np.hstack([np.ones((3, 1)), np.ones((3, 2))])", "(3, 3)"),
        ("torch.where(torch.ones(3) > 0)", None),  # a tuple of indices
        ("F.adaptive_avg_pool2d(torch.ones(8, 3, 32, 32), 1)", "(8, 3, 1, 1)"),
        ("F.adaptive_max_pool1d(torch.ones(8, 3, 32), 4)", "(8, 3, 4)"),
        ("F.max_pool2d(torch.ones(8, 3, 32, 32), 2)", "(8, 3, ?, ?)"),
        ("F.max_pool2d(torch.ones(8, 3, 32, 32), 2, return_indices=True)", None),
    ],
)
def test_vocabulary_shapes(expression, shape):
    assert shape_of(f"import numpy as np\nvalue = {expression}\n", "value") == shape


def test_a_sum_is_a_number_only_when_every_operand_is():
    """`i + self.window` (a loop index and a size every construction sets) is a number; `x + self.window`
    and `x + 1` of a tensor of unknown shape stay tensors: indexing with them keeps their dimensions."""
    source = HEADER + (
        "class Windows:\n"
        "    def __init__(self, series, window=168):\n"
        "        self.series, self.window = series, window\n"
        "    def items(self, x):\n"
        "        for i in range(10):\n"
        "            a = i + self.window\n"
        "        b = x + self.window\n"
        "        c = x + 1\n"
        "        return a, b, c\n"
        "Windows(torch.randn(500, 3)).items(torch.arange(4))\n"
        "Windows(torch.randn(500, 3)).items(torch.arange(8).view(2, 4))\n"
    )
    ctx = FileContext("example.py", SourceText(source), ast.parse(source))
    shapes = ctx.analysis(Shapes)
    sums = {ast.unparse(n): shapes.value(n) for n in ctx.index.nodes if isinstance(n, ast.BinOp)}
    assert type(sums["i + self.window"]).__name__ == "Number"
    assert type(sums["x + self.window"]).__name__ == type(sums["x + 1"]).__name__ == "Tensor"
