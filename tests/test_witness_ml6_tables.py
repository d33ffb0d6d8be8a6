"""Witnesses for the shapes of tabular data: a table NumPy reads from text (`np.loadtxt`) and a pandas
frame's columns. The flagged program broadcasts `(B,)` against `(B, 1)` under torch and learns only the
mean; the version whose sides agree fits the data."""
import warnings

import torch

import pytest

from mllint.engine import Selection, lint_text

from witness import run

TABLE = """\
import io

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
rows = rng.normal(size=(256, 3))
text = "\\n".join(",".join(str(v) for v in (*r, r @ [1.0, -2.0, 0.5])) for r in rows)
raw = np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.float32)
loader = DataLoader(TensorDataset(torch.from_numpy(raw[:, :-1]), torch.from_numpy(raw[:, -1:])), batch_size=64)
model = nn.Linear(3, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for epoch in range(30):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x).squeeze(), y)
        loss.backward()
        optimizer.step()
error = F.mse_loss(model(torch.from_numpy(raw[:, :-1])), torch.from_numpy(raw[:, -1:])).item()
"""

FRAME = """\
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

rng = np.random.default_rng(0)
df = pd.DataFrame(rng.normal(size=(256, 3)), columns=["a", "b", "c"])
df["price"] = df["a"] - 2 * df["b"] + 0.5 * df["c"]
x = torch.tensor(df[["a", "b", "c"]].values, dtype=torch.float32)
y = torch.tensor(df[["price"]].values, dtype=torch.float32)
model = nn.Linear(3, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for step in range(150):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x).squeeze(), y)
    loss.backward()
    optimizer.step()
error = F.mse_loss(model(x), y).item()
"""


def ml6(program: str) -> list[tuple[int, str]]:
    return [(f.start.line, f.code) for f in lint_text(program, "witness.py", Selection.of(["ML601"]))]


@pytest.mark.parametrize("program", [TABLE, FRAME], ids=["loadtxt", "pandas"])
def test_a_squeezed_output_against_a_table_column_learns_only_the_mean(program):
    line = next(i for i, text in enumerate(program.splitlines(), 1) if "loss = F.mse_loss" in text)
    assert ml6(program) == [(line, "ML601")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns of the broadcast, and trains on
        assert run(program)["error"] > 1.0  # the mean of the targets: the inputs are not learnt
    fixed = program.replace("model(x).squeeze()", "model(x)")
    assert ml6(fixed) == []
    assert run(fixed)["error"] < 0.05


LISTS = """\
import random

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader

random.seed(0)
samples = []
for _ in range(256):
    feat = torch.randn(3)
    samples.append((feat, float(feat @ torch.tensor([1.0, -2.0, 0.5]))))


def collate(batch):
    feats, scores = zip(*batch)
    return torch.stack(feats), torch.tensor(scores).unsqueeze(1)


model = nn.Linear(3, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for epoch in range(30):
    for x, y in DataLoader(samples, batch_size=64, collate_fn=collate):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x).view(-1), y)
        loss.backward()
        optimizer.step()
x, y = collate(samples)
error = F.mse_loss(model(x), y).item()
"""


def test_a_list_built_by_append_and_collated_to_a_column_against_a_flat_output():
    line = next(i for i, text in enumerate(LISTS.splitlines(), 1) if "loss = F.mse_loss" in text)
    assert ml6(LISTS) == [(line, "ML601")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(LISTS)["error"] > 1.0
    fixed = LISTS.replace("model(x).view(-1)", "model(x)")
    assert ml6(fixed) == []
    assert run(fixed)["error"] < 0.05


IMAGES = """\
import numpy as np
import torch

rng = np.random.default_rng(0)
images = rng.random((8, 32, 32, 3)).astype(np.float32)
n = images.shape[0]
assert images.shape[1:] == (32, 32, 3)
x = torch.from_numpy(images).reshape(n, 3, 32, 32)
"""


def test_an_image_batch_viewed_channels_first_scrambles_its_pixels():
    assert [(f.start.line, f.code) for f in lint_text(IMAGES, "witness.py", Selection.of(["ML603"]))] == [(8, "ML603")]
    namespace = run(IMAGES)
    images, x = torch.from_numpy(namespace["images"]), namespace["x"]
    assert not torch.equal(x[0, 0], images[0, :, :, 0])  # "channel 0" is not the red plane
    fixed = IMAGES.replace("reshape(n, 3, 32, 32)", "permute(0, 3, 1, 2)")
    assert lint_text(fixed, "witness.py", Selection.of(["ML603"])) == []
    assert torch.equal(run(fixed)["x"][0, 0], images[0, :, :, 0])
