import ast

from mllint.analysis.program.callers import Callers, call_sites, per_call_site
from mllint.analysis.facets.gradients import GradientFlow, Holder, State, backward_loss, cut_input, describe_cut, holder, is_no_grad, managed_losses
from mllint.analysis.facets.loss_terms import Summand, factors, summands
from mllint.analysis.facets.parameters import is_module
from mllint.analysis.facets.shapes import LIGHTNING_MODULES
from mllint.analysis.values.values import ValueKinds, canonical_class
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line

MAX_DEPTH = 8  # how many assignments deep a value is followed back to a model


class LossTermCutFromGraph(Rule):
    """
    ## What it does
    Reports a term of a backpropagated loss that is cut from the autograd graph while the rest of the
    loss is not: `loss = ce + beta * kl.item()`, `loss += penalty.detach()`, `loss = main + aux.data`,
    `loss = ce + torch.tensor(reg)` where the cut value was computed from the model. So are a term read back from a
    dict of cut values (`w * logged["b"]` with `logged = {k: v.item() for k, v in losses.items()}`), a list re-wrapped
    (`torch.tensor([blk.aux for blk in self.model.blocks])`, the model built on `self` or wrapped: `nn.DataParallel`,
    `.module`; a list of terms computed by functions of a table, `{k: LOSSES[k](out, y) for k in names}`), a term of a
    reduced sum (`(alpha * logp - q.detach()).mean()`, scaled between reductions too: `torch.mean(torch.sum(err + w *
    smooth.detach(), 1) / n_valid)`, in a function of the project that calls the model itself; not a
    frozen reference cut where it is computed, `(logp - ref_logp).mean()`), and a weight penalty
    summed over cut parameters (`sum(p.data.abs().sum() for p in model.parameters())`, or `+=
    p.detach().norm()` in a loop over them). The loss is followed through the sums and the assignments
    (`=`, `+=`) that build it; a term that is a parameter is read as each call site passes it (`kl.item()`
    passed at `main.py:30` to `train_step(..., kl)`), one call site at a time. A loss the training library
    backpropagates is read too: what a LightningModule's `training_step` or a Hugging Face `Trainer`
    subclass's `compute_loss` returns, when no code of the project calls it (its `model` is the one each
    construction of the trainer is given). The loss is also followed
    into the function of the project that returns it or a part of it, in any module, and its terms read
    there: `loss = model(x, y)` whose `forward` returns `task + beta * reg.detach()`, `loss, logs =
    elbo_loss(...)` returning `rec + beta * kl.item()`, `out["loss"].backward()` with `out = model(x)`
    whose `forward` returns `{"loss": rec + beta * kl.item(), ...}`, either arm of `return (loss, logits)
    if return_outputs else loss`, a plain class's `__call__`, `model.compute_loss(x)`,
    a helper returning `sum(terms)` of a list it appends to, `sum(losses.values())` of a dict a forward
    returns, a submodule's forward two calls deep (a VQ layer returning `beta * mse.detach()`), an attribute a
    model's forward sets (`ce + w * model.aux_loss`; also of submodules the parent's forward sums over a
    `ModuleList`: `sum(l.aux_loss for l in self.layers)`), a record another method returns with a cut entry
    (`stats["entropy"]` of `_, stats = self.evaluate(x)` built with `entropy.item()`, also read by a helper the
    record is passed to, and given more entries at other keys), an attribute another method of the class
    assigns cut (`self.penalty` of `self.penalty = code.abs().mean().detach()`), a method of the model a caller passes
    (`lam * self.model.regularization()` returning `float(...)`), a weighted penalty method of a step
    another module calls (`self.hparams["l1"] * self.l1_penalty()` returning `total.item()`), and a comparison of `argmax` predictions
    or of the model's outputs themselves (`(scores > limits).float()`, `[pred[i] in allowed for i in ...]`, also in a helper);
    the finding is at the call, naming the term's
    file and line, and the sum it joins when another function of the project adds it (`loss = bce + 0.5 * (1 -
    overlap)` in a model's `compute_loss` of `overlap = soft_iou(...)` returning a `float`) (a cut of what the
    caller passed is the caller's own term). A term computed by a loss
    or helper of the project (in another module too) that cuts what it is given is cut as well:
    `ce + beta * edge_loss(pred, image)` where `EdgeLoss.forward` builds its mask with `pred.argmax(1)`; a
    loss helper given the model's output or a module (`objective(self.net(x), y)`, `criterion(..., self.projectors)`)
    reads them as carrying a graph;
    or a helper returning `torch.tensor(x.item())`; the message says where the callee cuts. A term added
    under `torch.no_grad()` from what carries a graph (`loss += beta * penalty` in the block, the loss
    computed before it) is cut there too. A parameter of a submodule (`net.proj.weight`,
    `net` being `self.net`; `m.weight` of `for m in model.modules()`; `self.mu = nn.Parameter(...)`) passed to
    a helper carries the graph there, as does a part of a model the code does not show but trains (`net.dec` of
    `train(net, ...)` with no call site in view, or a notebook cell's model, called into the loss it backpropagates),
    and a sum scaled by a weight (`(nll + kl) / n`) is read term by term. A term whose cut value carried no graph
    anyway (a constant, data, a value of unknown origin, a parameter left to a constant default) is not reported, nor are cuts inside a term
    (`(q - target.detach()) ** 2`, a stop-gradient written on purpose), nor a cut factor weighting
    another computed from a model (`-log_prob * advantage.detach()`: REINFORCE with a baseline, where
    the gradient flows through `log_prob`), nor `loss.item()` for logging.

    ## Why is this bad?
    The term adds to the value of the loss, so it shows in the logs, but no gradient flows through it: the
    regulariser, auxiliary objective or penalty it stands for trains nothing, silently. Usually `.item()`
    or `.detach()` was written to log or store the value, and the loss was meant to use the tensor.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    model = torch.nn.Linear(4, 3)
    inputs, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
    logits = model(inputs)
    penalty = logits.pow(2).mean()
    loss = F.cross_entropy(logits, labels) + 0.1 * penalty.item()
    loss.backward()
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    model = torch.nn.Linear(4, 3)
    inputs, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
    logits = model(inputs)
    penalty = logits.pow(2).mean()
    loss = F.cross_entropy(logits, labels) + 0.1 * penalty
    loss.backward()
    ```

    ## Fix safety
    There is no fix: whether the term was meant to train (drop the cut) or not (drop the term) is for the
    author to decide.
    """

    code = "ML413"
    name = "loss-term-cut-from-graph"
    message = "a term of the loss is cut from the graph: it adds to the loss's value but trains nothing"
    severity = Severity.ERROR
    requires_any_text = ("backward(", "training_step", "compute_loss")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reported: set[ast.AST] = set()
        self._from_models: dict[tuple[ast.AST, int], bool] = {}  # `_from_model`'s answers

    def visit_Call(self, node: ast.Call) -> None:
        loss = backward_loss(self.ctx, node)
        if loss is not None:
            self._check(loss, f"the loss backpropagated at line {node.lineno}")

    def end_file(self) -> None:
        callers = self.ctx.analysis(Callers)
        for node, loss in managed_losses(self.ctx):  # `compute_loss` returning the loss the library backpropagates
            function = self.ctx.scopes.enclosing_function(node)
            cls = self.ctx.scopes.parent(function)
            lightning = any(canonical_class(self.ctx.qualified_name(b)) in LIGHTNING_MODULES for b in getattr(cls, "bases", ()))
            if (lightning or callers.trainer_hook(self.ctx, function)) and not callers.sites(function):  # else its caller backpropagates it
                self._check(loss, f"the loss returned at line {node.lineno} for the training library to backpropagate")

    def _check(self, loss: ast.AST, backpropagated: str) -> None:
        for cuts, binding in per_call_site(self.ctx, loss, lambda binding: self._cut_terms(loss, binding)):
            for term, cut in cuts:
                self._reported.add(term.node)
                passed = f" (through the call at {binding.place})" if binding is not None else ""
                found = self._holder(term, cut, binding)
                what = f"`{self.ctx.text(term.node)}`"
                if isinstance(term.call, ast.Attribute):  # `model.aux_loss`, set by its forward
                    what = (
                        f"`{one_line(term.ctx.text(term.node), 60, keep_end=True)}`, which `{term.callee}` sets as "
                        f"`{one_line(self.ctx.text(term.call), 40)}` ({found.place(term.node)}),"
                    )
                elif term.call is not None:
                    joined = term.joined(self.ctx)
                    what = (
                        f"`{one_line(term.ctx.text(term.node), 60, keep_end=True)}`, a term of the loss `{term.callee}` returns "
                        f"({found.place(term.node)}) to `{one_line(self.ctx.text(term.call), 40)}`"
                        + (f" and added to the loss at {joined}," if joined else ",")
                    )
                message = (
                    f"{what} is cut from the graph by {describe_cut(self.ctx, cut, binding, self._cut_holder(term, cut, binding))}: it "
                    f"adds to the value of {backpropagated} but no gradient flows through "
                    f"it{passed}"
                )
                self.report(term.call or term.node, message, related=call_sites(binding))
            return

    def _cut_terms(self, loss: ast.AST, binding) -> list[tuple[Summand, ast.AST]] | None:
        """(term, cut) for the terms of the loss cut from the graph, under `binding`; None: none."""
        flows = self.ctx.analysis(GradientFlow)
        if flows.flow(loss, binding).state is State.NONE:
            return None  # cut as a whole: ML404's finding
        terms = summands(self.ctx, loss, binding)
        if len(terms) < 2:
            return None  # the loss is one term: cut, it is cut as a whole (ML404's finding)
        cuts = []
        for term in terms:
            cut = self._cut_from_graph(term, binding)
            if cut is not None and term.node not in self._reported:
                cuts.append((term, cut))
        return cuts or None

    def _holder(self, term: Summand, cut: ast.AST, binding) -> Holder:
        """The file a cut is in: the linted file's or a caller's (under `binding`), or a callee's; the linted
        file's for a cut made apart from the callee (`_made_apart`)."""
        if term.call is None:
            return holder(self.ctx, cut, binding)
        return Holder(term.ctx, term.binding, term.path)

    def _cut_holder(self, term: Summand, cut: ast.AST, binding) -> Holder:
        """`_holder`, but the linted file's, its parameters unbound, for a cut made apart from the callee."""
        apart = term.call is not None and not self._in_callee(term, cut)
        return Holder(self.ctx, None, "") if apart else self._holder(term, cut, binding)

    def _made_apart(self, term: Summand, cut: ast.AST) -> bool:
        """Is a cut of what the caller passed to the term's callee made by another function of the project, whose
        result the caller passes on (`stats["entropy"]` read by the callee, of `stats` a method returns filled
        with `entropy.item()`)? A cut the caller writes itself is its own term."""
        return self.ctx.scopes.parent(cut) is not None and cut in self.ctx.analysis(GradientFlow).callee_cuts

    def _cut_from_graph(self, term: Summand, binding) -> ast.AST | None:
        """The cut that leaves the term without a graph, when what it cut carried one. A weight of unknown
        origin (`beta * kl.item()`, a hyperparameter) does not make the term train. A cut a caller made
        is read in the caller's file."""
        flows, own = term.ctx.analysis(GradientFlow), term.call is None
        terms = factors(term.node)
        flow_of = [flows.flow(factor, term.binding) for factor in terms]
        if any(flow.state is State.GRAPH for flow in flow_of):
            return None
        if own and any(flow.state is State.UNKNOWN and self._from_model(self.ctx, f, 0) for f, flow in zip(terms, flow_of)):
            return None  # a cut weight of a factor that trains: `-log_prob * advantage.detach()`
        if not own and any(flow.state is State.UNKNOWN and not _is_weight(f) for f, flow in zip(terms, flow_of)):
            return None  # in a callee, only a plain weight (`self.beta`, `beta`) may be of unknown origin
        cut_factors = [flow for flow in flow_of if flow.state is State.NONE and flow.cuts]
        for cut in (cut for flow in cut_factors for cut in flow.cuts):
            if not own and not self._in_callee(term, cut) and not self._made_apart(term, cut):
                continue  # a cut of what the caller passed: the caller's own term, if any
            found = self._cut_holder(term, cut, binding)
            if term.reduced is not None and not self._cut_here(term, cut, found):
                continue  # `(-adv * logp + beta * (logp - ref_logp)).mean()`: a frozen reference, as `kl.mean()` is
            if is_no_grad(found.ctx, cut):
                return cut  # computed under `no_grad` from what carries a graph: `loss += reg` in the block
            inner = found.ctx.analysis(GradientFlow).callee_cuts.get(cut)
            if inner is not None and inner.carried:  # a callee that cuts a graph of its own: `model.regularization()`
                return cut
            source = cut_input(found.ctx, cut)
            if source is None:
                continue
            if found.ctx.analysis(GradientFlow).flow(source, found.binding).state is State.GRAPH:
                return cut
            if self._from_model(found.ctx, source, 0):  # a model the term's own function calls
                return cut
        return None

    def _cut_here(self, term: Summand, cut: ast.AST, found: Holder) -> bool:
        """A cut of a term a reduction splits: made in the reduced sum itself (`(a * logp - q.detach()).mean()`), or
        of a model's output computed from the trained model's output of this step (`value(obs, act).detach()`
        of `act` the policy gave), not of a frozen reference (`ref(s)` under `no_grad`, `ref(s).detach()`)."""
        if found.ctx is term.ctx and any(n is cut for n in ast.walk(term.reduced)):
            return True
        source = cut_input(found.ctx, cut)
        return isinstance(source, ast.Call) and any(
            self._from_model(found.ctx, a, 0) for a in [*source.args, *(k.value for k in source.keywords)]
        )  # fmt: skip

    def _in_callee(self, term: Summand, cut: ast.AST) -> bool:
        function = term.binding.function
        if term.ctx is not self.ctx and term.ctx.scopes.parent(cut) is not None:  # the callee's file: not what the caller passed
            return True  # (`sum(layer.kl for layer in self.layers)` of a `kl` each layer's forward cuts)
        return cut is not function and function in set(term.ctx.scopes.ancestors(cut))

    def _from_model(self, ctx, expr: ast.AST, depth: int) -> bool:
        """Is `expr` computed from a model's output (`model(x)`, `self.encoder(x)`), through local names
        of `ctx`'s file?"""
        if (expr, depth) not in self._from_models:
            self._from_models[(expr, depth)] = self._computed_from_model(ctx, expr, depth)
        return self._from_models[(expr, depth)]

    def _computed_from_model(self, ctx, expr: ast.AST, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return False
        for node in ast.walk(expr):
            if isinstance(node, ast.Call) and is_module(ctx, node.func):
                return True
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                kinds = ctx.analysis(ValueKinds)
                values = kinds.reaching_values(node) or kinds.loop_iterables(node) or []  # `v` of `for k, v in losses.items()`
                if any(self._from_model(ctx, value, depth + 1) for value in values):
                    return True
        return False


def _is_weight(factor: ast.AST) -> bool:
    """`beta`, `self.beta`, `0.1`, `self.hparams["l1"]`: a plain weight."""
    if isinstance(factor, ast.Subscript) and isinstance(factor.slice, ast.Constant):
        factor = factor.value
    return isinstance(factor, (ast.Name, ast.Attribute, ast.Constant))
