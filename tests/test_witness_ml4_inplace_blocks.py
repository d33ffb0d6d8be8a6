"""Witnesses for in-place changes hidden in a block: a pre-activation `nn.Sequential` whose first layer is
`nn.ReLU(inplace=True)` rectifies the forward argument (the skip connection adds the rectified tensor and
the caller's tensor changes), an alias written by quadrant (`out = x; out[:, :, :h, :w] = ...`) changes
the input, a ReLU with `inplace=False` saves its output, which `+=` then changes: backward raises, and an
in-place LeakyReLU activates the conv output a list keeps for the caller's skip connection."""
import pytest
import torch

from witness import run

PRE_ACTIVATION = """
import torch
from torch import nn

class ResBlock(nn.Module):
    def __init__(self, channel):
        super().__init__()
        self.conv = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(channel, channel, 1))

    def forward(self, input):
        out = self.conv(input)
        out += input
        return out

block = ResBlock(2)
x = torch.randn(1, 2, 3, 3)
given = x.clone()
y = block(x)
expected = block.conv[1](given.relu()) + given
"""

QUADRANT = """
import torch
from torch import nn

class QuadrantBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 1)

    def forward(self, x):
        out = x
        out[:, :, :1, :1] = self.conv(x[:, :, :1, :1])
        return out

x = torch.randn(1, 1, 2, 2)
given = x.clone()
with torch.no_grad():
    QuadrantBlock()(x)
"""

NOT_IN_PLACE = """
import torch
import torch.nn.functional as F

conv = torch.nn.Conv2d(2, 2, 1)
x, skip = torch.randn(1, 2, 3, 3), torch.randn(1, 2, 3, 3)
out = F.relu(conv(x), inplace=False)
out += skip
out.sum().backward()
"""


def test_the_pre_activation_block_adds_the_rectified_input_and_changes_the_callers_tensor(lint):
    assert [f.code for f in lint(PRE_ACTIVATION, "ML401")] == ["ML401"]
    flagged = run(PRE_ACTIVATION)
    assert not torch.equal(flagged["x"], flagged["given"])  # the caller's tensor was rectified
    assert not torch.allclose(flagged["y"], flagged["expected"])  # the skip added the rectified input
    fixed = PRE_ACTIVATION.replace("nn.ReLU(inplace=True)", "nn.ReLU()")
    assert lint(fixed, "ML401") == []
    repaired = run(fixed)
    assert torch.equal(repaired["x"], repaired["given"]) and torch.allclose(repaired["y"], repaired["expected"])


def test_the_alias_writes_into_the_callers_tensor(lint):
    assert [f.code for f in lint(QUADRANT, "ML401")] == ["ML401"]
    flagged = run(QUADRANT)
    assert not torch.equal(flagged["x"], flagged["given"])
    fixed = QUADRANT.replace("out = x\n", "out = x.clone()\n")
    assert lint(fixed, "ML401") == []
    repaired = run(fixed)
    assert torch.equal(repaired["x"], repaired["given"])


def test_a_relu_not_in_place_saves_its_output_and_the_add_breaks_backward(lint):
    assert [f.code for f in lint(NOT_IN_PLACE, "ML406")] == ["ML406"]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(NOT_IN_PLACE)
    fixed = NOT_IN_PLACE.replace("out += skip", "out = out + skip")
    assert lint(fixed, "ML406") == []
    run(fixed)


HELD_IN_A_LIST = """
import torch
from torch import nn

class Down(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 1)
        self.act = nn.LeakyReLU(0.1, inplace=True)

    def forward(self, x, skips):
        s = self.conv(x)
        skips.append(s)
        return self.act(s)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = Down()

    def forward(self, x):
        skips = []
        h = self.down(x, skips)
        return h, skips[0]

net = Net()
nn.init.ones_(net.down.conv.weight)
nn.init.zeros_(net.down.conv.bias)
with torch.no_grad():
    h, skip = net(-torch.ones(1, 1, 2, 2))
"""


def test_the_skip_a_list_keeps_is_the_activated_tensor(lint):
    assert [f.code for f in lint(HELD_IN_A_LIST, "ML401")] == ["ML401"]
    flagged = run(HELD_IN_A_LIST)
    assert torch.allclose(flagged["skip"], torch.full((1, 1, 2, 2), -0.1))  # the kept conv output was activated
    fixed = HELD_IN_A_LIST.replace("inplace=True", "inplace=False")
    assert lint(fixed, "ML401") == []
    repaired = run(fixed)
    assert torch.equal(repaired["skip"], -torch.ones(1, 1, 2, 2))  # the conv output before the activation
