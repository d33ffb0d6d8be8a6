"""Witnesses for objects reaching their use through constructors, attributes, method parameters, lists and
configs: a meter held in a list keeps every batch's graph (its class's override decides), a term a trainer's
helper cuts trains nothing, and an activation a config dict makes in place overwrites what the block adds
back; each repaired program is silent and behaves."""
import torch

from witness import run

SCORES = """
import torch
from torch import nn

class Score:
    def __init__(self):
        self.sum = 0.0

    def batch_value(self, out, target):
        raise NotImplementedError

    def __call__(self, out, target):
        value = self.batch_value(out, target)
        self.sum = self.sum + value * len(target)
        return value

class AbsError(Score):
    def batch_value(self, out, target):
        return (out - target).abs().mean()

class SquaredError(Score):
    def batch_value(self, out, target):
        return (out.detach() - target).pow(2).mean()

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scores = [AbsError()]
for _ in range(4):
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    out = model(x)
    loss = nn.functional.mse_loss(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for score in scores:
        score(out, y)
kept = scores[0].sum
"""


def test_a_meter_in_a_list_keeps_the_graph_its_class_computes(lint):
    assert [f.code for f in lint(SCORES, "ML207")] == ["ML207"]
    assert run(SCORES)["kept"].grad_fn is not None
    repaired = SCORES.replace("scores = [AbsError()]", "scores = [SquaredError()]")
    assert lint(repaired, "ML207") == []
    assert run(repaired)["kept"].grad_fn is None


ENGINE = """
import torch
import torch.nn.functional as F
from torch import nn

class GatedHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.router, self.fc = nn.Linear(6, 2), nn.Linear(6, 3)

    def forward(self, x):
        gates = self.router(x).softmax(-1)
        return self.fc(x), (gates.mean(0) ** 2).sum()

def objective(net, batch):
    logits, balance = net(batch[0])
    return F.cross_entropy(logits, batch[1]) + 0.5 * balance.item()

class Engine:
    def __init__(self, net):
        self.net = net

    def step(self, net, batch):
        loss = objective(net, batch)
        loss.backward()

    def fit(self, batch):
        model = self.net
        self.step(model, batch)

torch.manual_seed(0)
head = GatedHead()
Engine(head).fit((torch.randn(16, 6), torch.randint(0, 3, (16,))))
"""


def test_a_term_cut_in_a_helper_of_a_trainer_trains_nothing(lint):
    assert [f.code for f in lint(ENGINE, "ML413")] == ["ML413"]
    assert run(ENGINE)["head"].router.weight.grad is None  # the router learns nothing from its balance term
    repaired = ENGINE.replace("balance.item()", "balance")
    assert lint(repaired, "ML413") == []
    grad = run(repaired)["head"].router.weight.grad
    assert grad is not None and grad.abs().sum() > 0


BLOCK = """
import torch
import torch.nn.functional as F
from torch import nn

OPTS = {"width": 4, "act_in_place": True}

class Block(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.opts = opts
        self.lin = nn.Linear(opts["width"], opts["width"])

    def forward(self, x):
        pre = self.lin(x)
        out = F.relu(pre, inplace=self.opts["act_in_place"])
        return out + pre

torch.manual_seed(0)
block = Block(OPTS)
x = -torch.ones(2, 4)
with torch.no_grad():
    result = block(x)
    pre = block.lin(x)
"""


def test_an_in_place_activation_a_config_asks_for_overwrites_the_residual(lint):
    assert [f.code for f in lint(BLOCK, "ML401")] == ["ML401"]
    ran = run(BLOCK)
    assert not torch.allclose(ran["result"], torch.relu(ran["pre"]) + ran["pre"])  # `pre` was overwritten
    repaired = BLOCK.replace('"act_in_place": True', '"act_in_place": False')
    assert lint(repaired, "ML401") == []
    ran = run(repaired)
    assert torch.allclose(ran["result"], torch.relu(ran["pre"]) + ran["pre"])
