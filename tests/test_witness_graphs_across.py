"""Witnesses for graphs kept or cut and in-place changes written as projects write them: a view of the forward
argument changed in place changes the caller's tensor; an `inplace=` read from a config's default rectifies
the skip connection; `total = total + loss` of a step's returned loss keeps the graph; a block built with
`activation="relu"` saves its output, which `+=` breaks; a penalty a model's forward sets detached trains
nothing."""
import pytest
import torch

from witness import run

VIEW = """
import torch
from torch import nn

class Coordinates(nn.Module):
    def forward(self, x):
        coords = x.narrow(1, 0, 2)
        coords.div_(10.0)
        return x.sum(1)

x = torch.full((3, 4), 10.0)
given = x.clone()
Coordinates()(x)
"""

CONFIG = """
from dataclasses import dataclass

import torch
from torch import nn

@dataclass
class Config:
    width: int = 4
    inplace: bool = True

class PreAct(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.act = nn.ReLU(inplace=cfg.inplace)
        self.fc = nn.Linear(cfg.width, cfg.width)

    def forward(self, x):
        return self.fc(self.act(x)) + x

block = PreAct(Config())
x = -torch.ones(2, 4)
given = x.clone()
with torch.no_grad():
    y = block(x)
    expected = block.fc(given.relu()) + given
"""

TOTAL = """
import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def step(x, y):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss

total = 0.0
for _ in range(3):
    loss = step(torch.randn(4, 3), torch.randn(4, 1))
    total = total + loss
"""

BLOCK = """
import torch
import torch.nn.functional as F
from torch import nn

class ConvAct(nn.Module):
    def __init__(self, c, activation="relu"):
        super().__init__()
        self.activation = activation
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, x):
        x = self.conv(x)
        if self.activation == "relu":
            return F.relu(x)
        return x

class ResPath(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.skip = ConvAct(c, activation="none")
        self.body = ConvAct(c)

    def forward(self, x):
        shortcut = self.skip(x)
        out = self.body(x)
        out += shortcut
        return out

ResPath(2)(torch.randn(1, 2, 3, 3)).sum().backward()
"""

ATTRIBUTE = """
import torch
import torch.nn.functional as F
from torch import nn

class AttnPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(4, 1)
        self.out = nn.Linear(4, 2)
        self.aux_loss = torch.zeros(())

    def forward(self, h):
        attn = torch.softmax(self.score(h).squeeze(-1), dim=1)
        a = attn.detach()
        self.aux_loss = -(a * torch.log(a + 1e-9)).sum(1).mean()
        return self.out(torch.einsum("bt,btd->bd", attn, h))

model = AttnPool()
logits = model(torch.randn(2, 5, 4))
loss = 0.0 * F.cross_entropy(logits, torch.tensor([0, 1])) + 0.1 * model.aux_loss
loss.backward()
seen.append(model.score.weight.grad.abs().sum().item())
"""


def test_a_view_of_the_argument_changed_in_place_changes_the_callers_tensor(lint):
    assert [f.code for f in lint(VIEW, "ML401")] == ["ML401"]
    flagged = run(VIEW)
    assert not torch.equal(flagged["x"], flagged["given"])
    fixed = VIEW.replace("        coords = x.narrow", "        x = x.clone()\n        coords = x.narrow")
    assert lint(fixed, "ML401") == []
    repaired = run(fixed)
    assert torch.equal(repaired["x"], repaired["given"])


def test_an_inplace_from_the_configs_default_rectifies_the_skip_connection(lint):
    assert [f.code for f in lint(CONFIG, "ML401")] == ["ML401"]
    flagged = run(CONFIG)
    assert not torch.allclose(flagged["y"], flagged["expected"]) and not torch.equal(flagged["x"], flagged["given"])
    fixed = CONFIG.replace("inplace: bool = True", "inplace: bool = False")
    assert lint(fixed, "ML401") == []
    repaired = run(fixed)
    assert torch.allclose(repaired["y"], repaired["expected"])


def test_a_total_of_the_returned_losses_keeps_their_graphs(lint):
    assert [f.code for f in lint(TOTAL, "ML207")] == ["ML207"]
    assert run(TOTAL)["total"].grad_fn is not None  # the graphs of every step, chained
    fixed = TOTAL.replace("total = total + loss", "total = total + loss.item()")
    assert lint(fixed, "ML207") == []
    assert isinstance(run(fixed)["total"], float)


def test_a_block_built_with_relu_saves_its_output_and_the_add_breaks_backward(lint):
    assert [f.code for f in lint(BLOCK, "ML406")] == ["ML406"]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(BLOCK)
    fixed = BLOCK.replace("out += shortcut", "out = out + shortcut")
    assert lint(fixed, "ML406") == []
    run(fixed)


def test_a_penalty_the_forward_sets_detached_trains_nothing(lint):
    assert [f.code for f in lint(ATTRIBUTE, "ML413")] == ["ML413"]
    assert run(ATTRIBUTE)["seen"] == [0.0]  # the attention scorer gets no gradient from the penalty
    fixed = ATTRIBUTE.replace("a = attn.detach()", "a = attn")
    assert lint(fixed, "ML413") == []
    assert run(fixed)["seen"][0] > 0


CALLER_HELD = """
import torch
from torch import nn
import torch.nn.functional as F

class PreActUnit(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x):
        out = self.relu(x)
        return self.conv(out)

class Stage(nn.Module):
    def __init__(self, ch, depth=2):
        super().__init__()
        self.shortcut = nn.Identity()
        self.units = nn.ModuleList([PreActUnit(ch) for _ in range(depth)])

    def forward(self, x):
        for unit in self.units:
            identity = self.shortcut(x)
            x = unit(x) + identity
            seen.append(identity.min().item())
        return x

stage = Stage(4)
x = torch.randn(2, 4, 5, 5) - 0.5
out = stage(x)
F.mse_loss(out, torch.zeros_like(out)).backward()
"""


def test_an_in_place_activation_in_a_child_changes_the_tensor_its_caller_holds(lint):
    """The child's in-place ReLU rewrites the tensor the stage keeps as its identity: the residual adds
    relu(x), never a negative value (and the stage's input is rectified too); with `inplace=False` the
    identity keeps the input's negative values and ML401 is silent."""
    findings = lint(CALLER_HELD, "ML401")
    assert [(f.code, f.start.line) for f in findings] == [("ML401", 13)]
    assert "`unit(x)` (line 25) reads `identity` after it" in findings[0].message
    ran = run(CALLER_HELD)
    assert ran["seen"][0] >= 0 and ran["x"].min() >= 0
    fixed = CALLER_HELD.replace("nn.ReLU(inplace=True)", "nn.ReLU(inplace=False)")
    assert lint(fixed, "ML401") == []
    ran = run(fixed)
    assert ran["seen"][0] < 0 and ran["x"].min() < 0


PENALTY_METHOD = """
import torch
from torch import nn
import torch.nn.functional as F

class Regressor(nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams
        self.net = nn.Linear(4, 1)

    def l1_penalty(self):
        total = sum(p.abs().sum() for n, p in self.net.named_parameters() if "weight" in n)
        return total.item()

    def training_step(self, batch):
        x, y = batch
        return F.mse_loss(self.net(x), y) + self.hparams["l1"] * self.l1_penalty()

module = Regressor({"l1": 1.0})
x = torch.randn(8, 4)
loss = module.training_step((x, torch.zeros(8, 1)))
loss.backward()
"""


def test_a_penalty_method_returning_a_float_adds_nothing_to_the_gradient(lint):
    """`l1_penalty()` returns `total.item()`: the loss grows by it but the weight's gradient is the MSE's
    alone; returning the tensor adds the L1 gradient (sign of the weight) and ML413 is silent."""
    findings = lint(PENALTY_METHOD, "ML413")
    assert [(f.code, f.start.line) for f in findings] == [("ML413", 22)]
    ran = run(PENALTY_METHOD)
    weight = ran["module"].net.weight
    mse_only = torch.nn.functional.mse_loss(ran["module"].net(ran["x"]), torch.zeros(8, 1))
    (expected,) = torch.autograd.grad(mse_only, weight)
    assert torch.allclose(weight.grad, expected)
    fixed = PENALTY_METHOD.replace("return total.item()", "return total")
    assert lint(fixed, "ML413") == []
    weight = run(fixed)["module"].net.weight
    assert torch.allclose(weight.grad, expected + weight.sign())


STEP_METER = """
import torch
from torch import nn
import torch.nn.functional as F

def psnr(pred, target):
    return 10 * torch.log10(1.0 / F.mse_loss(pred, target))

class RunningMean:
    def __init__(self):
        self.n, self.mean = 0, 0.0

    def update(self, v):
        self.n += 1
        self.mean = self.mean + (v - self.mean) / self.n

class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.01)
        self.meters = {"psnr": RunningMean()}

    def step(self, x, y):
        out = self.model(x)
        loss = F.l1_loss(out, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.meters["psnr"].update(psnr(out, y))
        return loss.item()

trainer = Trainer(nn.Linear(4, 4))
for _ in range(3):
    trainer.step(torch.randn(8, 4), torch.randn(8, 4))
kept = trainer.meters["psnr"].mean
"""


def test_a_step_function_handing_a_live_metric_to_a_kept_meter_chains_every_graph(lint):
    """`step` runs once per batch; the running mean its object keeps is computed from every step's live
    PSNR, so it holds their graphs; `.item()` keeps a float and ML207 is silent."""
    assert [(f.code, f.start.line) for f in lint(STEP_METER, "ML207")] == [("ML207", 29)]
    assert run(STEP_METER)["kept"].grad_fn is not None
    fixed = STEP_METER.replace("update(psnr(out, y))", "update(psnr(out, y).item())")
    assert lint(fixed, "ML207") == []
    assert isinstance(run(fixed)["kept"], float)


REWRAPPED = """
import torch
from torch import nn
import torch.nn.functional as F

def sequence_loss(preds, targets):
    per_seq = []
    for p, t in zip(preds, targets):
        per_seq.append(F.mse_loss(p, t))
    return torch.tensor(per_seq, requires_grad=True).mean()

model = nn.Linear(3, 3)
x, y = torch.randn(4, 5, 3), torch.randn(4, 5, 3)
loss = sequence_loss(model(x), y)
loss.backward()
"""


def test_a_list_of_losses_rewrapped_by_torch_tensor_trains_nothing(lint):
    """`torch.tensor(per_seq, requires_grad=True)` copies the per-sequence losses into a new leaf: backward
    stops there and the model's weight gets no gradient; `torch.stack` keeps the graph (ML4 silent)."""
    assert [(f.code, f.start.line) for f in lint(REWRAPPED, "ML404", "ML413")] == [("ML404", 15)]
    assert run(REWRAPPED)["model"].weight.grad is None
    fixed = REWRAPPED.replace("torch.tensor(per_seq, requires_grad=True)", "torch.stack(per_seq)")
    assert lint(fixed, "ML404", "ML413") == []
    assert run(fixed)["model"].weight.grad is not None


HELD_MODEL = """
import torch
from torch import nn
import torch.nn.functional as F

def consistency(model, views):
    base = model(views[0]).log_softmax(-1)
    terms = [F.kl_div(model(v).log_softmax(-1), base.exp(), reduction="batchmean") for v in views[1:]]
    return torch.tensor(terms).mean()

class Engine:
    def __init__(self):
        torch.manual_seed(0)
        self.model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to("cpu")

    def grads(self, x, y, lam):
        views = [x + 0.5 * torch.randn_like(x) for _ in range(3)]
        loss = F.cross_entropy(self.model(x), y) + lam * consistency(self.model, views)
        self.model.zero_grad()
        loss.backward()
        return self.model[0].weight.grad.clone()

engine = Engine()
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
torch.manual_seed(1)
with_term = engine.grads(x, y, 1.0)
torch.manual_seed(1)
without = engine.grads(x, y, 0.0)
"""


def test_a_term_a_helper_rewraps_from_the_engines_model_trains_nothing(lint):
    """The helper gets the model as `self.model` (built in `__init__`): its calls carry the graph, and
    `torch.tensor(terms)` cuts it; the consistency term changes no gradient."""
    assert [(f.code, f.start.line) for f in lint(HELD_MODEL, "ML413")] == [("ML413", 18)]
    flagged = run(HELD_MODEL)
    assert torch.equal(flagged["with_term"], flagged["without"])
    fixed = HELD_MODEL.replace("torch.tensor(terms).mean()", "torch.stack(terms).mean()")
    assert lint(fixed, "ML413") == []
    repaired = run(fixed)
    assert not torch.equal(repaired["with_term"], repaired["without"])
