"""Witness for ML501 on out-of-memory handlers: a step that runs out of memory after part of its backward
pass is skipped, and its partial gradients go into the next batch's step; the fixed handler clears them."""
import torch

from witness import run

PROGRAM = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [torch.randn(8, 4), torch.randn(8, 4)]
stepped = []
for i, x in enumerate(batches):
    try:
        model(x).pow(2).mean().backward()
        if i == 0:  # the second half of the first step does not fit on the device
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    except torch.OutOfMemoryError:
        continue
    stepped.append(model.weight.grad.clone())
    optimizer.step()
    optimizer.zero_grad()
"""


def own_gradient(program_globals):
    model = torch.nn.Linear(4, 1)
    torch.manual_seed(0)
    model.load_state_dict(torch.nn.Linear(4, 1).state_dict())
    model(program_globals["batches"][1]).pow(2).mean().backward()
    return model.weight.grad


def test_the_skipped_step_leaks_its_gradients_into_the_next(lint):
    assert [f.code for f in lint(PROGRAM, "ML501")] == ["ML501"]
    flagged = run(PROGRAM)
    assert not torch.allclose(flagged["stepped"][0], own_gradient(flagged))


def test_clearing_the_gradients_in_the_handler(lint):
    fixed = PROGRAM.replace("        continue\n", "        optimizer.zero_grad()\n        continue\n")
    assert fixed != PROGRAM and lint(fixed, "ML501") == []
    assert torch.allclose(run(fixed)["stepped"][0], own_gradient(run(fixed)))
