"""The terms of a backpropagated loss, with their signs, and the ones whose sign is a known mistake.

`summands(ctx, loss, binding)` writes a loss as the terms it sums, wherever they are computed: across
`+`/`-` (also under a reduction, which is linear: `(a - b).mean()`), through the assignments of a name (`+=` adds one), and into the functions of the project that
return the loss or a part of it (`loss = model(x, y)` whose `forward` returns `task + beta * reg`, `loss,
logs = elbo_loss(...)`, `criterion(outputs, y)` of a plain class's `__call__`, `model.compute_loss(x)`),
each term read in its own file, its function's parameters holding the flows the call gives them.

`signed_terms` writes a loss as a sum of terms with signs, through single local assignments, unary minus,
sums and differences, reductions (`.mean()`, `torch.sum`) and scalings by coefficients (`ent_coef *
entropy`, `0.5 * v_loss`, `/ n`), and the gradient a backward is seeded with (`d_real.backward(mone)`
with `mone = -1 * one`). Each term remembers the names it was reached through.

`entropy_bonus_minimized`: in an actor-critic loss (a term reads a policy or advantage, by its name or
as a log-likelihood by where it comes from: `log_softmax(...).gather(1, a) * returns`), an entropy
term (`dist.entropy()`, `-(p * log_p).sum()`, a log-probability read through a name that says entropy)
whose sign makes minimizing the loss minimize the entropy.

`critic_terms`: the outputs of a WGAN critic (`netD(fake).mean()`) that backward passes take as plain
terms, with the sign each is minimized with and whether the critic scores generated samples cut from
the generator (its own step) or not (the generator's step).
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, replace

from mllint.analysis.facets.gradients import (
    CUT_FUNCTIONS, FLAG_METHODS, GRAPH, LISTING_FUNCTIONS, NO_GRAPH_FUNCTIONS, NO_GRAPH_METHODS, Flow, GradientFlow, Given, State,
    backward_loss, is_cut_method, is_torch_function, managed_losses, requires_grad, under_no_grad,
)
from mllint.analysis.facets.parameters import is_module
from mllint.analysis.objects.call_sites import under
from mllint.analysis.objects.constants import constant_sign
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.program.callers import MAX_SITES, Callers, per_call_site
from mllint.analysis.program.calls import ANY_MODULE, bind_arguments
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.facets.objectives import JOINING_FUNCTIONS, LOG_LIKELIHOOD, REDUCING_FUNCTIONS, REDUCING_METHODS, factor_sign, objective
from mllint.analysis.syntax.scopes import FUNCTION_NODES, parameter_defaults
from mllint.analysis.syntax.tree import position, same_expression
from mllint.analysis.values.reaching import MAX_DEPTH
from mllint.analysis.values.values import Kind, ValueKinds

# A factor of a product that scales a term rather than being one (`ent_coef * entropy`).
COEFFICIENT = re.compile(r"coef|coeff|weight|lambda|lam\b|^lam|alpha|beta|scale|^c_|_c$|factor|ratio_w", re.IGNORECASE)
ENTROPY_NAME = re.compile(r"entrop|^ent$|^ent_|_ent$", re.IGNORECASE)
NEGATED_NAME = re.compile(r"neg_?entrop|negentrop|entropy_loss", re.IGNORECASE)  # the sign the name does not say
POLICY_TEXT = re.compile(r"pg_|pg$|policy|actor|surr|adv|ratio|log_?probs?\b|log_?pi\b", re.IGNORECASE)
PROBABILITY_TEXT = re.compile(r"prob|exp|softmax|pi\b", re.IGNORECASE)
LOG_TEXT = re.compile(r"log(?!it)", re.IGNORECASE)  # not `logits`
LOG_PROBABILITY = re.compile(r"log_?prob|log_?pi\b|log_softmax", re.IGNORECASE)
# WGAN: the critic, the generator, generated samples, and what keeps a value's sign.
CRITIC_NAME = re.compile(r"^(D|netD|net_d|netd|D_\w+|critic\w*|disc|discriminator\w*|dis|model_d)$")
GENERATOR_NAME = re.compile(r"^(G|netG|net_g|netg|G_\w+|gen|generator\w*|model_g)$")
FAKE_NAME = re.compile(r"fake|gen_|generated", re.IGNORECASE)
SHAPING = frozenset({"view", "squeeze", "reshape", "flatten", "view_as", "unsqueeze"})
# What a module must mention for its functions' returns to be read for signed terms (entropies, critics).
SIGNED_WORDS = re.compile(rb"entrop|log_?prob|log_softmax|log_pi|critic|netD|disc|wasserstein")
MAX_SUM_DEPTH = 8  # how many assignments and sums deep the terms of a loss are followed
SCALING = frozenset({"div", "mul", "true_divide", "divide", "multiply"})  # `loss.div(n)`: a tensor scaled
SCALING_FUNCTIONS = frozenset(f"torch.{name}" for name in SCALING)
ALL_VALUES = "*values"  # the index of a term that stands for each value of a dict
MAX_CALLS = 2  # calls followed into, one inside the other, for the terms their functions return
COMBINING = frozenset({f"torch.{n}" for n in ("min", "max", "minimum", "maximum", "clamp", "clip", "where")})
MAX_POLICY_DEPTH = 5  # names and operations a policy term is read back through (`s2 = r.clamp(...) * adv`)
MAX_ITEMS = 8  # values of a name (or items of a list) a policy term is read back through


@dataclass(frozen=True)
class Term:
    sign: int
    node: ast.AST
    through: tuple[str, ...] = ()  # the names the term was reached through, outermost first
    uses: tuple[ast.AST, ...] = ()  # where each of those names (and calls) of the linted file is read
    ctx: object = None  # the file holding `node` when it is a callee's (None: the linted file)
    path: str = ""  # that file as findings show it
    added: tuple | None = None  # (node, path): where a callee adds the term into the sum it returns
    caller: tuple | None = None  # (the callee, its arguments by parameter, the caller's `Term`) in a callee

    def place(self, ctx) -> str:
        return place_in(ctx, self.node, self.ctx, self.path)


def place_in(ctx, node: ast.AST, home, path: str) -> str:
    """Where a term is, as the linted file `ctx`'s message says it: `line 12`, or `losses.py:12` for a term
    a function of the project returns (its own file's too: `ppo.py:28`, since the finding is at the call)."""
    return f"{path or os.path.basename(ctx.path)}:{node.lineno}" if home is not None else f"line {node.lineno}"


@dataclass(frozen=True)
class Summand:
    """A term of a loss, in the file that computes it."""

    node: ast.AST
    ctx: object  # the file whose tree holds `node`
    binding: object  # what that file's parameters hold: the question's call site, or a callee's `Given`
    call: ast.Call | None = None  # the linted file's call the term was reached through (None: its own term)
    callee: str = ""  # the function that returns it (`OrthoClassifier.forward`)
    path: str = ""  # the callee's file as findings show it ("" for the linted file)
    reduced: ast.AST | None = None  # the reduction it was split out of (`b` of `(a - b).mean()`), if any
    added: tuple | None = None  # (sum, its file, path): where a callee adds into its loss what a function it calls returns

    def joined(self, ctx) -> str | None:
        """Where the term joins the loss, when a function of the project adds it there and another computes
        it (`loss = ce + w * (1 - dice)` of `dice = dice_score(...)`): `segmodel.py:40`; None otherwise."""
        if self.added is None:
            return None
        node, home, path = self.added
        scope = home.scopes.enclosing_function
        return None if home is self.ctx and scope(node) is scope(self.node) else place_in(ctx, node, home, path)


def summands(ctx, loss: ast.AST, binding=None) -> list[Summand]:
    """The terms `loss` sums. Breadth first, each expression once, at the fewest steps that reach it:
    however many ways lead to a term (`loss += ...` under N flags), it costs one visit."""
    found: list[Summand] = []
    seen = {loss}
    pending = [(Summand(loss, ctx, binding), None, 0, 0)]
    while pending:
        item, index, depth, calls = pending.pop(0)
        parts = _parts(item, index, calls) if depth < MAX_SUM_DEPTH else None
        if parts is None:
            found.append(item)
            continue
        for part, part_index, deeper in parts:
            if part.node not in seen:
                seen.add(part.node)
                pending.append((part, part_index, depth + 1, calls + deeper))
    return found


def _parts(item: Summand, index: int | None, calls: int) -> list[tuple[Summand, int | None, int]] | None:
    """What a term sums, with the element of a returned tuple taken (None: it is a term itself)."""
    expr, ctx = item.node, item.ctx
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)) and index is None:
        if _straight_through(expr):
            return None  # `y_hard - y_soft.detach() + y_soft`: one term, the estimator
        if item.call is not None and item.added is None:  # the sum of the first callee that adds the term
            item = replace(item, added=(expr, item.ctx, item.path))
        return [(_within(item, expr.left), None, 0), (_within(item, expr.right), None, 0)]
    if index is None and (total := _scaled_sum(item, expr)) is not None:  # `(nll + kl) / n`: each term, scaled
        return [(_within(item, total.left), None, 0), (_within(item, total.right), None, 0)]
    if index is None and (total := _reduced_sum(item, expr)) is not None:  # `(a - b).mean()`: each term, reduced
        return [(replace(_within(item, total.left), reduced=expr), None, 0), (replace(_within(item, total.right), reduced=expr), None, 0)]
    if index is None and _summed_values(expr) is not None:  # `sum(losses.values())`: each value of the dict
        return [(_within(item, _summed_values(expr)), ALL_VALUES, 0)]
    if isinstance(expr, ast.Dict) and index is ALL_VALUES:
        return [(_within(item, v), None, 0) for v in expr.values]
    if isinstance(expr, ast.Dict) and isinstance(index, str):  # `{"loss": total, ...}` read at `out["loss"]`
        return [(_within(item, v), None, 0) for k, v in zip(expr.keys, expr.values) if isinstance(k, ast.Constant) and k.value == index] or None
    if isinstance(expr, ast.IfExp):  # `return (loss, logits) if return_outputs else loss`: either arm
        return [(_within(item, expr.body), index, 0), (_within(item, expr.orelse), index, 0)]
    if isinstance(expr, ast.Attribute) and index is None and calls < MAX_CALLS:  # `model.aux_loss` its forward sets
        return _written(item)
    scaled = _weighted(item, expr) if index is None and calls < MAX_CALLS else None
    if scaled is not None:  # `cfg["ent_w"] * model.aux_loss`: the term the weight scales
        return _written(_within(item, scaled))
    if isinstance(expr, ast.Call) and index is None and _summed_list(ctx, expr) is not None:
        return [(_within(item, e), None, 0) for e in _summed_list(ctx, expr)]
    if isinstance(expr, ast.Call) and calls < MAX_CALLS:
        return _returned(item, index)
    element = expr.slice.value if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) else None
    if isinstance(element, int) and isinstance(expr.value, ast.Call) and index is None:  # `f(...)[0]`, `loss, logs = f(...)`
        return [(_within(item, expr.value), element, 0)]
    if isinstance(element, str) and isinstance(expr.value, (ast.Call, ast.Name)) and index is None:  # `out["loss"]`, `out = model(x)`
        return [(_within(item, expr.value), element, 0)]
    if not isinstance(expr, ast.Name) or isinstance(index, int):
        return None
    parts = []
    for definition in ctx.analysis(ValueKinds).reaching_definitions(expr):
        if position(definition.node) > position(expr):
            continue  # from the previous iteration (`loss = loss.detach()` after its backward)
        statement = ctx.scopes.parent(definition.node)
        if definition.value is not None:
            parts.append((_within(item, definition.value), index, 0))
        elif index is not None:
            return None
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.op, (ast.Add, ast.Sub)):
            parts += [(_within(item, statement.value), None, 0), (_within(item, definition.node), None, 0)]
    if isinstance(index, str):  # `logs["kl"]` of `logs["kl"] = kl.item()`: what is stored there
        parts += [(_within(item, value), None, 0) for value in ctx.analysis(ValueKinds).stored_items(expr, index)]
    return parts or None


def _scaled_sum(item: Summand, expr: ast.AST) -> ast.BinOp | None:
    """`nll + kl` of `(nll + kl) / n`, `0.5 * (a + b) / len(x)` or `(a + b).div(n)`: a sum scaled by weights
    (`_weight`), one or several."""
    node = expr
    while (scaled := _scaled_part(item, node)) is not None:
        node = scaled
    summed = node is not expr and isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))
    return node if summed and not _straight_through(node) else None


def _reduced_sum(item: Summand, expr: ast.AST) -> ast.BinOp | None:
    """`a - b` of `(a - b).mean()`, `torch.sum(a + b, dim=1)` or `(a + b).sum(1).mean()`, also scaled by
    weights between the reductions (`torch.mean(torch.sum(a + b, 1) / n_valid)`): a reduction is linear, so it
    sums the reductions of the terms (not `((a - b) ** 2).mean()`, whose terms are not the loss's)."""
    ctx, reduced, reductions = item.ctx, expr, 0
    while isinstance(reduced, ast.Call | ast.BinOp):
        if isinstance(reduced, ast.Call) and isinstance(reduced.func, ast.Attribute) and reduced.func.attr in REDUCING_METHODS and ctx.qualified_name(reduced.func) is None:
            reduced, reductions = reduced.func.value, reductions + 1
        elif isinstance(reduced, ast.Call) and ctx.qualified_name(reduced.func) in REDUCING_FUNCTIONS and reduced.args:
            reduced, reductions = reduced.args[0], reductions + 1
        elif reductions and (scaled := _scaled_part(item, reduced)) is not None:
            reduced = scaled
        else:
            break
    summed = reductions and isinstance(reduced, ast.BinOp) and isinstance(reduced.op, (ast.Add, ast.Sub))
    return reduced if summed and not _straight_through(reduced) else None


def _straight_through(total: ast.BinOp) -> bool:
    """A sum that adds a value and subtracts its detached copy (`y_hard - y_soft.detach() + y_soft`, `z + (zq -
    z).detach()`, `a - a.detach()`): a straight-through estimator, whose terms are read together, as they are
    when the sum is bound to a name first (`y = ...; (y * cost).sum(1)`): the cut is not a term's."""
    terms = [(node, sign, _detached(node)) for node, sign in _signed_leaves(total, 1)]
    kept = [(node, sign) for node, sign, copy in terms if copy is None]
    cancelled = [(inner, -sign * inner_sign) for _, sign, copy in terms if copy is not None for inner, inner_sign in _signed_leaves(copy, 1)]
    return any(s == t and same_expression(a, b) for a, s in cancelled for b, t in kept)


def _signed_leaves(node: ast.AST, sign: int) -> list[tuple[ast.AST, int]]:
    """The terms a `+`/`-` sum adds, each with its sign."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return [*_signed_leaves(node.left, sign), *_signed_leaves(node.right, -sign if isinstance(node.op, ast.Sub) else sign)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _signed_leaves(node.operand, -sign)
    return [(node, sign)]


def _detached(node: ast.AST) -> ast.AST | None:
    """`x` of `x.detach()` or `x.data`."""
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
        return node.func.value
    return node.value if isinstance(node, ast.Attribute) and node.attr == "data" else None


def _scaled_part(item: Summand, node: ast.AST) -> ast.AST | None:
    """What `node` scales by a weight: `t` of `t / n`, `w * t`, `t.div(n)`, `torch.mul(t, w)`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        pairs = ((node.left, node.right),) if isinstance(node.op, ast.Div) else ((node.left, node.right), (node.right, node.left))
    elif isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and isinstance(node.func, ast.Attribute) and node.func.attr in SCALING:
        pairs = ((node.func.value, node.args[0]),)
    elif isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords and item.ctx.qualified_name(node.func) in SCALING_FUNCTIONS:
        pairs = ((node.args[0], node.args[1]),)
    else:
        return None
    terms = [term for term, weight in pairs if _weight(item, weight)]
    return next((t for t in terms if isinstance(t, ast.BinOp | ast.Call)), terms[0] if terms else None)  # not the weight of `w * (a - b)`


def _weight(item: Summand, node: ast.AST) -> bool:
    """A weight a term is scaled by: written plainly (a name, a constant, `self.w`, `cfg["w"]`, products of
    those), or of any form that carries no graph (`x.size(0)`, `len(batch)`, `math.sqrt(d)`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        return _weight(item, node.left) and _weight(item, node.right)
    plain = isinstance(node, ast.Name | ast.Constant | ast.Attribute) or (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant))
    return plain or item.ctx.analysis(GradientFlow).flow(node, item.binding).state is State.NONE


def _summed_list(ctx, call: ast.Call) -> list[ast.AST] | None:
    """The items `sum(terms)` adds (`ValueKinds.listed_items`: `terms.append(lam * center_loss)`)."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "sum" and len(call.args) == 1 and isinstance(call.args[0], ast.Name)):
        return None
    return ctx.analysis(ValueKinds).listed_items(call.args[0])


def _within(item: Summand, node: ast.AST) -> Summand:
    return Summand(node, item.ctx, item.binding, item.call, item.callee, item.path, item.reduced, item.added)


def _returned(item: Summand, index: int | None) -> list[tuple[Summand, int | None, int]] | None:
    """The terms a function of the project returns for a call: what each `return` gives (its `index`-th
    element when the caller unpacks a tuple), read in the callee's file under the flows the call gives."""
    call, ctx = item.node, item.ctx
    flows = ctx.analysis(GradientFlow)
    found = flows.callee(call, item.binding, followed=ANY_MODULE)  # the cut may be in a module it calls
    returned = function_returns(found[0].function) if found is not None else None
    if not returned:
        return None
    callee, skips_first = found
    given = Given(callee.function, {
        name: _argument_flow(item, argument)
        for name, argument in bind_arguments(call, callee.function, skips_first).items() if argument is not None
    })  # fmt: skip
    returned = _indexed(returned, index)
    cls = callee.ctx.scopes.enclosing_class(callee.function)
    name = f"{cls.name}.{callee.function.name}" if cls is not None else callee.function.name
    path = "" if callee.ctx is ctx and not item.path else ctx.analysis(ProjectView).display_path(callee.ctx.real_path or callee.ctx.path)
    outer = item.call if item.call is not None else call
    return [(Summand(r, callee.ctx, given, outer, name, path, added=item.added), None, 1) for r in returned] or None


def _argument_flow(item: Summand, argument: ast.AST) -> Flow:
    """The flow a call gives a parameter: its argument's, or a graph for a module and for an output of a
    module of unknown flow (`self.model(images)` of a trainer given its model, or a name bound only to one),
    or what differentiable calls compute from one (`torch.sigmoid(out)`)."""
    flow = item.ctx.analysis(GradientFlow).flow(argument, item.binding)
    if flow.state is not State.UNKNOWN:
        return flow
    if is_module(item.ctx, argument):
        return GRAPH  # `self.projectors` a loss runs the features through
    ctx = item.ctx
    output = lambda e: isinstance(e, ast.Call) and is_module(ctx, e.func)
    outputs = lambda e: all(map(output, ctx.analysis(ValueKinds).reaching_values(e) or [None])) if isinstance(e, ast.Name) else output(e)
    return GRAPH if outputs(argument) or outputs(_differentiated(ctx, argument)) else flow


def _differentiated(ctx, expr: ast.AST) -> ast.AST:
    """The tensor a chain of differentiable calls computes `expr` from, the first operand of each: `out` of
    `torch.sigmoid(out)`, `F.interpolate(out.softmax(1), size)`: a graph it carries, they carry. Not through
    a cut (`CUT_FUNCTIONS`, `is_cut_method`), a size, a call of a module or of its method."""
    while isinstance(expr, ast.Call):
        func, name = expr.func, ctx.qualified_name(expr.func)
        if is_torch_function(name) and expr.args:
            if name in CUT_FUNCTIONS or name in LISTING_FUNCTIONS or name in NO_GRAPH_FUNCTIONS or requires_grad(expr):
                break
            expr = expr.args[0]
        elif isinstance(func, ast.Attribute) and name is None and func.attr not in NO_GRAPH_METHODS | FLAG_METHODS:
            if is_cut_method(expr) or is_module(ctx, func) or is_module(ctx, func.value):
                break
            expr = func.value
        else:
            break
    return expr


def _indexed(returned: list[ast.AST], index) -> list[ast.AST]:
    """What a caller takes of the values a function returns: each whole (None), each dict value
    (`ALL_VALUES`), a dict's value at a key (`out["loss"]`), a tuple's element (`loss, logs = f(...)`);
    both arms of a conditional return."""
    arms = [a for r in returned for a in ((r.body, r.orelse) if isinstance(r, ast.IfExp) and index is not None else (r,))]
    if index is ALL_VALUES:
        return [v for r in arms if isinstance(r, ast.Dict) for v in r.values]
    if isinstance(index, str):
        return [v for r in arms if isinstance(r, ast.Dict) for k, v in zip(r.keys, r.values) if isinstance(k, ast.Constant) and k.value == index]
    if index is not None:
        return [r.elts[index] for r in arms if isinstance(r, ast.Tuple) and index < len(r.elts)]
    return returned


def _summed_values(expr: ast.AST) -> ast.AST | None:
    """`losses` of `sum(losses.values())`."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "sum" and len(expr.args) == 1):
        return None
    values = expr.args[0]
    plain = isinstance(values, ast.Call) and isinstance(values.func, ast.Attribute) and values.func.attr == "values" and not values.args
    return values.func.value if plain and isinstance(values.func.value, ast.Name) else None


def _weighted(item: Summand, expr: ast.AST) -> ast.Attribute | None:
    """`model.aux_loss` of `w * model.aux_loss` (`w` a `_weight`)."""
    if not (isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult)):
        return None
    for weight, term in ((expr.left, expr.right), (expr.right, expr.left)):
        if isinstance(term, ast.Attribute) and not (isinstance(term.value, ast.Name) and term.value.id == "self") and _weight(item, weight):
            return term
    return None


def _written(item: Summand) -> list[tuple[Summand, int | None, int]] | None:
    """The values the methods of an object's project class write to the attribute a term reads
    (`model.aux_loss` set in `forward`), each read in the class's file."""
    expr, ctx = item.node, item.ctx
    if isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return None
    binding, objects = None if isinstance(item.binding, Given) else item.binding, ctx.analysis(Objects)
    written = objects.written_in_class(under(ctx, expr.value, binding), expr.attr)
    if not written and binding is None:  # `self.net.last_reg` of `self.net = net`: as each construction passes it
        ask = lambda site: objects.written_in_class(under(ctx, expr.value, site), expr.attr) or None  # noqa: E731
        written = list(dict.fromkeys(w for found, _ in per_call_site(ctx, expr.value, ask) for w in found))
    if not written:
        return None
    parts = []
    for home, function, target, value in written:
        if not isinstance(home.scopes.parent(target), ast.Assign):  # a part of a tuple, a loop variable
            continue
        cls = home.scopes.enclosing_class(function)
        path = "" if home is ctx and not item.path else ctx.analysis(ProjectView).display_path(home.real_path or home.path)
        outer = item.call if item.call is not None else expr
        parts.append((Summand(value, home, Given(function, {}), outer, f"{cls.name}.{function.name}", path), None, 1))
    return parts or None


def factors(term: ast.AST) -> list[ast.AST]:
    """`beta * kl.item()` -> `beta`, `kl.item()`; `-x / n` -> `x`, `n`."""
    if isinstance(term, ast.UnaryOp) and isinstance(term.op, ast.USub):
        return factors(term.operand)
    if isinstance(term, ast.BinOp) and isinstance(term.op, (ast.Mult, ast.Div)):
        return factors(term.left) + factors(term.right)
    return [term]


def signed_terms(ctx, expr: ast.AST, sign: int = 1) -> list[Term]:
    """The terms `expr` sums with their signs, into the project functions that return them (`loss =
    ppo_loss(...)`, `actor, critic, entropy = compute_losses(...)`), each read in its own file."""
    found: list[Term] = []
    pending: list = [(expr, sign, (), (), 0, Term(sign, expr), 0)]
    while pending:
        node, sign, through, use, depth, home, calls = pending.pop()
        here = home.ctx or ctx
        values = here.analysis(ValueKinds)
        term = Term(sign, node, through, use, home.ctx, home.path, home.added)
        if depth > MAX_DEPTH:  # names, calls and lists count; a step into a sub-expression does not
            found.append(term)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            pending.append((node.operand, -sign if isinstance(node.op, ast.USub) else sign, through, use, depth, home, calls))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            for operand, operand_sign in ((node.left, sign), (node.right, -sign if isinstance(node.op, ast.Sub) else sign)):
                added = home if home.ctx is None or home.added else replace(home, added=(operand, home.path))
                pending.append((operand, operand_sign, through, use, depth, added, calls))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)) and _scaled(node, values) is not None:
            inner, factor = _scaled(node, values)
            pending.append((inner, sign * _coefficient_sign(ctx, factor, home), through, use, depth, home, calls))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and (labelled := _constant_factor(ctx, node, home)) is not None:
            inner, factor = labelled  # `label * scores` with `label` a constant the call passes (`FAKE = 1.0`)
            pending.append((inner, sign * factor, through, use, depth, home, calls))
        elif _reduced(here, node) is not None:
            pending.append((_reduced(here, node), sign, through, use, depth, home, calls))
        elif isinstance(node, ast.Name) and (passed := _passed(values, node, home)) is not None:
            argument, caller = passed  # what the call gives a parameter, read in the caller's file (the
            # parameter's name is one the term is reached through: `log_probs` of `-log_probs.mean()`)
            pending.append((argument, sign, (*through, node.id), use, depth + 1, replace(caller, added=home.added), calls))
        elif isinstance(node, ast.Name) and (items := values.listed_items(node)):  # `torch.stack(entropies)`: each item
            entered = (*use, node) if home.ctx is None else use
            pending += [(i, sign, (*through, node.id), entered, depth + 1, home, calls) for i in items]
        elif isinstance(node, ast.Name) and (assigned := values.reaching_values(node)) is not None and len(assigned) == 1:
            pending.append((assigned[0], sign, (*through, node.id), (*use, node) if home.ctx is None else use, depth + 1, home, calls))
        elif calls < MAX_CALLS and (returned := _callee_returns(here, node, home, ctx)) is not None:
            entered = (*use, node) if home.ctx is None else use
            named = (*through, returned[0][1].caller[0].name) if not isinstance(node, ast.Subscript) and _one_term(returned) else through  # `entropy_bonus(logp)`
            pending += [(r, sign, named, entered, depth + 1, replace(callee, added=home.added), calls + 1) for r, callee in returned]
        else:
            found.append(term)
    return found


def _callee_returns(ctx, node: ast.AST, home: Term, linted=None) -> list[tuple[ast.AST, Term]] | None:
    """What the project function a call runs returns (the element a caller unpacks: `f(...)[2]`), each
    with the file it is in (as a `Term` holding `ctx` and `path`)."""
    index = None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, (int, str)):
        node, index = node.value, node.slice.value
        assigned = ctx.analysis(ValueKinds).reaching_values(node) if isinstance(node, ast.Name) else None
        node = assigned[0] if assigned and len(assigned) == 1 and isinstance(assigned[0], ast.Call) else node  # `terms["entropy"]` of `terms = f(...)`
    if _entropy_call(node):
        return None  # the entropy itself, however the method computes it
    flows = ctx.analysis(GradientFlow)
    asked = (lambda binding: flows.callee(node, binding, followed=SIGNED_WORDS)) if isinstance(node, ast.Call) else None
    found = next((f for f, _ in per_call_site(ctx, node, asked, linted)), None) if asked is not None else None  # `agent.act(obs)` of a parameter
    if found is None or found[0].function.name == "forward":
        return None  # a module's output is a term itself (`D(fake)`)
    returned = function_returns(found[0].function)
    if not returned:
        return None
    returned = _indexed(returned, index)
    callee = found[0].ctx
    path = home.path if callee is ctx else ctx.analysis(ProjectView).display_path(callee.real_path or callee.path)
    arguments = bind_arguments(node, found[0].function, found[1])
    caller = (found[0].function, arguments, home)
    return [(r, Term(0, r, ctx=callee, path=path, caller=caller)) for r in returned] or None


def _one_term(returned: list[tuple[ast.AST, Term]]) -> bool:
    """Does a function return one term, not a sum (`return -log_probs.mean()`, not `return pg + c * ent`):
    then its name names that term."""
    for node, callee in returned:
        values = callee.ctx.analysis(ValueKinds)
        assigned = values.reaching_values(node) if isinstance(node, ast.Name) else [node]
        if assigned is None or len(assigned) != 1 or isinstance(assigned[0], (ast.BinOp, ast.Subscript)) and not _scaled_term(assigned[0]):
            return False
    return True


def _scaled_term(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))


def _passed(values: ValueKinds, name: ast.Name, home: Term) -> tuple[ast.AST, Term] | None:
    """The argument a callee's parameter holds at the call the term was reached through, and the caller."""
    if home.caller is None:
        return None
    function, arguments, caller = home.caller
    definitions = values.reaching_definitions(name)
    if len(definitions) != 1 or definitions[0].node is not function or arguments.get(name.id) is None:
        return None
    return arguments[name.id], caller


def _constant_factor(ctx, product: ast.BinOp, home: Term) -> tuple[ast.AST, int] | None:
    """(the term, the sign) of a product by a constant of known sign, read through the parameters of the
    calls the term was reached through: `label * scores` in `wasserstein(scores, label)` called with `FAKE`
    (`REAL, FAKE = -1.0, 1.0`)."""
    for term, factor in ((product.right, product.left), (product.left, product.right)):
        sign = _passed_sign(ctx, factor, home)
        if sign:
            return term, sign
    return None


def _passed_sign(ctx, factor: ast.AST, home: Term, depth: int = 0) -> int:
    """The sign of a constant factor, a parameter read as what the call the term was reached through passes
    for it, else as every call site (or construction, for `self.w`) of the project passes, the default where
    one passes none: all agreeing, or 0 (unknown)."""
    values = (home.ctx or ctx).analysis(ValueKinds)
    passed = _passed(values, factor, home) if isinstance(factor, ast.Name) and depth < MAX_DEPTH else None
    if passed is not None:
        return _passed_sign(ctx, passed[0], passed[1], depth + 1)
    parameter = _held_parameter(values, factor)
    if parameter is None:
        return constant_sign(values, factor)
    function, name = parameter
    sites = [b for b in ctx.analysis(Callers).bindings_in(values.ctx, function) if b.site is not None]
    arguments = [b.argument(name) for b in sites] if len(sites) < MAX_SITES else [None]
    signs = {constant_sign(a[0].analysis(ValueKinds), a[1]) if a is not None else 0 for a in arguments}
    if not sites and name in parameter_defaults(function):
        signs = {constant_sign(values, parameter_defaults(function)[name])}  # no call site known: its default
    return signs.pop() if len(signs) == 1 else 0


def _held_parameter(values: ValueKinds, factor: ast.AST) -> tuple[ast.AST, str] | None:
    """(the function, the parameter) a coefficient holds: a parameter name, or `self.w` of `self.w = w`."""
    if isinstance(factor, ast.Name):
        definitions = values.reaching_definitions(factor)
        found = len(definitions) == 1 and isinstance(definitions[0].node, FUNCTION_NODES)
        return (definitions[0].node, factor.id) if found else None
    held = values.ctx.analysis(Objects).points_to(factor) if isinstance(factor, ast.Attribute) else None
    obj = next(iter(held)) if held and len(held) == 1 else None
    return (obj.node, obj.name) if obj is not None and obj.kind == "parameter" else None


def _coefficient_sign(ctx, factor: ast.AST, home: Term) -> int:
    """The sign a term is scaled with: a constant's or what the parameters it holds are passed
    (`_passed_sign`), 0 when those disagree or are unknown; a factor that holds no parameter, as written."""
    values = (home.ctx or ctx).analysis(ValueKinds)
    if isinstance(factor, ast.Name) and _passed(values, factor, home) is not None or _held_parameter(values, factor) is not None:
        return _passed_sign(ctx, factor, home)
    return constant_sign(values, factor) or factor_sign(home.ctx or ctx, factor)


def _scaled(product: ast.BinOp, values: ValueKinds) -> tuple[ast.AST, ast.AST] | None:
    """(the term, the coefficient) of `c * term`, `term * c`, `term / n`."""
    if isinstance(product.op, ast.Div):
        return product.left, product.right
    for term, factor in ((product.right, product.left), (product.left, product.right)):
        if _is_coefficient(factor) or _holds_number(values, factor):
            return term, factor
    return None


def _holds_number(values: ValueKinds, node: ast.AST) -> bool:
    """A name bound to a number: assigned one, or a parameter defaulting to one (`def f(..., w=0.05)`)."""
    if not isinstance(node, ast.Name):
        return False
    definitions = values.reaching_definitions(node)
    defaults = [parameter_defaults(d.node).get(node.id) if isinstance(d.node, FUNCTION_NODES) else d.value for d in definitions]
    return bool(defaults) and all(isinstance(v, ast.Constant) and type(v.value) in (int, float) for v in defaults)


def _is_coefficient(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _is_coefficient(node.operand)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return bool(COEFFICIENT.search(node.slice.value))  # `cfg["ent_coef"]`
    last = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return bool(last) and bool(COEFFICIENT.search(last))


def _reduced(ctx, node: ast.AST) -> ast.AST | None:
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr in REDUCING_METHODS and ctx.qualified_name(node.func) is None:
        return node.func.value
    if ctx.qualified_name(node.func) in REDUCING_FUNCTIONS | JOINING_FUNCTIONS and node.args:
        return node.args[0]  # a reduction, or the tensor of a list's items (`torch.stack(entropies)`)
    if isinstance(node.func, ast.Name) and node.func.id == "sum" and ctx.qualified_name(node.func) is None and len(node.args) == 1:
        return node.args[0]  # `sum(entropies)`: the sum of a list's items
    return None


def entropy_sign(ctx, term: Term) -> int:
    """+1 when the term is an entropy, -1 when it is a negative entropy, 0 when it is neither."""
    node, ctx = term.node, term.ctx or ctx
    while (reduced := _reduced(ctx, node)) is not None:
        node = reduced  # a term cut short by the depth bound: `(p * log p).sum(-1).mean()` is `p * log p`'s
    if _entropy_call(node):
        return 1
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        texts = (_made_text(ctx, node.left), _made_text(ctx, node.right))
        if any(_probability_text(a) and LOG_TEXT.search(b) for a, b in (texts, texts[::-1])):
            return -1  # `p * log p`, `log_p.exp() * log_p`
        if _probabilities_times_logs(ctx, node.left, node.right):
            return -1  # `dist.probs * dist.logits` of a Categorical: its logits are log-probabilities
        return 0  # a product the values do not tell: the name it was assigned to says nothing of its sign
    own = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    last = term.through[-1] if term.through else own
    text = ctx.text(node)
    logs = bool(LOG_PROBABILITY.search(text)) or (bool(LOG_TEXT.search(text)) and not PROBABILITY_TEXT.search(text))
    named = [i for i, n in enumerate(term.through) if ENTROPY_NAME.search(n)]
    logs = logs or bool(named) and any(LOG_PROBABILITY.search(n) for n in term.through[named[-1] + 1:])  # `entropy_est` of a parameter `log_probs`
    if last and ENTROPY_NAME.search(last) and not NEGATED_NAME.search(last):
        return -1 if logs else 1  # `entropy = dist.entropy()`, or unpacked from the policy's evaluation
    if logs and any(ENTROPY_NAME.search(n) for n in term.through):
        return -1  # a log-probability read through `entropy...`: its mean is the negative entropy
    return 0


def _entropy_call(node: ast.AST) -> bool:
    """`dist.entropy()`, `self.policy.entropy(obs)`, `entropy(logits)`: a call that names the entropy."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) == "entropy"


def _probability_text(text: str) -> bool:
    """`probs`, `F.softmax(...)`, and the exponential of a log-probability (`log_p.exp()`, `torch.exp(log_p)`)."""
    if not PROBABILITY_TEXT.search(text):
        return False
    return not LOG_TEXT.search(text) or text.endswith(".exp()") or text.startswith(("torch.exp(", "exp("))


def _probabilities_times_logs(ctx, left: ast.AST, right: ast.AST) -> bool:
    """Probabilities times log-probabilities, as the values tell (`F.softmax(z) * F.log_softmax(z)`, a
    Categorical's `.probs * .logits`; a Bernoulli's `.logits` are log-odds)."""
    view = ctx.analysis(ProjectView)
    return {getattr(view.origin(side), "kind", None) for side in (left, right)} == {Kind.PROBABILITIES, Kind.LOG_PROBABILITIES}


def _made_text(ctx, node: ast.AST) -> str:
    """A factor's text, or for a name assigned once, its value's (`p` of `p = F.softmax(logits, -1)`)."""
    assigned = ctx.analysis(ValueKinds).reaching_values(node) if isinstance(node, ast.Name) else None
    return ctx.text(assigned[0]) if assigned is not None and len(assigned) == 1 else ctx.text(node)


def entropy_bonus_minimized(ctx, loss: ast.AST) -> Term | None:
    """The entropy term of an actor-critic loss that minimizing the loss minimizes."""
    terms = signed_terms(ctx, loss)
    found = next((t for t in terms if t.sign * entropy_sign(ctx, t) > 0), None)
    return found if any(t is not found and _policy_term(ctx, t) for t in terms) else None  # not SAC's temperature loss


def _policy_term(ctx, term: Term) -> bool:
    """A term that reads a policy: named so (`pg_loss`, `advantages`), or a log-likelihood by where it comes
    from (`log_softmax(...).gather(1, a)`, `dist.log_prob(a)`, weighted by returns: `chosen * rets`)."""
    home = term.ctx or ctx
    if POLICY_TEXT.search(home.text(term.node)) or any(POLICY_TEXT.search(n) for n in term.through):
        return True
    if _reads_policy(home, term.node, term):
        return True  # PPO's `-torch.min(s1, s2)` with `s1 = ratio * adv`, REINFORCE's stacked `dist.log_prob(a)`
    found = objective(home, term.node)  # weighted by returns or advantages: a supervised NLL of labels is no policy
    return found is not None and found.kind == LOG_LIKELIHOOD and found.policy_gradient


def _combined(ctx, node: ast.AST) -> list[ast.AST]:
    """The tensors an element-wise choice between tensors reads: `torch.min(s1, s2)`, `torch.clamp(r, lo,
    hi)`, `torch.where(c, a, b)`, `r.clamp(lo, hi)`."""
    if not isinstance(node, ast.Call):
        return []
    if ctx.qualified_name(node.func) in COMBINING:
        return list(node.args)
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("clamp", "clip") and ctx.qualified_name(node.func) is None:
        return [node.func.value]
    return []


def _reads_policy(ctx, node: ast.AST, home: Term, depth: int = 0) -> bool:
    """Does the value read a policy's ratio, advantage or log-probabilities, through names, products,
    reductions, element-wise choices, the items of a list and the element a project function returns?"""
    if POLICY_TEXT.search(ctx.text(node)) and not isinstance(node, ast.Subscript):
        return True
    if depth >= MAX_POLICY_DEPTH:
        return False
    values = ctx.analysis(ValueKinds)
    if isinstance(node, ast.Name):
        items = values.listed_items(node) or None
        assigned = items if items is not None else values.reaching_values(node)
        return assigned is not None and len(assigned) <= MAX_ITEMS and any(_reads_policy(ctx, a, home, depth + 1) for a in assigned)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _reads_policy(ctx, node.left, home, depth + 1) or _reads_policy(ctx, node.right, home, depth + 1)
    if (reduced := _reduced(ctx, node)) is not None:
        return _reads_policy(ctx, reduced, home, depth + 1)
    if isinstance(node, ast.Subscript) and (returned := _callee_returns(ctx, node, home)) is not None:
        return any(_reads_policy(callee.ctx, r, callee, depth + 1) for r, callee in returned)  # `a, lp, h = agent.act(obs)`
    return any(_reads_policy(ctx, operand, home, depth + 1) for operand in _combined(ctx, node))


@dataclass(frozen=True)
class CriticTerm:
    critic: str  # the critic's text: `netD`, `self.critic`
    sign: int  # the sign minimizing the backward gives the critic's output
    fake: bool  # the critic scores generated samples (else real ones)
    detached: bool  # the generated samples are cut from the generator
    node: ast.AST  # the critic's call
    backward: ast.AST  # the backward call, or the `return` of a loss a library backpropagates
    ctx: object = None  # the file holding `node` when a function of the project returns it (None: the linted file)
    path: str = ""  # that file as findings show it
    at: ast.AST | None = None  # where the linted file reaches it (the call of that function)
    added: tuple | None = None  # (node, path): where a function of the project adds it, with its sign, into the loss it returns

    def place(self, ctx) -> str:
        return place_in(ctx, self.node, self.ctx, self.path)

    def signed_at(self, ctx) -> str:
        """Where the term gets its sign, as the linted file `ctx`'s message says it: `losses.py:13` in the function
        of the project that adds it into the loss it returns (`d_real.mean() - d_fake.mean()`), else its own place."""
        if self.added is not None:
            node, path = self.added
            return f"{path}:{node.lineno}" if path else ctx.place(node)
        return self.place(ctx)


def critic_terms(ctx) -> list[CriticTerm]:
    """The critic outputs that the file's backward passes take as plain terms (`netD(fake).mean()`), with
    the sign each is minimized with, the gradient a backward is seeded with included (`backward(mone)`)."""
    return ctx.analysis(_Critics).terms


class _Critics:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.values = ctx.analysis(ValueKinds)
        self.terms: list[CriticTerm] = []
        backwards = [(call, backward_loss(ctx, call)) for call in ctx.index.of_type(ast.Call)]
        for call, loss in [*backwards, *managed_losses(ctx)]:  # a returned loss: backpropagated as it is
            seed = (self._seed(call) if isinstance(call, ast.Call) else 1) if loss is not None else 0
            for term in signed_terms(ctx, loss, seed) if seed else ():
                home = term.ctx or ctx
                found = self._critic_call(home, term.node)
                if found is not None:
                    critic, sample = found
                    fake, detached = self._generated(home, sample)
                    at = next((u for u in term.uses if u is not loss), None) if term.ctx is not None else term.node
                    self.terms.append(CriticTerm(critic, term.sign, fake, detached, term.node, call, term.ctx, term.path, at or call, term.added))

    def _seed(self, backward: ast.Call) -> int:
        """The sign of the gradient a backward starts from: +1 without one, the sign of `one` / `mone`."""
        gradient = backward.args[0] if isinstance(backward.func, ast.Attribute) and backward.func.attr == "backward" and backward.args else None
        return 1 if gradient is None else constant_sign(self.values, gradient)

    def _critic_call(self, ctx, node: ast.AST) -> tuple[str, ast.AST] | None:
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SHAPING and not node.args[1:]:
            node = node.func.value  # `netD(x).view(-1)`
        if not (isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.func, (ast.Name, ast.Attribute))):
            return None
        last = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        return (ctx.text(node.func), node.args[0]) if CRITIC_NAME.match(last) else None

    def _generated(self, ctx, sample: ast.AST, depth: int = 0) -> tuple[bool, bool]:
        """(is it generated, is it cut from the generator): `G(z)`, `fake`, `fake.detach()`, `netG(z).data`,
        a `fake` made under `torch.no_grad()`."""
        detached = False
        while depth <= MAX_DEPTH:
            if isinstance(sample, ast.Attribute) and sample.attr == "data":
                sample, detached = sample.value, True
            elif isinstance(sample, ast.Call) and isinstance(sample.func, ast.Attribute) and sample.func.attr == "detach":
                sample, detached = sample.func.value, True
            elif isinstance(sample, ast.Call) and isinstance(sample.func, ast.Name) and sample.func.id == "Variable" and sample.args:
                sample = sample.args[0]
            elif isinstance(sample, ast.Name) and (assigned := _assigned_before(ctx, sample)) is not None:
                detached = detached or under_no_grad(ctx, assigned)  # `with torch.no_grad(): fake = netG(z)`
                if FAKE_NAME.search(sample.id):
                    return True, detached or self._generated(ctx, assigned, depth + 1)[1]
                sample = assigned
            else:
                break
            depth += 1
        if isinstance(sample, ast.Call) and isinstance(sample.func, (ast.Name, ast.Attribute)):
            last = sample.func.id if isinstance(sample.func, ast.Name) else sample.func.attr
            return bool(GENERATOR_NAME.match(last)), detached
        return isinstance(sample, ast.Name) and bool(FAKE_NAME.search(sample.id)), detached


def _assigned_before(ctx, name: ast.Name) -> ast.AST | None:
    """The value of the last assignment of `name` before it in a block around it (`fake = ...` earlier
    in the loop's body, not the one of the previous iteration); else its one reaching value."""
    values = ctx.analysis(ValueKinds)
    definitions = [d for d in values.reaching_definitions(name) if position(d.node) < position(name) and d.value is not None]
    latest = max(definitions, key=lambda d: position(d.node), default=None)
    if latest is not None:
        statement = latest.node
        while not isinstance(statement, ast.stmt):
            statement = ctx.scopes.parent(statement)
        if ctx.scopes.parent(statement) in set(ctx.scopes.ancestors(name)):
            return latest.value
    assigned = values.reaching_values(name)
    return assigned[0] if assigned is not None and len(assigned) == 1 else None
