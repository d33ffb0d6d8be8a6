import ast

from mllint.analysis.facets.gradients import backward_loss
from mllint.analysis.facets.objectives import LOG_LIKELIHOOD, objective, place, steps_after
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line


class LogLikelihoodMinimized(Rule):
    """
    ## What it does
    Reports `backward()` on a loss that is a log-likelihood with a plus sign, followed by an optimizer step:
    `dist.log_prob(y).mean()`, `F.log_softmax(out, 1).gather(1, y).mean()`, `torch.log(probs[a]) * reward`,
    the policy-gradient term `(log_prob * advantage).mean()` (also as the policy term of an actor-critic sum
    such as `policy_loss + c * value_loss - beta * entropy`), followed through local assignments, `loss /=
    k`, reductions, scalings and the return values of the project's functions (in any module: `from flows
    import nll_loss`). A normalizing flow's `log_prob(z) + logdet` (log-determinants added) is one
    log-likelihood, and so are a method named for one (`model.base_log_prob(z)`) and a Gaussian log-density
    written out (`-0.5 * (z ** 2).sum(1) - 0.5 * d * math.log(2 * math.pi)`). A negated log-likelihood
    (`-log_prob.mean()`, `F.nll_loss`), a log-likelihood among other terms that is no policy-gradient term
    (`alpha * log_pi - q` in SAC), a log-likelihood weighted by probabilities (an entropy), the log of `1 -
    d_prob` (a minimax GAN generator), an optimizer built with `maximize=True`, and a backward whose
    gradients are cleared or read (`x.grad`) before the step are not reported.

    ## Why is this bad?
    A likelihood is maximized; gradient descent on it as written makes the observed data (or the
    actions that paid off) less likely. The loss goes down, nothing fails, and the model learns the
    opposite of what was meant.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    inputs, targets = torch.randn(8, 4), torch.randn(8)
    dist = torch.distributions.Normal(model(inputs).squeeze(1), 1.0)
    loss = dist.log_prob(targets).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    inputs, targets = torch.randn(8, 4), torch.randn(8)
    dist = torch.distributions.Normal(model(inputs).squeeze(1), 1.0)
    loss = -dist.log_prob(targets).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ```

    ## Fix safety
    There is no fix: where the minus sign goes (the loss, the advantage, the optimizer's `maximize`) is
    for the author to decide.
    """

    code = "ML408"
    name = "log-likelihood-minimized"
    message = "`{loss}` is a log-likelihood{where}, minimized as written: training makes the data less likely; negate it"
    severity = Severity.ERROR
    requires_any_text = ("backward(",)

    def visit_Call(self, node: ast.Call) -> None:
        loss = backward_loss(self.ctx, node)
        if loss is None:
            return
        found = objective(self.ctx, loss)
        if found is None or found.kind != LOG_LIKELIHOOD or found.sign < 0 or not steps_after(self.ctx, node):
            return
        self.report(node, self.message.format(loss=one_line(self.ctx.text(loss), 50), where=place(self.ctx, found, node)))
