"""Witnesses for ML413 on two forms of a cut term: a penalty summed over the parameters from a Python
number and returned as `float(...)`, and a sum of terms divided by the batch size (`x.size(0)`) whose
one term is computed on `.data`. The cut term moves the loss but no gradient; without the cut it trains."""
import torch

from witness import run

SEEDED_PENALTY = """
import torch
import torch.nn.functional as F

def group_sparsity(model):
    penalty = 0.0
    for name, p in model.named_parameters():
        if name.endswith("weight"):
            penalty = penalty + p.norm(dim=0).sum()
    return float(penalty)

model = torch.nn.Linear(4, 3)
inputs, labels = torch.randn(32, 4), torch.randint(0, 3, (32,))
loss = F.cross_entropy(model(inputs), labels) + 0.5 * group_sparsity(model)
loss.backward()
gradient = model.weight.grad.clone()
model.zero_grad()
F.cross_entropy(model(inputs), labels).backward()
without_term = model.weight.grad.clone()
"""


def test_a_penalty_seeded_by_a_number_and_cut_by_float_trains_nothing(lint):
    assert [(f.start.line, f.code) for f in lint(SEEDED_PENALTY, "ML413")] == [(14, "ML413")]
    flagged = run(SEEDED_PENALTY)
    assert torch.equal(flagged["gradient"], flagged["without_term"])
    fixed = SEEDED_PENALTY.replace("return float(penalty)", "return penalty")
    assert lint(fixed, "ML413") == []
    repaired = run(fixed)
    assert not torch.allclose(repaired["gradient"], repaired["without_term"])


SCALED_SUM = """
import torch
import torch.nn.functional as F

encoder, decoder = torch.nn.Linear(8, 2), torch.nn.Linear(2, 8)
x = torch.rand(16, 8)
z = encoder(x)
recon_logits = decoder(z)
rec = F.binary_cross_entropy_with_logits(recon_logits.data, x, reduction="sum")
kld = 0.5 * z.pow(2).sum()
loss = (rec + kld) / x.size(0)
loss.backward()
gradient = decoder.weight.grad
"""


def test_a_term_cut_inside_a_sum_divided_by_the_batch_size_trains_nothing(lint):
    assert [(f.start.line, f.code) for f in lint(SCALED_SUM, "ML413")] == [(9, "ML413")]
    assert run(SCALED_SUM)["gradient"] is None  # the decoder gets no gradient at all
    fixed = SCALED_SUM.replace("recon_logits.data", "recon_logits")
    assert lint(fixed, "ML413") == []
    assert run(fixed)["gradient"].abs().sum() > 0
