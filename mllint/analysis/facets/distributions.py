"""The shapes of `torch.distributions` objects and of what their methods give.

A distribution built from parameters of known shapes has a batch and an event shape (`Distribution`): the
parameters broadcast together, as element-wise arithmetic does, for the families of one-number events
(`Normal(mu, std)`, `Bernoulli`; a batch of unknown rank keeps the ends they share); the last axis of
the probabilities (of a known shape) is the event's choice for `Categorical` (no event dimension) and
`OneHotCategorical` (one); `Independent(d, n)` moves the last `n` batch dimensions into the event.
`log_prob(value)` is the value's leading (non-event) dimensions broadcast against the batch, `entropy()`
the batch, `sample(shape)` the sample shape, the batch, then the event. Anything else (a transformed
distribution, a multivariate normal's covariance) is unknown.
"""
from __future__ import annotations

import ast
from collections.abc import Callable

from mllint.analysis.facets.dims import Shape, broadcast
from mllint.analysis.facets.indexing import int_literal
from mllint.analysis.facets.tensor_values import Distribution, Number, Tensor
from mllint.analysis.syntax.names import call_argument

PACKAGE = "torch.distributions."
# A family of one-number events -> its parameters (position, keyword), which broadcast into its batch.
ELEMENTWISE_FAMILIES = {
    **dict.fromkeys(("Normal", "Laplace", "Cauchy", "Gumbel", "LogNormal"), ((0, "loc"), (1, "scale"))),
    "Beta": ((0, "concentration1"), (1, "concentration0")),
    "Gamma": ((0, "concentration"), (1, "rate")),
    "Uniform": ((0, "low"), (1, "high")),
    **dict.fromkeys(("Exponential", "Poisson"), ((0, "rate"),)),
    **dict.fromkeys(("Bernoulli", "Geometric"), ((0, "probs"), (1, "logits"))),
}
# A family whose parameters' last axis spans one event -> (its parameters, how many event dimensions it keeps).
LAST_AXIS_FAMILIES = {
    "Categorical": (((0, "probs"), (1, "logits")), 0),
    "OneHotCategorical": (((0, "probs"), (1, "logits")), 1),
    "Dirichlet": (((0, "concentration"),), 1),
}
SAMPLERS = frozenset({"sample", "rsample"})

Values = Callable[[ast.AST], object]  # an expression's value
Combined = Callable[[object, object], object]  # two values' element-wise result


def distribution(name: str | None, node: ast.Call, value_of: Values, combined: Combined) -> Distribution | None:
    """The distribution a call of a `torch.distributions` class makes, from its arguments' values; None when
    it is no such call or a parameter's shape is not known."""
    family = name.rpartition(".")[2] if name and name.startswith(PACKAGE) else None
    key = ("call", id(node))
    if family in ELEMENTWISE_FAMILIES:
        given = [value_of(a) for a in (call_argument(node, at, keyword) for at, keyword in ELEMENTWISE_FAMILIES[family]) if a is not None]
        tensors = [g for g in given if not isinstance(g, Number)]
        if not tensors or not all(isinstance(t, Tensor) and (t.shape is not None or t.ends) for t in tensors):
            return None
        batch = tensors[0]
        for other in tensors[1:]:
            batch = combined(batch, other)
        known = isinstance(batch, Tensor) and (batch.shape is not None or batch.ends)
        return Distribution(Tensor(batch.shape, key, ends=batch.ends), ()) if known else None
    if family in LAST_AXIS_FAMILIES:
        parameters, kept = LAST_AXIS_FAMILIES[family]
        given = [value_of(a) for a in (call_argument(node, at, keyword) for at, keyword in parameters) if a is not None]
        shape = given[0].shape if len(given) == 1 and isinstance(given[0], Tensor) else None
        return Distribution(Tensor(shape[:-1], key), shape[len(shape) - kept:]) if shape else None
    if family == "Independent":
        base = value_of(call_argument(node, 0, "base_distribution"))
        moved = int_literal(call_argument(node, 1, "reinterpreted_batch_ndims"))
        batch = base.batch.shape if isinstance(base, Distribution) else None
        if batch is not None and moved is not None and 0 <= moved <= len(batch):
            cut = len(batch) - moved
            return Distribution(Tensor(batch[:cut], key), batch[cut:] + base.event)
    return None


def distribution_method(dist: Distribution, node: ast.Call, value_of: Values, combined: Combined) -> Tensor | None:
    """What a method of `dist` gives (`node` its call), a tensor of what is known of its shape; None when
    nothing is."""
    method = node.func.attr if isinstance(node.func, ast.Attribute) else None
    batch, event, key = dist.batch, dist.event, ("call", id(node))
    if method == "entropy" and not node.args:
        return Tensor(batch.shape, key, ends=batch.ends)
    if method in ("log_prob", "cdf") and len(node.args) == 1 and not node.keywords:
        value = value_of(node.args[0])
        if not event:  # the value broadcast against the batch, as arithmetic does
            return combined(value, batch) if isinstance(value, Tensor) else None
        shape = value.shape if isinstance(value, Tensor) else None
        if shape is None or batch.shape is None or len(shape) < len(event):
            return None
        return Tensor(broadcast(shape[: len(shape) - len(event)], batch.shape), key)
    if method in SAMPLERS:
        sizes = call_argument(node, 0, "sample_shape")
        prefix = () if sizes is None else _literal_sizes(sizes)
        if prefix is None or batch.shape is None and (prefix or event):
            return None
        return Tensor(prefix + batch.shape + event if batch.shape is not None else None, key, ends=batch.ends)
    return None


def _literal_sizes(node: ast.AST) -> Shape | None:
    """`(n,)`, `[n]`, `torch.Size([n])` of int literals; None otherwise."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.func, ast.Attribute) and node.func.attr == "Size":
        node = node.args[0]
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    sizes = tuple(int_literal(e) for e in node.elts)
    return sizes if None not in sizes else None
