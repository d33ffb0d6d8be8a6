"""Witness for ML301: the flagged programs misbehave under torch as the rule says, the fixed ones don't."""
import torch

from mllint.rules.ml301_method_not_called import MethodNotCalled

ZERO_GRAD_WITHOUT_CALL = """
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


def run(program: str) -> dict:
    namespace: dict = {}
    exec(compile(program, "<witness>", "exec"), namespace)
    return namespace


def test_eval_without_call_leaves_dropout_active(fix):
    example = MethodNotCalled.doc_code("Example")
    fixed = fix(example, "ML301")
    assert fixed == MethodNotCalled.doc_code("Use instead")

    torch.manual_seed(0)
    flagged = run(example + "again = model(torch.ones(2, 4))\nonce = model(torch.ones(2, 4))\n")
    assert flagged["model"].training
    assert not torch.equal(flagged["again"], flagged["once"])  # dropout still drops

    repaired = run(fixed + "again = model(torch.ones(2, 4))\nonce = model(torch.ones(2, 4))\n")
    assert not repaired["model"].training
    assert torch.equal(repaired["again"], repaired["once"])


def test_zero_grad_without_call_accumulates_gradients(fix):
    flagged = run(ZERO_GRAD_WITHOUT_CALL)
    first, second = flagged["gradients"]
    assert torch.allclose(second, 2 * first)  # the same batch twice: its gradient counted twice

    fixed = fix(ZERO_GRAD_WITHOUT_CALL, "ML301")
    assert "    optimizer.zero_grad()\n" in fixed
    first, second = run(fixed)["gradients"]
    assert torch.allclose(second, first)
