"""Witnesses for ML501's implied and substituting handlers and ML418's views of kept data in a script's
loop: `contextlib.suppress` around the update and a zero loss put in place of a failed one leave the model
untrained while the run finishes; a batch split off stored data and changed in place changes the data at
every epoch. The fixes re-raise, or compute out of place."""
import pytest
import torch

from witness import run

SETUP = """
import contextlib
import torch
from torch import nn

model = nn.Linear(8, 2)
teacher = nn.Linear(7, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 7), torch.randint(0, 2, (4,))) for _ in range(5)]  # one feature short
before = model.weight.detach().clone()
"""

SUPPRESSED = SETUP + """
for inputs, labels in loader:
    optimizer.zero_grad()
    with contextlib.suppress(RuntimeError):
        nn.functional.cross_entropy(model(inputs), labels).backward()
        optimizer.step()
"""

ZERO_LOSS = SETUP + """
def distill_loss(inputs, labels):
    try:
        loss = nn.functional.cross_entropy(model(inputs), labels) + teacher(inputs).softmax(-1).mean()
    except RuntimeError:
        loss = torch.zeros((), requires_grad=True)
    return loss

for inputs, labels in loader:
    optimizer.zero_grad()
    distill_loss(inputs, labels).backward()
    optimizer.step()
"""


@pytest.mark.parametrize("program", [SUPPRESSED, ZERO_LOSS])
def test_every_batch_fails_and_the_run_finishes_untrained(lint, program):
    assert [f.code for f in lint(program, "ML501")] == ["ML501"]
    flagged = run(program)
    assert torch.equal(flagged["model"].weight, flagged["before"])


@pytest.mark.parametrize(
    "program, swallowed, raising",
    [
        (SUPPRESSED, "    with contextlib.suppress(RuntimeError):\n", "    if True:\n"),
        (ZERO_LOSS, "        loss = torch.zeros((), requires_grad=True)\n", "        raise\n"),
    ],
)
def test_re_raising_reports_the_shape_error(lint, program, swallowed, raising):
    fixed = program.replace(swallowed, raising)
    assert fixed != program and lint(fixed, "ML501") == []
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        run(fixed)


KEPT_VIEWS = """
import torch


class Table:
    def __init__(self):
        self.X = torch.full((8, 4), 3.0)

    def batches(self, size):
        for start in range(0, len(self.X), size):
            yield self.X[start:start + size]


table = Table()
for epoch in range(3):
    for xb in table.batches(4):
        counts = xb.chunk(2, dim=1)[1]
        counts.log1p_()
        seen.append(counts.clone())
"""


def test_a_batch_changed_in_place_changes_the_stored_data_every_epoch(lint):
    assert [f.code for f in lint(KEPT_VIEWS, "ML418")] == ["ML418"]
    seen = run(KEPT_VIEWS)["seen"]
    assert not torch.allclose(seen[0], seen[2])  # epoch 2 sees log1p(log1p(3)), not log1p(3)
    fixed = KEPT_VIEWS.replace("        counts.log1p_()\n", "        counts = counts.log1p()\n")
    assert lint(fixed, "ML418") == []
    seen = run(fixed)["seen"]
    assert torch.allclose(seen[0], seen[2])
