import ast

from mllint.analysis.facets.leakage import Leakage
from mllint.analysis.program.effects import ParameterEffects
from mllint.analysis.syntax.names import callee_name, is_self_attribute
from mllint.analysis.values.values import ValueKinds, kept_value
from mllint.rule import Rule

ROOTS = {"torch.sqrt", "numpy.sqrt", "math.sqrt"}
IN_PLACE_GUARDS = frozenset({"clamp_", "clamp_min_", "clip_", "add_", "masked_fill_"})
MAX_CALLS = 4  # names and project functions' returns a denominator is followed back through


class DivisionByStdWithoutEpsilon(Rule):
    """
    ## What it does
    Opt-in (enable it by its code). Reports a division whose denominator is a standard deviation
    computed on the spot, with nothing keeping it away from zero: `(x - x.mean()) / x.std()`,
    `x / torch.std(x, dim=0)`, `adv / adv.std(unbiased=False)`, or a name bound to one (`sigma = x.std(-1,
    keepdim=True)` then `(x - mu) / sigma`, or `self.std = x.std(0)` in `fit` then `/ self.std` in `transform`), or what a
    function of the project returns, in any module (`mu, sd = window_stats(w)` returning `w.mean(-1), w.std(-1)`;
    `torch.std_mean(x, -1)`'s first part too; the root of a variance, `torch.sqrt(x.var(1))`; indexed to add axes, `sd[:, None]`) when that function does not guard it. A denominator with an epsilon
    (`x.std() + 1e-8`) or a clamp (`x.std().clamp(min=eps)`), a division inside `nan_to_num`, and a
    function that compares a std or the variance it is the root of (`if std < 1e-5:`, `torch.where(std > 0, ...)`, `var[var == 0] = 1`) are not reported, nor
    is the std of every element of a whole data set (a column of a table pandas reads, `df["price"].std()`, `df.pop("y")` of a table a project helper reads and cleans,
    also turned into a tensor: `torch.tensor(df.pop("y").values)`,
    or a part a split gives, `y_train.std()`): it is zero only when the data is constant throughout.

    The rule is opt-in because whether a std can be zero depends on the data, which mllint does not
    see: on real training code the divisions it finds are by the std of a whole image volume, of
    hundreds of returns, of Gaussian noise, which are never zero in practice (none of 20 findings on
    public training repositories was a bug). Enable it for code that normalises small or possibly
    constant batches (per-minibatch advantages, features with a constant column).

    ## Why is this bad?
    A constant input (a batch of identical rewards, a padded feature, a batch of one, where the
    unbiased std is `nan`) has a standard deviation of 0: the division gives `inf`/`nan`, which spreads
    through the loss into every weight at the next step. Nothing raises.

    ## Example
    ```python
    import torch

    advantages = torch.ones(4)
    normalized = (advantages - advantages.mean()) / advantages.std()
    ```

    ## Use instead
    ```python
    import torch

    advantages = torch.ones(4)
    normalized = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    ```

    ## Fix safety
    There is no fix: the right epsilon depends on the data's scale.
    """

    code = "ML703"
    name = "division-by-std-without-epsilon"
    message = "division by `{denominator}` with no epsilon: a constant input gives inf/nan"
    requires_any_text = ("/",)  # the std may be computed by a function of another module
    opt_in = True
    opt_in_reason = (
        "whether a std can be zero depends on the data; on real training code it was a whole volume's or "
        "hundreds of values' (0 of 20 findings were bugs)"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._compares_std: dict[ast.AST, bool] = {}  # scope -> does it compare a std with something?

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Div) and self._is_std(node.right) and not self._guarded(node, node.right):
            self.report(node, self.message.format(denominator=self.ctx.text(node.right)))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.Div) and self._is_std(node.value) and not self._guarded(node, node.value):
            self.report(node, self.message.format(denominator=self.ctx.text(node.value)))

    def _guarded(self, division: ast.AST, denominator: ast.AST) -> bool:
        """Inside `nan_to_num(...)`, or in a function (for a `self.` attribute: a class) that compares a std
        with something or clamps one in place (`std.clamp_(min=eps)`)."""
        for ancestor in self.ctx.scopes.ancestors(division):
            if callee_name(ancestor) == "nan_to_num":
                return True
            if isinstance(ancestor, ast.stmt):
                break
        attribute = is_self_attribute(denominator) and self.ctx.scopes.enclosing_class(division)
        scope = attribute or self.ctx.scopes.enclosing_function(division) or self.ctx.tree
        return self._guards(scope, self.ctx)

    def _guards(self, scope: ast.AST, ctx) -> bool:
        """`_compares_a_std`, once per scope (False while it is being worked out: a function returning its own call)."""
        if scope not in self._compares_std:
            self._compares_std[scope] = False
            self._compares_std[scope] = self._compares_a_std(scope, ctx)
        return self._compares_std[scope]

    def _compares_a_std(self, scope: ast.AST, ctx=None) -> bool:
        ctx = ctx or self.ctx
        index = ctx.index

        def spread(node: ast.AST) -> bool:  # a std, or a variance whose root may be one (`v[v == 0] = 1`, `v.add_(eps)`)
            return self._is_std(node, ctx=ctx) or self._std_call(kept_value(ctx, node), ctx, "var")

        std_names = {
            target.id
            for node in index.within(scope, ast.Assign) if spread(node.value)
            for target in node.targets if isinstance(target, ast.Name)
        }  # fmt: skip
        clamped = any(
            isinstance(node.func, ast.Attribute) and node.func.attr in IN_PLACE_GUARDS and spread(node.func.value)
            for node in index.within(scope, ast.Call)
        )  # fmt: skip
        return clamped or any(
            spread(operand) or isinstance(operand, ast.Name) and operand.id in std_names
            for node in index.within(scope, ast.Compare)
            for operand in (node.left, *node.comparators)
        )  # fmt: skip

    def _is_std(self, node: ast.AST, seen: frozenset = frozenset(), ctx=None) -> bool:
        """A std computed on the spot, or a name or `self.` attribute every assignment that reaches it binds
        to one (`sigma = x.std(-1, keepdim=True)`, then `(x - mu) / sigma`; `self.std = x.std(0)` in `fit`), or
        what every `return` of a project function gives back, in any module, when the function does not
        guard it (`mu, sd = window_stats(x)` returning `w.mean(-1), w.std(-1)`). `seen`: the assignments and
        calls followed (`sigma = sigma.clone()` binds a name to its own value)."""
        ctx = ctx or self.ctx
        node = kept_value(ctx, node)  # `x.std(0).detach()`, `sigma.to(device)`
        if isinstance(node, (ast.Name, ast.Attribute)):
            values = ctx.analysis(ValueKinds).assigned_values(node)
            return bool(values) and all(isinstance(v, ast.Call | ast.Subscript) and v not in seen and self._is_std(v, seen | {v}, ctx) for v in values)
        parts = ctx.analysis(ParameterEffects).returned_parts(node) if len(seen) < MAX_CALLS and not self._std_call(node, ctx) else None
        if parts:
            return all(
                part not in seen and self._is_std(part, seen | {part}, home) and not self._guards(function, home)
                for home, function, part in parts
            )  # fmt: skip
        return self._std_call(node, ctx)

    def _std_call(self, node: ast.AST, ctx, spread: str = "std") -> bool:
        """`x.std()`, `torch.std(x, dim=0)`, the std `torch.std_mean(x, -1)` gives first, the root of such a
        variance (`torch.sqrt(x.var(1))`, `v.sqrt()` of `v = torch.var(x, 1)`): not of every element of a whole data set."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) and ctx.qualified_name(node.value.func) == f"torch.{spread}_mean":
            return isinstance(node.slice, ast.Constant) and node.slice.value == 0
        if isinstance(node, ast.Name) and spread == "var":  # `v = x.var(-1)`, then `torch.sqrt(v)`
            values = ctx.analysis(ValueKinds).assigned_values(node)
            return bool(values) and all(isinstance(k := kept_value(ctx, v), ast.Call) and self._std_call(k, ctx, spread) for v in values)
        if not isinstance(node, ast.Call):
            return False
        if spread == "std" and (variance := _root_of(ctx, node)) is not None:
            return self._std_call(kept_value(ctx, variance), ctx, "var")
        if ctx.qualified_name(node.func) == f"torch.{spread}":
            reduced = node.args[0] if len(node.args) == 1 else None
        elif isinstance(node.func, ast.Attribute) and node.func.attr == spread and ctx.qualified_name(node.func) is None:
            reduced = None if node.args else node.func.value  # `x.std()` on a tensor, not `np.std`-like functions
        else:
            return False
        # Every element of a whole data set (a table's column, a training split) is constant only in broken data.
        whole = reduced is not None and not any(k.arg in ("dim", "axis") for k in node.keywords)
        return not (whole and ctx.analysis(Leakage).data_set(reduced))

def _root_of(ctx, call: ast.Call) -> ast.AST | None:
    """What `torch.sqrt(v)`, `np.sqrt(v)` or `v.sqrt()` takes the root of."""
    if ctx.qualified_name(call.func) in ROOTS and len(call.args) == 1:
        return call.args[0]
    if isinstance(call.func, ast.Attribute) and call.func.attr == "sqrt" and not call.args and ctx.qualified_name(call.func) is None:
        return call.func.value
    return None

