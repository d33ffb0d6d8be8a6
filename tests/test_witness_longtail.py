"""Witnesses of the gaps closed for issue 21: a layer built inside `forward` (ML407) makes the output noise
and never trains, built in `__init__` the same model learns; an in-place activation on a `forward`
argument read again later (ML401) changes the residual and the caller's tensor."""
import torch

from mllint.registry import all_rules


def net_of(section: str) -> torch.nn.Module:
    namespace: dict = {}
    exec(compile(all_rules()["ML407"].doc_code(section), "<witness>", "exec"), namespace)
    return namespace["Net"]()


def final_loss(net: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    optimizer = torch.optim.Adam(net.parameters(), lr=0.02)
    for _ in range(300):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(net(x), y).backward()
        optimizer.step()
    return torch.nn.functional.mse_loss(net(x), y).item()


def test_ml407_the_layer_built_in_forward_is_noise_and_never_trains():
    torch.manual_seed(0)
    x = torch.randn(64, 4)
    y = x.sum(dim=1, keepdim=True)
    flagged, fixed = net_of("Example"), net_of("Use instead")
    assert not torch.equal(flagged(x), flagged(x))  # a new random head at every call
    assert torch.equal(fixed(x), fixed(x))
    assert len(list(flagged.parameters())) == 2  # the head's weight and bias are not the model's
    assert final_loss(fixed, x, y) < 0.05 < final_loss(flagged, x, y)


RESIDUAL = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace={inplace})

    def forward(self, x):
        return self.relu(x) * 2 + x
"""


def test_ml401_an_inplace_activation_on_the_input_changes_the_residual_and_the_callers_tensor(lint):
    results = {}
    for inplace in (True, False):
        namespace: dict = {}
        source = RESIDUAL.format(inplace=inplace)
        exec(compile(source, "<witness>", "exec"), namespace)
        batch = torch.tensor([[-1.0, 2.0]])
        results[inplace] = (namespace["Block"]()(batch), batch)
        assert [f.code for f in lint(source, "ML401")] == (["ML401"] if inplace else [])
    (flagged, flagged_input), (correct, kept_input) = results[True], results[False]
    assert torch.equal(correct, torch.tensor([[-1.0, 6.0]]))
    assert torch.equal(flagged, torch.tensor([[0.0, 6.0]]))  # the residual added the activated -1
    assert torch.equal(flagged_input, torch.tensor([[0.0, 2.0]])) and torch.equal(kept_input, torch.tensor([[-1.0, 2.0]]))
