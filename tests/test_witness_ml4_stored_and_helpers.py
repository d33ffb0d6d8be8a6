"""Witnesses for the autograd classes read across functions (fixtures ml418_stored_data, ml4_terms_holders,
ml4_wgan_helpers, ml207_objects_keep): each flagged program misbehaves under torch as the message says,
and its repair does not. CPU only."""
import torch

from witness import family_findings, run

STORED_AUGMENTATION = """\
import torch


class Clouds(torch.utils.data.Dataset):
    def __init__(self, points):
        self.points = points

    def __len__(self):
        return len(self.points)

    def __getitem__(self, index):
        cloud = self.points[index]
        cloud[:, :3] *= 1.1
        return cloud


data = Clouds(torch.ones(4, 5, 6))
for epoch in range(3):
    for i in range(len(data)):
        seen.append(data[i][0, 0].item())
"""


def test_an_augmentation_through_an_indexed_sample_compounds_on_the_stored_data():
    assert family_findings(STORED_AUGMENTATION, "ML418") == [(13, "ML418")]
    flagged = run(STORED_AUGMENTATION)["seen"]
    assert abs(flagged[-1] - 1.1**3) < 1e-5  # the third epoch sees the scale applied three times
    repaired = STORED_AUGMENTATION.replace("self.points[index]\n", "self.points[index].clone()\n")
    assert family_findings(repaired, "ML418") == []
    assert all(abs(v - 1.1) < 1e-6 for v in run(repaired)["seen"])


STANDARDIZED_TWICE = """\
import torch


class Evaluator:
    def __init__(self, X):
        self.val_x = X[2:]
        self.mean, self.std = X[:2].mean(), X[:2].std()

    def _scale(self, batch):
        flat = batch.view(batch.shape[0], -1)
        flat.sub_(self.mean).div_(self.std)
        return batch

    def evaluate(self):
        return self._scale(self.val_x).mean().item()


ev = Evaluator(torch.arange(12.0).view(4, 3))
seen.extend(ev.evaluate() for _ in range(2))
"""


def test_a_helper_standardizing_its_argument_through_a_view_changes_the_kept_validation_set():
    assert family_findings(STANDARDIZED_TWICE, "ML418") == [(11, "ML418")]
    first, second = run(STANDARDIZED_TWICE)["seen"]
    assert first != second  # the second evaluation standardizes the standardized data
    repaired = STANDARDIZED_TWICE.replace("flat = batch.view", "batch = batch.clone()\n        flat = batch.view")
    assert family_findings(repaired, "ML418") == []
    first, second = run(repaired)["seen"]
    assert first == second


DICT_TERM = """\
import torch


class VAE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.enc(x)
        kl = h.pow(2).mean()
        return {"loss": (h - x).pow(2).mean() + kl.item()}


model = VAE()
x = torch.randn(8, 4)
out = model(x)
out["loss"].backward()
seen.append(model.enc.weight.grad.clone())
"""


def test_a_term_cut_in_the_dict_a_forward_returns_adds_no_gradient():
    assert family_findings(DICT_TERM, "ML413") == [(17, "ML413")]
    flagged = run(DICT_TERM)["seen"][0]
    repaired = DICT_TERM.replace("kl.item()", "kl")
    assert family_findings(repaired, "ML413") == []
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    x = torch.randn(8, 4)
    h = model(x)
    ((h - x).pow(2).mean()).backward()
    assert torch.allclose(flagged, model.weight.grad)  # exactly the gradient without the KL term
    assert not torch.allclose(run(repaired)["seen"][0], flagged)


NO_GRAD_FAKE = """\
import torch

netG, netD = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
optG = torch.optim.SGD(netG.parameters(), lr=0.1)
optD = torch.optim.SGD(netD.parameters(), lr=0.1)
one = torch.tensor(1.0)
mone = -one
for it in range(2):
    optD.zero_grad()
    netD(torch.randn(8, 2)).mean().backward(one)
    with torch.no_grad():
        fake = netG(torch.randn(8, 2))
    netD(fake).mean().backward(mone)
    optD.step()
    optG.zero_grad()
    errG = netD(netG(torch.randn(8, 2))).mean()
    errG.backward(mone)
    seen.append(netD.weight.detach().clone() @ netG.weight.grad.sum(0))
    optG.step()
"""


def test_a_generator_seeded_like_the_critics_fake_term_pushes_the_score_the_same_way():
    assert family_findings(NO_GRAD_FAKE, "ML4") == [(16, "ML416")]
    assert family_findings(NO_GRAD_FAKE, "ML2") == []  # the generator's backward(mone) is its backward
    run(NO_GRAD_FAKE)
    repaired = NO_GRAD_FAKE.replace("errG.backward(mone)", "errG.backward(one)")
    assert family_findings(repaired, "ML4") == []
    torch.manual_seed(0)
    netG, netD = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
    z = torch.randn(8, 2)
    before = netD(netG(z)).mean().item()
    netD(netG(z)).mean().backward(-torch.tensor(1.0))  # as flagged: gradient ascent on D(fake) ...
    with torch.no_grad():
        for p in netG.parameters():
            p -= 0.1 * p.grad
    assert netD(netG(z)).mean().item() > before  # ... raises D(fake), as the critic's mone does
