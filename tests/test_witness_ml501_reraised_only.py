"""Witness for ML501 on a handler that re-raises only the errors one test singles out: a shape error of
the training step runs the arm that continues, and the run finishes; with that arm re-raising, it fails."""
import pytest

from witness import run

PROGRAM = """
import torch

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,))), (torch.randn(8, 3), torch.randint(0, 2, (8,)))]
for x, y in batches:
    try:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    except Exception as exc:
        if isinstance(exc, FloatingPointError):
            raise
        continue
finished = True
"""


def test_a_shape_error_is_swallowed_until_the_other_arm_re_raises(lint):
    assert [(f.start.line, f.code) for f in lint(PROGRAM, "ML501")] == [(15, "ML501")]
    assert run(PROGRAM)["finished"]  # the second batch's shape error disappeared
    fixed = PROGRAM.replace("        continue\n", "        raise\n")
    assert lint(fixed, "ML501") == []
    with pytest.raises(RuntimeError):
        run(fixed)
