"""Witnesses for ML2xx and ML5xx: the documented examples misbehave under torch as the rules say, and
their alternatives (mllint's fix where the rule has one) don't. CPU only, seeded, a few tiny tensors."""
import warnings

import pytest
import torch

from mllint.engine import Selection, lint_text
from mllint.fixer import fix_text
from mllint.rules.ml201_missing_zero_grad import MissingZeroGrad
from mllint.rules.ml202_zero_grad_between_backward_and_step import ZeroGradBetweenBackwardAndStep
from mllint.rules.ml203_step_before_backward import StepBeforeBackward
from mllint.rules.ml204_scheduler_before_optimizer import SchedulerBeforeOptimizer
from mllint.rules.ml205_scheduler_cadence import SchedulerCadence
from mllint.rules.ml206_backward_under_no_grad import BackwardUnderNoGrad
from mllint.rules.ml207_loss_accumulated_with_graph import LossAccumulatedWithGraph
from mllint.rules.ml501_training_error_swallowed import TrainingErrorSwallowed

from witness import run


def fixed(program: str, code: str) -> str:
    selection = Selection.of([code])
    outcome = fix_text(program, lambda text: lint_text(text, "witness.py", selection), unsafe=True)
    assert outcome.error is None and outcome.remaining == []
    return outcome.text


def run_recording(program: str, record: str = "", after: str = "optimizer.step()") -> dict:
    """Run a program; `record` is inserted after the last line holding `after`, at its indentation, to
    observe each iteration."""
    if record:
        lines = program.split("\n")
        last = max(i for i, line in enumerate(lines) if after in line)
        indent = lines[last][: len(lines[last]) - len(lines[last].lstrip())]
        lines.insert(last + 1, indent + record)
        program = "\n".join(lines)
    return run(program)


def same_batch(program: str) -> str:
    """Every batch the same, so that only the gradient handling differs between iterations."""
    return program.replace(
        "data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]",
        "data = [(torch.ones(4, 3), torch.zeros(4, 1))] * 3",
    )


# ML201: without clearing, gradients add up.


def test_without_zero_grad_the_gradient_doubles_then_triples():
    program = same_batch(MissingZeroGrad.doc_code("Example")).replace("lr=0.1", "lr=0.0")
    grads = run_recording(program, "seen.append(model.weight.grad.clone())")["seen"]
    assert torch.allclose(grads[1], 2 * grads[0]) and torch.allclose(grads[2], 3 * grads[0])


def test_after_the_fix_every_step_sees_its_own_gradient():
    program = same_batch(fixed(MissingZeroGrad.doc_code("Example"), "ML201")).replace("lr=0.1", "lr=0.0")
    grads = run_recording(program, "seen.append(model.weight.grad.clone())")["seen"]
    assert all(torch.allclose(g, grads[0]) for g in grads)


# ML202 and ML203: the step applies zero gradients, the parameters never move.


@pytest.mark.parametrize("rule", [ZeroGradBetweenBackwardAndStep, StepBeforeBackward], ids=lambda r: r.code)
def test_the_flagged_loop_never_changes_the_model(rule):
    flagged = run_recording(rule.doc_code("Example"))
    torch.manual_seed(0)
    initial = torch.nn.Linear(3, 1)  # the examples' model before training: same seed, same initialisation
    assert torch.equal(flagged["model"].weight, initial.weight)
    repaired = run_recording(rule.doc_code("Use instead"))
    assert not torch.equal(repaired["model"].weight, initial.weight)


# ML204: the first learning rate of the schedule is never used.


def test_scheduler_first_skips_the_first_learning_rate():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        used = run_recording(SchedulerBeforeOptimizer.doc_code("Example"), "seen.append(optimizer.param_groups[0]['lr'])")["seen"]
    assert used[0] == pytest.approx(0.05) and 0.1 not in used
    assert any("lr_scheduler.step()" in str(w.message) for w in caught)  # PyTorch's own run-time warning
    used = run_recording(SchedulerBeforeOptimizer.doc_code("Use instead"), "seen.append(optimizer.param_groups[0]['lr'])")["seen"]
    assert used[:3] == [pytest.approx(0.1)] * 3


# ML205: StepLR(step_size=2) stepped every batch has decayed 5 times after one epoch of 10 batches.


def test_per_batch_step_lr_decays_len_loader_times_too_fast():
    record = "seen.append(optimizer.param_groups[0]['lr'])"
    flagged = run_recording(SchedulerCadence.doc_code("Example"), record, after="scheduler.step()")["seen"]
    assert flagged[9] == pytest.approx(0.1 * 0.1**5)  # the learning rate after the first epoch
    assert flagged[-1] < 1e-20
    repaired = run_recording(SchedulerCadence.doc_code("Use instead"))
    assert repaired["optimizer"].param_groups[0]["lr"] == pytest.approx(0.1 * 0.1**2)  # 4 epochs, step_size=2


# ML206: backward on a loss computed under no_grad raises.


def test_backward_under_no_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        run_recording(BackwardUnderNoGrad.doc_code("Example"))
    assert run_recording(BackwardUnderNoGrad.doc_code("Use instead"))["model"].weight.grad is not None


# ML207: the running total drags every iteration's graph along.


def graph_size(tensor) -> int:
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack += [next_fn for next_fn, _ in node.next_functions]
    return len(seen)


def test_the_total_keeps_a_graph_that_grows_with_every_iteration():
    program = LossAccumulatedWithGraph.doc_code("Example")
    three = run_recording(program)["total_loss"]
    twelve = run_recording(program.replace("for x, y in data:", "for x, y in data * 4:"))["total_loss"]
    assert isinstance(three, torch.Tensor) and three.grad_fn is not None
    assert graph_size(twelve) > 3 * graph_size(three) > 30
    repaired = run_recording(fixed(program, "ML207"))["total_loss"]
    assert isinstance(repaired, float)


# ML501: the NaN assertion is swallowed and the run "finishes".


def test_the_nan_assertion_is_swallowed_by_the_handler(capsys):
    run_recording(TrainingErrorSwallowed.doc_code("Example"))
    assert "training stopped: loss is NaN" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="loss is NaN"):
        run_recording(TrainingErrorSwallowed.doc_code("Use instead"))
