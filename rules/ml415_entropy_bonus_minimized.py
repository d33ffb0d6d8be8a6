import ast

from mllint.analysis.facets.gradients import backward_loss, managed_losses
from mllint.analysis.facets.loss_terms import entropy_bonus_minimized, place_in
from mllint.analysis.facets.objectives import steps_after
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line


class EntropyBonusMinimized(Rule):
    """
    ## What it does
    Reports an entropy bonus added to an actor-critic loss with the sign of a cost: `loss = pg_loss +
    ent_coef * entropy` where `entropy` is `dist.entropy()`, `-(probs * log_probs).sum(-1)` or the mean
    of `-log_prob` (the entropy is -E[log p]; also of a helper's parameter `log_probs` given the policy's
    log-probabilities: `entropy_est = -log_probs.mean()`). The entropy is followed through the variables it is assigned to, the
    coefficients it is scaled by (`cfg["ent_coef"] * entropy` too) and the functions of the project that
    compute the loss or a part of it (`loss = ppo_loss(...)`, `actor, critic, entropy = compute_losses(...)`,
    `+ beta * entropy_bonus(logits)` in another module; a helper returning one term is read by its name
    too: `entropy_bonus(logp)` returning `-log_probs.mean()`), into the lists a step collects them in
    (`torch.stack(entropies).sum()`, and the items appended to a list of any name: `ents.append(ent)`
    with `_, _, ent = policy.act(obs)` returning `dist.entropy()`), and a policy's own `entropy(...)`
    method is the entropy however it computes it; `log_p.exp() * log_p` is `p log p`; a name bound to a
    number (`w=0.05`) is a coefficient. The loss must be backpropagated and stepped (or returned by a Lightning-style `training_step` or an
    HF `compute_loss` override that runs no backward itself: the library does), and hold a policy term
    (`pg_loss`, `policy_loss`, a term read from advantages or log-probabilities, or one whose values are
    log-probabilities by where they come from, weighted by returns or advantages: `chosen * rets` with `chosen =
    log_softmax(...).gather(1, a)`,
    PPO's `-torch.min(s1, s2)` with `s1 = ratio * adv`, stacked `dist.log_prob(a)` a policy method returns). `loss = pg_loss - ent_coef * entropy`, and
    `+ ent_coef * entropy_loss` where `entropy_loss = -entropy.mean()` (the negative entropy), are
    right and not reported; so is entropy minimization outside an actor-critic loss (semi-supervised
    and domain-adaptation losses minimize the entropy of predictions on purpose: a log-likelihood of the labels,
    `log_softmax(logits).gather(1, y)` or a focal loss, weighted by no return, is no policy term).

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
    message = "`{use}` {verb} the policy's entropy{where} and minimizing `{loss}` minimizes it: the bonus works against exploration; subtract it (`- coef * entropy`)"
    severity = Severity.ERROR
    requires_any_text = ("backward", "training_step", "compute_loss")  # the entropy may be computed in another module

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reported: set[ast.AST] = set()

    def visit_Call(self, node: ast.Call) -> None:
        loss = backward_loss(self.ctx, node)
        if loss is not None and steps_after(self.ctx, node):
            self._check(loss)

    def end_file(self) -> None:
        for _, loss in managed_losses(self.ctx):  # `training_step` returning the loss the library steps
            self._check(loss)

    def _check(self, loss: ast.AST) -> None:
        term = entropy_bonus_minimized(self.ctx, loss)
        if term is None or term.node in self._reported:  # a step's loss its caller backpropagates too
            return
        self._reported.add(term.node)
        entering = [u for u in term.uses if u is not loss]  # the first name read in the backpropagated sum
        use = entering[0] if entering else term.node
        home = term.ctx or self.ctx
        place = term.place(self.ctx)
        if term.added:  # where a function of the project adds it into the loss it returns
            node, path = term.added
            added = f", added at {path}:{node.lineno}" if path else f", added at {place_in(self.ctx, node, term.ctx, path)}"
        else:
            added = ""
        shown = use is not term.node and not isinstance(term.node, (ast.List, ast.Tuple))  # not the list it was appended to
        where = f" (`{one_line(home.text(term.node), 40)}`, {place}{added})" if shown else ""
        verb = "returns" if isinstance(use, ast.Call) else "is"
        message = self.message.format(use=one_line(self.ctx.text(use), 60), verb=verb, where=where, loss=one_line(self.ctx.text(loss), 30))
        self.report(use, message)
