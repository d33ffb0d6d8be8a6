"""Witness for ML301: the flagged programs misbehave under torch as the rule says, and the programs
mllint's fix produces don't. Everything runs on the CPU, seeded, on tensors of a few elements."""
from pathlib import Path

import torch

from mllint.engine import Selection, lint_text
from mllint.fixer import fix_text
from mllint.rules.ml301_method_not_called import MethodNotCalled

from witness import run

POSITIVES = Path(__file__).resolve().parent.parent / "fixtures" / "ml301" / "positives.py"
ML301 = Selection.of(["ML301"])

ZERO_GRAD_WITHOUT_CALL = """\
import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
x, y = torch.randn(4, 3), torch.randn(4, 1)
gradients = []
for _ in range(2):
    optimizer.zero_grad
    torch.nn.functional.mse_loss(model(x), y).backward()
    gradients.append(model.weight.grad.clone())
    optimizer.step()
"""
# Evaluate the documentation example's model twice on one input.
EVALUATE_TWICE = "first = model(torch.ones(2, 4))\nsecond = model(torch.ones(2, 4))\n"


def fixed(program: str) -> str:
    outcome = fix_text(program, lambda text: lint_text(text, "witness.py", ML301), unsafe=False)
    assert outcome.error is None and outcome.remaining == []
    return outcome.text


# `model.eval` without the call: the documentation example.


def test_the_fix_of_the_example_is_the_documented_alternative():
    assert fixed(MethodNotCalled.doc_code("Example")) == MethodNotCalled.doc_code("Use instead")


def test_eval_without_call_leaves_the_model_in_training_mode():
    flagged = run(MethodNotCalled.doc_code("Example") + EVALUATE_TWICE)
    assert flagged["model"].training is True
    assert flagged["model"][1].training is True


def test_eval_without_call_leaves_dropout_active_in_evaluation():
    flagged = run(MethodNotCalled.doc_code("Example") + EVALUATE_TWICE)
    assert not torch.equal(flagged["first"], flagged["second"])  # two dropout masks
    assert (flagged["first"] == 0).any()


def test_after_the_fix_the_model_is_in_eval_mode():
    repaired = run(fixed(MethodNotCalled.doc_code("Example")) + EVALUATE_TWICE)
    assert repaired["model"].training is False
    assert repaired["model"][1].training is False


def test_after_the_fix_evaluation_is_deterministic():
    repaired = run(fixed(MethodNotCalled.doc_code("Example")) + EVALUATE_TWICE)
    assert torch.equal(repaired["first"], repaired["second"])
    assert torch.equal(repaired["first"], repaired["model"][0](torch.ones(2, 4)))  # dropout is the identity


# `optimizer.zero_grad` without the call.


def test_the_zero_grad_program_is_flagged_once_and_fixed_on_its_line():
    assert [(f.code, f.start.line, f.start.column) for f in lint_text(ZERO_GRAD_WITHOUT_CALL, "w.py", ML301)] == [
        ("ML301", 9, 5)
    ]
    assert fixed(ZERO_GRAD_WITHOUT_CALL) == ZERO_GRAD_WITHOUT_CALL.replace(
        "    optimizer.zero_grad\n", "    optimizer.zero_grad()\n"
    )


def test_zero_grad_without_call_accumulates_gradients():
    first, second = run(ZERO_GRAD_WITHOUT_CALL)["gradients"]
    assert first.abs().sum() > 0
    assert torch.allclose(second, 2 * first)  # the same batch twice: its gradient counted twice


def test_after_the_fix_gradients_do_not_accumulate():
    first, second = run(fixed(ZERO_GRAD_WITHOUT_CALL))["gradients"]
    assert torch.allclose(second, first)


# The fixture file's training functions.


def fixture_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Dropout(0.5))


def fixture_loader() -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(2, 4, generator=generator), torch.tensor([0, 2])) for _ in range(4)]


def test_the_fixtures_validate_leaves_the_model_training_and_the_fixed_one_does_not():
    model = fixture_model()
    run(POSITIVES.read_text())["validate"](model, fixture_loader())
    assert model.training is True

    model = fixture_model()
    run(fixed(POSITIVES.read_text()))["validate"](model, fixture_loader())
    assert model.training is False


def test_the_fixtures_accumulating_loop_never_steps_and_the_fixed_one_does():
    for program, should_learn in ((POSITIVES.read_text(), False), (fixed(POSITIVES.read_text()), True)):
        model = fixture_model()
        before = model[0].weight.detach().clone()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        run(program)["fit_accumulating"](model, fixture_loader(), optimizer)
        assert (not torch.equal(model[0].weight, before)) is should_learn
