"""Witnesses for the path-sensitive training-loop findings (fixtures/ml2_paths): the flagged programs
misbehave under torch as the messages say, and mllint's fix (or the usual repair) cures them. CPU only."""
import torch

from mllint.engine import Selection, lint_text
from mllint.fixer import fix_text
from mllint.registry import all_rules

AMP_BRANCH = """\
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
data = [(torch.full((4, 3), 1e30), torch.zeros(4, 1))] + [(torch.ones(4, 3), torch.zeros(4, 1))] * 3
use_amp = True
for x, y in data:
    if not use_amp:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    else:
        loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1e9)
        scaler.step(optimizer)
        scaler.update()
"""


def codes(program: str) -> list[tuple[int, str]]:
    return [(f.start.line, f.code) for f in lint_text(program, "witness.py", Selection.of([c for c in all_rules() if c.startswith("ML2")]))]


def run(program: str) -> dict:
    torch.manual_seed(0)
    namespace: dict = {"__name__": "witness", "seen": []}
    exec(compile(program, "<witness>", "exec"), namespace)
    return namespace


def test_the_amp_branch_without_a_clear_keeps_the_first_overflow_and_never_steps_again():
    assert codes(AMP_BRANCH) == [(19, "ML201")]
    torch.manual_seed(0)
    initial = torch.nn.Linear(3, 1).weight.detach().clone()
    flagged = run(AMP_BRANCH)  # the first batch overflows: its inf stays in .grad, every step is skipped
    assert torch.equal(flagged["model"].weight, initial)
    assert not torch.isfinite(flagged["model"].weight.grad).all()
    assert flagged["scaler"].get_scale() == 2.0**16 / 2**4  # halved at each of the 4 skipped steps
    selection = Selection.of(["ML201"])
    outcome = fix_text(AMP_BRANCH, lambda text: lint_text(text, "witness.py", selection), unsafe=True)
    assert outcome.error is None and outcome.remaining == []
    repaired = run(outcome.text)  # only the overflowing step is skipped
    assert not torch.equal(repaired["model"].weight, initial)
    assert repaired["scaler"].get_scale() == 2.0**16 / 2
