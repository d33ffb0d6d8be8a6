"""Witnesses for what the objects layer now follows into ML2: a module's `zero_grad()` between the backward
and the step of the optimizer over it (ML202), a scheduler built through a table of `functools.partial`
that a constant key picks (ML205), and a callback appended to a loop's list after its construction (ML205)."""
import torch

from tests.witness import family_findings, run

MODULE_CLEAR = """
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 3), torch.randn(16, 1)


def train(model, optimizer, steps=5):
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        model.zero_grad()
        optimizer.step()


train(model, optimizer)
"""


def test_a_module_cleared_between_backward_and_step_never_moves():
    assert family_findings(MODULE_CLEAR, "ML2") == [(13, "ML202")]
    torch.manual_seed(0)
    initial = torch.nn.Linear(3, 1).weight.detach().clone()  # the program's model before training
    assert torch.equal(run(MODULE_CLEAR)["model"].weight, initial)
    repaired = MODULE_CLEAR.replace(
        "        loss = torch.nn.functional.mse_loss(model(x), y)\n        loss.backward()\n        model.zero_grad()\n",
        "        model.zero_grad()\n        loss = torch.nn.functional.mse_loss(model(x), y)\n        loss.backward()\n",
    )
    assert family_findings(repaired, "ML2") == []
    assert not torch.equal(run(repaired)["model"].weight, initial)


PARTIAL_SCHEDULE = """
from functools import partial

import torch

SCHEDULES = {
    "onecycle": partial(torch.optim.lr_scheduler.OneCycleLR, pct_start=0.3),
    "cosine": partial(torch.optim.lr_scheduler.CosineAnnealingLR, eta_min=0.0),
}


def make_schedule(name, optimizer, epochs, steps_per_epoch):
    if name == "onecycle":
        return SCHEDULES[name](optimizer, max_lr=1.0, epochs=epochs, steps_per_epoch=steps_per_epoch)
    return SCHEDULES[name](optimizer, T_max=epochs)


model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(10)]
epochs = 5
scheduler = make_schedule("onecycle", optimizer, epochs, len(loader))
for epoch in range(epochs):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    scheduler.step()
    seen.append(optimizer.param_groups[0]["lr"])
"""


def test_a_one_cycle_from_a_partial_table_stepped_per_epoch_stays_in_warm_up():
    assert family_findings(PARTIAL_SCHEDULE, "ML2") == [(28, "ML205")]
    lrs = run(PARTIAL_SCHEDULE)["seen"]
    assert max(lrs) < 0.4  # sized for 50 steps, stepped 5 times: the peak of 1.0 is never reached
    repaired = PARTIAL_SCHEDULE.replace("        optimizer.step()\n    scheduler.step()\n", "        optimizer.step()\n        scheduler.step()\n")
    assert family_findings(repaired, "ML2") == []
    assert max(run(repaired)["seen"]) > 0.9


APPENDED_CALLBACK = """
import torch


class Loop:
    def __init__(self, model, callbacks):
        self.model, self.callbacks = model, callbacks
        self.optimizer = torch.optim.SGD(model.parameters(), lr=1.0)

    def run(self, loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                self.optimizer.zero_grad()
                torch.nn.functional.mse_loss(self.model(x), y).backward()
                self.optimizer.step()
                for cb in self.callbacks:
                    cb.on_batch_end(self)
            seen.append(self.optimizer.param_groups[0]["lr"])


class ScheduleStep:
    def __init__(self, scheduler):
        self.scheduler = scheduler

    def on_batch_end(self, loop):
        self.scheduler.step()


loop = Loop(torch.nn.Linear(3, 1), [])
loop.callbacks.append(ScheduleStep(torch.optim.lr_scheduler.StepLR(loop.optimizer, step_size=2, gamma=0.1)))
loop.run([(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(10)], 4)
"""


def test_an_epoch_schedule_appended_as_a_batch_callback_decays_every_two_batches():
    """The callback appended to the loop's list steps a schedule sized in epochs after every batch: after the
    first epoch the rate has decayed five times."""
    assert family_findings(APPENDED_CALLBACK, "ML2") == [(26, "ML205")]
    assert run(APPENDED_CALLBACK)["seen"][0] < 1e-4
    repaired = APPENDED_CALLBACK.replace("on_batch_end", "on_epoch_end").replace(
        "                for cb in self.callbacks:\n                    cb.on_epoch_end(self)\n", ""
    ).replace("            seen.append(", "            for cb in self.callbacks:\n                cb.on_epoch_end(self)\n            seen.append(")
    assert family_findings(repaired, "ML2") == []
    assert run(repaired)["seen"][:2] == [1.0, 0.1]
