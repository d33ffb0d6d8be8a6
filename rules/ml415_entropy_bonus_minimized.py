import ast

from mllint.analysis.facets.gradients import backward_loss
from mllint.analysis.facets.loss_terms import entropy_bonus_minimized
from mllint.analysis.facets.objectives import steps_after
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line


class EntropyBonusMinimized(Rule):
    """
    ## What it does
    Reports an entropy bonus added to an actor-critic loss with the sign of a cost: `loss = pg_loss +
    ent_coef * entropy` where `entropy` is `dist.entropy()`, `-(probs * log_probs).sum(-1)` or the mean
    of `-log_prob` (the entropy is -E[log p]), followed through the variables it is assigned to and the
    coefficients it is scaled by. The loss must be backpropagated and stepped, and hold a policy term
    (`pg_loss`, `policy_loss`, a term read from advantages). `loss = pg_loss - ent_coef * entropy`, and
    `+ ent_coef * entropy_loss` where `entropy_loss = -entropy.mean()` (the negative entropy), are
    right and not reported; so is entropy minimization outside an actor-critic loss (semi-supervised
    and domain-adaptation losses minimize the entropy of predictions on purpose).

    ## Why is this bad?
    The bonus is there to keep the policy exploring: minimizing the loss should *maximize* the entropy.
    With the sign flipped, the optimizer drives the entropy down, the policy collapses early onto a few
    actions and stops exploring; training runs and the returns plateau low. Nothing fails.

    ## Example
    ```python
    def ppo_step(optimizer, dist, actions, advantages, ent_coef=0.01):
        pg_loss = -(dist.log_prob(actions) * advantages).mean()
        entropy = dist.entropy().mean()
        loss = pg_loss + ent_coef * entropy
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    def ppo_step(optimizer, dist, actions, advantages, ent_coef=0.01):
        pg_loss = -(dist.log_prob(actions) * advantages).mean()
        entropy = dist.entropy().mean()
        loss = pg_loss - ent_coef * entropy
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    There is no fix: where the sign belongs (the term, the coefficient, the name) is the author's call.
    """

    code = "ML415"
    name = "entropy-bonus-minimized"
    message = "`{use}` is the policy's entropy{where} and minimizing `{loss}` minimizes it: the bonus works against exploration; subtract it (`- coef * entropy`)"
    severity = Severity.ERROR
    requires_any_text = ("entrop", "log")

    def visit_Call(self, node: ast.Call) -> None:
        loss = backward_loss(self.ctx, node)
        if loss is None:
            return
        term = entropy_bonus_minimized(self.ctx, loss)
        if term is None or not steps_after(self.ctx, node):
            return
        entering = [u for u in term.uses if u is not loss]  # the first name read in the backpropagated sum
        use = entering[0] if entering else term.node
        where = "" if use is term.node else f" (`{one_line(self.ctx.text(term.node), 40)}`, line {term.node.lineno})"
        message = self.message.format(use=self.ctx.text(use), where=where, loss=one_line(self.ctx.text(loss), 30))
        self.report(use, message)
