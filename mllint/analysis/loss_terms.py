"""The signed terms of a backpropagated loss, and the ones whose sign is a known mistake.

`signed_terms` writes a loss as a sum of terms with signs, through single local assignments, unary minus,
sums and differences, reductions (`.mean()`, `torch.sum`) and scalings by coefficients (`ent_coef *
entropy`, `0.5 * v_loss`, `/ n`), and the gradient a backward is seeded with (`d_real.backward(mone)`
with `mone = -1 * one`). Each term remembers the names it was reached through.

`entropy_bonus_minimized`: in an actor-critic loss (a term reads a policy or advantage), an entropy
term (`dist.entropy()`, `-(p * log_p).sum()`, a log-probability read through a name that says entropy)
whose sign makes minimizing the loss minimize the entropy.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mllint.analysis.objectives import REDUCING_FUNCTIONS, REDUCING_METHODS, factor_sign
from mllint.analysis.values import MAX_DEPTH, ValueKinds

# A factor of a product that scales a term rather than being one (`ent_coef * entropy`).
COEFFICIENT = re.compile(r"coef|coeff|weight|lambda|lam\b|^lam|alpha|beta|scale|^c_|_c$|factor|ratio_w", re.IGNORECASE)
ENTROPY_NAME = re.compile(r"entrop|^ent$|^ent_|_ent$", re.IGNORECASE)
NEGATED_NAME = re.compile(r"neg_?entrop|negentrop|entropy_loss", re.IGNORECASE)  # the sign the name does not say
POLICY_TEXT = re.compile(r"pg_|policy|actor|surr|adv|ratio", re.IGNORECASE)
PROBABILITY_TEXT = re.compile(r"prob|exp|softmax|pi\b", re.IGNORECASE)
LOG_TEXT = re.compile(r"log", re.IGNORECASE)


@dataclass(frozen=True)
class Term:
    sign: int
    node: ast.AST
    through: tuple[str, ...] = ()  # the names the term was reached through, outermost first
    uses: tuple[ast.AST, ...] = ()  # where each of those names is read


def signed_terms(ctx, expr: ast.AST, sign: int = 1) -> list[Term]:
    values = ctx.analysis(ValueKinds)
    found: list[Term] = []
    pending: list = [(expr, sign, (), (), 0)]
    while pending:
        node, sign, through, use, depth = pending.pop()
        if depth > MAX_DEPTH:
            found.append(Term(sign, node, through, use))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            pending.append((node.operand, -sign if isinstance(node.op, ast.USub) else sign, through, use, depth + 1))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            pending.append((node.left, sign, through, use, depth + 1))
            pending.append((node.right, -sign if isinstance(node.op, ast.Sub) else sign, through, use, depth + 1))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)) and _scaled(node) is not None:
            term, factor = _scaled(node)
            pending.append((term, sign * factor_sign(ctx, factor), through, use, depth + 1))
        elif _reduced(ctx, node) is not None:
            pending.append((_reduced(ctx, node), sign, through, use, depth + 1))
        elif isinstance(node, ast.Name) and (assigned := values.reaching_values(node)) is not None and len(assigned) == 1:
            pending.append((assigned[0], sign, (*through, node.id), (*use, node), depth + 1))
        else:
            found.append(Term(sign, node, through, use))
    return found


def _scaled(product: ast.BinOp) -> tuple[ast.AST, ast.AST] | None:
    """(the term, the coefficient) of `c * term`, `term * c`, `term / n`."""
    if isinstance(product.op, ast.Div):
        return product.left, product.right
    for term, factor in ((product.right, product.left), (product.left, product.right)):
        if _is_coefficient(factor):
            return term, factor
    return None


def _is_coefficient(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _is_coefficient(node.operand)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    last = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return bool(last) and bool(COEFFICIENT.search(last))


def _reduced(ctx, node: ast.AST) -> ast.AST | None:
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr in REDUCING_METHODS and ctx.qualified_name(node.func) is None:
        return node.func.value
    if ctx.qualified_name(node.func) in REDUCING_FUNCTIONS and node.args:
        return node.args[0]
    return None


def entropy_sign(ctx, term: Term) -> int:
    """+1 when the term is an entropy, -1 when it is a negative entropy, 0 when it is neither."""
    node = term.node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "entropy":
        return 1
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        texts = (ctx.text(node.left), ctx.text(node.right))
        if any(PROBABILITY_TEXT.search(a) and LOG_TEXT.search(b) and not LOG_TEXT.search(a) for a, b in (texts, texts[::-1])):
            return -1  # `p * log p`
    own = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    last = term.through[-1] if term.through else own
    logs = bool(LOG_TEXT.search(ctx.text(node))) and not PROBABILITY_TEXT.search(ctx.text(node))
    if last and ENTROPY_NAME.search(last) and not NEGATED_NAME.search(last):
        return -1 if logs else 1  # `entropy = dist.entropy()`, or unpacked from the policy's evaluation
    if logs and any(ENTROPY_NAME.search(n) for n in term.through):
        return -1  # a log-probability read through `entropy...`: its mean is the negative entropy
    return 0


def entropy_bonus_minimized(ctx, loss: ast.AST) -> Term | None:
    """The entropy term of an actor-critic loss that minimizing the loss minimizes."""
    terms = signed_terms(ctx, loss)
    if not any(POLICY_TEXT.search(ctx.text(t.node)) or any(POLICY_TEXT.search(n) for n in t.through) for t in terms):
        return None
    return next((t for t in terms if t.sign * entropy_sign(ctx, t) > 0), None)
