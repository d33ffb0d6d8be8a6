"""Witnesses for facts carried through value-preserving structure: an `nn.Sequential` ending in a head of the
project (or in `nn.Identity`/`nn.Dropout`) outputs what that head (or the layer before) outputs; a local
alias of a submodule is the submodule; a live metric of the model's output, or a step's returned record of
live losses, kept across iterations keeps every iteration's graph; an entropy list joined into the loss
is the entropy term. Each flagged program runs under torch and shows the fact; the repaired one does not."""
import torch

from witness import run

HEAD = """
import torch
from torch import nn

class Head(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.fc = nn.Linear(d, k)
        self.out = nn.Softmax(dim=1)

    def forward(self, x):
        return self.out(self.fc(x))

model = nn.Sequential(nn.Sequential(nn.Linear(8, 8), nn.ReLU()), Head(8, 4), nn.Dropout(0.0))
criterion = nn.CrossEntropyLoss()
x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
scores = model(x)
loss = criterion(scores, y)
loss.backward()
"""


def test_a_sequential_ending_in_a_softmax_head_outputs_probabilities(lint):
    assert [f.code for f in lint(HEAD, "ML101")] == ["ML101"]
    scores = run(HEAD)["scores"]
    assert torch.allclose(scores.sum(dim=1), torch.ones(16))  # what CrossEntropyLoss takes for logits
    repaired = HEAD.replace("self.out = nn.Softmax(dim=1)", "self.out = nn.Identity()")
    assert lint(repaired, "ML101") == []
    assert not torch.allclose(run(repaired)["scores"].sum(dim=1), torch.ones(16))


IDENTITY = """
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Sequential(nn.Linear(8, 4), getattr(nn, "Identity")())
x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
scores = model(x)
loss = F.nll_loss(scores, y)
"""


def test_identity_at_the_end_passes_raw_logits_to_nll_loss(lint):
    assert [f.code for f in lint(IDENTITY, "ML102")] == ["ML102"]
    flagged = run(IDENTITY)
    assert flagged["scores"].logsumexp(dim=1).abs().max() > 1e-3  # not log-probabilities
    assert flagged["loss"].item() != torch.nn.functional.cross_entropy(flagged["scores"], flagged["y"]).item()
    repaired = IDENTITY.replace('getattr(nn, "Identity")()', 'getattr(nn, "LogSoftmax")(dim=1)')
    assert lint(repaired, "ML102") == []
    assert run(repaired)["scores"].logsumexp(dim=1).abs().max() < 1e-5


ALIAS = """
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.encoder(x))

def prepare(model):
    return model

def freeze_encoder(model):
    enc = model.encoder
    enc.requires_grad = False
    return model

model = freeze_encoder(prepare(Net()))
trainable = [n for n, p in model.named_parameters() if p.requires_grad]
"""


def test_an_alias_of_a_submodule_given_requires_grad_freezes_nothing(lint, fix):
    assert [f.code for f in lint(ALIAS, "ML411")] == ["ML411"]
    assert "encoder.weight" in run(ALIAS)["trainable"]
    fixed = fix(ALIAS, "ML411")
    assert "enc.requires_grad_(False)" in fixed and lint(fixed, "ML411") == []
    assert run(fixed)["trainable"] == ["head.weight", "head.bias"]


METRIC = """
import torch
import torch.nn.functional as F
from torch import nn

def psnr(sr, hr):
    return 10 * torch.log10(1.0 / F.mse_loss(sr, hr))

class Dice:
    def process(self, logits, masks):
        probs = torch.sigmoid(logits)
        return {"dice": 2 * (probs * masks).sum() / (probs.sum() + masks.sum())}

net = nn.Conv2d(3, 3, 3, padding=1)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
history, totals, metric = [], {}, Dice()
for step in range(4):
    hr = torch.rand(2, 3, 8, 8)
    sr = net(hr)
    loss = F.l1_loss(sr, hr)
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(psnr(sr, hr))
    for k, v in metric.process(sr, hr).items():
        totals[k] = totals.get(k, 0) + v
kept = [*history, *totals.values()]
"""


def test_a_live_metric_kept_across_iterations_keeps_every_graph(lint):
    assert [f.code for f in lint(METRIC, "ML207")] == ["ML207", "ML207"]
    assert all(v.grad_fn is not None for v in run(METRIC)["kept"])
    repaired = METRIC.replace("psnr(sr, hr))", "psnr(sr, hr).item())").replace("+ v\n", "+ v.item()\n")
    assert lint(repaired, "ML207") == []
    assert all(isinstance(v, float) for v in run(repaired)["kept"])


RECORDS = """
import torch
import torch.nn.functional as F
from torch import nn

model = nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def step(batch):
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"loss": loss, "n": len(y)}

history = []
for batch in [(torch.randn(16, 8), torch.randint(0, 4, (16,))) for _ in range(4)]:
    history.append(step(batch))
mean = sum(h["loss"] for h in history) / len(history)
"""


def test_a_returned_record_of_live_losses_kept_whole_keeps_every_graph(lint):
    assert [f.code for f in lint(RECORDS, "ML207")] == ["ML207"]
    flagged = run(RECORDS)
    assert all(h["loss"].grad_fn is not None for h in flagged["history"]) and flagged["mean"].grad_fn is not None
    repaired = RECORDS.replace('{"loss": loss,', '{"loss": loss.item(),')
    assert lint(repaired, "ML207") == []
    assert isinstance(run(repaired)["mean"], float)


ENTROPY = """
import torch
from torch import nn
from torch.distributions import Categorical

torch.manual_seed(0)
policy = nn.Linear(4, 3)
optimizer = torch.optim.SGD(policy.parameters(), lr=0.5)
obs = torch.randn(8, 4)

def entropy_now():
    return Categorical(logits=policy(obs)).entropy().mean().item()

before = entropy_now()
for episode in range(20):
    logps, ents = [], []
    for t in range(8):
        dist = Categorical(logits=policy(obs[t]))
        a = dist.sample()
        logps.append(dist.log_prob(a))
        ents.append(dist.entropy())
    pg = -(torch.stack(logps) * 0.0).sum()
    loss = pg + 0.1 * torch.stack(ents).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
after = entropy_now()
"""


def test_an_entropy_list_added_to_the_loss_drives_the_entropy_down(lint):
    assert [f.code for f in lint(ENTROPY, "ML415")] == ["ML415"]
    flagged = run(ENTROPY)
    assert flagged["after"] < flagged["before"]
    repaired = ENTROPY.replace("pg + 0.1 *", "pg - 0.1 *")
    assert lint(repaired, "ML415") == []
    repaired_run = run(repaired)
    assert repaired_run["after"] > repaired_run["before"]
