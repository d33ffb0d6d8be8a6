"""Witnesses for the mode rules on library models. transformers, torchvision and timm are not installed:
the programs run against stand-ins that do what the libraries do (transformers' `from_pretrained` calls
`model.eval()` after loading; torchvision's ResNets hold BatchNorm2d), with Dropout/BatchNorm models."""
import sys
import types

import torch
from torch import nn

import witness

FINETUNE = """
import torch
from transformers import AutoModelForSequenceClassification

torch.manual_seed(0)
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.ones(4, 8)
outputs = []
for _ in range(2):
    optimizer.zero_grad()
    out = model(x)
    outputs.append(out.detach())
    out.pow(2).mean().backward()
    optimizer.step()
dropout_active = model.training
"""

EVALUATE = """
import torch
import torchvision

model = torchvision.models.resnet50(weights=None)
model.train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    model(torch.randn(16, 8) * 3 + 1).pow(2).mean().backward()
    optimizer.step()
sample = torch.randn(2, 8)
with torch.no_grad():
    alone = model(sample)
    in_a_batch = model(torch.cat([sample, torch.randn(6, 8)]))[:2]
"""


def _pretrained(*args, **kwargs):
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 2))
    model.eval()  # what transformers' from_pretrained does after loading the weights
    return model


def _resnet50(weights=None):
    return nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))  # BatchNorm, as a ResNet


def run(program: str) -> dict:
    """Run a program with `transformers` and `torchvision` stubbed by tiny models."""
    stubs = {
        "transformers": types.SimpleNamespace(
            AutoModelForSequenceClassification=types.SimpleNamespace(from_pretrained=_pretrained)
        ),
        "torchvision": types.SimpleNamespace(models=types.SimpleNamespace(resnet50=_resnet50)),
    }
    saved = {name: sys.modules.get(name) for name in stubs}
    sys.modules.update(stubs)
    try:
        return witness.run(program)
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def test_ml303_a_pretrained_model_fine_tuned_without_train_has_dropout_off(lint):
    assert [f.code for f in lint(FINETUNE, "ML303")] == ["ML303"]
    flagged = run(FINETUNE)
    assert not flagged["dropout_active"]
    fixed = FINETUNE.replace("optimizer = torch.optim", "model.train()\noptimizer = torch.optim")
    assert lint(fixed, "ML303") == []
    assert run(fixed)["dropout_active"]


def test_ml302_a_library_model_evaluated_in_training_mode_depends_on_its_batch(lint):
    assert [f.code for f in lint(EVALUATE, "ML302")] == ["ML302"]
    flagged = run(EVALUATE)
    assert not torch.allclose(flagged["alone"], flagged["in_a_batch"])  # batch statistics, not running ones
    fixed = EVALUATE.replace("sample = torch.randn(2, 8)", "model.eval()\nsample = torch.randn(2, 8)")
    assert lint(fixed, "ML302") == []
    repaired = run(fixed)
    assert torch.allclose(repaired["alone"], repaired["in_a_batch"], atol=1e-6)
