import ast
import re

from mllint.analysis.program.callers import call_sites, per_call_site
from mllint.analysis.facets.mode_facts import is_test_path
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.names import call_argument, reference_key
from mllint.analysis.values.values import FUNCTION_KINDS, Kind, ValueKinds
from mllint.findings import Applicability
from mllint.rule import Rule

LOG_FUNCTIONS = {"torch.log", "torch.special.log"}
CLAMPS = {"clamp", "clip", "clamp_min"}
LOWEST_SAFE_LOGIT = -88.0  # float32 sigmoid of a logit at or above this is not 0
MAX_ALIASES = 4
REFERENCE_CHECK = re.compile(r"close|assert|equal", re.IGNORECASE)  # `torch.allclose`, `assert_close`, `assertEqual`
SOFTMAX_CALLEES = {name for name, kind in FUNCTION_KINDS.items() if kind is Kind.PROBABILITIES}


class LogOfProbabilities(Rule):
    """
    ## What it does
    Reports the logarithm of softmax output: `torch.log(F.softmax(x, dim=1))`, `probs.log()`, directly
    or through local variables, or from a model or helper in another file of the project whose output
    is softmax; values picked from it stay softmax output (`torch.log(probs.gather(1, a))`,
    `probs[range(n), a].log()`, `probs.index_select(...)`). A log of a clamped or smoothed value (`torch.log(probs + 1e-8)`,
    `probs.clamp(min=eps).log()`) is not reported, nor is the log of a mixture of softmax outputs (an
    ensemble's mean, which no `log_softmax` computes) unless part of it is a block of exact zeros (a
    pointer-generator's `torch.cat([p_gen * vocab_dist, p.new_zeros(b, n_oov)], 1)`, `torch.zeros(b,
    v).scatter_add(1, idx, attn)`: an outcome only that block covers has probability 0).

    The log of sigmoid output is reported too (a BPR loss's `-torch.log(torch.sigmoid(pos - neg))`, a focal
    loss's `torch.log(pred)`): in float32 the sigmoid is exactly 0 for logits below about -88, and
    `F.logsigmoid` computes the same values stably. Not for logits clamped from below (`x.clamp(-20, 20)`,
    whose sigmoid cannot be 0), nor in tests, where it is a reference formula (a test
    file, an `assert`, a comparison such as `torch.allclose(F.logsigmoid(x), torch.log(torch.sigmoid(x)))`, or a name bound to it that a
    later check in the function reads: `ref = torch.log(torch.sigmoid(x))` then `assert_close(F.logsigmoid(x), ref)`).

    The log of the other outcome's probability, `1 - p` of sigmoid or softmax output, is reported too:
    `torch.log(1 - torch.sigmoid(z))`, `(1 - probs).log()`, and a focal loss's
    `torch.log(torch.where(t, p, 1 - p))`. In float32 the sigmoid rounds to exactly 1 for logits above
    about 17, so `1 - p` is 0 for a confident positive. The sigmoid of what the module itself holds
    (`torch.sigmoid(self.p_logit)`, `self.gate.bias`, `self.raw_beta / 2.0`, or a local name bound to one: a rate it
    learns rather than a prediction) is left alone.

    ## Why is this bad?
    Softmax underflows to exactly 0 for a class whose logit is far below the largest one; its log is
    then `-inf`, and the loss and gradients become `inf`/`nan` mid-run. `log_softmax` computes the same
    values stably from the logits.

    ## Example
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 5)
    log_probs = torch.log(F.softmax(logits, dim=1))
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F

    logits = torch.randn(8, 5)
    log_probs = F.log_softmax(logits, dim=1)
    ```

    ## Fix safety
    When the softmax is written inside the log with an explicit `dim`, the fix turns the pair into one
    `log_softmax` call with the same arguments. It is safe: the values are equal wherever the original
    was finite. `1 - p` and values from variables are reported without a fix: for a sigmoid,
    `F.logsigmoid(-logits)` is `log(1 - sigmoid(logits))` computed stably.
    """

    code = "ML701"
    name = "log-of-probabilities"
    message = "log of softmax output: use `log_softmax` on the logits"
    fix_applicability = Applicability.SAFE
    requires_any_text = ("log",)

    def visit_Call(self, node: ast.Call) -> None:
        argument = self._log_argument(node)
        if argument is None:
            return
        view = self.ctx.analysis(ProjectView)
        origins = per_call_site(self.ctx, argument, lambda binding: view.origin(argument, binding))
        found = next(((o, b) for o, b in origins if _saturates(o) or self._sigmoid_prediction(node, o)), None)
        if found is None:
            return
        origin, binding = found
        if origin.kind is Kind.SIGMOID and not origin.complement:
            message = (
                f"log of sigmoid output{origin.where(argument)}: it is exactly 0 in float32 for logits below about -88, "
                "and its log is -inf; use `F.logsigmoid(logits)`"
            )
            self.report(node, message, related=call_sites(binding))
            return
        if origin.complement:
            what = f"1 - {origin.kind.value}"
            advice = "`F.logsigmoid(-logits)`" if origin.kind is Kind.SIGMOID else "a clamp (`(1 - p).clamp_min(eps)`)"
            message = f"log of {what}{origin.where(argument)}: it is exactly 0 where the probability saturates at 1; use {advice}"
            self.report(node, message, related=call_sites(binding))
            return
        if origin.padded:
            message = (
                f"log of softmax output padded with exact zeros{origin.where(argument)}: where only the zero block "
                "covers an outcome its probability is 0 and the log is -inf; clamp it (`.clamp_min(eps)`) first"
            )
            self.report(node, message, related=call_sites(binding))
            return
        message = self.message if origin.source is None else f"log of softmax output{origin.where(argument)}: use `log_softmax` on the logits"
        self.report(node, message, self._fix(node, argument, origin), related=call_sites(binding))

    def _sigmoid_prediction(self, log_call: ast.Call, origin) -> bool:
        """Is `origin` sigmoid output of a prediction (not of an attribute of the module: a rate it learns) whose
        log is computed outside a test (a test file, an `assert`, or a comparison call such as
        `torch.allclose`: there it is a reference formula)?"""
        if origin.kind is not Kind.SIGMOID or origin.complement or origin.mixture:
            return False
        made = origin.node
        operand = made.args[0] if isinstance(made, ast.Call) and made.args else made.func.value if isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) else None
        if operand is None or is_test_path(self.ctx.real_path or self.ctx.path):
            return False
        if self._learned(operand) or self._bounded_below(operand):
            return False
        for ancestor in self.ctx.scopes.ancestors(log_call):
            if isinstance(ancestor, ast.Assert | ast.Compare):
                return False
            if isinstance(ancestor, ast.Call) and REFERENCE_CHECK.search(self.ctx.text(ancestor.func)):
                return False
            if isinstance(ancestor, ast.stmt):
                break
        return not self._checked_later(log_call)

    def _checked_later(self, log_call: ast.Call) -> bool:
        """Is the log bound to a name (`ref = torch.log(torch.sigmoid(x))`) in a function that checks it later: an
        `assert` with a comparison, or a comparison call (`assert_close`, `allclose`), after it that reads that name
        or the stable form (`logsigmoid`)? There it is a reference formula."""
        statement = self.ctx.scopes.statement(log_call)
        function = self.ctx.scopes.enclosing_function(log_call)
        names = {t.id for t in statement.targets if isinstance(t, ast.Name)} if isinstance(statement, ast.Assign) else set()
        if not names or function is None:
            return False
        for node in ast.walk(function):
            if getattr(node, "lineno", 0) <= statement.end_lineno or not self._is_check(node):
                continue
            read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            if read & (names | {"logsigmoid"}):
                return True
        return False

    def _is_check(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return bool(REFERENCE_CHECK.search(self.ctx.text(node.func)))
        return isinstance(node, ast.Assert) and any(isinstance(n, ast.Compare) or self._is_check(n) for n in ast.walk(node.test))

    def _learned(self, operand: ast.AST, depth: int = 0) -> bool:
        """Does `operand` hold what the module itself holds (a rate it learns, not a batch's logits): an attribute
        of `self` or of one of its parts (`self.p_logit`, `self.gate.bias`), scaled or shifted by constants
        (`self.raw_beta / 2.0`), directly or through the local names bound to it on every way?"""
        if isinstance(operand, ast.Name):
            values = self.ctx.analysis(ValueKinds).reaching_values(operand) if depth < MAX_ALIASES else None
            return bool(values) and all(self._learned(v, depth + 1) for v in values)
        if isinstance(operand, ast.UnaryOp):
            return self._learned(operand.operand, depth)
        if isinstance(operand, ast.BinOp):
            sides = (operand.left, operand.right)
            return all(_number(side) is not None or self._learned(side, depth) for side in sides) and any(_number(side) is None for side in sides)
        key = reference_key(operand)
        return key is not None and key.startswith("self.")

    def _bounded_below(self, operand: ast.AST, depth: int = 0) -> bool:
        """Is `operand` clamped from below to a logit whose sigmoid is not 0 (`x.clamp(-20, 20)`,
        `torch.clamp(x, min=-20)`), directly or through the local names bound to it on every way?"""
        if isinstance(operand, ast.Name):
            values = self.ctx.analysis(ValueKinds).reaching_values(operand) if depth < MAX_ALIASES else None
            return bool(values) and all(self._bounded_below(v, depth + 1) for v in values)
        if not (isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute) and operand.func.attr in CLAMPS):
            return False
        qualified = self.ctx.qualified_name(operand.func)
        if qualified is None:
            lower = call_argument(operand, 0, "min")
        elif qualified in {f"torch.{name}" for name in CLAMPS}:
            lower = call_argument(operand, 1, "min")
        else:
            return False
        bound = _number(lower)
        return bound is not None and bound >= LOWEST_SAFE_LOGIT

    def _log_argument(self, call: ast.Call) -> ast.AST | None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "log") and not (isinstance(func, ast.Name) and func.id == "log"):
            return None  # cheap first: a log is spelt `log` (an alias of torch.log is not followed)
        if self.ctx.qualified_name(func) in LOG_FUNCTIONS and len(call.args) == 1 and not call.keywords:
            return call.args[0]
        method = isinstance(func, ast.Attribute) and not call.args
        if method and self.ctx.qualified_name(func) is None:
            return func.value
        return None

    def _fix(self, log_call: ast.Call, argument: ast.AST, origin):
        softmax = origin.node
        if softmax is not argument:
            return None
        functional = self.ctx.qualified_name(softmax.func) in SOFTMAX_CALLEES
        explicit_dim = any(k.arg == "dim" for k in softmax.keywords) or len(softmax.args) >= (2 if functional else 1)
        method = isinstance(softmax.func, ast.Attribute) and softmax.func.attr == "softmax"
        if not (explicit_dim and method):
            return None
        callee = self.ctx.text(softmax.func)
        replacement = callee[: -len("softmax")] + "log_softmax" + self.ctx.source.slice(self.ctx.end(softmax.func), self.ctx.end(softmax))
        return self.ctx.fix("Use `log_softmax`", Applicability.SAFE, self.ctx.replace(log_call, replacement))


def _number(node: ast.AST | None) -> float | None:
    """The value of a numeric literal (`20`, `-20.0`); None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _number(node.operand)
        return None if inner is None else -inner if isinstance(node.op, ast.USub) else inner
    value = node.value if isinstance(node, ast.Constant) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _saturates(origin) -> bool:
    """Can the value be exactly 0 in float32 for finite logits: softmax output (not written `exp(log_softmax)`),
    or `1 - p` of softmax or sigmoid output (which rounds to 1 for logits above about 17); not a mixture,
    unless a block of it is exact zeros (`torch.cat([p, p.new_zeros(b, k)], 1)`)."""
    if origin.mixture and not origin.padded:
        return False
    if origin.complement:
        return origin.kind in (Kind.PROBABILITIES, Kind.SIGMOID)
    return origin.kind is Kind.PROBABILITIES and not origin.exp_of_log
