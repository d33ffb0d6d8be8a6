"""Witnesses for ML101 and ML204 found through the objects layer: a loss built by a helper, moved with
`.to()` and set on a trainer by a setter, fed a model kept as `self.model` and wrapped; a scheduler
returned in a builder's tuple, stepped first in the epoch. Each flagged program misbehaves under torch;
its repair does not, and is not flagged."""
import math
import warnings

import pytest

from witness import family_findings, run

SETTER = """\
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)


def build_criterion(cfg):
    return nn.CrossEntropyLoss(label_smoothing=cfg["smoothing"])


class Trainer:
    def __init__(self, model):
        self.model = model
        self.criterion = None

    def set_criterion(self, criterion):
        self.criterion = criterion

    def fit(self, x, y, steps):
        model = self.model
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        for _ in range(steps):
            optimizer.zero_grad()
            loss = self.criterion(model(x), y)
            loss.backward()
            optimizer.step()


torch.manual_seed(0)
x = torch.randn(256, 8)
y = x[:, :4].argmax(dim=1)
trainer = Trainer(torch.nn.DataParallel(Net().to("cpu")))
trainer.set_criterion(build_criterion({"smoothing": 0.0}).to("cpu"))
trainer.fit(x, y, 60)
logits = trainer.model.module.fc(x)
final_loss = F.cross_entropy(logits, y).item()
objective = trainer.criterion(trainer.model(x), y).item()
"""


def test_a_loss_set_by_a_setter_fed_a_wrapped_softmax_model_stalls():
    assert family_findings(SETTER, "ML1") == [(32, "ML101")]
    # Fed probabilities, cross-entropy cannot go below log(1 + (k - 1) / e) for k = 4 classes: the
    # raw logits underneath learn little.
    floor = math.log(1 + 3 / math.e)
    flagged = run(SETTER)
    repaired = SETTER.replace("return F.softmax(self.fc(x), dim=1)", "return self.fc(x)")
    assert family_findings(repaired, "ML1") == []
    fixed = run(repaired)
    assert fixed["objective"] < floor < flagged["objective"]  # the repaired model goes below it
    assert fixed["final_loss"] < flagged["final_loss"]


BUILDER = """\
import torch
from torch import nn


def build_training(lr):
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    return model, optimizer, scheduler


model, optimizer, scheduler = build_training(0.1)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
for epoch in range(2):
    scheduler.step()
    for x, y in data:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        seen.append(optimizer.param_groups[0]["lr"])
"""


def test_a_scheduler_from_a_builders_tuple_stepped_first_skips_its_first_learning_rate():
    assert family_findings(BUILDER, "ML2") == [(15, "ML204")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        used = run(BUILDER)["seen"]
    assert used == [pytest.approx(0.05)] * 3 + [pytest.approx(0.025)] * 3  # 0.1 is never used
    assert any("lr_scheduler.step()" in str(w.message) for w in caught)
    repaired = BUILDER.replace("    scheduler.step()\n", "") + "    scheduler.step()\n"
    assert family_findings(repaired, "ML2") == []
    assert run(repaired)["seen"] == [pytest.approx(0.1)] * 3 + [pytest.approx(0.05)] * 3


PARTIAL_HEAD = """\
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


def make_classifier(d_in, n_cls, final_act=partial(nn.Softmax, dim=-1)):
    return nn.Sequential(nn.Linear(d_in, n_cls), final_act())


def build(lr):
    model = make_classifier(8, 4)
    return model, torch.optim.SGD(model.parameters(), lr=lr)


class Trainer:
    def __init__(self, lr):
        self.model, self.opt = build(lr)

    def fit(self, x, y, steps):
        for _ in range(steps):
            self.opt.zero_grad()
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.opt.step()


torch.manual_seed(0)
x = torch.randn(256, 8)
y = x[:, :4].argmax(dim=1)
trainer = Trainer(0.5)
trainer.fit(x, y, 60)
objective = F.cross_entropy(trainer.model(x), y).item()
"""


def test_a_default_softmax_factory_in_a_builders_tuple_kept_as_attributes_stalls():
    assert family_findings(PARTIAL_HEAD, "ML1") == [(24, "ML101"), (34, "ML101")]  # the training loss and the reported objective
    floor = math.log(1 + 3 / math.e)  # cross-entropy of probabilities over 4 classes cannot go below it
    flagged = run(PARTIAL_HEAD)
    repaired = PARTIAL_HEAD.replace("model = make_classifier(8, 4)", "model = make_classifier(8, 4, final_act=nn.Identity)")
    assert family_findings(repaired, "ML1") == []
    fixed = run(repaired)
    assert fixed["objective"] < floor < flagged["objective"]
