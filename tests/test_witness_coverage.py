"""Witnesses of parameters that train when they should not, or never train when they should: the flag
set on `.data` (ML419), an optimizer that misses a part the forward runs (ML417), a clear of one part of
the model only (ML201). Each program shows the misbehaviour under torch; its fix shows none and is not
reported."""
import pytest
import torch

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
