"""Witnesses for ML102, ML103, ML104 and the cross-file ML101: the flagged programs run under torch and
misbehave as the rules say; the fixed ones do not."""
import math
import sys
from pathlib import Path

import torch

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path

from witness import codes, run

PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "ml1_project"
SETUP = """
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
x = torch.randn(256, 8)
y = x[:, :4].argmax(dim=1)
model = nn.Linear(8, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
"""


NLL_ON_LOGITS = SETUP + """
for _ in range(100):
    optimizer.zero_grad()
    loss = F.nll_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""


def test_ml102_nll_on_raw_logits_is_unbounded_and_log_softmax_is_not(lint, fix):
    assert codes(lint(NLL_ON_LOGITS, "ML102")) == ["ML102"]
    flagged = run(NLL_ON_LOGITS)
    assert flagged["loss"].item() < -10  # the "loss" falls without end: the target logit just grows
    repaired = run(NLL_ON_LOGITS.replace("F.nll_loss(model(x), y)", "F.nll_loss(F.log_softmax(model(x), dim=1), y)"))
    assert 0 <= repaired["loss"].item() < 0.5


NLL_ON_PROBABILITIES = SETUP + """
for _ in range(60):
    optimizer.zero_grad()
    loss = F.nll_loss(F.softmax(model(x), dim=1), y)
    loss.backward()
    optimizer.step()
cross_entropy = F.cross_entropy(model(x), y).item()
"""


def test_ml102_nll_on_probabilities_learns_less_and_the_fix_learns(lint, fix):
    assert codes(lint(NLL_ON_PROBABILITIES, "ML102")) == ["ML102"]
    fixed = fix(NLL_ON_PROBABILITIES, "ML102", unsafe=True)
    assert "F.nll_loss(F.log_softmax(model(x), dim=1), y)" in fixed
    assert lint(fixed, "ML102") == []
    flagged, repaired = run(NLL_ON_PROBABILITIES), run(fixed)
    assert -1 < flagged["loss"].item() < 0  # -p[target]: bounded, its gradients vanish as p nears 0 or 1
    assert repaired["cross_entropy"] < flagged["cross_entropy"]


SIGMOID_INTO_LOGITS_LOSS = """
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(256, 8)
targets = (x[:, 0] > 0).float()
model = nn.Linear(8, 1)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(200):
    optimizer.zero_grad()
    loss = criterion(torch.sigmoid(model(x).squeeze(1)), targets)
    loss.backward()
    optimizer.step()
negatives = torch.sigmoid(model(x).squeeze(1))[targets == 0]
"""


def test_ml103_a_double_sigmoid_cannot_go_below_its_floor_and_the_fix_can(lint, fix):
    assert codes(lint(SIGMOID_INTO_LOGITS_LOSS, "ML103")) == ["ML103"]
    fixed = fix(SIGMOID_INTO_LOGITS_LOSS, "ML103", unsafe=True)
    assert "criterion(model(x).squeeze(1), targets)" in fixed
    flagged, repaired = run(SIGMOID_INTO_LOGITS_LOSS), run(fixed)
    # The loss sees sigmoid(sigmoid(z)) in (0.5, 0.73): a negative example costs at least ln 2.
    assert flagged["loss"].item() > math.log(2) / 2 + 0.1
    assert repaired["loss"].item() < 0.2


def test_ml104_the_redundant_log_softmax_changes_nothing_and_its_fix_neither(lint, fix):
    source = SETUP + "loss = F.cross_entropy(F.log_softmax(model(x), dim=1), y)\n"
    assert codes(lint(source, "ML104")) == ["ML104"]
    fixed = fix(source, "ML104")  # a safe fix
    assert fixed.endswith("loss = F.cross_entropy(model(x), y)\n")
    flagged, repaired = run(source), run(fixed)
    assert torch.allclose(flagged["loss"], repaired["loss"])
    flagged["loss"].backward()
    repaired["loss"].backward()
    assert torch.allclose(flagged["model"].weight.grad, repaired["model"].weight.grad, atol=1e-6)


def test_ml101_across_files_the_trainer_of_a_softmax_model_stalls(monkeypatch):
    findings = lint_path(str(PROJECT / "pkg" / "train.py"), Selection.of(["ML101"]), project=ProjectIndex.for_paths([str(PROJECT)]))
    assert findings[0].start.line == 19 and "`Net.forward` returns softmax output (models.py:17)" in findings[0].message
    monkeypatch.syspath_prepend(str(PROJECT))
    from pkg.models import Net
    from pkg.train import Trainer

    class LogitsNet(Net):  # what the finding asks for: forward returns the logits
        def forward(self, x):
            return self.fc(x)

    def final_loss(trainer) -> float:
        torch.manual_seed(0)
        x = torch.randn(256, 16)
        y = x[:, :4].argmax(dim=1)
        for _ in range(100):
            trainer.train_step(x, y)
        return torch.nn.functional.cross_entropy(trainer.model.fc(x), y).item()

    torch.manual_seed(0)
    flagged = Trainer(lr=0.5)
    torch.manual_seed(0)
    repaired = Trainer(lr=0.5)
    repaired.model = LogitsNet()
    repaired.optimizer = torch.optim.SGD(repaired.model.parameters(), lr=0.5)
    floor = math.log(1 + 3 / math.e)  # softmax output fed to cross-entropy never scores below this
    assert flagged.criterion(flagged.model(torch.randn(256, 16)), torch.zeros(256, dtype=torch.long)).item() > floor
    assert final_loss(repaired) < final_loss(flagged)
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)


RELU_SCORES = """
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1), nn.ReLU())
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x = torch.randn(256, 4)
y = (x[:, :1] > 0).float()
for _ in range(200):
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
probabilities = torch.sigmoid(model(x))
"""


def test_ml105_relu_scores_into_bce_with_logits_never_predict_below_one_half():
    from witness import family_findings

    assert family_findings(RELU_SCORES, "ML105") == [(12, "ML105")]
    assert run(RELU_SCORES)["probabilities"].min().item() >= 0.5  # half the labels are 0: never reached
    fixed = RELU_SCORES.replace("nn.Linear(16, 1), nn.ReLU())", "nn.Linear(16, 1))")
    assert family_findings(fixed, "ML105") == []
    assert run(fixed)["probabilities"].min().item() < 0.1
