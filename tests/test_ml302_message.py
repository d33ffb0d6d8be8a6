"""ML302's message cites the last fact the function sets, whatever order a set of facts yields."""

SOURCE = """\
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    def forward(self, x):
        return self.body(x)
def fit(loader, opt, resume):
    model = Net()
    if resume:
        model.train()
    for epoch in range(3):
        for x, y in loader:
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
        with torch.no_grad():
            for x, y in loader:
                model(x)
"""


def test_two_ways_to_training_mode_cite_the_last(lint):
    # Both the construction (line 11) and `model.train()` (line 13) leave the model in training mode;
    # the facts are a frozenset of nodes, ordered by their addresses: lint several times.
    messages = {finding.message for _ in range(8) for finding in lint(SOURCE, "ML302")}
    assert messages == {
        "`fit` evaluates `model` in training mode, set by `model.train()` (line 13); it has Dropout, "
        "`nn.Dropout(0.5)` (line 7): call `model.eval()` first"
    }
