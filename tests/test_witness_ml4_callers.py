"""Witnesses for the ML4 findings that span modules: the program misbehaves under torch as the message
says, and the fixed one neither misbehaves nor is reported."""
import subprocess
import sys
from pathlib import Path

from mllint.analysis.project import ProjectIndex
from mllint.engine import Selection, lint_path
from mllint.registry import all_rules

MODELS = '''
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        features = self.encoder(x).detach()
        return self.head(features)
'''
OPTIM_UTILS = '''
import torch


def build_optimizer(model, lr):
    return torch.optim.SGD([{"params": model.encoder.parameters(), "lr": lr}, {"params": model.head.parameters()}], lr=lr)
'''
MAIN = '''
import torch
import torch.nn.functional as F

from models import Classifier
from optim_utils import build_optimizer

torch.manual_seed(0)
model = Classifier()
optimizer = build_optimizer(model, lr=0.5)
encoder, head = model.encoder.weight.clone(), model.head.weight.clone()
for _ in range(5):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
print(torch.equal(encoder, model.encoder.weight), torch.equal(head, model.head.weight))
'''


def write_project(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (directory / name).write_text(text)


def findings(directory: Path, code: str) -> list[str]:
    project = ProjectIndex.for_paths([str(directory)])
    selection = Selection.of({code: all_rules()[code]})
    return [
        f"{path.name}:{f.start.line}: {f.code}"
        for path in sorted(directory.glob("*.py"))
        for f in lint_path(str(path), selection, display_path=path.name, project=project)
    ]


def run(directory: Path, script: str) -> str:
    return subprocess.run([sys.executable, script], cwd=directory, capture_output=True, text=True, check=True).stdout


def test_ml405_the_encoder_a_helper_hands_the_optimizer_never_learns_and_without_the_detach_it_does(tmp_path):
    flagged, fixed = tmp_path / "flagged", tmp_path / "fixed"
    for directory, models in ((flagged, MODELS), (fixed, MODELS.replace("self.encoder(x).detach()", "self.encoder(x)"))):
        directory.mkdir()
        write_project(directory, {"models.py": models, "optim_utils.py": OPTIM_UTILS, "main.py": MAIN})
    assert findings(flagged, "ML405") == ["optim_utils.py:6: ML405"]
    assert run(flagged, "main.py").split() == ["True", "False"]  # the encoder never changes, the head does
    assert findings(fixed, "ML405") == []
    assert run(fixed, "main.py").split() == ["False", "False"]
