"""Witnesses for the path-sensitive training-loop findings (fixtures/ml2_paths): the flagged programs
misbehave under torch as the messages say, and mllint's fix (or the usual repair) cures them. CPU only."""
import warnings

import pytest
import torch

from mllint.engine import Selection, lint_text
from mllint.fixer import fix_text

from witness import assert_step_accumulates_until_it_clears, family_findings, run

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


def test_the_amp_branch_without_a_clear_keeps_the_first_overflow_and_never_steps_again():
    assert family_findings(AMP_BRANCH, "ML2") == [(19, "ML201")]
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


EPOCH_HELPER = """\
import torch


def train_one_epoch(model, data, optimizer, scheduler):
    scheduler.step()
    for x, y in data:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        seen.append(optimizer.param_groups[0]["lr"])


model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
for epoch in range(2):
    train_one_epoch(model, data, optimizer, scheduler)
"""


def test_a_schedule_stepped_first_in_the_epoch_helper_skips_its_first_learning_rate():
    assert family_findings(EPOCH_HELPER, "ML2") == [(5, "ML204")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        used = run(EPOCH_HELPER)["seen"]
    assert used == [pytest.approx(0.05)] * 3 + [pytest.approx(0.025)] * 3  # 0.1 is never used
    assert any("lr_scheduler.step()" in str(w.message) for w in caught)  # PyTorch's own run-time warning
    repaired = EPOCH_HELPER.replace("    scheduler.step()\n", "").replace(
        "        seen.append(optimizer.param_groups[0][\"lr\"])\n",
        "        seen.append(optimizer.param_groups[0][\"lr\"])\n    scheduler.step()\n",
    )
    assert family_findings(repaired, "ML2") == []
    assert run(repaired)["seen"] == [pytest.approx(0.1)] * 3 + [pytest.approx(0.05)] * 3


BATCH_HELPER = """\
import torch


def train_step(model, batch, optimizer, scheduler):
    x, y = batch
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    scheduler.step()


model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(10)]
for epoch in range(4):
    for batch in loader:
        train_step(model, batch, optimizer, scheduler)
"""


def test_a_per_epoch_schedule_stepped_by_the_batch_helper_decays_every_two_batches():
    assert family_findings(BATCH_HELPER, "ML2") == [(9, "ML205")]
    assert run(BATCH_HELPER)["optimizer"].param_groups[0]["lr"] == pytest.approx(0.1 * 0.1**20)  # 40 batches


COMPREHENSION = """\
import torch


def train_step(model, batch, optimizer):
    x, y = batch
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    seen.append(model.weight.grad.clone())


model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
data = [(torch.ones(4, 3), torch.zeros(4, 1))] * 3
for epoch in range(2):
    optimizer.zero_grad()
    [train_step(model, batch, optimizer) for batch in data]
"""


def test_steps_run_by_a_comprehension_over_the_loader_accumulate_within_the_epoch():
    assert_step_accumulates_until_it_clears(COMPREHENSION)


PARTLY_CLEARED = """\
import torch

encoder = torch.nn.Linear(3, 3)
head = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.0)
data = [(torch.ones(4, 3), torch.zeros(4, 1))] * 3
for x, y in data:
    encoder.zero_grad()
    torch.nn.functional.mse_loss(head(encoder(x)), y).backward()
    optimizer.step()
    seen.append((encoder.weight.grad.clone(), head.weight.grad.clone()))
"""


def test_clearing_the_encoder_only_lets_the_heads_gradients_accumulate():
    assert family_findings(PARTLY_CLEARED, "ML2") == [(10, "ML201")]
    seen = run(PARTLY_CLEARED)["seen"]
    assert all(torch.allclose(enc, seen[0][0]) for enc, _ in seen)  # the encoder's: each step its own
    assert torch.allclose(seen[1][1], 2 * seen[0][1]) and torch.allclose(seen[2][1], 3 * seen[0][1])
    selection = Selection.of(["ML201"])
    outcome = fix_text(PARTLY_CLEARED, lambda text: lint_text(text, "witness.py", selection), unsafe=True)
    assert outcome.error is None and outcome.remaining == []
    seen = run(outcome.text)["seen"]
    assert all(torch.allclose(head, seen[0][1]) for _, head in seen)


ACCUMULATION_CLEAR_ONLY = """\
import torch

model = torch.nn.Linear(3, 1, bias=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
batch = (torch.ones(4, 3), torch.zeros(4, 1) + 1)
for i in range(8):
    torch.nn.functional.mse_loss(model(batch[0]), batch[1]).backward()
    seen.append(model.weight.grad.clone())
    optimizer.step()
    if (i + 1) % 4 == 0:
        optimizer.zero_grad()
"""


def test_a_clear_only_at_the_accumulation_boundary_steps_on_the_growing_sum():
    """Every step applies the sum of the micro-batches so far (1x, 2x, 3x, 4x the gradient); with the step
    under the same test as the clear, only the full sum is applied, once per cycle."""
    assert family_findings(ACCUMULATION_CLEAR_ONLY, "ML2") == [(9, "ML201")]
    grads = run(ACCUMULATION_CLEAR_ONLY)["seen"]
    assert [round(float(g.sum() / grads[0].sum())) for g in grads] == [1, 2, 3, 4, 1, 2, 3, 4]
    repaired = ACCUMULATION_CLEAR_ONLY.replace(
        "    optimizer.step()\n    if (i + 1) % 4 == 0:\n", "    if (i + 1) % 4 == 0:\n        optimizer.step()\n"
    )
    assert family_findings(repaired, "ML2") == []
