"""Witness for ML420: an in-place change through `.data` in a `forward` leaves autograd's gradient
disagreeing with the change of the loss (finite differences); written out of place, they agree."""

from tests.witness import autograd_and_difference, example, family_findings, instead

CHECK = ("model, x = Attention(4), torch.randn(2, 3, 4)", "model(x).pow(2).sum()", "model.qkv.weight")


def test_example_trains_on_a_wrong_gradient():
    assert family_findings(example("ML420"), "ML4") == [(13, "ML420")]
    autograd, numeric = autograd_and_difference(example("ML420"), *CHECK)
    assert abs(autograd - numeric) > 1e-3 * max(1.0, abs(numeric))


def test_out_of_place_change_trains_on_the_right_gradient():
    assert family_findings(instead("ML420"), "ML4") == []
    autograd, numeric = autograd_and_difference(instead("ML420"), *CHECK)
    assert abs(autograd - numeric) < 1e-6 * max(1.0, abs(numeric))
