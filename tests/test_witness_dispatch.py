"""Witnesses for calls reached through the class hierarchy and closures: a base class's template step
backpropagating the loss a subclass's hook returns with a term cut from the graph (ML413), and a mixin's
scoring method returning sigmoid output that a closure factory's captured criterion, cross-entropy, is
given (ML105)."""
import torch

from tests.witness import family_findings, run

TEMPLATE_HOOK = """
import torch
import torch.nn.functional as F


class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def training_step(self, x, y):
        loss = self.compute_loss(self.model, x, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def compute_loss(self, model, x, y):
        raise NotImplementedError


class PenalizedTrainer(BaseTrainer):
    def compute_loss(self, model, x, y):
        out = model(x)
        penalty = out.pow(2).mean().item()
        return F.mse_loss(out, y) + 10.0 * penalty


model = torch.nn.Linear(3, 1)
trainer = PenalizedTrainer(model, torch.optim.SGD(model.parameters(), lr=0.05))
x, y = torch.randn(16, 3), torch.randn(16, 1)
for _ in range(20):
    seen.append(trainer.training_step(x, y))
"""


def test_a_penalty_cut_in_a_subclass_hook_trains_nothing():
    assert family_findings(TEMPLATE_HOOK, "ML4") == [(11, "ML413")]
    trained = run(TEMPLATE_HOOK)["model"]
    plain = run(TEMPLATE_HOOK.replace(" + 10.0 * penalty", ""))["model"]
    assert torch.allclose(trained.weight, plain.weight)  # the penalty changed no step
    repaired = TEMPLATE_HOOK.replace("out.pow(2).mean().item()", "out.pow(2).mean()")
    assert family_findings(repaired, "ML4") == []
    assert not torch.allclose(run(repaired)["model"].weight, plain.weight)


MIXIN_SCORES = """
import torch
import torch.nn as nn


class ScoringMixin:
    def scores(self, x):
        return torch.sigmoid(self.forward(x))


class Tagger(ScoringMixin, nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x)


def make_step(model, optimizer, criterion):
    def step(x, y):
        optimizer.zero_grad()
        out = model.scores(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


model = Tagger()
step = make_step(model, torch.optim.Adam(model.parameters(), lr=0.05), nn.CrossEntropyLoss())
x = torch.randn(64, 8)
y = (x @ torch.randn(8, 4)).argmax(1)  # separable: logits can fit it
for _ in range(300):
    seen.append(step(x, y))
"""


def test_sigmoid_scores_of_a_mixin_into_a_captured_cross_entropy_keep_a_loss_floor():
    assert family_findings(MIXIN_SCORES, "ML1") == [(24, "ML105")]
    floor = torch.log(torch.tensor(1 + 3 / torch.e)).item()  # the best a score in (0, 1) can do over 4 classes
    assert min(run(MIXIN_SCORES)["seen"]) > floor - 1e-3
    repaired = MIXIN_SCORES.replace("        out = model.scores(x)\n", "        out = model(x)\n")
    assert family_findings(repaired, "ML1") == []
    assert min(run(repaired)["seen"]) < floor - 0.2
