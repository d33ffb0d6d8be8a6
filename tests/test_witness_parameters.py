"""Witnesses of parameters that never train (ML414): the program's layers stay at their initial values
after optimizer steps, and the fixed program trains them and is not reported."""
import pytest
import torch

from tests.witness import example, family_findings, instead, run

STEPS = '''
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
first = [p.detach().clone() for layer in model.layers for p in layer.parameters()]
for _ in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = any(not torch.equal(a, p) for a, p in zip(first, (p for layer in model.layers for p in layer.parameters())))
'''


@pytest.mark.parametrize("program, trains", [(example("ML414"), False), (instead("ML414"), True)])
def test_ml414_layers_in_a_plain_list_never_train(program, trains):
    assert family_findings(program, "ML414") == ([] if trains else [(7, "ML414")])
    program = "import torch\n" + program + "\nmodel = MLP(2)\n" + STEPS
    if not trains:  # the optimizer sees no parameter at all here: give it one so that it can be built
        program = program.replace("model.parameters()", "[torch.nn.Parameter(torch.zeros(1))]")
    namespace = run(program)
    assert namespace["changed"] is trains
    assert (len(list(namespace["model"].parameters())) > 0) is trains
