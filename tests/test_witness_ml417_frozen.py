"""Witness for ML417 on a frozen fresh head: a linear probe that freezes its new classifier instead of the
encoder trains the encoder and leaves the classifier at its random initialisation; freezing the encoder,
the classifier trains."""
import subprocess
import sys
from pathlib import Path

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path
from mllint.registry import all_rules

MODELS = '''
import torch.nn as nn


class Probe(nn.Module):
    def __init__(self, d_in, d, n_cls):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, d), nn.ReLU())
        self.classifier = nn.Linear(d, n_cls)

    def forward(self, x):
        return self.classifier(self.encoder(x))


def build_probe(d_in, d, n_cls):
    return Probe(d_in, d, n_cls)
'''
PROBE = '''
import torch
import torch.nn.functional as F

from models import build_probe

torch.manual_seed(0)
net = build_probe(8, 16, 3)
for param in net.classifier.parameters():
    param.requires_grad = False
opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1)
encoder, classifier = net.encoder[0].weight.clone(), net.classifier.weight.clone()
for _ in range(5):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(torch.equal(encoder, net.encoder[0].weight), torch.equal(classifier, net.classifier.weight))
'''


def findings(directory: Path) -> list[str]:
    project = ProjectIndex.for_paths([str(directory)])
    selection = Selection.of({"ML417": all_rules()["ML417"]})
    return [
        f"{path.name}:{f.start.line}: {f.code}"
        for path in sorted(directory.glob("*.py"))
        for f in lint_path(str(path), selection, display_path=path.name, project=project)
    ]


def unchanged(directory: Path) -> list[str]:
    return subprocess.run([sys.executable, "probe.py"], cwd=directory, capture_output=True, text=True, check=True).stdout.split()


def test_ml417_a_probe_freezing_its_fresh_classifier_never_trains_it_and_freezing_the_encoder_does(tmp_path):
    flagged, fixed = tmp_path / "flagged", tmp_path / "fixed"
    for directory, probe in ((flagged, PROBE), (fixed, PROBE.replace("net.classifier.parameters()", "net.encoder.parameters()"))):
        directory.mkdir()
        (directory / "models.py").write_text(MODELS)
        (directory / "probe.py").write_text(probe)
    assert findings(flagged) == ["probe.py:9: ML417"]
    assert unchanged(flagged) == ["False", "True"]  # the encoder trains, the random classifier never does
    assert findings(fixed) == []
    assert unchanged(fixed) == ["True", "False"]
