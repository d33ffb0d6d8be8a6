"""Witness for ML413: a loss term cut with `.item()` moves the loss value but not one gradient; without
the cut, the term trains."""
import torch

from witness import run

PROGRAM = """
import torch
import torch.nn.functional as F

torch.manual_seed(0)
model = torch.nn.Linear(4, 3)
inputs, labels = torch.randn(32, 4), torch.randint(0, 3, (32,))
logits = model(inputs)
penalty = logits.pow(2).mean()
loss = F.cross_entropy(logits, labels) + 10.0 * penalty.item()
loss.backward()
gradient = model.weight.grad.clone()
model.zero_grad()
F.cross_entropy(model(inputs), labels).backward()
without_term = model.weight.grad.clone()
"""


def test_the_cut_term_changes_no_gradient_and_the_uncut_one_does(lint):
    assert [f.code for f in lint(PROGRAM, "ML413")] == ["ML413"]
    flagged = run(PROGRAM)
    assert torch.equal(flagged["gradient"], flagged["without_term"])  # the penalty trains nothing
    fixed = PROGRAM.replace("10.0 * penalty.item()", "10.0 * penalty")
    assert lint(fixed, "ML413") == []
    repaired = run(fixed)
    assert not torch.allclose(repaired["gradient"], repaired["without_term"])
