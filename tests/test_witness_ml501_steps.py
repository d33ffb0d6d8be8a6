"""Witnesses for ML501 on handlers around the forward and backward pass of a training step written in a
helper the loop calls, or through an optimizer wrapper's `backward(loss)`: every batch fails, every
failure is dropped, the run finishes with the model untouched. Re-raising reports the shape error."""
import pytest
import torch

from witness import run

SETUP = """
import torch
from torch import nn

model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 7), torch.randint(0, 2, (4,))) for _ in range(5)]  # one feature short
before = model.weight.detach().clone()
"""

HELPER = SETUP + """
def do_batch(batch):
    try:
        loss = nn.functional.cross_entropy(model(batch[0]), batch[1])
        loss.backward()
    except RuntimeError:
        print("assuming OOM")
        return None
    return loss.item()

for batch in loader:
    optimizer.zero_grad()
    if do_batch(batch) is None:
        continue
    optimizer.step()
"""

FORWARD_HELPER = SETUP + """
def safe_loss(batch):
    try:
        return nn.functional.cross_entropy(model(batch[0]), batch[1])
    except RuntimeError as error:
        print(f"forward failed: {error}")
    return None

for epoch in range(2):
    for batch in loader:
        loss = safe_loss(batch)
        if loss is None:
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

WRAPPER = SETUP + """
class Optim:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def backward(self, loss):
        loss.backward()

optim = Optim(optimizer)
for inputs, labels in loader:
    optimizer.zero_grad()
    try:
        optim.backward(nn.functional.cross_entropy(model(inputs), labels))
    except Exception as error:
        print(f"we removed a batch: {error}")
    optimizer.step()
"""


@pytest.mark.parametrize("program", [HELPER, WRAPPER, FORWARD_HELPER])
def test_every_batch_fails_and_the_run_finishes_untrained(lint, program):
    assert [f.code for f in lint(program, "ML501")] == ["ML501"]
    flagged = run(program)
    assert torch.equal(flagged["model"].weight, flagged["before"])


@pytest.mark.parametrize(
    "program, swallowed",
    [
        (HELPER, '        print("assuming OOM")\n        return None\n'),
        (WRAPPER, '        print(f"we removed a batch: {error}")\n'),
        (FORWARD_HELPER, '        print(f"forward failed: {error}")\n'),
    ],
)
def test_re_raising_reports_the_shape_error(lint, program, swallowed):
    fixed = program.replace(swallowed, "        raise\n")
    assert fixed != program and lint(fixed, "ML501") == []
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        run(fixed)
