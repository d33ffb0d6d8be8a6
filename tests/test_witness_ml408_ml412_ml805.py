"""Witnesses for the wrong loss sign, parameters that never train and statistics fitted before the split:
each flagged documentation example misbehaves under torch (or scikit-learn) as its rule says; the
recommended version does not."""
import numpy as np
import pytest
import torch
from sklearn.model_selection import train_test_split


from witness import example, instead, run


def train(program: str, first_step_line: str, steps: int) -> dict:
    """Run `program`, then its lines from `first_step_line` on again, `steps` times in all."""
    namespace = run(program)
    step = compile(program[program.index(first_step_line) :], "<witness>", "exec")
    for _ in range(steps - 1):
        exec(step, namespace)
    return namespace


@pytest.mark.parametrize("program, improves", [(example("ML408"), False), (instead("ML408"), True)])
def test_ml408_minimizing_the_log_likelihood_makes_the_data_less_likely(program, improves):
    def log_likelihood(ns):
        with torch.no_grad():
            mean = ns["model"](ns["inputs"]).squeeze(1)
            return torch.distributions.Normal(mean, 1.0).log_prob(ns["targets"]).mean().item()

    torch.manual_seed(0)
    before = log_likelihood(run(program))
    after = log_likelihood(train(program, "dist =", 20))
    assert (after > before) is improves


@pytest.mark.parametrize("program, learns", [(example("ML409"), False), (instead("ML409"), True)])
def test_ml409_a_negated_loss_is_climbed(program, learns):
    def cross_entropy(ns):
        with torch.no_grad():
            return torch.nn.functional.cross_entropy(ns["model"](ns["inputs"]), ns["labels"]).item()

    torch.manual_seed(0)
    before = cross_entropy(run(program))
    after = cross_entropy(train(program, "loss =", 50))
    assert (after < before) is learns
    if not learns:
        assert after > 2 * before


def train_head_step(namespace: dict) -> bool:
    """One training step through `model`; did the head's weights change?"""
    model, head = namespace["model"], namespace["model"].head
    before = head.weight.detach().clone()
    optimizer = namespace["optimizer"]
    optimizer.zero_grad()
    model(torch.randn(4, 4)).sum().backward()
    assert head.weight.grad is not None  # the head takes part in the loss
    optimizer.step()
    return not torch.equal(before, head.weight)


def test_ml410_a_layer_added_after_the_optimizer_never_changes():
    assert not train_head_step(run(example("ML410")))
    assert train_head_step(run(instead("ML410")))


def test_ml411_requires_grad_on_a_module_freezes_nothing(fix):
    step = (
        "optimizer = torch.optim.SGD(backbone.parameters(), lr=0.1)\n"
        "before = backbone.weight.detach().clone()\n"
        "backbone(torch.randn(2, 4, requires_grad=True)).sum().backward()\n"
        "if backbone.weight.grad is not None:\n"
        "    optimizer.step()\n"
        "changed = not torch.equal(before, backbone.weight)\n"
    )
    assert run(example("ML411") + step)["changed"]
    fixed = fix(example("ML411"), "ML411")
    assert fixed == instead("ML411")
    assert not run(fixed + step)["changed"]


def test_ml412_an_optimizer_over_frozen_parameters_trains_nothing():
    step = "loss = model(torch.randn(4, 4)).sum()\nloss.backward()\n"
    with pytest.raises(RuntimeError, match="does not require grad"):
        run(example("ML412") + step)
    namespace = run(instead("ML412") + step)
    before = namespace["model"][2].weight.detach().clone()
    namespace["optimizer"].step()
    assert not torch.equal(before, namespace["model"][2].weight)


@pytest.mark.parametrize("program, leaks", [(example("ML805"), True), (instead("ML805"), False)])
def test_ml805_statistics_before_the_split_let_the_test_rows_into_training(program, leaks):
    """Change only the rows that end up in the test set: the training features change with them when
    the scaler saw the whole data set."""
    data_line = "X, y = np.random.rand(100, 3), np.random.rand(100)"
    assert data_line in program
    program = program.replace(data_line, "X, y = DATA.copy(), TARGET")
    data, target = np.random.default_rng(0).random((100, 3)), np.arange(100.0)
    np.random.seed(0)
    _, test_rows = train_test_split(np.arange(100))
    shifted = data.copy()
    shifted[test_rows] += 100.0

    def training_features(rows):
        np.random.seed(0)  # the same split every time
        return run(program, DATA=rows, TARGET=target)["X_train"]

    assert np.array_equal(training_features(data), training_features(shifted)) is not leaks
