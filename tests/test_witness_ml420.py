"""Witness for ML420: an in-place change through `.data` in a `forward` leaves autograd's gradient
disagreeing with the change of the loss (finite differences); written out of place, they agree."""
import torch

from tests.witness import example, family_findings, instead, run

CHECK = '''
torch.set_default_dtype(torch.float64)
model = Attention(4)
x = torch.randn(2, 3, 4)
loss = lambda: model(x).pow(2).sum()
loss().backward()
weight, eps = model.qkv.weight, 1e-6
with torch.no_grad():
    weight[0, 0] += eps
    up = loss().item()
    weight[0, 0] -= 2 * eps
    down = loss().item()
    weight[0, 0] += eps
seen.append((weight.grad[0, 0].item(), (up - down) / (2 * eps)))
torch.set_default_dtype(torch.float32)
'''


def test_example_trains_on_a_wrong_gradient():
    assert family_findings(example("ML420"), "ML4") == [(13, "ML420")]
    autograd, numeric = run(example("ML420") + CHECK)["seen"][0]
    assert abs(autograd - numeric) > 1e-3 * max(1.0, abs(numeric))


def test_out_of_place_change_trains_on_the_right_gradient():
    assert family_findings(instead("ML420"), "ML4") == []
    autograd, numeric = run(instead("ML420") + CHECK)["seen"][0]
    assert abs(autograd - numeric) < 1e-6 * max(1.0, abs(numeric))
