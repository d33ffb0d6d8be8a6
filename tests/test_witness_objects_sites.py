"""Witnesses for what the objects layer reads at call sites: a method of a project object followed from
the loop that calls it (ML201), a flag every call site passes alike folded in the method it decides
(ML205), and a model frozen by the optimizer each call site passes with it (ML303). Each flagged program
misbehaves under torch; its repair, or its look-alike, does not, and is not flagged."""
import torch

from mllint.engine import Selection, lint_text
from witness import family_findings, run

SOLVER = """\
import torch
from torch import nn


class Solver:
    def __init__(self, model, lr):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def train_step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        seen.append(self.model.weight.grad.clone())
        self.opt.step()


solver = Solver(nn.Linear(4, 1), lr=0.0)
x, y = torch.randn(64, 4), torch.randn(64, 1)
for step in range(3):
    solver.train_step(x, y)
"""


def test_a_solver_method_called_from_the_loop_accumulates_gradients():
    assert family_findings(SOLVER, "ML2") == [(14, "ML201")]
    grads = run(SOLVER)["seen"]
    assert torch.allclose(grads[1], 2 * grads[0]) and torch.allclose(grads[2], 3 * grads[0])
    repaired = SOLVER.replace("for step in range(3):\n", "for step in range(3):\n    solver.opt.zero_grad()\n")
    assert family_findings(repaired, "ML2") == []
    grads = run(repaired)["seen"]
    assert all(torch.allclose(g, grads[0]) for g in grads)


ENGINE = """\
import torch
from torch import nn


class Engine:
    def __init__(self, model, optimizer, scheduler):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler

    def run_epoch(self, batches, per_batch):
        for x, y in batches:
            self.optimizer.zero_grad()
            nn.functional.mse_loss(self.model(x), y).backward()
            self.optimizer.step()
            if per_batch:
                self.scheduler.step()
        if not per_batch:
            self.scheduler.step()


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
engine = Engine(model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5))
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(10)]
for epoch in range(4):
    engine.run_epoch(batches, per_batch=False)
lr = optimizer.param_groups[0]["lr"]
"""


def test_a_flag_every_call_site_passes_decides_the_scheduler_cadence():
    # Stepped once per epoch, as the only call site asks: two halvings in four epochs of size 2.
    assert family_findings(ENGINE, "ML2") == []
    assert abs(run(ENGINE)["lr"] - 0.025) < 1e-12
    per_batch = ENGINE.replace("per_batch=False)", "per_batch=True)")
    assert family_findings(per_batch, "ML2") == [(15, "ML205")]
    assert run(per_batch)["lr"] < 1e-6  # twenty halvings: the schedule is over within the first epochs


FROZEN = """\
import torch
from torch import nn


def tune(backbone, head, x, y, optimizer, epochs):
    for epoch in range(epochs):
        backbone.eval()
        head.train()
        for _ in range(5):
            loss = nn.functional.mse_loss(head(backbone(x)), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


backbone = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8))
head = nn.Linear(8, 1)
before = [p.clone() for p in backbone.parameters()]
x, y = torch.randn(32, 4) * 3 + 2, torch.randn(32, 1)
tune(backbone, head, x, y, torch.optim.SGD(head.parameters(), lr=0.05), epochs=3)
changed = any(not torch.equal(p, q) for p, q in zip(before, backbone.parameters()))
statistics = backbone[1].running_mean.abs().sum().item()
"""


def test_a_backbone_frozen_by_the_call_sites_optimizer_is_meant_in_eval_mode():
    # The call site's optimizer trains the head only: the backbone is a fixed function, eval mode is meant.
    assert family_findings(FROZEN, "ML3") == []
    assert run(FROZEN)["changed"] is False
    # An optimizer over both: the backbone trains with its batch-norm statistics never updated.
    joint = FROZEN.replace("torch.optim.SGD(head.parameters()", "torch.optim.SGD([*backbone.parameters(), *head.parameters()]")
    assert family_findings(joint, "ML3") == [(10, "ML303")]
    flagged = run(joint)
    assert flagged["changed"] is True and flagged["statistics"] == 0.0
    repaired = joint.replace("        backbone.eval()\n", "        backbone.train()\n")
    assert family_findings(repaired, "ML3") == []
    assert run(repaired)["statistics"] > 0.0


ALIAS = """\
import torch
from torch import nn

g, d = nn.Linear(4, 4), nn.Linear(4, 1)
trainer = type("Trainer", (), {})()
trainer.opt_g = torch.optim.SGD(g.parameters(), lr=0.0)
trainer.opt_d = torch.optim.SGD(d.parameters(), lr=0.0)
x = torch.randn(8, 4)
for step in range(3):
    opt_g = trainer.opt_g
    opt_g.zero_grad()
    d(g(x)).mean().backward()
    trainer.opt_g.step()
    d(x).mean().backward()
    seen.append(d.weight.grad.clone())
    trainer.opt_d.step()
"""


def test_a_clear_through_an_alias_clears_its_own_optimizer_only():
    # `opt_g` is `trainer.opt_g`: the discriminator's optimizer is never cleared.
    selection = Selection.of(["ML201"])
    (finding,) = lint_text(ALIAS, "witness.py", selection)
    assert (finding.start.line, finding.code) == (16, "ML201")
    assert "`trainer.opt_d` steps without its gradients being cleared" in finding.message
    grads = run(ALIAS)["seen"]
    assert not torch.allclose(grads[1], grads[0])  # the generator's backward and the last step's pile up
    repaired = ALIAS.replace("    d(x).mean().backward()\n", "    trainer.opt_d.zero_grad()\n    d(x).mean().backward()\n")
    assert family_findings(repaired, "ML2") == []
    grads = run(repaired)["seen"]
    assert all(torch.allclose(g, grads[0]) for g in grads)
