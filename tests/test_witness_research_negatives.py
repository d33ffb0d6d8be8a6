"""Witnesses for legitimate research code the rules leave alone: run under torch, each program shows that
the bug its look-alike rule reports does not happen there, and mllint finds nothing in it."""
import pytest
import torch

from witness import family_findings, run

MANUAL_CLEAR = """
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
batch = (torch.ones(4, 3), torch.zeros(4, 1))
for step in range(3):
    for p in model.parameters():
        if p.grad is not None:
            {clear}
    x, y = batch
    torch.nn.functional.mse_loss(model(x), y).backward()
    seen.append(model.weight.grad.clone())
    optimizer.step()
"""


@pytest.mark.parametrize(
    "clear", ["p.grad = torch.zeros_like(p)", "p.grad.fill_(0)", "p.grad *= 0", "p.grad[:] = 0", "p.grad.data.mul_(0.0)"]
)
def test_gradients_zeroed_by_hand_do_not_accumulate(clear):
    program = MANUAL_CLEAR.format(clear=clear)
    assert family_findings(program, "ML2") == []
    grads = run(program)["seen"]
    assert all(torch.equal(g, grads[0]) for g in grads)


def test_gradients_scaled_by_hand_accumulate_and_are_reported():
    program = MANUAL_CLEAR.format(clear="p.grad.mul_(0.5)")
    assert family_findings(program, "ML2") == [(14, "ML201")]
    grads = run(program)["seen"]
    assert torch.allclose(grads[1], 1.5 * grads[0])


FRESH_MODULES = """
import torch

batch = (torch.ones(4, 3), torch.zeros(4, 1))
for case in range(3):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    x, y = batch
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    seen.append(model.weight.grad.clone())
    optimizer.step()
"""


def test_a_module_and_optimizer_built_per_iteration_step_on_their_own_gradients():
    assert family_findings(FRESH_MODULES, "ML2") == []
    grads = run(FRESH_MODULES)["seen"]
    assert all(torch.equal(g, grads[0]) for g in grads)
    stale = FRESH_MODULES.replace("    model = torch.nn.Linear(3, 1)\n", "").replace("import torch\n", "import torch\nmodel = torch.nn.Linear(3, 1)\n", 1)
    assert family_findings(stale, "ML2") == [(12, "ML201")]
    grads = run(stale)["seen"]
    assert not torch.equal(grads[1], grads[0])


REINFORCE = """
import torch

actor, critic = torch.nn.Linear(4, 2), torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD([*actor.parameters(), *critic.parameters()], lr=0.1)
state, action, reward = torch.randn(1, 4), torch.tensor([[1]]), torch.tensor([[1.0]])
optimizer.zero_grad()
log_prob = torch.log(torch.softmax(actor(state), dim=1).gather(1, action))
advantage = reward - critic(state)
actor_loss = -log_prob * advantage.detach()
actor_loss.backward()
"""


def test_reinforce_with_a_baseline_trains_the_actor_through_log_prob(lint):
    assert lint(REINFORCE, "ML413", "ML404") == []
    namespace = run(REINFORCE)
    assert namespace["actor"].weight.grad.abs().sum() > 0  # the policy gradient flows
    assert namespace["critic"].weight.grad is None  # the advantage is cut on purpose


DROP_LAST = """
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

model = torch.nn.Linear(3, 1)
dataset = TensorDataset(torch.randn(9, 3), torch.ones(9))
loader = DataLoader(dataset, batch_size=4{drop_last})
for x, y in loader:
    loss = F.binary_cross_entropy_with_logits(model(x).squeeze(), y)
    seen.append(len(x))
"""


def test_a_loader_that_drops_its_last_batch_never_yields_a_batch_of_one(lint):
    full = DROP_LAST.format(drop_last=", drop_last=True")
    assert lint(full, "ML604") == []
    assert run(full)["seen"] == [4, 4]
    partial = DROP_LAST.format(drop_last="")
    assert [f.code for f in lint(partial, "ML604")] == ["ML604"]
    with pytest.raises(ValueError):  # the last batch of one: a 0-d input against a (1,) target
        run(partial)


ADDED_SIGMOID = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
model.add_module("prob", nn.Sigmoid())
outputs = model(torch.randn(5, 3) * 100)
loss = nn.BCELoss()(outputs, torch.ones(5, 1))
"""


def test_a_sigmoid_added_after_construction_makes_the_bce_input_a_probability(lint):
    assert lint(ADDED_SIGMOID, "ML107") == []
    outputs = run(ADDED_SIGMOID)["outputs"]
    assert outputs.min() >= 0 and outputs.max() <= 1


DISPATCH = """
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.query = nn.Linear(4, 4)

    def forward(self, query, cached=False):
        if cached:
            if self.kind == "self":
                query = self.query(query)
            elif self.kind == "context":
                query = self.query(query) * 2
        else:
            query = self.query(query)
        query /= 2.0
        return query


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))

    def forward(self, x):
        for i, head in enumerate(self.heads):
            x[i] = head(x[i])
        return x


query = torch.ones(2, 4)
for kind in ("self", "context"):
    for cached in (True, False):
        Attention(kind)(query, cached)
features = [torch.ones(2, 4), torch.ones(2, 4)]
first = features[0]
Heads()(features)
"""


def test_arguments_rebound_on_every_dispatch_arm_and_lists_of_maps_keep_the_callers_tensors(lint):
    assert lint(DISPATCH, "ML401") == []
    namespace = run(DISPATCH)
    assert torch.equal(namespace["query"], torch.ones(2, 4))
    assert torch.equal(namespace["first"], torch.ones(2, 4))  # the list item is replaced, not the tensor
