"""Witnesses for ML501's handlers around part of a training step: a forward pass that always fails is
skipped batch after batch and the run "finishes" with an untrained model; an out-of-memory handler that
re-raises other errors on one path only swallows them on the other. The fixed programs raise."""
import pytest
import torch

from witness import run

SETUP = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 7), torch.randint(0, 2, (4,))) for _ in range(5)]  # one feature short
before = model.weight.detach().clone()
"""

SKIPPED_FORWARD = SETUP + """
for inputs, labels in loader:
    optimizer.zero_grad()
    try:
        outputs = model(inputs)
    except Exception as error:
        print(f"skipping batch: {error}")
        continue
    nn.functional.cross_entropy(outputs, labels).backward()
    optimizer.step()
"""

ONE_PATH_RERAISE = SETUP + """
distributed = True
for inputs, labels in loader:
    optimizer.zero_grad()
    try:
        nn.functional.cross_entropy(model(inputs), labels).backward()
        optimizer.step()
    except RuntimeError as e:
        if "out of memory" in str(e):
            torch.cuda.empty_cache()
        else:
            if not distributed:
                raise
"""


@pytest.mark.parametrize("program", [SKIPPED_FORWARD, ONE_PATH_RERAISE])
def test_the_broken_model_trains_on_nothing_and_the_run_finishes(lint, program):
    assert [f.code for f in lint(program, "ML501")] == ["ML501"]
    flagged = run(program)
    assert torch.equal(flagged["model"].weight, flagged["before"])  # not one step taken, no error


def test_re_raising_reports_the_shape_error(lint):
    skipped = SKIPPED_FORWARD.replace("        continue\n", "        raise\n")
    one_path = ONE_PATH_RERAISE.replace("            if not distributed:\n                raise", "            raise")
    for fixed in (skipped, one_path):
        assert fixed != SKIPPED_FORWARD and fixed != ONE_PATH_RERAISE and lint(fixed, "ML501") == []
        with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
            run(fixed)
