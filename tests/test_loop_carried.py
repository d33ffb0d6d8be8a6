"""Values carried around loops: assignments that reach each other from one iteration to the next (a loss
`+=` twice in a loop, `out = out.view(...)` then `out = out.contiguous()`). Every analysis that follows
assignments answers them as a fixed point: no recursion without end, and no precision lost to it."""
import ast

import pytest

from mllint.analysis.facets.dims import format_shape
from mllint.analysis.facets.gradients import GradientFlow, State
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.facets.shapes import Shapes
from mllint.analysis.values.values import Kind
from mllint.context import FileContext
from mllint.engine import Selection, lint_text
from mllint.registry import all_rules
from mllint.source import SourceText

HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nmodel = nn.Linear(4, 3)\n"


def context(source: str) -> FileContext:
    return FileContext("example.py", SourceText(source), ast.parse(source))


def last_read(ctx: FileContext, name: str) -> ast.Name:
    return [n for n in ctx.index.nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)][-1]


def loop(*body: str, after: str = "") -> str:
    """A function whose loop runs `body`, then `loss.backward()` (or after the loop, `after` does)."""
    lines = "".join(f"        {line}\n" for line in body)
    end = after or "        loss.backward()\n"
    return HEADER + f"def f(loader):\n    loss = 0\n    for x, y in loader:\n{lines}{end}"


@pytest.mark.parametrize(
    ("source", "state", "cuts"),
    [
        (loop("loss += F.cross_entropy(model(x), y)", "loss += F.mse_loss(model(x), y)"), State.GRAPH, 0),
        (loop("loss += model(x).sum().item()", "loss += model(x).mean().item()"), State.NONE, 2),
        (loop("loss += model(x).sum().item()", "loss += F.mse_loss(model(x), y)"), State.GRAPH, 0),
        (loop("loss += model(x).sum()", "loss /= 2", "loss = loss * 0.5"), State.GRAPH, 0),
        (loop("loss += x.sum()", "loss -= y.sum()"), State.NONE, 0),
        (loop("for z in x:", "    loss += model(z).sum().item()", "    loss += 1"), State.NONE, 1),
        (loop("term = loss", "loss = term + model(x).sum().detach()", after="    loss /= 3\n    loss.backward()\n"), State.NONE, 1),
        # A sum seeded by the number 0 and updated with a graph carries the graph once the loop has run.
        (loop("loss += F.cross_entropy(model(x), y)", after="    loss.backward()\n"), State.GRAPH, 0),
    ],
)
def test_gradient_flow_of_loop_carried_losses(source, state, cuts):
    ctx = context(source)
    flow = ctx.analysis(GradientFlow).flow(last_read(ctx, "loss"))
    assert (flow.state, len(flow.cuts)) == (state, cuts)


def test_dependence_is_followed_around_a_loop_once():
    ctx = context(loop("loss += x.sum()", "loss += y.sum()"))
    flows = ctx.analysis(GradientFlow)
    x_target = next(n for n in ctx.index.nodes if isinstance(n, ast.Tuple) and isinstance(n.ctx, ast.Store)).elts[0]
    assert flows.depends_on(last_read(ctx, "loss"), {x_target})
    assert not flows.depends_on(last_read(ctx, "loss"), {ast.Name("unrelated")})


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (["out = out.view(-1, 3)", "out = out.contiguous()"], Kind.PROBABILITIES),
        (["out = out.float()"], Kind.PROBABILITIES),
        (["out = out.view(-1, 3)", "out = out * 2"], None),
        (["out = out.view(-1, 3)", "out = model(x)"], None),
    ],
)
def test_value_kind_carried_around_a_loop(body, kind):
    lines = "".join(f"        {line}\n" for line in body)
    source = HEADER + f"def f(x):\n    out = F.softmax(model(x), dim=1)\n    for _ in range(3):\n{lines}    return out\n"
    ctx = context(source)
    origin = ctx.analysis(ProjectView).origin(last_read(ctx, "out"))
    assert (origin and origin.kind) == kind


@pytest.mark.parametrize(
    ("body", "shape"),
    [
        (["pred = pred.float()", "pred = pred.contiguous()"], "(256, 1)"),
        (["pred = pred.view(-1, 1)"], "(256, 1)"),
        (["pred = pred.squeeze(1)"], None),
        (["pred = torch.cat([pred, pred])"], None),
    ],
)
def test_shape_carried_around_a_loop(body, shape):
    lines = "".join(f"        {line}\n" for line in body)
    source = HEADER + f"def f(n):\n    pred = torch.randn(256, 1)\n    for _ in range(n):\n{lines}    return pred\n"
    ctx = context(source)
    found = ctx.analysis(Shapes).shape(last_read(ctx, "pred"))
    assert (found and format_shape(found)) == shape


def test_the_issue_program_lints_without_an_internal_error():
    source = """import torch.nn.functional as F


def update(model, batches, opt):
    objective = 0
    for x, yi, yj, lam in batches:
        pred = model(x)
        objective += lam * F.cross_entropy(pred, yi)
        objective += (1 - lam) * F.cross_entropy(pred, yj)
    objective /= len(batches)
    opt.zero_grad()
    objective.backward()
    opt.step()
"""
    assert lint_text(source, "train.py", Selection.of(all_rules())) == []


def optional_terms(count: int, cut: bool) -> str:
    """A loss with `count` optional terms, each under its own flag (multi-loss configs); with `cut`, each
    term and the first loss are cut from the graph."""
    first = "torch.tensor(F.cross_entropy(out, y).item())" if cut else "F.cross_entropy(out, y)"
    term = "out.pow(2).mean()" + (".item()" if cut else "")
    flags = [f"if cfg.use_{i}:\n            loss += {i + 1} * {term}" for i in range(count)]
    return HEADER + "def f(cfg, loader):\n    for x, y in loader:\n        out = model(x)\n" + "".join(
        f"        {line}\n" for line in (f"loss = {first}", *flags, "loss.backward()")
    )


@pytest.mark.parametrize("cut", [False, True])
def test_guarded_augmented_assignments_are_a_fixed_point_not_paths(cut, monkeypatch):
    """N terms under N flags reach each other around the loop in 2**N ways: each definition is computed
    a bounded number of times (a fixed point over the cycle), however many ways lead to it."""
    computed = []
    original = GradientFlow._definition
    monkeypatch.setattr(GradientFlow, "_definition", lambda self, d, depth: computed.append(d) or original(self, d, depth))
    count = 30
    ctx = context(optional_terms(count, cut))
    flow = ctx.analysis(GradientFlow).flow(last_read(ctx, "loss"))
    assert (flow.state, len(flow.cuts)) == ((State.NONE, count + 1) if cut else (State.GRAPH, 0))
    assert len(computed) <= 4 * (count + 2)


def test_optional_terms_cut_from_the_graph_are_reported_once_each():
    findings = lint_text(optional_terms(30, cut=False).replace("use_7:\n            loss += 8 * out.pow(2).mean()", "use_7:\n            loss += 8 * out.pow(2).mean().item()"), "example.py", Selection.of(["ML404", "ML413"]))
    assert [(f.code, f.start.line) for f in findings] == [("ML413", 24)]
