"""Witness for ML418 on data a loop reuses: a generator helper that scales the `split` views of the tensor
it is given, in place, divides the training images by 255 again at every epoch; written out of place, the
images stay as they were made."""
import subprocess
import sys
from pathlib import Path

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path
from mllint.registry import all_rules

BATCHING = '''
def iterate_batches(images, labels, batch_size):
    for xb, yb in zip(images.split(batch_size), labels.split(batch_size)):
        xb.div_(255.0)
        yield xb, yb
'''
TRAIN = '''
import torch
import torch.nn.functional as F

from batching import iterate_batches

torch.manual_seed(0)
images = torch.randint(1, 256, (64, 4)).float()
labels = torch.randint(0, 2, (64,))
net = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(3):
    for xb, yb in iterate_batches(images, labels, 16):
        optimizer.zero_grad()
        F.cross_entropy(net(xb), yb).backward()
        optimizer.step()
    print(images.max().item())
'''


def findings(directory: Path) -> list[str]:
    project = ProjectIndex.for_paths([str(directory)])
    selection = Selection.of({"ML418": all_rules()["ML418"]})
    return [
        f"{path.name}:{f.start.line}: {f.code}"
        for path in sorted(directory.glob("*.py"))
        for f in lint_path(str(path), selection, display_path=path.name, project=project)
    ]


def maxima(directory: Path) -> list[float]:
    out = subprocess.run([sys.executable, "train.py"], cwd=directory, capture_output=True, text=True, check=True).stdout
    return [float(v) for v in out.split()]


def test_ml418_batches_scaled_in_place_shrink_the_stored_images_every_epoch_and_out_of_place_they_do_not(tmp_path):
    flagged, fixed = tmp_path / "flagged", tmp_path / "fixed"
    repaired = BATCHING.replace("xb.div_(255.0)", "xb = xb / 255.0")
    for directory, batching in ((flagged, BATCHING), (fixed, repaired)):
        directory.mkdir()
        (directory / "batching.py").write_text(batching)
        (directory / "train.py").write_text(TRAIN)
    assert findings(flagged) == ["batching.py:4: ML418"]
    first, second, third = maxima(flagged)
    assert first <= 1.0 and abs(second - first / 255) < 1e-6 and abs(third - second / 255) < 1e-9
    assert findings(fixed) == []
    assert maxima(fixed) == [255.0, 255.0, 255.0]
