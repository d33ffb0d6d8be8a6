"""Witnesses of loss terms with the wrong sign (ML415): the policy's entropy falls where the bonus should
raise it, and rises once the sign is right."""
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
