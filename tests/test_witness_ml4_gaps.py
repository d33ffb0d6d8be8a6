"""Witnesses for the ML4 findings of issue 16 and of callers into parameters: the program misbehaves under
torch as the message says, and the fixed one neither misbehaves nor is reported."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.witness import project_findings as findings

MODELS = '''
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        features = self.encoder(x).detach()
        return self.head(features)
'''
OPTIM_UTILS = '''
import torch


def build_optimizer(model, lr):
    return torch.optim.SGD([{"params": model.encoder.parameters(), "lr": lr}, {"params": model.head.parameters()}], lr=lr)
'''
MAIN = '''
import torch
import torch.nn.functional as F

from models import Classifier
from optim_utils import build_optimizer

torch.manual_seed(0)
model = Classifier()
optimizer = build_optimizer(model, lr=0.5)
encoder, head = model.encoder.weight.clone(), model.head.weight.clone()
for _ in range(5):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
print(torch.equal(encoder, model.encoder.weight), torch.equal(head, model.head.weight))
'''


def write_project(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (directory / name).write_text(text)


def run(directory: Path, script: str) -> str:
    return subprocess.run([sys.executable, script], cwd=directory, capture_output=True, text=True, check=True).stdout


def test_ml405_the_encoder_a_helper_hands_the_optimizer_never_learns_and_without_the_detach_it_does(tmp_path):
    flagged, fixed = tmp_path / "flagged", tmp_path / "fixed"
    for directory, models in ((flagged, MODELS), (fixed, MODELS.replace("self.encoder(x).detach()", "self.encoder(x)"))):
        directory.mkdir()
        write_project(directory, {"models.py": models, "optim_utils.py": OPTIM_UTILS, "main.py": MAIN})
    assert findings(flagged, "ML405") == ["optim_utils.py:6: ML405"]
    assert run(flagged, "main.py").split() == ["True", "False"]  # the encoder never changes, the head does
    assert findings(fixed, "ML405") == []
    assert run(fixed, "main.py").split() == ["False", "False"]


GATED = """
import torch
from torch import nn


class GatedUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.value = nn.Linear(4, 4)
        self.gate = nn.Linear(4, 4)

    def forward(self, x, mask):
        g = torch.sigmoid(self.gate(x))
        g.mul_(mask)
        return self.value(x) * g


model = GatedUnit()
x, mask = torch.randn(8, 4), (torch.rand(8, 4) > 0.5).float()
output = model(x, mask)
"""


def test_ml406_a_forward_that_changes_a_saved_output_raises_at_the_first_backward_and_the_fixed_one_does_not(lint):
    assert [f.code for f in lint(GATED, "ML406")] == ["ML406"]
    namespace = execute(GATED)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        namespace["output"].sum().backward()
    fixed = GATED.replace("g.mul_(mask)", "g = g * mask")
    assert lint(fixed, "ML406") == []
    execute(fixed)["output"].sum().backward()


def execute(program: str) -> dict:
    namespace: dict = {}
    exec(compile(program, "<witness>", "exec"), namespace)
    return namespace


METER = """
import torch
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


def train(model, loader, optimizer):
    losses = AverageMeter()
    for x, y in loader:
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss, x.size(0))
    return losses


torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(6)]
losses = train(model, loader, torch.optim.SGD(model.parameters(), lr=0.01))
"""


def graph_nodes(tensor) -> int:
    """How many autograd nodes a tensor keeps alive."""
    seen, stack = set(), [getattr(tensor, "grad_fn", None)]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack += [next_node for next_node, _ in node.next_functions]
    return len(seen)


def test_ml207_a_meter_that_sums_the_loss_keeps_every_iterations_graph_and_with_item_it_keeps_none(lint):
    assert [f.code for f in lint(METER, "ML207")] == ["ML207"]
    kept = graph_nodes(execute(METER)["losses"].sum)
    shorter = graph_nodes(execute(METER.replace("range(6)", "range(3)"))["losses"].sum)
    assert kept > shorter > 0  # the graphs of all iterations stay reachable, and grow with them
    fixed = METER.replace("losses.update(loss, x.size(0))", "losses.update(loss.item(), x.size(0))")
    assert lint(fixed, "ML207") == []
    assert graph_nodes(execute(fixed)["losses"].sum) == 0


PENALTY = """
import torch
import torch.nn.functional as F

torch.manual_seed(0)
model = torch.nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
start = [p.detach().clone() for p in model.parameters()]
batches = [(torch.randn(16, 8), torch.randint(0, 3, (16,))) for _ in range(5)]
for x, y in batches:
    ce = F.cross_entropy(model(x), y)
    l1 = sum(p.data.abs().sum() for p in model.parameters())
    loss = ce + 0.5 * l1
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
penalized = [p.detach().clone() for p in model.parameters()]
with torch.no_grad():
    for p, s in zip(model.parameters(), start):
        p.copy_(s)
for x, y in batches:
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
unpenalized = [p.detach().clone() for p in model.parameters()]
"""


def test_ml413_an_l1_penalty_over_p_data_leaves_the_weights_as_without_it_and_over_p_it_shrinks_them(lint):
    assert [f.code for f in lint(PENALTY, "ML413")] == ["ML413"]
    flagged = execute(PENALTY)
    assert all(torch.equal(a, b) for a, b in zip(flagged["penalized"], flagged["unpenalized"]))
    fixed = PENALTY.replace("p.data.abs()", "p.abs()")
    assert lint(fixed, "ML413") == []
    repaired = execute(fixed)
    shrunk = sum(p.abs().sum() for p in repaired["penalized"]) < sum(p.abs().sum() for p in repaired["unpenalized"])
    assert shrunk


STEPS = """
def apply_gradients(optimizer, loss):
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
CALLER = """
import torch
import torch.nn.functional as F

from steps import apply_gradients

torch.manual_seed(0)
model = torch.nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
before = model.weight.clone()
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    value = F.cross_entropy(model(x), y).item()
    apply_gradients(optimizer, torch.tensor(value, requires_grad=True))
print(torch.equal(before, model.weight))
"""


def test_ml404_a_loss_a_caller_cut_trains_nothing_in_the_step_it_is_passed_to_and_the_uncut_one_does(tmp_path):
    flagged, fixed = tmp_path / "flagged", tmp_path / "fixed"
    uncut = CALLER.replace(
        "    value = F.cross_entropy(model(x), y).item()\n    apply_gradients(optimizer, torch.tensor(value, requires_grad=True))",
        "    apply_gradients(optimizer, F.cross_entropy(model(x), y))",
    )
    for directory, caller in ((flagged, CALLER), (fixed, uncut)):
        directory.mkdir()
        write_project(directory, {"steps.py": STEPS, "main.py": caller})
    assert findings(flagged, "ML404") == ["steps.py:4: ML404"]
    assert run(flagged, "main.py").split() == ["True"]  # the weights never change
    assert findings(fixed, "ML404") == []
    assert run(fixed, "main.py").split() == ["False"]
