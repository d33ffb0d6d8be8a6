"""The objective of a backward pass: what the whole backpropagated loss is, and with which sign.

`objective` follows the loss through single local assignments (and `loss /= k`), the return values of
the project's functions it calls (`loss = self.compute_loss(batch)`), reductions (`.mean()`, `torch.sum`),
value-keeping methods (`.gather`, `.squeeze`...), indexing and scalings (`* weights`, `/ n`, `* -1`) down
to one term: a log-likelihood (`dist.log_prob(y)`, `log_softmax` output, `F.logsigmoid`, the log of
probabilities, a method named for one: `base_log_prob(z)`, a Gaussian log-density written out: `-0.5 * z ** 2
- 0.5 * log(2 * pi)`) or a standard torch loss (`F.cross_entropy`, `nn.MSELoss()(...)`). A log-likelihood
plus log-determinants of a change of variables (`log_prob(z) + logdet`, a normalizing flow's) is one
log-likelihood. A loss made of other terms (`task - lam * adv`, `alpha * log_pi - q`), or of anything else,
has no objective: unknown stays unknown. The one exception is the policy-gradient term of an actor-critic loss (`policy_loss + c * value_loss - beta * entropy`): a
log-likelihood weighted by advantages, returns or rewards is the objective of the sum it is a term of.

`steps_after` tells whether an optimizer step uses the gradients of a backward pass: one comes after it
in the same function, with no gradient clear in between and no input gradient read in between (an attack
that backpropagates to its input).
"""
from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mllint.analysis.objects.callees import loss_function_name
from mllint.analysis.objects.steps import stepped_optimizer
from mllint.analysis.program.calls import CallResolver
from mllint.analysis.facets.loops import LOSS_NAME
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.values.values import VALUE_PRESERVING_METHODS, Kind, ValueKinds, canonical_class
from mllint.source import one_line

MAX_DEPTH = 12  # assignments and operations followed from the backpropagated loss

LOG_LIKELIHOOD = "log-likelihood"
STANDARD_LOSS = "loss"

REDUCING_METHODS = frozenset({"mean", "sum", "nanmean", "nansum"})
REDUCING_FUNCTIONS = frozenset({"torch.mean", "torch.sum", "torch.nanmean", "torch.nansum"})
JOINING_FUNCTIONS = frozenset({"torch.stack", "torch.cat"})  # one tensor of a list's items
# Methods that select or reshape values without changing what they are (log-probabilities stay so).
KEEPING_METHODS = VALUE_PRESERVING_METHODS | {"gather", "masked_select", "diag", "diagonal", "take_along_dim"}
LOG_LIKELIHOOD_METHODS = frozenset({"log_prob", "log_prob_sum"})
# A method of the project named for a log-density whatever its body (`self.base_log_prob(z)`, `log_density`).
LOG_LIKELIHOOD_METHOD_NAME = re.compile(r"(^|_)log_?(prob|probs|density|likelihood|lik)($|_)", re.IGNORECASE)
# What the log-determinant of a change of variables is called: `logdet`, `log_det_j`, `ldj`, `sum_log_abs_det`.
LOG_DETERMINANT_NAME = re.compile(r"log_?(abs_?)?det|(^|_)ldj($|_)|log_?jac", re.IGNORECASE)
LOG_LIKELIHOOD_FUNCTIONS = frozenset({"torch.nn.functional.logsigmoid"})
LOGARITHMS = frozenset({"torch.log", "torch.log2", "torch.log10"})
# A variable whose origin is not known but whose name says what it holds: `log_probs`, `logp`, `log_lik`.
LOG_LIKELIHOOD_NAME = re.compile(r"^(log_?probs?|logp|log_?likelihoods?|log_?lik)$", re.IGNORECASE)
STANDARD_LOSSES = frozenset({
    *(f"torch.nn.functional.{name}" for name in (
        "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss",
        "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
        "ctc_loss", "multi_margin_loss", "multilabel_soft_margin_loss", "soft_margin_loss",
    )),
    *(f"torch.nn.{name}" for name in (
        "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MSELoss", "L1Loss", "SmoothL1Loss",
        "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss", "MultiMarginLoss",
        "MultiLabelSoftMarginLoss", "SoftMarginLoss",
    )),
})  # fmt: skip
PROBABILITY_NAME = re.compile(r"prob", re.IGNORECASE)
# What another module's function must mention to be read for the objective it returns: a log or a loss.
OBJECTIVE_WORDS = re.compile(rb"log|loss|backward|step|grad")
# A factor that holds probabilities turns a log-likelihood into an entropy (`(p * log_p).sum()`).
PROBABILITY_TEXT = re.compile(r"prob|exp|softmax|sigmoid", re.IGNORECASE)
# A factor that makes a log-likelihood a policy-gradient term.
ADVANTAGE_TEXT = re.compile(r"adv|return|reward|\brets?\b|\brews?\b|rtg|\bg(_?t)?\b", re.IGNORECASE)  # `G`, `Gt`: the return


@dataclass(frozen=True)
class Objective:
    kind: str  # LOG_LIKELIHOOD or STANDARD_LOSS
    sign: int  # +1: minimizing the loss minimizes the term; -1: it maximizes it
    term: ast.AST  # the log-likelihood or loss expression
    policy_gradient: bool = False  # a log-likelihood weighted by advantages, returns or rewards
    via: str | None = None  # the function whose return value the term is, when it is not in the loss's function
    home: object = None  # the file (`FileContext`) of that function


def objective(ctx, loss: ast.AST) -> Objective | None:
    return ctx.analysis(_Objectives).objective(loss)  # one per file: its call resolver indexes the module once


def factor_sign(ctx, factor: ast.AST) -> int:
    """-1 for a factor written negative (`-adv`, `-1`, a name assigned one), 0 for zero, else +1."""
    return ctx.analysis(_Objectives)._sign(factor, 0)


class _Objectives:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.values = ctx.analysis(ValueKinds)
        self.view = ctx.analysis(ProjectView)
        self.calls = CallResolver(ctx, self.view if ctx.project is not None else None)
        self._objectives: dict[ast.AST, Objective | None] = {}  # by loss: ML408 and ML409 ask about the same

    def objective(self, loss: ast.AST) -> Objective | None:
        if loss not in self._objectives:
            self._objectives[loss] = self.of(loss, 0)
        return self._objectives[loss]

    def of(self, expr: ast.AST, depth: int) -> Objective | None:
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            inner = self.of(expr.operand, depth + 1)
            return _signed(inner, -1 if isinstance(expr.op, ast.USub) else 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            return self._scaled(expr.left, expr.right, depth) or self._scaled(expr.right, expr.left, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
            return self._scaled(expr.left, expr.right, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            terms = _summed(expr)
            density = _gaussian_log_density(terms)
            if density:  # `+0.5 * z ** 2 + 0.5 * log(2 * pi)`: its negative
                return Objective(LOG_LIKELIHOOD, density, expr)
            return self._change_of_variables(terms, depth) or self._policy_gradient_term(terms, depth)
        if isinstance(expr, ast.Subscript):
            return self._log_likelihood_only(self.of(expr.value, depth + 1))
        if isinstance(expr, ast.Name):
            return self._name(expr, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        return None

    def _scaled(self, term: ast.AST, factor: ast.AST, depth: int) -> Objective | None:
        inner = self.of(term, depth + 1)
        if inner is None or self.of(factor, depth + 1) is not None:
            return None
        if inner.kind == LOG_LIKELIHOOD and PROBABILITY_TEXT.search(self.ctx.text(factor)):
            return None
        sign = self._sign(factor, depth + 1)
        if not sign:
            return None
        advantage = inner.kind == LOG_LIKELIHOOD and bool(ADVANTAGE_TEXT.search(self.ctx.text(factor)))
        return Objective(inner.kind, inner.sign * sign, inner.term, inner.policy_gradient or advantage, inner.via, inner.home)

    def _policy_gradient_term(self, summed: list[tuple[ast.AST, int]], depth: int) -> Objective | None:
        """The one policy-gradient term of a sum, with the sign the sum gives it."""
        terms = []
        for expr, sign in summed:
            found = self.of(expr, depth + 1)
            if found is not None and found.policy_gradient:
                terms.append(_signed(found, sign))
        return terms[0] if len(terms) == 1 else None

    def _change_of_variables(self, summed: list[tuple[ast.AST, int]], depth: int) -> Objective | None:
        """A normalizing flow's log-likelihood: one log-likelihood plus log-determinants (`log_prob(z) +
        logdet`), all added."""
        determinants = [e for e, sign in summed if sign > 0 and LOG_DETERMINANT_NAME.search(self.ctx.text(e))]
        rest = [(e, sign) for e, sign in summed if not any(e is d for d in determinants)]
        if not determinants or len(rest) != 1:
            return None
        found = _signed(self.of(rest[0][0], depth + 1), rest[0][1])
        return found if found is not None and found.kind == LOG_LIKELIHOOD and found.sign > 0 else None

    def _sign(self, factor: ast.AST, depth: int) -> int:
        """-1 for a factor written negative (`-adv`, `-1`, a name assigned one), 0 for zero, else +1:
        weights, advantages and counts are positive as written."""
        if depth > MAX_DEPTH:
            return 1
        if isinstance(factor, ast.Constant) and isinstance(factor.value, (int, float)):
            return (factor.value > 0) - (factor.value < 0)
        if isinstance(factor, ast.UnaryOp) and isinstance(factor.op, ast.USub):
            return -self._sign(factor.operand, depth + 1)
        if isinstance(factor, ast.Name):
            values = self.values.reaching_values(factor)
            if values is not None and len(values) == 1:
                return self._sign(values[0], depth + 1)
        return 1

    def _name(self, name: ast.Name, depth: int) -> Objective | None:
        definitions = self.values.reaching_definitions(name)
        scaling = self.ctx.scopes.parent(definitions[0].node) if len(definitions) == 1 else None
        if isinstance(scaling, ast.AugAssign) and isinstance(scaling.op, (ast.Div, ast.Mult)):
            return self._scaled(scaling.target, scaling.value, depth)  # `loss /= accumulation_steps`
        items = self.values.listed_items(name)
        if items:  # `torch.stack(log_probs)` of the log-probabilities a rollout appends: what they all are
            found = [self.of(item, depth + 1) for item in items]
            agreed = all(f is not None and (f.kind, f.sign) == (found[0].kind, found[0].sign) for f in found)
            return found[0] if agreed else None
        values = self.values.reaching_values(name)
        if values is not None and len(values) == 1:
            found = self.of(values[0], depth + 1)
            if found is not None or not LOG_LIKELIHOOD_NAME.match(name.id):
                return found
        return Objective(LOG_LIKELIHOOD, 1, name) if LOG_LIKELIHOOD_NAME.match(name.id) else None

    def _call(self, call: ast.Call, depth: int) -> Objective | None:
        func = call.func
        name = self.ctx.qualified_name(func)
        if name in REDUCING_FUNCTIONS | JOINING_FUNCTIONS and call.args:
            return self.of(call.args[0], depth + 1)
        if name in LOG_LIKELIHOOD_FUNCTIONS or (name in LOGARITHMS and call.args and self._probabilities(call.args[0])):
            return Objective(LOG_LIKELIHOOD, 1, call)
        if name in STANDARD_LOSSES or canonical_class(self.values.constructed_class(func)) in STANDARD_LOSSES:
            return Objective(STANDARD_LOSS, 1, call)
        if name is None and loss_function_name(self.ctx, func) in STANDARD_LOSSES:  # `bc_loss = partial(F.cross_entropy)`
            return Objective(STANDARD_LOSS, 1, call)
        if isinstance(func, ast.Attribute) and name is None:
            if func.attr in REDUCING_METHODS:
                return self.of(func.value, depth + 1)
            if func.attr in LOG_LIKELIHOOD_METHODS or (func.attr == "log" and self._probabilities(func.value)):
                return Objective(LOG_LIKELIHOOD, 1, call)
            if func.attr in KEEPING_METHODS:
                return self._log_likelihood_only(self.of(func.value, depth + 1))
        origin = self.view.origin(call)
        if origin is not None and origin.kind is Kind.LOG_PROBABILITIES:
            return Objective(LOG_LIKELIHOOD, 1, call)
        callee = self.calls.resolve(call, followed=OBJECTIVE_WORDS, reexported=True)  # `from flows import nll_loss`
        returned = self._returned(callee, depth) if callee is not None else None
        if returned is None and isinstance(func, ast.Attribute) and name is None and LOG_LIKELIHOOD_METHOD_NAME.search(func.attr):
            return Objective(LOG_LIKELIHOOD, 1, call)  # `model.base_log_prob(z)`, whatever its body
        if callee is not None:
            return returned
        return Objective(STANDARD_LOSS, 1, call) if self._named_loss(func) else None

    def _probabilities(self, expr: ast.AST) -> bool:
        """Softmax or sigmoid output, or a value whose name says probabilities (`probs[a]`, `probs + eps`);
        not `1 - d_prob` (the minimax GAN generator's loss is the log of that, and right)."""
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add) and isinstance(expr.right, ast.Constant):
            expr = expr.left  # `probs + 1e-8`
        origin = self.view.origin(expr)
        if origin is not None:
            return origin.kind in (Kind.PROBABILITIES, Kind.SIGMOID)
        named = isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript))
        return named and bool(PROBABILITY_NAME.search(self.ctx.text(expr)))

    def _named_loss(self, func: ast.AST) -> bool:
        """`criterion(out, y)`, `self.loss_fn(out, y)` where nothing says what the object is."""
        last = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if not LOSS_NAME.match(last) or self.ctx.qualified_name(func) is not None:
            return False
        return self.values.constructor(func) is None

    def _returned(self, callee, depth: int) -> Objective | None:
        """The objective every `return` of a called project function agrees on."""
        inner = self if callee.ctx is self.ctx else _Objectives(callee.ctx)
        returns = [
            r.value for r in callee.ctx.index.within(callee.function, ast.Return)
            if r.value is not None and callee.ctx.scopes.enclosing_function(r) is callee.function
        ]  # fmt: skip
        found = [inner.of(value, depth + 1) for value in returns]
        if not found or any(f is None or (f.kind, f.sign) != (found[0].kind, found[0].sign) for f in found):
            return None
        first = found[0]
        if first.via is None:
            return Objective(first.kind, first.sign, first.term, first.policy_gradient, callee.function.name, callee.ctx)
        return first

    @staticmethod
    def _log_likelihood_only(inner: Objective | None) -> Objective | None:
        """Selecting from log-probabilities keeps them so; a selected part of a loss is no longer the loss."""
        return inner if inner is not None and inner.kind == LOG_LIKELIHOOD else None


def place(ctx, found: Objective, backward: ast.Call) -> str:
    """What a message says about where the term is: "" on the backward's line, else its line or the
    function that returns it and where ("`nll_loss` at flows/objective.py:5")."""
    if found.via is not None:
        path = "" if found.home is ctx else ctx.analysis(ProjectView).display_path(found.home.real_path or found.home.path)
        where = f"{path}:{found.term.lineno}" if path else f"line {found.term.lineno}"
        return f" (`{one_line(ast.unparse(found.term), 50)}`, returned by `{found.via}` at {where})"
    if found.term.lineno == backward.lineno:
        return ""
    return f" (`{one_line(ast.unparse(found.term), 50)}`, line {found.term.lineno})"


def _summed(total: ast.BinOp) -> list[tuple[ast.AST, int]]:
    """The terms of a sum, each with the sign the sum gives it: `a - b + c` -> a +1, b -1, c +1."""
    terms, pending = [], [(total, 1)]
    while pending:
        expr, sign = pending.pop()
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            pending += [(expr.left, sign), (expr.right, -sign if isinstance(expr.op, ast.Sub) else sign)]
        else:
            terms.append((expr, sign))
    return terms[::-1]


def _gaussian_log_density(summed: list[tuple[ast.AST, int]]) -> int:
    """+1 for a Gaussian log-density written out: a term taking half a square away (`-0.5 * (z ** 2).sum(1)`,
    `- ((x - mu) / sigma) ** 2 / 2`) and a term of `log(2 * pi)`; -1 for its negative (half a square
    added); 0 for anything else."""
    halved = {sign * _half(e) for e, sign in summed if _squares(e)} - {0}
    if len(halved) != 1 or not any(_mentions_pi(e) for e, _ in summed):
        return 0
    return -halved.pop()


def _half(expr: ast.AST) -> int:
    """The sign of the one-half a product is scaled by (`-0.5 * x`, `-x / 2`, `0.5 * a * x`); 0: none."""
    sign, half, pending = 1, False, [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            sign, pending = -sign, [*pending, node.operand]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            pending += [node.left, node.right]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            half |= isinstance(node.right, ast.Constant) and node.right.value == 2
            pending.append(node.left)
        else:
            half |= isinstance(node, ast.Constant) and node.value == 0.5
    return sign if half else 0


def _squares(expr: ast.AST) -> bool:
    """Does an expression square something: `z ** 2`, `z.pow(2)`, `torch.square(z)`, `z.square()`?"""
    for node in ast.walk(expr):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and node.right.value == 2:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("pow", "square"):
            return node.func.attr == "square" or (node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == 2)
    return False


def _mentions_pi(expr: ast.AST) -> bool:
    """`math.log(2 * math.pi)`, `np.log(2 * np.pi)`, a constant named for it (`LOG_2PI`, `log2pi`)."""
    names = (n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(expr) if isinstance(n, (ast.Attribute, ast.Name)))
    return any(name == "pi" or re.search(r"log_?2_?pi", name, re.IGNORECASE) for name in names)


def _signed(inner: Objective | None, sign: int) -> Objective | None:
    return None if inner is None else Objective(inner.kind, inner.sign * sign, inner.term, inner.policy_gradient, inner.via, inner.home)


def steps_after(ctx, backward: ast.Call) -> bool:
    """Does an optimizer step follow `backward` in its function, on its gradients? No gradient clear and
    no read of a `.grad` in between, and no optimizer of the file built to maximize (`maximize=True`)."""
    if ctx.analysis(_Maximizing).found:
        return False
    scope = ctx.scopes.enclosing_function(backward) or ctx.tree
    after = (backward.end_lineno, backward.end_col_offset)
    for node in ctx.analysis(_ScopeCalls).from_position(scope, after):
        if (node.lineno, node.col_offset) < after:
            continue
        if isinstance(node, ast.Attribute):
            if node.attr == "grad" and isinstance(node.ctx, ast.Load):
                return False
            continue
        func = node.func
        if not isinstance(func, ast.Attribute):
            continue
        if func.attr == "zero_grad":
            return False
        if stepped_optimizer(ctx, node) is not None:
            return True
    return False


class _ScopeCalls:
    """The calls and attributes of each scope `steps_after` reads, in the index's order, listed once per
    scope: each `backward` of a module-level script starts where the nodes before it end, not at the top."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._scopes: dict[ast.AST, tuple[list[ast.AST], list[tuple[int, int]]]] = {}

    def from_position(self, scope: ast.AST, position: tuple[int, int]) -> Iterator[ast.AST]:
        """The scope's nodes from the first one at or after `position` on (every node before it in the
        index's order starts before `position`)."""
        if scope not in self._scopes:
            nodes = self.ctx.index.within(scope, ast.Call, ast.Attribute)
            reached = list(itertools.accumulate(((n.lineno, n.col_offset) for n in nodes), max))
            self._scopes[scope] = nodes, reached
        nodes, reached = self._scopes[scope]
        return (nodes[i] for i in range(bisect.bisect_left(reached, position), len(nodes)))


class _Maximizing:
    """Is an optimizer of the file built to maximize (`maximize=...`)? Asked once per file."""

    def __init__(self, ctx) -> None:
        self.found = any(k.arg == "maximize" for call in ctx.index.of_type(ast.Call) for k in call.keywords)
