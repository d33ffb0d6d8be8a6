import ast

from mllint.analysis.program.callers import call_sites, per_call_site
from mllint.analysis.facets.gradients import Flow, GradientFlow, State, backward_loss, describe_cut, is_no_grad, under_no_grad
from mllint.analysis.facets.rewraps import rewrapped_returns
from mllint.analysis.facets.steps import unreached_step
from mllint.analysis.objects.steps import step_of
from mllint.findings import Severity
from mllint.source import one_line
from mllint.rule import Rule


class LossDetachedFromModel(Rule):
    """
    ## What it does
    Reports `backward()` on a loss whose every path to a model output is cut: by `.detach()`, `.data`,
    `.item()`, `.numpy()`, `.tolist()`, `float(...)`, re-wrapping with `torch.tensor(...)` or
    `torch.Tensor(...)`, or `argmax` used as if it were differentiable, or computed under `torch.no_grad()`
    and backpropagated after the block (backpropagated in it: ML206). It follows the loss through local
    assignments, loss functions and tensor operations, the losses and helpers of the project that cut
    what they are given (a loss class whose `forward` starts with `pred.argmax(1)`, a helper re-wrapping the
    list of per-sequence losses it appends to: `torch.tensor(per_seq, requires_grad=True)`, a helper taking
    the output through NumPy and a scaler's `inverse_transform` and back, a dict of detached task losses the
    total is summed from), and into the callers of the function when the loss
    (or what it is computed from) is a parameter, one call site at a time (`apply_gradients(optimizer,
    torch.tensor(loss.item(), requires_grad=True))` in `main.py`); it stays silent when any way of computing the loss
    is unknown, or when some term still reaches a model (a GAN discriminator step on `fake.detach()`, a
    DQN target computed from `target_net(s).detach()`, a regularisation term). It also reports a
    `backward()` followed in the same function by `opt.step()` or `scaler.step(opt)` (no other backward since
    the previous step; a scheduler's step between them does not count) whose loss reaches a model, but none
    of the modules `opt` updates: a GAN generator step scoring `D(fake.detach())` (detached in a helper such
    as `generate`, made under `torch.no_grad()`, or reused from the discriminator step) with `opt_g` over the
    generator, or a deterministic actor-critic's actor step scoring `critic(obs, actor(obs).detach())` with the
    actor's optimizer (the critic's other inputs, given to the function, count as data), also when the models and optimizers
    are handed to a trainer's constructor
    (`GANTrainer(Generator(), Critic(), opt_g, opt_d)`, one call site at a time); silent when an optimizer's modules are unknown,
    when the loss reaches one of them (a frozen backbone under a trained head, a detached DQN target, a
    detached advantage) or reaches a model through a call it cannot tell (a wrapper, a project helper). A function or loss `forward` (or a loss class's `__call__`) that returns
    `torch.tensor(v, requires_grad=True)` with `v` taken out of tensors (`.item()`, `.tolist()`, `float(t)`,
    also summed or appended into a name first; for a `forward` or `__call__`, also computed from the tensors it is
    given: `torch.tensor([w * fn(outputs[k]) for ...], requires_grad=True)`) is reported where it makes that leaf, whoever calls it, when
    nothing in the project calls it (a library's loss) or its callers' `backward()` cannot tell the cut; a
    constant leaf (`torch.tensor(0.0, requires_grad=True)` for an empty batch) is not.

    ## Why is this bad?
    No gradient reaches the model's parameters: the optimizer steps on nothing and the model never
    learns. When the loss was re-wrapped to silence the "does not require grad" error
    (`torch.tensor(loss.item(), requires_grad=True)`), the run goes on for hours reporting a loss.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    model = torch.nn.Linear(4, 3)
    inputs, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
    value = F.cross_entropy(model(inputs), labels).item()
    loss = torch.tensor(value, requires_grad=True)
    loss.backward()
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    model = torch.nn.Linear(4, 3)
    inputs, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(inputs), labels)
    value = loss.item()
    loss.backward()
    ```

    ## Fix safety
    There is no fix: which cut was meant (logging, a target, a frozen part) is for the author to decide.
    """

    code = "ML404"
    name = "loss-detached-from-model"
    message = "`{loss}` has no path to a model output: {cuts} {verb} it, so no gradient reaches the model"
    severity = Severity.ERROR
    requires_any_text = ("backward(", "requires_grad")

    stepped_message = (
        "`{loss}` has no path to a module that `{optimizer}` (stepped at line {line}) updates: {cuts} {verb} it, "
        "so `{optimizer}.step()` gets no gradient while the other models it reaches accumulate one"
    )
    returned_message = (
        "`{function}` returns `{leaf}`, a new leaf made from `{cut}` (line {line}): it has no path to a model "
        "output, so no gradient reaches the model through it, whoever calls `{function}`"
    )

    def end_file(self) -> None:
        for found in rewrapped_returns(self.ctx):
            leaf = one_line(self.ctx.text(found.call), 50)
            cut = one_line(self.ctx.text(found.cut), 40)
            self.report(found.call, self.returned_message.format(function=found.function, leaf=leaf, cut=cut, line=found.cut.lineno))

    def visit_Call(self, node: ast.Call) -> None:
        loss = backward_loss(self.ctx, node)
        if loss is None:
            return
        flows = self.ctx.analysis(GradientFlow)
        in_no_grad = under_no_grad(self.ctx, node)  # a loss computed and backpropagated there: ML206's finding
        for flow, binding in per_call_site(self.ctx, loss, lambda binding: _cut(self.ctx, flows.flow(loss, binding), in_no_grad)):
            cuts = [describe_cut(self.ctx, cut, binding) for cut in flow.cuts[:3]]
            message = self.message.format(
                loss=self.ctx.text(loss), cuts=" and ".join(cuts), verb="cuts" if len(cuts) == 1 else "cut"
            )
            passed = f" (through the call at {binding.place})" if binding is not None else ""
            self.report(node, message + passed, related=call_sites(binding))
            return
        found = unreached_step(self.ctx, node)
        if found is not None and _cut(self.ctx, found[1], in_no_grad):
            step, flow, binding = found
            cuts = [describe_cut(self.ctx, cut, binding) for cut in flow.cuts[:3]]
            passed = f" (through the call at {binding.place})" if binding is not None else ""
            self.report(node, self.stepped_message.format(
                loss=self.ctx.text(loss), optimizer=self.ctx.text(step_of(self.ctx, step).stepped), line=step.lineno,
                cuts=" and ".join(cuts), verb="cuts" if len(cuts) == 1 else "cut",
            ) + passed, related=call_sites(binding))


def _cut(ctx, flow: Flow, in_no_grad: bool) -> Flow | None:
    """The flow when it is cut; a backward under `no_grad` does not count the region's own cut."""
    counted = [c for c in flow.cuts if not (in_no_grad and is_no_grad(ctx, c))]
    return flow if flow.state is State.NONE and counted else None
