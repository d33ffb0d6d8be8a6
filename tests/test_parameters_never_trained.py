"""Layers kept where `parameters()` never looks (ML414): the fix, the spelling of `torch.nn`, the
containers that register their layers."""
import pytest

CLASS = '''
class Net({base}):
    def __init__(self):
        super().__init__()
        self.layers = {container}
        self.layers.append({nn}.Linear(4, 4))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
'''


@pytest.mark.parametrize(
    ("imports", "nn", "container", "fixed"),
    [
        ("import torch.nn as nn\n", "nn", "[]", "nn.ModuleList()"),
        ("import torch\n", "torch.nn", "list()", "torch.nn.ModuleList()"),
        ("from torch import nn\n", "nn", "[nn.Linear(4, 4)]", "nn.ModuleList([nn.Linear(4, 4)])"),
    ],
)
def test_the_fix_wraps_the_container_in_a_module_list(lint, fix, imports, nn, container, fixed):
    source = imports + CLASS.format(base=f"{nn}.Module", container=container, nn=nn)
    assert [f.code for f in lint(source, "ML414")] == ["ML414"]
    assert fix(source, "ML414") == source
    assert fix(source, "ML414", unsafe=True) == source.replace(f"self.layers = {container}", f"self.layers = {fixed}")
    assert lint(fix(source, "ML414", unsafe=True), "ML414") == []


@pytest.mark.parametrize(
    "container",
    ["nn.ModuleList()", "nn.Sequential()", "nn.ModuleList([nn.Linear(4, 4)])"],
)
def test_registering_containers_are_not_reported(lint, container):
    assert lint("import torch.nn as nn\n" + CLASS.format(base="nn.Module", container=container, nn="nn"), "ML414") == []


def test_a_plain_class_and_a_list_never_read_are_not_reported(lint):
    assert lint("import torch.nn as nn\n" + CLASS.format(base="object", container="[]", nn="nn"), "ML414") == []
    unread = "import torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.spare = [nn.Linear(4, 4)]\n"
    assert lint(unread, "ML414") == []
