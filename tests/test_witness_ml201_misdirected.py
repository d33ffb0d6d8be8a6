"""Witness for ML201 at a misdirected clear: the generator phase clears the critic's optimizer again
instead of the generator's, so the generator's gradients grow with every batch; the fix clears the
generator's optimizer at that line and each batch's gradient is its own."""
import torch

from witness import run

PROGRAM = """
import torch

torch.manual_seed(0)
gen, disc = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
opt_g = torch.optim.SGD(gen.parameters(), lr=0.0)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.0)
z, real = torch.randn(8, 2), torch.randn(8, 2)
for _ in range(3):
    fake = gen(z)
    opt_d.zero_grad()
    d_loss = disc(fake.detach()).mean() - disc(real).mean()
    d_loss.backward()
    opt_d.step()
    opt_d.zero_grad()
    g_loss = -disc(fake).mean()
    g_loss.backward()
    opt_g.step()
    seen.append(gen.weight.grad.clone())
"""


def test_the_generator_gradients_grow_until_its_own_optimizer_is_cleared(lint, fix):
    assert [(f.start.line, f.code) for f in lint(PROGRAM, "ML201")] == [(15, "ML201")]
    grads = run(PROGRAM)["seen"]
    assert torch.allclose(grads[2], 3 * grads[0])  # lr 0: identical batches, the sum of three
    fixed = fix(PROGRAM, "ML201", unsafe=True)
    assert "    opt_g.zero_grad()\n    g_loss" in fixed
    assert lint(fixed, "ML201") == []
    grads = run(fixed)["seen"]
    assert all(torch.allclose(g, grads[0]) for g in grads)
