
from mllint.analysis.facets.loss_terms import CriticTerm, critic_terms
from mllint.findings import Related, Severity
from mllint.rule import Rule
from mllint.source import one_line


class CriticSignsAgree(Rule):
    """
    ## What it does
    Reports a WGAN-style objective whose signs do not oppose: the critic's score of generated samples
    minimized with the same sign in the critic's step and in the generator's step (`d_loss =
    -D(real).mean() - D(fake.detach()).mean()` with `g_loss = -D(fake).mean()`), or the critic's
    scores of real and generated samples minimized with the same sign. Signs are read through unary
    minus, sums, reductions, variables and the gradient a backward is seeded with (`errD_fake.backward(
    one)`, `errG.backward(mone)` with `mone = -1 * one`, also imported from another module of the project), and a label constant a
    helper multiplies the scores by (`wasserstein(D(fake), FAKE)` with `(label * scores).mean()` and
    `REAL, FAKE = -1.0, 1.0`, or a target `torch.full_like(score, FAKE)`). The critic's step is the backward that also
    scores real samples or scores generated samples cut from the generator (`fake.detach()`, `.data`, a
    `fake` made under `torch.no_grad()`); the generator's step scores them uncut. The losses may be
    computed by functions of the project (`critic_loss(D, real, fake.detach())` in `losses.py`): each term
    is read in its own file and the finding, at the call, names the term's file and line. A loss a library
    backpropagates is read as a backward: what a Lightning-style `training_step` returns (`{"loss": d_loss}`
    per `optimizer_idx`) or an HF `compute_loss` override, when the method runs no backward itself. GAN losses that pass the critic's output through a loss
    (`BCEWithLogitsLoss`, hinge `relu(1 + D(fake))`, least squares) are not read.

    ## Why is this bad?
    WGAN trains the critic to score real samples high and generated ones low (it minimizes
    `D(fake) - D(real)`), and the generator to raise its samples' scores (it minimizes `-D(fake)`).
    With a sign flipped, the generator pushes its samples where the critic already scores them low, or
    the critic stops telling real from generated: the losses still move and samples never improve.

    ## Example
    ```python
    def wgan_step(netD, netG, opt_d, opt_g, real, z):
        fake = netG(z)
        d_loss = -netD(real).mean() - netD(fake.detach()).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = -netD(fake).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    ```

    ## Use instead
    ```python
    def wgan_step(netD, netG, opt_d, opt_g, real, z):
        fake = netG(z)
        d_loss = -(netD(real).mean() - netD(fake.detach()).mean())
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = -netD(fake).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    ```

    ## Fix safety
    There is no fix: which of the two losses has the wrong sign is the author's call.
    """

    code = "ML416"
    name = "critic-signs-agree"
    message = "`{term}` is minimized with the same sign as `{other}` ({where}): {why}; the critic minimizes D(fake) - D(real), the generator -D(fake)"
    severity = Severity.ERROR
    requires_any_text = ("backward", "training_step", "compute_loss")

    def end_file(self) -> None:
        by_critic: dict[str, list[CriticTerm]] = {}
        for term in critic_terms(self.ctx):
            by_critic.setdefault(term.critic, []).append(term)
        for terms in by_critic.values():
            scores_real = {t.backward for t in terms if not t.fake}
            critic = [t for t in terms if not t.fake or t.detached or t.backward in scores_real]
            generator = [t for t in terms if t.fake and t not in critic]
            real = [t for t in critic if not t.fake]
            fake = [t for t in critic if t.fake]
            clash = next(((f, r) for f in fake for r in real if f.sign == r.sign), None)
            if clash is not None:
                self._report(*clash, "the critic no longer tells real samples from generated ones")
                continue
            clash = next(((g, f) for g in generator for f in fake if g.sign == f.sign), None)
            if clash is not None:
                self._report(*clash, "the generator and the critic push the generated samples' score the same way")

    def _report(self, term: CriticTerm, other: CriticTerm, why: str) -> None:
        at = other.at if other.ctx is not None else other.node
        related = (Related(self.ctx.path, self.ctx.start(at), self.ctx.end(at), "the other term"),)
        text = (term.ctx or self.ctx).text(term.node)
        if term.ctx is not None:  # a term a function of the project returns: named with its file and line
            text = f"{one_line(text, 40)}` ({term.place(self.ctx)}) in `{one_line(self.ctx.text(term.at), 40)}"
        other_text = one_line((other.ctx or self.ctx).text(other.node), 40)
        where = other.place(self.ctx)
        if other.added is not None:  # its sign is set where a function of the project adds it into its loss
            where += f", its sign set at {other.signed_at(self.ctx)}"
        message = self.message.format(term=text, other=other_text, where=where, why=why)
        self.report(term.at, message, related=related)
