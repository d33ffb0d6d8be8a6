"""Witnesses of issue 27's classes as real code spreads them over functions: a term cut inside the loss a
model's method returns (ML413), a metric that keeps the model's output with its graph (ML207), an in-place
activation chosen by a constructor's default (ML401), an in-place change of a slice of a saved output
(ML406), an entropy bonus computed by a helper (ML415) and a parameter group never given to the optimizer
(ML417). Each program shows the misbehaviour under torch, and its fix shows none and is not reported."""
import pytest
import torch

from tests.witness import family_findings, run


def line_of(program: str, text: str) -> int:
    return next(number for number, line in enumerate(program.splitlines(), 1) if text in line)

CUT_IN_FORWARD = '''
import torch
import torch.nn.functional as F


class Ortho(torch.nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4, bias=False)
        self.beta = beta

    def penalty(self):
        return (self.proj.weight @ self.proj.weight.t() - torch.eye(4)).pow(2).sum()

    def forward(self, x, y):
        return F.mse_loss(self.proj(x), y) + self.beta * self.penalty().detach()


def gradient(beta):
    torch.manual_seed(0)
    model = Ortho(beta)
    x, y = torch.randn(8, 4), torch.randn(8, 4)
    loss = model(x, y)
    loss.backward()
    return model.proj.weight.grad.clone()


without, weighted = gradient(0.0), gradient(10.0)
'''


@pytest.mark.parametrize("fixed", [False, True])
def test_ml413_a_term_cut_in_the_loss_a_forward_returns_trains_nothing(fixed):
    program = CUT_IN_FORWARD.replace("self.penalty().detach()", "self.penalty()") if fixed else CUT_IN_FORWARD
    assert family_findings(program, "ML413") == ([] if fixed else [(line_of(program, "loss = model(x, y)"), "ML413")])
    namespace = run(program)
    assert torch.equal(namespace["without"], namespace["weighted"]) is not fixed


METRIC = '''
import torch
import torch.nn.functional as F


class MSEMetric:
    def __init__(self):
        self.values = []

    def process(self, pred, target):
        self.values.append(F.mse_loss(pred, target))


model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
metric = MSEMetric()
for _ in range(3):
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    pred = model(x)
    loss = F.l1_loss(pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    metric.process(pred, y)
kept = [value.grad_fn is not None for value in metric.values]
'''


@pytest.mark.parametrize("fixed", [False, True])
def test_ml207_a_metric_fed_the_live_output_keeps_every_graph(fixed):
    program = METRIC.replace("metric.process(pred, y)", "metric.process(pred.detach(), y)") if fixed else METRIC
    assert family_findings(program, "ML207") == ([] if fixed else [(line_of(program, "metric.process("), "ML207")])
    assert all(run(program)["kept"]) is not fixed


DEFAULT_INPLACE = '''
import torch


class Block(torch.nn.Module):
    def __init__(self, dim, inplace=True):
        super().__init__()
        self.act = torch.nn.ReLU(inplace=inplace)
        self.fc = torch.nn.Linear(dim, dim)

    def forward(self, x):
        identity = x
        out = self.fc(self.act(x))
        return out + identity


torch.manual_seed(0)
block = Block(4)
x = torch.randn(8, 4)
kept = x.clone()
out = block(x)
changed = not torch.equal(x, kept)
'''


@pytest.mark.parametrize("fixed", [False, True])
def test_ml401_an_activation_in_place_by_its_default_changes_the_residual(fixed):
    program = DEFAULT_INPLACE.replace("inplace=True)", "inplace=False)") if fixed else DEFAULT_INPLACE
    assert family_findings(program, "ML401") == ([] if fixed else [(line_of(program, "out = self.fc("), "ML401")])
    assert run(program)["changed"] is not fixed


SLICE_OF_SAVED = '''
import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 1)

    def forward(self, x):
        y = self.conv(x).sigmoid()
        y[:, 0:2] += 1.0
        return y


head = Head()
loss = head(torch.randn(2, 3, 4, 4)).sum()
try:
    loss.backward()
    raised = False
except RuntimeError:
    raised = True
'''


@pytest.mark.parametrize("fixed", [False, True])
def test_ml406_an_item_added_in_place_to_a_saved_output_breaks_backward(fixed):
    program = SLICE_OF_SAVED.replace("sigmoid()", "sigmoid().clone()") if fixed else SLICE_OF_SAVED
    assert family_findings(program, "ML406") == ([] if fixed else [(line_of(program, "y[:, 0:2] += 1.0"), "ML406")])
    assert run(program)["raised"] is not fixed


ENTROPY_HELPER = '''
import torch
from torch.distributions import Categorical


def entropy_bonus(logits):
    p, logp = logits.softmax(-1), logits.log_softmax(-1)
    return -(p * logp).sum(-1).mean()


def episode_loss(logits, actions, advantages, entropy_weight=0.1):
    logp = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
    pg = -(logp * advantages).mean()
    return pg + entropy_weight * entropy_bonus(logits)


logits = torch.nn.Parameter(torch.tensor([2.0, 0.0, -1.0]))
optimizer = torch.optim.SGD([logits], lr=1.0)
start = Categorical(logits=logits).entropy().item()
for _ in range(20):
    loss = episode_loss(logits.expand(8, 3), torch.zeros(8, dtype=torch.long), torch.zeros(8))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
end = Categorical(logits=logits).entropy().item()
'''


@pytest.mark.parametrize("fixed", [False, True])
def test_ml415_an_entropy_bonus_from_a_helper_added_to_the_loss_collapses_the_policy(fixed):
    program = ENTROPY_HELPER.replace("pg + entropy_weight", "pg - entropy_weight") if fixed else ENTROPY_HELPER
    assert family_findings(program, "ML415") == ([] if fixed else [(line_of(program, "loss = episode_loss("), "ML415")])
    namespace = run(program)
    assert (namespace["end"] > namespace["start"]) is fixed


GROUPS = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = torch.nn.Linear(4, 4)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.backbone(x))


def build_optimizer(model, lr=0.1):
    backbone = {"params": model.backbone.parameters(), "lr": lr * 0.1}
    head = {"params": model.head.parameters(), "lr": lr}
    return torch.optim.SGD([backbone], lr=lr)


model = Net()
optimizer = build_optimizer(model)
before = model.head.weight.detach().clone()
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
trained = not torch.equal(before, model.head.weight)
'''


@pytest.mark.parametrize("fixed", [False, True])
def test_ml417_a_parameter_group_left_out_of_the_optimizer_never_trains(fixed):
    program = GROUPS.replace("SGD([backbone]", "SGD([backbone, head]") if fixed else GROUPS
    assert family_findings(program, "ML417") == ([] if fixed else [(line_of(program, "head = {"), "ML417")])
    assert run(program)["trained"] is fixed


def test_a_dict_loop_over_its_own_values_is_followed_once():
    """`for k, v in v.items()` rebinds what it iterates: following the loss a step returns through the
    values of a dict must not follow it back into itself (a RecursionError, ML009, on sentence-transformers)."""
    program = '''
import torch

def step(model, batch):
    loss = model(batch).sum()
    loss.backward()
    return {"loss": loss}

model = torch.nn.Linear(2, 1)
totals = {}
for batch in [torch.randn(4, 2)]:
    v = step(model, batch)
    for k, v in v.items():
        totals[k] = totals.get(k, 0) + v
'''
    assert [code for _, code in family_findings(program, "ML")] == []


SLICED_GROUPS = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(4, 4)
        self.norm = torch.nn.LayerNorm(4)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.norm(self.body(x)))


def build_optimizer(model, lr=0.1):
    decay, no_decay = [], []
    for p in model.parameters():
        (no_decay if p.ndim == 1 else decay).append(p)
    groups = [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.SGD(groups[:1], lr=lr)


model = Net()
optimizer = build_optimizer(model)
before = model.norm.weight.detach().clone()
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
trained = not torch.equal(before, model.norm.weight)
'''


@pytest.mark.parametrize("fixed", [False, True])
def test_ml417_a_group_sliced_out_of_the_optimizer_never_trains(fixed):
    """`groups[:1]` gives the optimizer the decay group only: the LayerNorm weights and every bias keep their
    initial values; `groups` whole trains them and ML417 is silent."""
    program = SLICED_GROUPS.replace("SGD(groups[:1]", "SGD(groups") if fixed else SLICED_GROUPS
    assert family_findings(program, "ML417") == ([] if fixed else [(line_of(program, "SGD(groups[:1]"), "ML417")])
    assert run(program)["trained"] is fixed
