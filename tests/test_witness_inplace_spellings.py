"""Witnesses for the in-place spellings ML401, ML418 and ML420 read: each flagged program shows the
misbehaviour under torch, and its out-of-place (or copying) version shows none and is not flagged."""

from tests.witness import autograd_and_difference, family_findings, run

FILLED_SOFTMAX = '''
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, h):
        probs = self.proj(h).softmax(-1)
        probs.data[:, 0] = 0.0
        return probs[:, 1:]
'''

HEAD_CHECK = ("model, h = Head(), torch.randn(5, 4)", "model(h).sum()", "model.proj.weight")


def test_a_store_through_data_into_a_softmax_output_trains_on_a_wrong_gradient():
    assert family_findings(FILLED_SOFTMAX, "ML4") == [(13, "ML420")]
    autograd, numeric = autograd_and_difference(FILLED_SOFTMAX, *HEAD_CHECK)
    assert abs(autograd - numeric) > 1e-3 * max(1.0, abs(numeric))
    fixed = FILLED_SOFTMAX.replace("probs.data[:, 0] = 0.0", "probs = probs * torch.tensor([0.0, 1.0, 1.0])")
    assert family_findings(fixed, "ML4") == []
    autograd, numeric = autograd_and_difference(fixed, *HEAD_CHECK)
    assert abs(autograd - numeric) < 1e-6 * max(1.0, abs(numeric))


FUNCTIONAL_ON_INPUT = '''
import torch
import torch.nn.functional as F
from torch import nn


class DAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        x = F.leaky_relu(x, 0.1, inplace=True)
        return self.fc(x)


def fit(model, data):
    for clean in data.split(4):
        before = clean.clone()
        recon = model(clean)
        loss = ((recon - clean) ** 2).mean()
        seen.append(torch.equal(before, clean))


fit(DAE(), torch.randn(8, 6))
'''


def test_an_inplace_functional_activation_changes_the_callers_target():
    assert family_findings(FUNCTIONAL_ON_INPUT, "ML4") == [(13, "ML401")]
    assert run(FUNCTIONAL_ON_INPUT)["seen"] == [False, False]
    fixed = FUNCTIONAL_ON_INPUT.replace("inplace=True", "inplace=False")
    assert family_findings(fixed, "ML4") == []
    assert run(fixed)["seen"] == [True, True]


UNCOLLATED = '''
import torch
from torch.utils.data import DataLoader, Dataset


class Cached(Dataset):
    def __init__(self):
        self.items = [torch.full((2, 3), 100.0) for _ in range(4)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def scale(target):
    return target.div_(10.0)


ds = Cached()
for epoch in range(3):
    for batch in DataLoader(ds, batch_size=None):
        scale(batch)
    seen.append(ds.items[0][0, 0].item())
'''


def test_a_loader_without_collation_hands_the_stored_tensor_to_an_inplace_helper():
    assert family_findings(UNCOLLATED, "ML4") == [(18, "ML418")]
    assert [round(v, 6) for v in run(UNCOLLATED)["seen"]] == [10.0, 1.0, 0.1]
    fixed = UNCOLLATED.replace("DataLoader(ds, batch_size=None)", "DataLoader(ds, batch_size=2)")
    assert family_findings(fixed, "ML4") == []
    assert run(fixed)["seen"] == [100.0, 100.0, 100.0]


HOOKED = '''
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True), nn.Linear(4, 2))
feats = {}


def keep(module, inputs, output):
    feats["fc1"] = output


net[0].register_forward_hook(keep)
x = torch.randn(8, 4)
net(x)
seen.append(bool((feats["fc1"] < 0).any()))
'''


def test_an_inplace_activation_overwrites_the_output_a_forward_hook_keeps():
    assert family_findings(HOOKED, "ML4") == [(5, "ML401")]
    assert run(HOOKED)["seen"] == [False]  # the kept pre-activations have lost their negative values
    fixed = HOOKED.replace("nn.ReLU(inplace=True)", "nn.ReLU()")
    assert family_findings(fixed, "ML4") == []
    assert run(fixed)["seen"] == [True]
