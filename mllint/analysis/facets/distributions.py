"""The shapes of `torch.distributions` objects and of what their methods give.

A distribution built from parameters of known shapes has a batch shape and an event shape (`Distribution`):
the parameters broadcast together for the families of one-number events (`Normal(mu, std)`, `Bernoulli`),
the last axis of the probabilities is the event's choice for `Categorical` (no event dimension) and
`OneHotCategorical` (one), of the mean for `MultivariateNormal`; `Independent(d, n)` moves the last `n`
batch dimensions into the event. `log_prob(value)` is the value's leading (non-event) dimensions broadcast
against the batch, `entropy()` the batch, `sample(shape)` the sample shape, the batch, then the event.
Anything else (a transformed distribution, a covariance of unknown shape) is unknown.
"""
from __future__ import annotations

import ast

from mllint.analysis.facets.dims import Shape, broadcast
from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.facets.tensor_values import Distribution, Number, value_shape
from mllint.analysis.syntax.names import call_argument

PACKAGE = "torch.distributions."
# A family of one-number events -> its parameters (position, keyword), which broadcast into its batch.
ELEMENTWISE_FAMILIES = {
    **dict.fromkeys(("Normal", "Laplace", "Cauchy", "Gumbel", "LogNormal"), ((0, "loc"), (1, "scale"))),
    "Beta": ((0, "concentration1"), (1, "concentration0")),
    "Gamma": ((0, "concentration"), (1, "rate")),
    "Uniform": ((0, "low"), (1, "high")),
    "Exponential": ((0, "rate"),),
    "Poisson": ((0, "rate"),),
    **dict.fromkeys(("Bernoulli", "Geometric"), ((0, "probs"), (1, "logits"))),
}
# A family whose parameters' last axis spans one event -> (its parameters, how many event dimensions it keeps).
LAST_AXIS_FAMILIES = {
    "Categorical": (((0, "probs"), (1, "logits")), 0),
    "OneHotCategorical": (((0, "probs"), (1, "logits")), 1),
    "Dirichlet": (((0, "concentration"),), 1),
}
SAMPLERS = frozenset({"sample", "rsample"})


def distribution(name: str | None, node: ast.Call, value_of) -> Distribution | None:
    """The distribution a call of a `torch.distributions` class makes, from its arguments' values
    (`value_of(node)`); None when it is no such call or a parameter's shape is not known."""
    family = name.rpartition(".")[2] if name and name.startswith(PACKAGE) else None
    if family in ELEMENTWISE_FAMILIES:
        given = [_shape(call_argument(node, at, keyword), value_of) for at, keyword in ELEMENTWISE_FAMILIES[family]]
        given = [g for g in given if g is not False]
        batch = given[0] if given else None
        for other in given[1:]:
            batch = broadcast(batch, other)
        return Distribution(batch, ()) if batch is not None and None not in given else None
    if family in LAST_AXIS_FAMILIES:
        parameters, kept = LAST_AXIS_FAMILIES[family]
        given = [g for g in (_shape(call_argument(node, at, keyword), value_of) for at, keyword in parameters) if g is not False]
        shape = given[0] if len(given) == 1 else None
        return Distribution(shape[:-1], shape[len(shape) - kept:]) if shape else None
    if family == "Independent":
        base = value_of(call_argument(node, 0, "base_distribution"))
        moved = int_literal(call_argument(node, 1, "reinterpreted_batch_ndims"))
        if isinstance(base, Distribution) and moved is not None and 0 <= moved <= len(base.batch):
            cut = len(base.batch) - moved
            return Distribution(base.batch[:cut], base.batch[cut:] + base.event)
    return None


def distribution_method(dist: Distribution, node: ast.Call, value_of) -> Shape | None:
    """The shape of what a method of `dist` gives (`node` its call); None when not known."""
    method = node.func.attr if isinstance(node.func, ast.Attribute) else None
    if method == "entropy" and not node.args:
        return dist.batch
    if method in ("log_prob", "cdf") and len(node.args) == 1 and not node.keywords:
        value = value_shape(value_of(node.args[0]))
        if value is None or len(value) < len(dist.event):
            return None
        return broadcast(value[: len(value) - len(dist.event)], dist.batch)
    if method in SAMPLERS:
        sizes = call_argument(node, 0, "sample_shape")
        prefix = () if sizes is None else _literal_sizes(sizes)
        return prefix + dist.batch + dist.event if prefix is not None else None
    return None


def _shape(node: ast.AST | None, value_of) -> Shape | None | bool:
    """The shape of a parameter's value (`()` for a Python number); False when the call does not pass it."""
    if node is None:
        return False
    value = value_of(node)
    return () if isinstance(value, Number) else value_shape(value)


def _literal_sizes(node: ast.AST) -> Shape | None:
    """`(n,)`, `[n]`, `torch.Size([n])` of int literals; None otherwise."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.func, ast.Attribute) and node.func.attr == "Size":
        node = node.args[0]
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    sizes = tuple(int_literal(e) for e in node.elts)
    return sizes if None not in sizes else None
