"""Witnesses for callables and objects followed as values (fixtures callables_losses, callables_factories,
callables_transforms): each flagged program misbehaves under torch as the message says, and its repair
does not. CPU only."""
import torch

from witness import family_findings, run

PARTIAL_CROSS_ENTROPY = """\
from functools import partial

import torch
import torch.nn.functional as F

bc_loss = partial(F.cross_entropy, label_smoothing=0.0)


def step(logits, actions):
    probs = F.softmax(logits, dim=-1)
    return bc_loss(probs, actions)


logits = torch.tensor([[8.0, -8.0], [8.0, -8.0]], requires_grad=True)
loss = step(logits, torch.tensor([0, 0]))
loss.backward()
seen.append(loss.item())
"""


def test_softmax_into_a_partial_of_cross_entropy_cannot_reach_a_small_loss():
    assert family_findings(PARTIAL_CROSS_ENTROPY, "ML1") == [(11, "ML101")]
    flagged = run(PARTIAL_CROSS_ENTROPY)["seen"][0]
    assert flagged > 0.3  # softmax twice: confident right logits still cost about ln(1 + 1/e)
    repaired = PARTIAL_CROSS_ENTROPY.replace("bc_loss(probs, actions)", "bc_loss(logits, actions)")
    assert family_findings(repaired, "ML1") == []
    assert run(repaired)["seen"][0] < 1e-5


PARTIAL_OPTIMIZER = """\
from functools import partial

import torch
from torch import nn

make_opt = partial(torch.optim.SGD, lr=0.5)


def finetune():
    model = nn.Sequential(nn.Linear(2, 2))
    optimizer = make_opt(model.parameters())
    model.head = nn.Linear(2, 1)
    before = model.head.weight.detach().clone()
    loss = model.head(model[0](torch.ones(4, 2))).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    seen.append(torch.equal(before, model.head.weight.detach()))


finetune()
"""


def test_a_head_added_after_a_partial_optimizer_is_never_updated():
    assert family_findings(PARTIAL_OPTIMIZER, "ML410") == [(12, "ML410")]
    assert run(PARTIAL_OPTIMIZER)["seen"] == [True]  # the new head kept its initial weights
    repaired = PARTIAL_OPTIMIZER.replace("    optimizer = make_opt(model.parameters())\n", "").replace(
        "    model.head = nn.Linear(2, 1)\n", "    model.head = nn.Linear(2, 1)\n    optimizer = make_opt(model.parameters())\n"
    )
    assert family_findings(repaired, "ML410") == []
    assert run(repaired)["seen"] == [False]


TRANSFORM_OBJECT = """\
import torch


class AddOne:
    def __call__(self, x):
        return x.add_(1.0)


class Chain:
    def __init__(self, steps):
        self.steps = steps

    def __call__(self, x):
        for step in self.steps:
            x = step(x)
        return x


class Signals(torch.utils.data.Dataset):
    def __init__(self, transform):
        self.data = torch.zeros(2, 3)
        self.transform = transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        x = self.data[idx]
        x = self.transform(x)
        return x


data = Signals(Chain([AddOne()]))
for epoch in range(3):
    seen.append(data[0][0].item())
"""


def test_a_transform_object_changing_the_indexed_sample_compounds_on_the_stored_data():
    assert family_findings(TRANSFORM_OBJECT, "ML418") == [(29, "ML418")]
    assert run(TRANSFORM_OBJECT)["seen"] == [1.0, 2.0, 3.0]  # each epoch adds to the stored data
    repaired = TRANSFORM_OBJECT.replace("x = self.data[idx]\n", "x = self.data[idx].clone()\n")
    assert family_findings(repaired, "ML418") == []
    assert run(repaired)["seen"] == [1.0, 1.0, 1.0]
