"""Witnesses for the fixtures of the no_grad and zero-padding findings: what they report happens under torch."""
import pytest
import torch
import torch.nn.functional as F


def test_ml413_a_term_added_under_no_grad_trains_nothing():
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(net(x), y)
    with torch.no_grad():
        loss += 10.0 * net.weight.abs().sum()
    loss.backward()
    with_term = net.weight.grad.clone()
    net.zero_grad()
    F.cross_entropy(net(x), y).backward()
    assert torch.equal(with_term, net.weight.grad)  # the penalty adds to the value only


def test_ml206_a_loss_made_and_added_to_under_no_grad_cannot_backpropagate():
    net = torch.nn.Linear(4, 3)
    with torch.no_grad():
        loss = F.cross_entropy(net(torch.randn(8, 4)), torch.randint(0, 3, (8,)))
        loss += 1e-4 * net.weight.pow(2).sum()
        with pytest.raises(RuntimeError):
            loss.backward()


def test_ml701_a_zero_padded_mixture_has_probability_zero_where_only_zeros_cover():
    vocab = F.softmax(torch.randn(2, 5), dim=-1)
    gate = torch.sigmoid(torch.randn(2, 1))
    extended = torch.cat([gate * vocab, vocab.new_zeros(2, 3)], dim=1)
    final = extended.scatter_add(1, torch.tensor([[0], [1]]), (1 - gate) * torch.ones(2, 1))
    gold = final.gather(1, torch.tensor([[6], [7]]))  # extra ids absent from the source
    assert torch.isinf(torch.log(gold)).all()
    assert torch.isfinite(torch.log(gold.clamp_min(1e-12))).all()
