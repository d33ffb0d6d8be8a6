"""Witness for ML101: softmax before cross-entropy stalls training near ln(k); the fixed program learns."""
import math

import torch

from mllint.rules.ml101_softmax_into_cross_entropy import SoftmaxIntoCrossEntropy

from witness import run

CLASSES = 4
TRAINING = """
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(256, 8)
y = x[:, :4].argmax(dim=1)
model = torch.nn.Linear(8, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(60):
    optimizer.zero_grad()
    probs = F.softmax(model(x), dim=1)
    loss = F.cross_entropy(probs, y)
    loss.backward()
    optimizer.step()
final_loss = F.cross_entropy(model(x), y).item()
accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
"""


def test_softmax_into_cross_entropy_stalls_and_the_fix_learns(lint, fix):
    assert [f.code for f in lint(TRAINING, "ML101")] == ["ML101"]
    fixed = fix(TRAINING, "ML101", unsafe=True)
    assert "probs = model(x)\n" in fixed

    flagged = run(TRAINING)
    # Fed probabilities in (0, 1), cross-entropy can never go below log(1 + (k - 1) / e): the flagged
    # program's objective is stuck above that floor however long it trains, starting from near ln(k).
    floor = math.log(1 + (CLASSES - 1) / math.e)
    probs = torch.softmax(flagged["model"](flagged["x"]), dim=1)
    assert torch.nn.functional.cross_entropy(probs, flagged["y"]).item() > floor

    repaired = run(fixed)
    assert repaired["final_loss"] < floor  # the fixed program's objective goes where the flagged one can't
    assert repaired["final_loss"] < flagged["final_loss"]
    assert repaired["accuracy"] >= flagged["accuracy"]


def test_softmax_shrinks_the_gradients():
    torch.manual_seed(0)
    logits = torch.randn(64, CLASSES, requires_grad=True)
    labels = torch.randint(0, CLASSES, (64,))
    torch.nn.functional.cross_entropy(torch.softmax(logits, dim=1), labels).backward()
    flagged = logits.grad.norm().item()
    logits.grad = None
    torch.nn.functional.cross_entropy(logits, labels).backward()
    assert flagged < 0.5 * logits.grad.norm().item()


def test_the_documented_example_plateaus_near_ln_k():
    namespace = run(SoftmaxIntoCrossEntropy.doc_code("Example"))
    assert abs(namespace["loss"].item() - math.log(3)) < 0.35
