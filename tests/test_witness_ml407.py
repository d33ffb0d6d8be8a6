"""Witness: a layer built inside `forward` makes the output noise and never trains; built in `__init__`
the same model learns."""
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
