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


ROWS = """
import torch

torch.manual_seed(0)
scores = torch.nn.Parameter(torch.randn(4, 6, 6))
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD([scores], lr=1.0)
target = torch.arange(6)
for _ in range(80):
    optimizer.zero_grad()
    outputs = torch.softmax(scores, -1)
    loss = 0
    for out in outputs:
        loss = loss + criterion(out, target)
    loss.backward()
    optimizer.step()
final_loss = sum(criterion(row, target) for row in scores).item()
"""


def test_a_loop_over_the_rows_of_a_softmax_stalls_like_the_whole(lint):
    """Each row of a softmax over the last dim is a distribution: cross-entropy of it is stuck above the
    floor (mlelarge/graph_neural_net's triplet loss); on the logits it goes far below."""
    assert [f.code for f in lint(ROWS, "ML101")] == ["ML101"]
    floor = math.log(1 + 5 / math.e)
    flagged = run(ROWS)
    probs = torch.softmax(flagged["scores"].detach(), -1)
    assert all(torch.nn.functional.cross_entropy(row, flagged["target"]).item() > floor for row in probs)
    repaired = run(ROWS.replace("outputs = torch.softmax(scores, -1)", "outputs = scores"))
    assert repaired["final_loss"] / 4 < floor
