import ast

from mllint.analysis.facets.gradients import backward_loss
from mllint.analysis.facets.objectives import STANDARD_LOSS, objective, place, steps_after
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line


class NegatedLossMinimized(Rule):
    """
    ## What it does
    Reports `backward()` on a standard torch loss negated as a whole (`-criterion(out, y)`,
    `-F.mse_loss(pred, y)`, `F.cross_entropy(...) * -1`), followed by an optimizer step, through local
    assignments, `loss /= k`, reductions, scalings and the return values of the project's functions
    (`loss = self.compute_loss(batch)`). A negated loss that is one term of a sum (`task_loss - lam *
    domain_loss`, an adversarial term), an attack that reads the input's gradient (`x.grad.sign()`) or
    clears the gradients before any step, WGAN losses (`-critic(fake).mean()`: no standard loss) and an
    optimizer built with `maximize=True` are not reported.

    ## Why is this bad?
    Gradient descent on the negated loss climbs the loss: the model is trained to be as wrong as it can
    be. The printed loss goes down (more and more negative), so the run looks healthy.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
    loss = -F.cross_entropy(model(inputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(inputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ```

    ## Fix safety
    There is no fix: a negated loss may be meant for another optimizer (an adversary); the author decides.
    """

    code = "ML409"
    name = "negated-loss-minimized"
    message = "`{loss}` is a negated standard loss{where}, then minimized: training climbs the loss; drop the minus sign"
    severity = Severity.ERROR
    requires_any_text = ("backward(",)

    def visit_Call(self, node: ast.Call) -> None:
        loss = backward_loss(self.ctx, node)
        if loss is None:
            return
        found = objective(self.ctx, loss)
        if found is None or found.kind != STANDARD_LOSS or found.sign > 0 or not steps_after(self.ctx, node):
            return
        self.report(node, self.message.format(loss=one_line(self.ctx.text(loss), 50), where=place(self.ctx, found, node)))
