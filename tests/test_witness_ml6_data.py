"""Witnesses for the shapes that come from data (loaders, datasets, NumPy, sizes set in `__init__`): each
flagged program misbehaves under torch as the rule says; the fixed or permuted version does not."""
import warnings

import numpy as np
import torch
import torch.nn.functional as F

from mllint.engine import Selection, lint_text

from witness import run

LOADER = """\
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

torch.manual_seed(0)
features = torch.randn(256, 3)
prices = features @ torch.tensor([1.0, -2.0, 0.5])
"""

TENSOR_DATASET = LOADER + """\
loader = DataLoader(TensorDataset(features, prices), batch_size=64, shuffle=True)
model = nn.Linear(3, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for epoch in range(25):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
"""

COLUMN_DATASET = LOADER + """\
class ColumnDataset(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx].view(1)


loader = DataLoader(ColumnDataset(features, prices), batch_size=64, shuffle=True)
model = nn.Linear(3, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for epoch in range(25):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.smooth_l1_loss(model(x).squeeze(-1), y)
        loss.backward()
        optimizer.step()
"""

FLOAT_TARGETS = LOADER + """\
class RowDataset(Dataset):
    def __init__(self, rows, targets):
        self.rows = torch.tensor(rows, dtype=torch.float32)
        self.targets = targets

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, idx):
        return self.rows[idx], float(self.targets[idx])


loader = DataLoader(RowDataset(features.tolist(), prices.tolist()), batch_size=64, shuffle=True)
model = nn.Linear(3, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for epoch in range(25):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.HuberLoss()(model(x), y.float())
        loss.backward()
        optimizer.step()
"""


def findings(program: str, code: str) -> list[int]:
    return [f.start.line for f in lint_text(program, "example.py", Selection.of([code]))]


def trained_error(program: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's broadcast warning
        namespace = run(program)
    model, features, prices = namespace["model"], namespace["features"], namespace["prices"]
    with torch.no_grad():
        return F.mse_loss(model(features).squeeze(-1), prices).item()


def line_of(program: str, text: str) -> int:
    return next(i for i, line in enumerate(program.splitlines(), 1) if text in line)


def test_loader_batches_broadcast_and_the_model_learns_nothing(fix):
    for program, loss_line in ((TENSOR_DATASET, "F.mse_loss"), (COLUMN_DATASET, "F.smooth_l1_loss"), (FLOAT_TARGETS, "HuberLoss")):
        assert findings(program, "ML601") == [line_of(program, loss_line)]
        fixed = fix(program, "ML601", unsafe=True)
        assert findings(fixed, "ML601") == []
        assert trained_error(program) > 0.5  # trained to predict the mean price
        assert trained_error(fixed) < 0.01


def test_hand_written_loss_over_a_batch_averages_every_pair():
    program = TENSOR_DATASET.replace("F.mse_loss(model(x), y)", "((model(x) - y) ** 2).mean()")
    assert findings(program, "ML602") == [line_of(program, "** 2")]
    torch.manual_seed(0)
    x, y = torch.randn(64, 3), torch.randn(64)
    model = torch.nn.Linear(3, 1)
    flagged = ((model(x) - y) ** 2).mean()
    assert torch.isclose(flagged, ((model(x)[:, None, 0] - y[None, :]) ** 2).mean())
    assert not torch.isclose(flagged, ((model(x).squeeze(-1) - y) ** 2).mean())


IMAGES = """\
import numpy as np
import torch


def to_batch(images):
    n, h, w, c = images.shape
    return torch.from_numpy(images).float().reshape(n, c, h, w)
"""


def test_reshape_of_images_does_not_move_the_channels():
    assert findings(IMAGES, "ML603") == [7]
    namespace: dict = {}
    exec(IMAGES, namespace)
    images = np.random.rand(2, 4, 5, 3)
    wrong = namespace["to_batch"](images)
    right = torch.from_numpy(images).float().permute(0, 3, 1, 2)
    assert wrong.shape == right.shape == (2, 3, 4, 5)  # nothing raises
    assert torch.equal(right[0, :, 1, 2], torch.from_numpy(images[0, 1, 2]).float())
    assert not torch.equal(wrong[0, :, 1, 2], torch.from_numpy(images[0, 1, 2]).float())


ATTENTION = """\
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.query = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        return self.query(x).view(B, self.heads, T, self.head_dim)
"""


def test_head_split_sized_in_init_mixes_positions():
    assert findings(ATTENTION, "ML603") == [14]
    namespace: dict = {}
    exec(ATTENTION, namespace)
    attention = namespace["Attention"](6, 3)
    x = torch.randn(2, 5, 6)
    projected = attention.query(x)
    wrong = attention(x)
    right = projected.view(2, 5, 3, 2).transpose(1, 2)
    assert wrong.shape == right.shape == (2, 3, 5, 2)
    assert torch.equal(right[0, :, 1].flatten(), projected[0, 1])  # position 1's features, head by head
    assert not torch.equal(wrong[0, :, 1].flatten(), projected[0, 1])


PINBALL = """\
import torch


def pinball_loss(pred, target, q=0.9):
    diff = target - pred
    return torch.max(q * diff, (q - 1) * diff).mean()


pred = torch.nn.Linear(3, 1)(torch.randn(8, 3))
target = torch.randn(8)
loss = pinball_loss(pred, target)
"""


def test_pinball_helper_averages_every_pair():
    assert findings(PINBALL, "ML602") == [11]  # at the module-level call: the helper subtracts what it is given
    namespace: dict = {}
    exec(PINBALL, namespace)
    pred, target, pinball = namespace["pred"], namespace["target"], namespace["pinball_loss"]
    pairs = target[None, :] - pred  # (8, 8): every target against every prediction
    assert torch.isclose(namespace["loss"], torch.max(0.9 * pairs, -0.1 * pairs).mean())
    assert not torch.isclose(namespace["loss"], pinball(pred.squeeze(-1), target))


WINDOWS = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Windows(Dataset):
    def __init__(self, series, lookback=12, horizon=4):
        self.series, self.lookback, self.horizon = series, lookback, horizon

    def __len__(self):
        return len(self.series) - self.lookback - self.horizon

    def __getitem__(self, i):
        past = self.series[i:i + self.lookback].unsqueeze(0)
        future = self.series[i + self.lookback:i + self.lookback + self.horizon].unsqueeze(0)
        return past, future


class Forecaster(nn.Module):
    def __init__(self, lookback=12, horizon=4):
        super().__init__()
        self.conv = nn.Conv1d(1, 1, 3, padding=1)
        self.project = nn.Linear(lookback, horizon)

    def forward(self, x):
        return self.project(self.conv(x))


steps = torch.arange(200, dtype=torch.float32)
model = Forecaster()
criterion = nn.MSELoss()
for past, future in DataLoader(Windows(torch.sin(steps / 8.0)), batch_size=16):
    pred = model(past).squeeze()
    loss = criterion(pred, future)
    seen.append((pred, future, loss))
    break
"""


def test_a_one_sided_squeeze_against_windows_compares_every_window_with_every_other():
    assert findings(WINDOWS, "ML601") == [line_of(WINDOWS, "loss = criterion")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pred, future, loss = run(WINDOWS)["seen"][0]
    assert pred.shape == (16, 4) and future.shape == (16, 1, 4)
    assert torch.isclose(loss, ((pred[None, :, :] - future) ** 2).mean())  # (16, 16, 4): all pairs
    fixed = WINDOWS.replace("pred = model(past).squeeze()", "pred = model(past).squeeze(1)\n    future = future.squeeze(1)")
    assert findings(fixed, "ML601") == []
    pred, future, loss = run(fixed)["seen"][0]
    assert pred.shape == future.shape == (16, 4) and torch.isclose(loss, ((pred - future) ** 2).mean())


HINGE = """\
import torch
import torch.nn.functional as F
from torch import nn


def hinge(anchor, positive, negative, margin=0.2):
    close = F.cosine_similarity(anchor, positive, dim=-1).unsqueeze(-1)
    far = (anchor * negative).sum(-1)
    gap = margin - close + far
    return gap.clamp_min(0).mean()


encoder = nn.Linear(6, 4)
views_a, views_b = torch.randn(64, 6), torch.randn(64, 6)
for rows in torch.randperm(64).split(16):
    a, p, n = encoder(views_a[rows]), encoder(views_b[rows]), encoder(views_b[rows.flip(0)])
    seen.append((a, p, n, hinge(a, p, n)))
"""


def test_a_helper_whose_locals_keep_a_dim_on_one_side_averages_every_pair():
    assert findings(HINGE, "ML602") == [line_of(HINGE, "gap = margin - close + far")]
    a, p, n, loss = run(HINGE)["seen"][0]
    close, far = F.cosine_similarity(a, p, dim=-1), (a * n).sum(-1)
    assert torch.isclose(loss, (0.2 - close[:, None] + far[None, :]).clamp_min(0).mean())  # 16 x 16 pairs
    fixed = HINGE.replace(".unsqueeze(-1)", "")
    assert findings(fixed, "ML602") == []
    a, p, n, loss = run(fixed)["seen"][0]
    assert torch.isclose(loss, (0.2 - F.cosine_similarity(a, p, dim=-1) + (a * n).sum(-1)).clamp_min(0).mean())


WEIGHTED = """\
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
features = rng.standard_normal((256, 5)).astype(np.float32)
labels = (features[:, 0] > 0).astype(np.int64)
weights = np.where(labels == 1, 3.0, 1.0).astype(np.float32).reshape(-1, 1)
model = nn.Linear(5, 2)
loader = DataLoader(TensorDataset(torch.from_numpy(features), torch.from_numpy(labels), torch.from_numpy(weights)), batch_size=32)
for x, y, w in loader:
    losses = F.cross_entropy(model(x), y, reduction="none")
    loss = (losses * w).sum() / w.sum()
    seen.append((losses, w, loss))
    break
"""


def test_per_sample_losses_times_a_weight_column_weight_every_loss_by_every_weight():
    assert findings(WEIGHTED, "ML602") == [line_of(WEIGHTED, "(losses * w)")]
    losses, w, loss = run(WEIGHTED)["seen"][0]
    assert (losses * w).shape == (32, 32)
    assert torch.isclose(loss, losses.sum())  # the weights cancel: every sample counts alike, 32 times over
    fixed = WEIGHTED.replace(".reshape(-1, 1)", ".reshape(-1)")
    assert findings(fixed, "ML602") == []
    losses, w, loss = run(fixed)["seen"][0]
    assert torch.isclose(loss, (losses * w).sum() / w.sum()) and not torch.isclose(loss, losses.mean())  # weighted


WEIGHTED_ROWS = LOADER + """\
class WeightedRows(Dataset):
    def __init__(self, x, y, weights):
        self.x, self.y, self.weights = x, y, weights

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx], torch.tensor([self.weights[idx]], dtype=torch.float32)


labels = (prices > 0).long()
loader = DataLoader(WeightedRows(features, labels, [1.0] * 128 + [0.0] * 128), batch_size=64)
model = nn.Linear(3, 2)
for x, y, w in loader:
    per_sample = F.cross_entropy(model(x), y, reduction="none")
    loss = (per_sample * w).sum() / w.sum()
    seen.append((per_sample, w, loss))
"""


def test_one_element_weights_of_unknown_rank_batch_to_a_column_that_meets_every_sample():
    assert findings(WEIGHTED_ROWS, "ML602") == [line_of(WEIGHTED_ROWS, "per_sample * w")]
    for per_sample, w, loss in run(WEIGHTED_ROWS)["seen"]:
        assert w.shape == (64, 1) and (per_sample * w).shape == (64, 64)
        assert not torch.isclose(loss, (per_sample * w.squeeze(1)).sum() / w.sum())
    fixed = WEIGHTED_ROWS.replace("per_sample * w)", "per_sample * w.squeeze(1))")
    assert findings(fixed, "ML602") == []
