"""Witnesses for ML207 on a loss held in a dict: the output dicts kept for the epoch's end, and a tracker
that sums the dict's terms, keep every batch's autograd graph (each kept loss still has its `grad_fn`,
and the graphs' parameters are reachable); detached, nothing of the graph is kept."""
import pytest
import torch

from witness import run

SETUP = """
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(6)]

def training_step(batch):
    x, y = batch
    error = model(x) - y
    return {"loss": error.pow(2).mean(), "l1": error.abs().mean()}
"""

OUTPUTS = SETUP + """
outputs = []
for batch in loader:
    optimizer.zero_grad()
    output = training_step(batch)
    output["loss"].backward()
    optimizer.step()
    outputs.append(output)
kept = [value for output in outputs for value in output.values()]
"""

TRACKER = SETUP + """
class LossesTrack:
    def __init__(self):
        self.sums = {"loss": 0, "l1": 0}

    def update(self, losses):
        for key in losses:
            self.sums[key] += losses[key]

track = LossesTrack()
for batch in loader:
    optimizer.zero_grad()
    loss = training_step(batch)
    loss["loss"].backward()
    optimizer.step()
    track.update(loss)
kept = list(track.sums.values())
"""

FIXED = {
    OUTPUTS: ("outputs.append(output)", "outputs.append({k: v.detach() for k, v in output.items()})"),
    TRACKER: ("self.sums[key] += losses[key]", "self.sums[key] += losses[key].item()"),
}


@pytest.mark.parametrize("program", [OUTPUTS, TRACKER])
def test_every_batch_graph_is_kept_until_detached(lint, program):
    assert [f.code for f in lint(program, "ML207")] == ["ML207"]
    kept = run(program)["kept"]
    assert kept and all(isinstance(v, torch.Tensor) and v.grad_fn is not None for v in kept)
    fixed = program.replace(*FIXED[program])
    assert fixed != program and lint(fixed, "ML207") == []
    assert all(not isinstance(v, torch.Tensor) or v.grad_fn is None for v in run(fixed)["kept"])


RETURNED = """
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(6)]

class Trainer:
    def train_step(self, batch):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(batch[0]), batch[1])
        loss.backward()
        optimizer.step()
        return loss

trainer = Trainer()
total_loss = 0.0
for batch in loader:
    total_loss += trainer.train_step(batch)
"""


def test_the_loss_a_step_returns_drags_every_graph_into_the_total(lint):
    assert [f.code for f in lint(RETURNED, "ML207")] == ["ML207"]
    total = run(RETURNED)["total_loss"]
    assert isinstance(total, torch.Tensor) and total.grad_fn is not None
    fixed = RETURNED.replace("        return loss\n", "        return loss.item()\n")
    assert fixed != RETURNED and lint(fixed, "ML207") == []
    assert isinstance(run(fixed)["total_loss"], float)


NO_GRAD_METRIC = """
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = [(torch.randn(8, 4), torch.rand(8, 1)) for _ in range(6)]

class Dice:
    def __init__(self):
        self.scores = []

    @torch.no_grad()
    def compute(self, logits, target):
        probs = torch.sigmoid(logits)
        return 2 * (probs * target).sum() / (probs.sum() + target.sum())

    def update(self, logits, target):
        self.scores.append(self.compute(logits, target))

metric = Dice()
for x, y in loader:
    logits = model(x)
    loss = nn.functional.binary_cross_entropy_with_logits(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    metric.update(logits, y)
kept = metric.scores
"""


@pytest.mark.parametrize("guard", ["    @torch.no_grad()\n", "    @torch.inference_mode()\n"])
def test_a_metric_computed_without_gradients_keeps_no_graph(lint, guard):
    """A metric whose `compute` runs under `no_grad` (or `inference_mode`) keeps plain scores: not reported;
    without the decorator every score keeps its batch's graph, and ML207 reports the call."""
    program = NO_GRAD_METRIC.replace("    @torch.no_grad()\n", guard)
    assert lint(program, "ML207") == []
    assert all(s.grad_fn is None for s in run(program)["kept"])
    live = program.replace(guard, "")
    assert [(f.code, f.start.line) for f in lint(live, "ML207")] == [("ML207", 27)]
    assert all(s.grad_fn is not None for s in run(live)["kept"])
