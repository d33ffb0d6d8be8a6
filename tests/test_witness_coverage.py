"""Witnesses of parameters that train when they should not, or never train when they should: the flag
set on `.data` (ML419), an optimizer that misses a part the forward runs (ML417), a clear of one part of
the model only (ML201). Each program shows the misbehaviour under torch; its fix shows none and is not
reported."""
import pytest
import torch

from mllint.engine import Selection, lint_text
from mllint.fixer import fix_text
from tests.witness import example, family_findings, instead, run

STEP = '''
before = embed.weight.detach().clone()
optimizer = torch.optim.SGD([p for p in embed.parameters() if p.requires_grad] or [torch.nn.Parameter(torch.zeros(1))], lr=0.1)
(embed(torch.tensor([1, 2])).sum() + optimizer.param_groups[0]["params"][0].sum()).backward()
optimizer.step()
changed = not torch.equal(before, embed.weight)
'''


@pytest.mark.parametrize("program, frozen", [(example("ML419"), False), (instead("ML419"), True)])
def test_ml419_the_flag_set_on_data_leaves_the_parameter_training(program, frozen):
    assert family_findings(program, "ML419") == ([] if frozen else [(4, "ML419")])
    namespace = run(program + STEP)
    assert namespace["embed"].weight.requires_grad is not frozen
    assert namespace["changed"] is not frozen


CHAINED = '''
import itertools
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 4)
        self.bottleneck = nn.Linear(4, 4)
        self.decoder = nn.Linear(4, 8)

    def forward(self, x):
        return self.decoder(self.bottleneck(self.encoder(x)))


model = AutoEncoder()
optimizer = torch.optim.SGD(itertools.chain(model.encoder.parameters(), model.decoder.parameters()), lr=0.1)
before = model.bottleneck.weight.detach().clone()
for _ in range(3):
    x = torch.randn(16, 8)
    loss = (model(x) - x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = not torch.equal(before, model.bottleneck.weight)
'''


def test_ml417_a_part_forward_runs_left_out_of_a_chain_never_trains():
    assert family_findings(CHAINED, "ML417") == [(19, "ML417")]
    namespace = run(CHAINED)
    assert namespace["changed"] is False and namespace["model"].bottleneck.weight.grad is not None
    fixed = CHAINED.replace("model.decoder.parameters())", "model.bottleneck.parameters(), model.decoder.parameters())")
    assert fixed != CHAINED and family_findings(fixed, "ML417") == []
    assert run(fixed)["changed"] is True


PART_CLEARED = '''
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Detector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
x = torch.randn(8, 4)
for _ in range(3):
    model.backbone.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    seen.append((model.backbone.weight.grad.clone(), model.head.weight.grad.clone()))
'''


def test_ml201_clearing_the_backbone_only_lets_the_rest_of_the_model_accumulate():
    assert family_findings(PART_CLEARED, "ML2") == [(23, "ML201")]
    seen = run(PART_CLEARED)["seen"]
    assert torch.allclose(seen[2][0], seen[0][0]) and torch.allclose(seen[2][1], 3 * seen[0][1])
    fixed = PART_CLEARED.replace("model.backbone.zero_grad()", "model.zero_grad()")
    assert family_findings(fixed, "ML2") == []
    seen = run(fixed)["seen"]
    assert torch.allclose(seen[2][1], seen[0][1])


UNREAD_GROUPS = '''
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
groups = [
    {"params": model[0].parameters(), "lr": 0.01},
    {"params": model[1].parameters(), "lr": 0.1},
]
optimizer = torch.optim.SGD(model[0].parameters(), lr=0.1)
before = model[1].weight.detach().clone()
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
trained = not torch.equal(before, model[1].weight)
'''


def test_ml417_a_list_of_groups_never_read_leaves_its_parameters_untrained():
    assert family_findings(UNREAD_GROUPS, "ML417") == [(8, "ML417")]
    assert run(UNREAD_GROUPS)["trained"] is False
    fixed = UNREAD_GROUPS.replace("SGD(model[0].parameters(), lr=0.1)", "SGD(groups, lr=0.1)")
    assert family_findings(fixed, "ML417") == []
    assert run(fixed)["trained"] is True


ENSEMBLE = '''
import torch
import torch.nn as nn


def make_members(k):
    return nn.ModuleList(nn.Linear(4, 1) for _ in range(k))


class Ensemble(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = list(members)
        self.mix = nn.Linear(len(self.members), 1)

    def forward(self, x):
        return self.mix(torch.cat([m(x) for m in self.members], dim=1))


model = Ensemble(make_members(3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
before = model.members[0].weight.detach().clone()
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
trained = not torch.equal(before, model.members[0].weight)
'''


def test_ml414_modules_given_to_init_kept_in_a_plain_list_never_train():
    assert family_findings(ENSEMBLE, "ML414") == [(13, "ML414")]
    assert run(ENSEMBLE)["trained"] is False
    fixed = ENSEMBLE.replace("self.members = list(members)", "self.members = nn.ModuleList(members)")
    assert family_findings(fixed, "ML414") == []
    assert run(fixed)["trained"] is True


LEARNER = '''
import copy
import torch
import torch.nn as nn


class Learner:
    def __init__(self, encoder):
        self.encoder, self.projector, self.predictor = encoder, nn.Linear(4, 4), nn.Linear(4, 4)
        self.target = copy.deepcopy(nn.Sequential(encoder, self.projector)).requires_grad_(False)
        self.optimizer = torch.optim.SGD(list(self.encoder.parameters()) + list(self.predictor.parameters()), lr=0.1)

    def step(self, x):
        with torch.no_grad():
            z = self.target(x)
        loss = (self.predictor(self.projector(self.encoder(x))) - z).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


learner = Learner(nn.Linear(4, 4))
before = learner.projector.weight.detach().clone()
for _ in range(3):
    learner.step(torch.randn(8, 4))
trained = not torch.equal(before, learner.projector.weight)
'''


def test_ml417_a_learner_whose_optimizer_misses_the_projector_its_loss_runs_never_trains_it():
    assert family_findings(LEARNER, "ML417") == [(11, "ML417")]
    namespace = run(LEARNER)
    assert namespace["trained"] is False and namespace["learner"].projector.weight.grad is not None
    fixed = LEARNER.replace("+ list(self.predictor.parameters())", "+ list(self.projector.parameters()) + list(self.predictor.parameters())")
    assert fixed != LEARNER and family_findings(fixed, "ML417") == []
    assert run(fixed)["trained"] is True


SCALES = '''
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
        self.scales = [nn.Parameter(torch.ones(4)) for _ in range(2)]

    def forward(self, x):
        for layer, scale in zip(self.layers, self.scales):
            x = layer(x) * scale
        return x


model = Scaled()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
trained = not torch.equal(model.scales[0].detach(), torch.ones(4))
'''


def test_ml414_parameters_kept_in_a_plain_list_never_train():
    assert family_findings(SCALES, "ML414") == [(10, "ML414")]
    assert run(SCALES)["trained"] is False
    selection = Selection.of(["ML414"])
    fixed = fix_text(SCALES, lambda text: lint_text(text, "witness.py", selection), unsafe=True).text
    assert "self.scales = nn.ParameterList([nn.Parameter(torch.ones(4)) for _ in range(2)])" in fixed
    assert family_findings(fixed, "ML414") == []
    assert run(fixed)["trained"] is True
