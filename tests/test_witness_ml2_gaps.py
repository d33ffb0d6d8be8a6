"""Witnesses for the training-loop findings of fixtures/ml2_gaps: stale gradients across the phases of an
epoch, a clear of another model, `map` over the loader, ReduceLROnPlateau fed the batch's loss. The flagged
programs misbehave under torch as the messages say; mllint's fix (or the usual repair) cures them. CPU only."""
import pytest
import torch

from mllint.engine import Selection, lint_text
from mllint.fixer import fix_text

from witness import assert_step_accumulates_until_it_clears, family_findings, run


def fixed(program: str) -> str:
    selection = Selection.of(["ML201"])
    outcome = fix_text(program, lambda text: lint_text(text, "witness.py", selection), unsafe=True)
    assert outcome.error is None and outcome.remaining == []
    return outcome.text


TWO_PHASES = """\
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
chunks = [torch.randn(4, 3) for _ in range(2)]
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    for x in chunks:
        model(x).pow(2).mean().backward()
    seen.append(model.weight.grad.clone())
    optimizer.step()
"""


def gradient(model, loss) -> torch.Tensor:
    model.zero_grad()
    loss.backward()
    return model.weight.grad.clone()


def test_the_auxiliary_phase_steps_the_main_phases_last_gradients_too():
    assert family_findings(TWO_PHASES, "ML2") == [(15, "ML201")]
    namespace = run(TWO_PHASES)
    model, (x, y) = namespace["model"], namespace["loader"][-1]
    main = gradient(model, torch.nn.functional.mse_loss(model(x), y))
    auxiliary = sum(gradient(model, model(c).pow(2).mean()) for c in namespace["chunks"])
    assert all(torch.allclose(g, main + auxiliary) for g in namespace["seen"])  # both phases' gradients
    repaired = run(fixed(TWO_PHASES))
    assert family_findings(fixed(TWO_PHASES), "ML2") == []
    assert all(torch.allclose(g, auxiliary) for g in repaired["seen"])


CRITIC_PHASE = """\
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
critic_optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
chunks = [torch.randn(4, 3) for _ in range(2)]
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    for x in chunks:
        model(x).pow(2).mean().backward()
    seen.append(model.weight.grad.clone())
    critic_optimizer.step()
    critic_optimizer.zero_grad()
"""


def test_a_critic_optimizer_over_the_same_model_steps_the_main_phases_last_gradients_too():
    assert family_findings(CRITIC_PHASE, "ML2") == [(16, "ML201")]
    namespace = run(CRITIC_PHASE)
    model, (x, y) = namespace["model"], namespace["loader"][-1]
    main = gradient(model, torch.nn.functional.mse_loss(model(x), y))
    auxiliary = sum(gradient(model, model(c).pow(2).mean()) for c in namespace["chunks"])
    assert all(torch.allclose(g, main + auxiliary) for g in namespace["seen"])
    assert all(torch.allclose(g, auxiliary) for g in run(fixed(CRITIC_PHASE))["seen"])


OTHER_MODEL = """\
import torch

actor = torch.nn.Linear(3, 2)
critic = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(actor.parameters(), lr=0.0)
episodes = [(torch.ones(4, 3), torch.ones(4))] * 3
for observations, returns in episodes:
    critic.zero_grad()
    log_probs = torch.log_softmax(actor(observations), dim=-1)[:, 0]
    (-(log_probs * returns).mean()).backward()
    optimizer.step()
    seen.append(actor.weight.grad.clone())
"""


def test_clearing_the_critic_lets_the_actors_gradients_accumulate():
    assert family_findings(OTHER_MODEL, "ML2") == [(11, "ML201")]
    seen = run(OTHER_MODEL)["seen"]
    assert torch.allclose(seen[1], 2 * seen[0]) and torch.allclose(seen[2], 3 * seen[0])
    seen = run(fixed(OTHER_MODEL))["seen"]
    assert all(torch.allclose(g, seen[0]) for g in seen)


MAPPED = """\
import torch


def train_step(batch):
    x, y = batch
    torch.nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
    seen.append(model.weight.grad.clone())


model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
data = [(torch.ones(4, 3), torch.zeros(4, 1))] * 3
for epoch in range(2):
    optimizer.zero_grad()
    list(map(train_step, data))
"""


def test_a_step_mapped_over_the_loader_accumulates_within_the_epoch():
    assert_step_accumulates_until_it_clears(MAPPED)


PLATEAU = """\
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=2)
loader = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(50)]
for epoch in range(1):
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        plateau.step(loss.item())
"""


def test_a_plateau_scheduler_fed_the_batch_loss_cuts_the_learning_rate_within_the_first_epoch():
    assert family_findings(PLATEAU, "ML2") == [(13, "ML205")]
    assert run(PLATEAU)["optimizer"].param_groups[0]["lr"] < 0.1 / 10  # cut several times in one epoch
    per_epoch = PLATEAU.replace("for epoch in range(1):\n", "for epoch in range(1):\n    total = 0.0\n").replace(
        "        plateau.step(loss.item())\n", "        total += loss.item()\n    plateau.step(total / len(loader))\n"
    )
    assert family_findings(per_epoch, "ML2") == []
    assert run(per_epoch)["optimizer"].param_groups[0]["lr"] == pytest.approx(0.1)


LAST_BATCH_PLATEAU = """\
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=1)
inputs = torch.randn(20, 8, 3)
targets = inputs @ torch.tensor([[1.0], [-2.0], [0.5]]) + torch.randn(20, 8, 1)
for epoch in range(5):
    total = 0.0
    order = torch.randperm(len(inputs))
    for x, y in zip(inputs[order], targets[order]):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    seen.append((total / len(inputs), optimizer.param_groups[0]["lr"]))
    plateau.step(loss.item())
"""


def test_a_plateau_scheduler_fed_the_last_batchs_loss_cuts_the_learning_rate_while_the_epoch_loss_falls():
    assert family_findings(LAST_BATCH_PLATEAU, "ML2") == [(18, "ML205")]
    namespace = run(LAST_BATCH_PLATEAU)
    means = [mean for mean, _ in namespace["seen"]]
    assert means == sorted(means, reverse=True)  # every epoch improves on the last
    assert namespace["optimizer"].param_groups[0]["lr"] < 0.01  # yet the learning rate was cut
    epoch_mean = LAST_BATCH_PLATEAU.replace("plateau.step(loss.item())", "plateau.step(total / len(inputs))")
    assert family_findings(epoch_mean, "ML2") == []
    namespace = run(epoch_mean)
    means = [mean for mean, _ in namespace["seen"]]
    assert means == sorted(means, reverse=True) and namespace["optimizer"].param_groups[0]["lr"] == 0.01
