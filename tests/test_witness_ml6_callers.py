"""Witnesses for shapes bound at a call: a loss module's `forward` checked with what the call of its instance
passes (ML602), and a metric function checked with what the function calling it passes."""
import warnings

import torch

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path, lint_text

from witness import run

WEIGHTED_LOSS = """\
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class WeightedMSE(nn.Module):
    def forward(self, pred, target, weight):
        per_sample = F.mse_loss(pred, target, reduction="none")
        return (per_sample * weight).sum() / weight.sum()


features = torch.randn(64, 3)
targets = features.sum(1, keepdim=True)
weights = torch.rand(64)
model = nn.Linear(3, 1)
loss_fn = WeightedMSE()
for x, y, w in DataLoader(TensorDataset(features, targets, weights), batch_size=16):
    seen.append((loss_fn(model(x), y, w).item(), loss_fn(model(x), y, torch.ones_like(w)).item()))
"""

ACCURACY = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def accuracy(net, loader):
    correct = 0
    for x, labels in loader:
        correct += ((net(x).squeeze() > 0).float() == labels).sum().item()
    return correct


def main():
    x = torch.randn(100, 4)
    labels = (x[:, :1] > 0).float()
    seen.append(accuracy(nn.Linear(4, 1), DataLoader(TensorDataset(x, labels), batch_size=20)))


main()
"""


def findings(program: str, code: str) -> list[int]:
    return [f.start.line for f in lint_text(program, "example.py", Selection.of([code]))]


def test_weighted_loss_module_ignores_its_weights():
    assert findings(WEIGHTED_LOSS, "ML602") == [10]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        flagged = run(WEIGHTED_LOSS)["seen"]
    assert all(abs(weighted - uniform) < 1e-4 for weighted, uniform in flagged)  # (B, B): every weight sums away
    fixed = WEIGHTED_LOSS.replace('reduction="none")', 'reduction="none").squeeze(-1)')
    assert findings(fixed, "ML602") == []
    assert any(abs(weighted - uniform) > 1e-3 for weighted, uniform in run(fixed)["seen"])


def project_findings(tmp_path, program: str, code: str) -> list[int]:
    """As linting the program's folder finds them: the model a call passes is found through the project."""
    path = tmp_path / "example.py"
    path.write_text(program)
    project = ProjectIndex.for_paths([str(tmp_path)])
    return [f.start.line for f in lint_path(str(path), Selection.of([code]), project=project)]


def test_accuracy_of_a_caller_loader_counts_every_pair(tmp_path):
    assert project_findings(tmp_path, ACCURACY, "ML602") == [9]
    (flagged,) = run(ACCURACY)["seen"]
    assert flagged > 100  # more hits than samples: every prediction against every label
    fixed = ACCURACY.replace("== labels)", "== labels.squeeze(1))")
    assert project_findings(tmp_path, fixed, "ML602") == []
    (count,) = run(fixed)["seen"]
    assert count <= 100
