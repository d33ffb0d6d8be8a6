"""Witnesses of parameters that never train (ML414): the program's layers stay at their initial values
after optimizer steps, and the fixed program trains them and is not reported."""
import pytest
import torch

from tests.witness import example, family_findings, instead, run

STEPS = '''
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
first = [p.detach().clone() for layer in model.layers for p in layer.parameters()]
for _ in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = any(not torch.equal(a, p) for a, p in zip(first, (p for layer in model.layers for p in layer.parameters())))
'''


@pytest.mark.parametrize("program, trains", [(example("ML414"), False), (instead("ML414"), True)])
def test_ml414_layers_in_a_plain_list_never_train(program, trains):
    assert family_findings(program, "ML414") == ([] if trains else [(7, "ML414")])
    program = "import torch\n" + program + "\nmodel = MLP(2)\n" + STEPS
    if not trains:  # the optimizer sees no parameter at all here: give it one so that it can be built
        program = program.replace("model.parameters()", "[torch.nn.Parameter(torch.zeros(1))]")
    namespace = run(program)
    assert namespace["changed"] is trains
    assert (len(list(namespace["model"].parameters())) > 0) is trains


FACTORY = '''
import torch
import torchvision


def build_model():
    model = torchvision.models.resnet18()
    model.fc = torch.nn.Linear(4, 2)
    return model


model = build_model()
model.layer1.requires_grad = False
before = model.layer1.weight.detach().clone()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(8, 4)).pow(2).mean().backward()
optimizer.step()
changed = not torch.equal(before, model.layer1.weight)
'''


class _ResNet(torch.nn.Module):
    """What the witness needs of torchvision's resnet18: a `layer1` and an `fc`, small."""

    def __init__(self):
        super().__init__()
        self.layer1 = torch.nn.Linear(4, 4)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.layer1(x))


def test_ml411_requires_grad_on_a_layer_of_a_factory_made_library_model_freezes_nothing(fix, monkeypatch):
    import sys
    import types

    models = types.SimpleNamespace(resnet18=_ResNet)
    monkeypatch.setitem(sys.modules, "torchvision", types.SimpleNamespace(models=models))
    assert family_findings(FACTORY, "ML411") == [(13, "ML411")]
    assert run(FACTORY)["changed"]
    fixed = fix(FACTORY, "ML411")
    assert "model.layer1.requires_grad_(False)" in fixed and family_findings(fixed, "ML411") == []
    assert not run(fixed)["changed"]


HELD = '''
import torch
import torch.nn as nn


def make_layers(depth):
    layers = []
    for _ in range(depth):
        layers.append(nn.Linear(8, 8))
    return layers


class Bank:
    def __init__(self):
        self.proj = nn.Linear(8, 8)

    def __call__(self, x):
        return self.proj(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = make_layers(2)
        self.bank = Bank()
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return self.out(self.bank(x))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
held = [model.layers[0].weight, model.bank.proj.weight]
first = [p.detach().clone() for p in held]
for _ in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = [not torch.equal(a, p) for a, p in zip(first, held)]
'''


def test_ml414_layers_a_helper_returns_in_a_list_or_a_plain_object_holds_never_train():
    assert family_findings(HELD, "ML414") == [(24, "ML414"), (25, "ML414")]
    assert run(HELD)["changed"] == [False, False]
    fixed = HELD.replace("self.layers = make_layers(2)", "self.layers = nn.ModuleList(make_layers(2))")
    fixed = fixed.replace("class Bank:", "class Bank(nn.Module):").replace("    def __init__(self):\n        self.proj", "    def __init__(self):\n        super().__init__()\n        self.proj")
    fixed = fixed.replace("    def __call__(self, x):\n        return self.proj", "    def forward(self, x):\n        return self.proj")
    assert family_findings(fixed, "ML414") == []
    assert run(fixed)["changed"] == [True, True]


WEIGHTED = '''
import torch
import torch.nn as nn


class Weighted(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_vars = nn.Parameter(torch.zeros(2))

    def forward(self, a, b):
        losses = torch.stack([a, b])
        return (torch.exp(-self.log_vars) * losses + self.log_vars).sum()


torch.manual_seed(0)
model, criterion = nn.Linear(4, 2), Weighted()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    out = model(torch.randn(8, 4))
    loss = criterion(out[:, 0].pow(2).mean(), out[:, 1].abs().mean())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = criterion.log_vars.detach().clone()
'''


def test_ml417_a_loss_module_left_out_of_the_optimizer_keeps_its_initial_weights():
    assert family_findings(WEIGHTED, "ML417") == [(18, "ML417")]
    assert torch.equal(run(WEIGHTED)["weights"], torch.zeros(2))
    fixed = WEIGHTED.replace("SGD(model.parameters()", "SGD([*model.parameters(), *criterion.parameters()]")
    assert fixed != WEIGHTED and family_findings(fixed, "ML417") == []
    assert not torch.equal(run(fixed)["weights"], torch.zeros(2))


GROWN = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.heads = nn.ModuleDict()

    def add_head(self, name):
        self.heads[name] = nn.Linear(8, 1)

    def forward(self, x, name):
        return self.heads[name](self.trunk(x))


torch.manual_seed(0)
model = Net()
model.add_head("a")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.add_head("b")
first = model.heads["b"].weight.detach().clone()
for _ in range(3):
    loss = model(torch.randn(8, 4), "b").pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = not torch.equal(first, model.heads["b"].weight)
'''


def test_ml410_a_head_a_method_adds_after_the_optimizer_never_trains():
    assert family_findings(GROWN, "ML410") == [(23, "ML410")]
    assert run(GROWN)["changed"] is False
    fixed = GROWN.replace('model.add_head("b")\n', 'model.add_head("b")\noptimizer.add_param_group({"params": model.heads["b"].parameters()})\n')
    assert fixed != GROWN and family_findings(fixed, "ML410") == []
    assert run(fixed)["changed"] is True


PARTS = '''
import torch
import torch.nn as nn


def build_parts():
    return {"encoder": nn.Linear(8, 4), "bottleneck": nn.Linear(4, 2), "decoder": nn.Linear(2, 8)}


parts = build_parts()
optimizer = torch.optim.SGD([*parts["encoder"].parameters(), *parts["decoder"].parameters()], lr=0.1)
before = parts["bottleneck"].weight.detach().clone()
for _ in range(3):
    x = torch.randn(16, 8)
    loss = (parts["decoder"](parts["bottleneck"](parts["encoder"](x))) - x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = not torch.equal(before, parts["bottleneck"].weight)
'''


def test_ml417_a_part_of_a_builders_dict_left_out_of_the_optimizer_never_trains():
    assert family_findings(PARTS, "ML417") == [(11, "ML417")]
    assert run(PARTS)["changed"] is False
    fixed = PARTS.replace('*parts["decoder"].parameters()]', '*parts["decoder"].parameters(), *parts["bottleneck"].parameters()]')
    assert family_findings(fixed, "ML417") == []
    assert run(fixed)["changed"] is True


ATTACHED = '''
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.body = nn.Linear(d, d)
        self.adapters = None

    def forward(self, x):
        x = self.body(x)
        for adapter in self.adapters or ():
            x = x + adapter(x)
        return x


def add_adapters(model, n):
    model.adapters = [nn.Linear(8, 8) for _ in range(n)]
    return model


model = add_adapters(Encoder(), 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
before = [a.weight.detach().clone() for a in model.adapters]
for _ in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = [not torch.equal(b, a.weight) for b, a in zip(before, model.adapters)]
'''


def test_ml414_layers_a_function_attaches_to_a_model_in_a_plain_list_never_train():
    """A function given the model stores a plain list of layers on it, outside its class: the layers the
    model's `forward` runs stay at their initial values; in `nn.ModuleList` they train, and nothing is found."""
    assert family_findings(ATTACHED, "ML414") == [(20, "ML414")]
    assert run(ATTACHED)["changed"] == [False, False]
    fixed = ATTACHED.replace("[nn.Linear(8, 8) for _ in range(n)]", "nn.ModuleList(nn.Linear(8, 8) for _ in range(n))")
    assert family_findings(fixed, "ML414") == []
    assert run(fixed)["changed"] == [True, True]
