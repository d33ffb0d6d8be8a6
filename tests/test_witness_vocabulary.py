"""Witnesses for the activation vocabulary of ML101/ML105: a segmentation head ending in `nn.Softmax2d`
fed to `CrossEntropyLoss`, and `F.hardsigmoid` output fed to `BCEWithLogitsLoss`, train worse than the
logits do; the fixed programs (the activation removed) do not."""
from witness import codes, run

SOFTMAX2D_INTO_CROSS_ENTROPY = """
import torch
from torch import nn

images = torch.randn(16, 3, 6, 6)
masks = images[:, :2].argmax(dim=1)
net = nn.Sequential(nn.Conv2d(3, 2, 1), nn.Softmax2d())
optimizer = torch.optim.SGD(net.parameters(), lr=1.0)
for _ in range(300):
    optimizer.zero_grad()
    loss = nn.CrossEntropyLoss()(net(images), masks)
    loss.backward()
    optimizer.step()
"""


def test_ml101_softmax2d_into_cross_entropy_stalls_above_its_floor(lint):
    assert codes(lint(SOFTMAX2D_INTO_CROSS_ENTROPY, "ML101")) == ["ML101"]
    floor = 0.31  # two probabilities as logits: -log(e / (e + 1)) at best
    assert run(SOFTMAX2D_INTO_CROSS_ENTROPY)["loss"].item() > floor
    repaired = SOFTMAX2D_INTO_CROSS_ENTROPY.replace(", nn.Softmax2d())", ")")
    assert codes(lint(repaired, "ML101")) == []
    assert run(repaired)["loss"].item() < 0.2


HARDSIGMOID_INTO_BCE_WITH_LOGITS = """
import torch
import torch.nn.functional as F
from torch import nn

x = torch.randn(256, 8)
targets = (x[:, :1] > 0).float()
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(200):
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(F.hardsigmoid(model(x)), targets)
    loss.backward()
    optimizer.step()
predicted = torch.sigmoid(F.hardsigmoid(model(x)))
"""


def test_ml105_hardsigmoid_into_bce_with_logits_never_predicts_below_one_half(lint, fix):
    assert codes(lint(HARDSIGMOID_INTO_BCE_WITH_LOGITS, "ML105")) == ["ML105"]
    flagged = run(HARDSIGMOID_INTO_BCE_WITH_LOGITS)
    assert flagged["predicted"].min().item() >= 0.5 and flagged["loss"].item() > 0.5
    repaired = fix(HARDSIGMOID_INTO_BCE_WITH_LOGITS, "ML105", unsafe=True)
    assert "F.binary_cross_entropy_with_logits(model(x), targets)" in repaired
    assert run(repaired)["loss"].item() < 0.3
