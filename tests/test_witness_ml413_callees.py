"""Witness for ML413 on a loss term cut inside a project loss: `ImageGradientLoss.forward` builds the mask
with `argmax`, so the edge term adds to the loss's value but not to a single gradient (the network's
gradients are the same whatever its weight); on the softmax probability the term trains."""
import torch

from witness import run

PROGRAM = """
import torch
import torch.nn.functional as F
from torch import nn

class ImageGradientLoss(nn.Module):
    def forward(self, pred, gray_image):
        pred = pred.argmax(1).unsqueeze(1).float()
        kernel = torch.tensor([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]).view(1, 1, 3, 3)
        return (F.conv2d(pred, kernel) - F.conv2d(gray_image, kernel)).pow(2).mean()

def gradient(net, image, gray_image, mask, weight, criterion):
    net.zero_grad()
    pred = net(image)
    loss = F.cross_entropy(pred, mask) + weight * criterion(pred, gray_image)
    loss.backward()
    return net.weight.grad.clone()

net = nn.Conv2d(1, 2, 1)
image, gray_image = torch.randn(2, 1, 6, 6), torch.randn(2, 1, 6, 6)
mask = torch.randint(0, 2, (2, 6, 6))
criterion = ImageGradientLoss()
without, with_edges = (gradient(net, image, gray_image, mask, w, criterion) for w in (0.0, 10.0))
"""


def test_the_edge_term_changes_no_gradient_until_it_is_differentiable(lint):
    assert [f.code for f in lint(PROGRAM, "ML413")] == ["ML413"]
    flagged = run(PROGRAM)
    assert torch.equal(flagged["without"], flagged["with_edges"])
    fixed = PROGRAM.replace("pred = pred.argmax(1).unsqueeze(1).float()", "pred = pred.softmax(1)[:, 1:]")
    assert fixed != PROGRAM and lint(fixed, "ML413") == []
    repaired = run(fixed)
    assert not torch.allclose(repaired["without"], repaired["with_edges"])
