"""Witnesses for ML105, ML106, ML107 and a linear combination of softmax outputs (ML101): the flagged
programs run under torch and misbehave as the rules say; the fixed ones do not."""
import math

import pytest

from witness import codes, run

SETUP = """
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
x = torch.randn(256, 8)
y = x[:, :4].argmax(dim=1)
targets = (x[:, :4] > 0).float()
model = nn.Linear(8, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
"""


SIGMOID_INTO_CROSS_ENTROPY = SETUP + """
for _ in range(200):
    optimizer.zero_grad()
    loss = F.cross_entropy(torch.sigmoid(model(x)), y)
    loss.backward()
    optimizer.step()
"""


def test_ml105_sigmoid_into_cross_entropy_cannot_fall_below_its_floor(lint, fix):
    assert codes(lint(SIGMOID_INTO_CROSS_ENTROPY, "ML105")) == ["ML105"]
    floor = math.log((math.e + 3) / math.e)  # one score at 1, three at 0: the best four sigmoids can do
    assert run(SIGMOID_INTO_CROSS_ENTROPY)["loss"].item() > floor
    repaired = run(fix(SIGMOID_INTO_CROSS_ENTROPY, "ML105", unsafe=True))
    assert repaired["loss"].item() < 0.5 < floor


SOFTMAX_INTO_BCE_WITH_LOGITS = SETUP + """
for _ in range(200):
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(F.softmax(model(x), dim=1), targets)
    loss.backward()
    optimizer.step()
predicted = torch.sigmoid(F.softmax(model(x), dim=1))
"""


def test_ml105_softmax_into_bce_with_logits_never_predicts_below_one_half(lint, fix):
    assert codes(lint(SOFTMAX_INTO_BCE_WITH_LOGITS, "ML105")) == ["ML105"]
    flagged = run(SOFTMAX_INTO_BCE_WITH_LOGITS)
    assert flagged["predicted"].min().item() >= 0.5  # every negative label is predicted positive
    assert flagged["loss"].item() > 0.5
    repaired = run(fix(SOFTMAX_INTO_BCE_WITH_LOGITS, "ML105", unsafe=True))
    assert repaired["loss"].item() < 0.3


KL_DIV_ON_PROBABILITIES = SETUP + """
teacher = F.softmax(x[:, :4] * 2, dim=1)
for _ in range(200):
    optimizer.zero_grad()
    loss = F.kl_div(F.softmax(model(x), dim=1), teacher, reduction="batchmean")
    loss.backward()
    optimizer.step()
divergence = F.kl_div(F.log_softmax(model(x), dim=1), teacher, reduction="batchmean").item()
"""


def test_ml106_kl_div_on_probabilities_does_not_approach_the_teacher(lint, fix):
    assert codes(lint(KL_DIV_ON_PROBABILITIES, "ML106")) == ["ML106"]
    flagged = run(KL_DIV_ON_PROBABILITIES)
    assert flagged["loss"].item() < 0  # a "divergence" below zero: it is none
    repaired = run(fix(KL_DIV_ON_PROBABILITIES, "ML106", unsafe=True))
    assert repaired["divergence"] < 0.05 and flagged["divergence"] > 3 * repaired["divergence"]


BCE_ON_LOG_PROBABILITIES = SETUP + """
loss = F.binary_cross_entropy(F.logsigmoid(model(x)), targets)
"""


def test_ml107_bce_on_log_probabilities_raises_at_the_first_batch(lint):
    assert codes(lint(BCE_ON_LOG_PROBABILITIES, "ML107")) == ["ML107"]
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        run(BCE_ON_LOG_PROBABILITIES)
    run(BCE_ON_LOG_PROBABILITIES.replace("F.binary_cross_entropy(F.logsigmoid(", "F.binary_cross_entropy_with_logits(("))


ENSEMBLE_INTO_CROSS_ENTROPY = SETUP + """
other = nn.Linear(8, 4)
optimizer = torch.optim.SGD([*model.parameters(), *other.parameters()], lr=0.5)
for _ in range(200):
    optimizer.zero_grad()
    mean = (F.softmax(model(x), dim=1) + F.softmax(other(x), dim=1)) / 2
    loss = F.cross_entropy(mean, y)
    loss.backward()
    optimizer.step()
"""


def test_ml101_an_ensemble_mean_of_softmax_outputs_into_cross_entropy_stalls(lint):
    assert codes(lint(ENSEMBLE_INTO_CROSS_ENTROPY, "ML101")) == ["ML101"]
    floor = math.log((math.e + 3) / math.e)
    assert run(ENSEMBLE_INTO_CROSS_ENTROPY)["loss"].item() > floor
    repaired = run(ENSEMBLE_INTO_CROSS_ENTROPY.replace("F.cross_entropy(mean, y)", "F.nll_loss(torch.log(mean), y)"))
    assert repaired["loss"].item() < 0.5
