"""Witnesses for ML207 on a meter reset only periodically and on the forms of a running average
(`ema = loss if ema is None else ...`, `torch.lerp`, `avg.mul_(m).add_(loss)`): the kept value still
holds the autograd graph of earlier iterations; with `.item()` (or a reset every iteration) it holds none."""
import pytest

from witness import codes, run

PERIODIC_RESET = """
import torch

class Meter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.total = 0.0

    def update(self, value):
        self.total += value

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
meter = Meter()
kept = []
for it in range(1, 10):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    meter.update(loss)
    kept.append(getattr(meter.total, "grad_fn", None) is not None)
    if it % 5 == 0:
        meter.reset()
"""


def test_ml207_a_meter_reset_every_fifth_iteration_keeps_the_graphs_in_between(lint):
    assert [(f.start.line, f.code) for f in lint(PERIODIC_RESET, "ML207")] == [(23, "ML207")]
    assert all(run(PERIODIC_RESET)["kept"])  # a graph is held after every update
    fixed = PERIODIC_RESET.replace("meter.update(loss)", "meter.update(loss.item())")
    assert codes(lint(fixed, "ML207")) == []
    assert not any(run(fixed)["kept"])


RUNNING = """
import torch

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
avg = None
for it in range(5):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    avg = loss if avg is None else 0.9 * avg + 0.1 * loss
kept = avg.grad_fn is not None
"""


@pytest.mark.parametrize("form, detached", [
    ("avg = loss if avg is None else 0.9 * avg + 0.1 * loss", "avg = loss.item() if avg is None else 0.9 * avg + 0.1 * loss.item()"),
    ("avg = torch.lerp(avg, loss, 0.1)", "avg = torch.lerp(avg, loss.detach(), 0.1)"),
    ("avg.mul_(0.9).add_(loss)", "avg.mul_(0.9).add_(loss.detach())"),
])
def test_ml207_running_averages_keep_every_graph(lint, form, detached):
    program = RUNNING.replace("avg = loss if avg is None else 0.9 * avg + 0.1 * loss", form)
    if "avg = loss if" not in form:
        program = program.replace("avg = None", "avg = torch.zeros(())")
    assert codes(lint(program, "ML207")) == ["ML207"]
    assert run(program)["kept"]
    fixed = program.replace(form, detached).replace("kept = avg.grad_fn is not None", "kept = getattr(avg, 'grad_fn', None) is not None")
    assert codes(lint(fixed, "ML207")) == []
    assert not run(fixed)["kept"]
