"""Witness for ML417 on parts unfrozen later: an optimizer built over the parameters trainable while the
backbone is frozen never updates the backbone once it is unfrozen (its gradients are computed and
applied by nothing); with `add_param_group` at the unfreeze, the backbone trains."""
from tests.witness import printed, project_findings

FINETUNE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
model[0].requires_grad_(False)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
before = model[0].weight.clone()
for epoch in range(4):
    if epoch == 2:
        model[0].requires_grad_(True)
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(model[0].weight.grad is not None, torch.equal(before, model[0].weight))
'''
ADDED = "        model[0].requires_grad_(True)\n        opt.add_param_group({'params': model[0].parameters()})\n"


def test_ml417_a_backbone_unfrozen_after_the_optimizer_is_built_never_trains_and_added_to_it_does(tmp_path):
    flagged, fixed = tmp_path / "flagged", tmp_path / "fixed"
    for directory, text in ((flagged, FINETUNE), (fixed, FINETUNE.replace("        model[0].requires_grad_(True)\n", ADDED))):
        directory.mkdir()
        (directory / "finetune.py").write_text(text)
    assert project_findings(flagged, "ML417") == ["finetune.py:13: ML417"]
    assert printed(flagged, "finetune.py") == ["True", "True"]  # gradients computed, weights never changed
    assert project_findings(fixed, "ML417") == []
    assert printed(fixed, "finetune.py") == ["True", "False"]
