"""Witnesses: a `(B, B)` made of `(B,)` and `(B, 1)` in a model's `forward` and reduced by the caller's loss
(ML602, reported at the reduction) averages every prediction against every rating under torch; with the
bias squeezed, nothing is reported and the loss compares each prediction with its own rating."""
import torch

from witness import family_findings, run

RANKER = """
import torch
from torch import nn


class Ranker(nn.Module):
    def __init__(self, n_items, dim=8):
        super().__init__()
        self.items = nn.Embedding(n_items, dim)
        self.bias = nn.Embedding(n_items, 1)

    def forward(self, users, items):
        return (users * self.items(items)).sum(-1) + self.bias(items)


torch.manual_seed(0)
model = Ranker(50)
users, items, ratings = torch.randn(16, 8), torch.randint(0, 50, (16,)), torch.rand(16)
loss = ((model(users, items) - ratings) ** 2).mean()
"""


def test_ml602_a_returned_broadcast_is_reduced_over_every_pair():
    assert family_findings(RANKER, "ML6") == [(19, "ML602")]
    bad = run(RANKER)
    scores = bad["model"](bad["users"], bad["items"])
    assert scores.shape == (16, 16)  # nothing raises
    assert torch.isclose(bad["loss"], ((scores - bad["ratings"]) ** 2).mean())
    fixed = RANKER.replace("+ self.bias(items)", "+ self.bias(items).squeeze(-1)")
    assert family_findings(fixed, "ML6") == []
    good = run(fixed)
    aligned = good["model"](good["users"], good["items"])
    assert aligned.shape == (16,)
    assert not torch.isclose(bad["loss"], ((aligned - good["ratings"]) ** 2).mean())
