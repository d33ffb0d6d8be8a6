"""Witnesses of loss terms with the wrong sign: the policy's entropy falls where the bonus should raise it
(ML415), the generator drifts away from the data when the critic's signs agree (ML416); with the signs
right, the entropy rises and the generator settles on the data."""
import pytest

from tests.witness import example, family_findings, instead, run

HARNESS = '''
from torch.distributions import Categorical

logits = torch.nn.Parameter(torch.tensor([2.0, 0.0, -1.0]))
optimizer = torch.optim.SGD([logits], lr=1.0)
start = Categorical(logits=logits).entropy().item()
for _ in range(20):
    dist = Categorical(logits=logits.expand(8, 3))
    ppo_step(optimizer, dist, dist.sample(), torch.zeros(8), ent_coef=0.1)  # no advantage: only the bonus acts
end = Categorical(logits=logits).entropy().item()
'''


@pytest.mark.parametrize("program, explores", [(example("ML415"), False), (instead("ML415"), True)])
def test_ml415_an_entropy_bonus_added_to_the_loss_collapses_the_policy(program, explores):
    assert family_findings(program, "ML415") == ([] if explores else [(4, "ML415")])
    namespace = run("import torch\n" + program + HARNESS)
    assert (namespace["end"] > namespace["start"]) is explores


WGAN_HARNESS = '''
netG = torch.nn.Linear(1, 1)
with torch.no_grad():
    netG.weight.fill_(1.0)
    netG.bias.fill_(0.0)
netG.weight.requires_grad_(False)  # the generator shifts its noise: only its offset learns
netD = torch.nn.Linear(1, 1, bias=False)
opt_d = torch.optim.SGD(netD.parameters(), lr=0.05)
opt_g = torch.optim.SGD([netG.bias], lr=0.05)
for _ in range(400):
    wgan_step(netD, netG, opt_d, opt_g, 3.0 + 0.1 * torch.randn(64, 1), 0.1 * torch.randn(64, 1))
    with torch.no_grad():
        netD.weight.clamp_(-1.0, 1.0)
gap = abs(netG.bias.item() - 3.0)  # how far the generated samples' mean is from the real one
'''


@pytest.mark.parametrize("program, converges", [(example("ML416"), False), (instead("ML416"), True)])
def test_ml416_a_critic_whose_signs_agree_drives_the_generator_away(program, converges):
    assert family_findings(program, "ML416") == ([] if converges else [(3, "ML416")])
    gap = run("import torch\n" + program + WGAN_HARNESS)["gap"]
    assert (gap < 5.0) is converges  # right: within 1 of the real mean; wrong: past 30
