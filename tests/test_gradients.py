"""The gradient-flow analysis and the rules built on it: ML404 (loss detached from the model), ML405
(detached submodule optimised), ML406 (in-place change of a tensor autograd saved)."""
import ast

import pytest

from mllint.analysis.facets.gradients import GRAPH, NONE, GradientFlow, Given, State
from mllint.context import FileContext
from mllint.source import SourceText

HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
SETUP = HEADER + "model = nn.Linear(4, 3)\nloader = []\n"


def positions(findings):
    return [(f.code, f.start.line, f.start.column) for f in findings]


def flow_of_last_name(source: str):
    """The flow of the name that the last expression statement of `source` reads."""
    tree = ast.parse(source)
    ctx = FileContext("example.py", SourceText(source), tree)
    statements = [s for s in ast.walk(tree) if isinstance(s, ast.Expr) and isinstance(s.value, ast.Name)]
    name = max(statements, key=lambda s: s.lineno).value
    return ctx.analysis(GradientFlow).flow(name)


@pytest.mark.parametrize(
    ("lines", "state"),
    [
        ("out = model(x)", State.GRAPH),
        ("out = F.relu(model(x)).mean()", State.GRAPH),
        ("out = nn.Linear(4, 3)(x)", State.GRAPH),
        ("out = torch.zeros(3, requires_grad=True) * 2", State.GRAPH),
        ("out = model(x).detach()", State.NONE),
        ("with torch.no_grad():\n    out = model(x)", State.NONE),
        ("out = torch.ones_like(model(x))", State.NONE),
        ("import horovod.torch as hvd\nout = hvd.allreduce(model(x).cpu(), name='loss')", State.GRAPH),
        ("import horovod.torch as hvd\nout = hvd.allreduce(model(x).item())", State.NONE),
        ("out = torch.zeros(3)\nout.requires_grad_()", State.GRAPH),
        ("out = torch.zeros(3)\nout.requires_grad_(False)", State.NONE),
        ("out = torch.zeros(3)\nout.requires_grad = False", State.NONE),
        ("out = g(x)", State.UNKNOWN),
        ("out = model(x) if flag else model(x).detach()", State.UNKNOWN),
        ("out = []\nout.append(model(x))", State.UNKNOWN),
        ("out = torch.zeros(3)\nout[0] = model(x).sum()", State.UNKNOWN),
        ("def f(out):\n    return out", State.UNKNOWN),
    ],
)
def test_flow_states(lines, state):
    assert flow_of_last_name(SETUP + lines + "\nout\n").state is state


def test_data_from_a_loader_carries_no_graph():
    assert flow_of_last_name(SETUP + "for out, y in loader:\n    out\n").state is State.NONE
    assert flow_of_last_name(SETUP + "for out, y in pairs:\n    out\n").state is State.UNKNOWN


def test_a_record_given_entries_at_string_keys_keeps_what_it_was_made_with():
    made = SETUP + "def evaluate(x):\n    return model(x), {'ent': model(x).mean().item()}\ndef step(x):\n    out, logs = evaluate(x)\n"
    flow = flow_of_last_name(made + "    logs['lr'] = 0.1\n    out = logs['ent']\n    out\n")
    assert flow.state is State.NONE and flow.cuts
    called = made + "    logs['lr'] = 0.1\n    logs['fn'](x)\n    out = logs\n    out\n"
    assert flow_of_last_name(called).state is State.NONE  # a stored function called: no change of the record


def test_a_name_rebound_from_itself_follows_its_old_value():
    flow = flow_of_last_name(SETUP + "out = model(x)\nout = out.detach()\nout\n")
    assert flow.state is State.NONE and len(flow.cuts) == 1


LOOP = SETUP + "criterion = nn.CrossEntropyLoss()\nfor x, y in loader:\n    pred = model(x)\n"


@pytest.mark.parametrize(
    ("loss", "cut"),
    [
        ("criterion(pred.detach(), y)", "pred.detach()"),
        ("F.cross_entropy(pred.data, y)", "pred.data"),
        ("torch.tensor(criterion(pred, y).item(), requires_grad=True)", "criterion(pred, y).item()"),
        ("torch.tensor(float(criterion(pred, y)), requires_grad=True)", "float(criterion(pred, y))"),
        ("torch.Tensor(pred.tolist()).sum()", "pred.tolist()"),
        ("F.mse_loss(pred.argmax(1).float(), y.float())", "pred.argmax(1)"),
    ],
)
def test_a_loss_cut_from_the_model_is_reported_at_backward(lint, loss, cut):
    source = LOOP + f"    loss = {loss}\n    loss.backward()\n"
    findings = lint(source, "ML404")
    assert positions(findings) == [("ML404", 10, 5)]
    assert f"`{cut}` (line 9) cuts it" in findings[0].message


@pytest.mark.parametrize(
    "call",
    ["scaler.scale(loss).backward()", "accelerator.backward(loss)", "torch.autograd.backward(loss)"],
)
def test_backward_through_scalers_and_accelerators(lint, call):
    source = LOOP + f"    loss = criterion(pred.detach(), y)\n    {call}\n"
    assert positions(lint(source, "ML404")) == [("ML404", 10, 5)]


@pytest.mark.parametrize(
    "loss",
    [
        "criterion(pred.detach(), y) + 0.01 * sum(p.pow(2).sum() for p in model.parameters())",
        "criterion(pred, y.detach())",
        "criterion(model(x.detach()), y)",
        "criterion(pred.detach(), y) + criterion(pred, y)",
        "helper(pred.detach(), y)",
        "criterion(pred.detach(), y) if warmup else criterion(pred, y)",
    ],
)
def test_a_loss_with_any_live_or_unknown_path_is_not_reported(lint, loss):
    assert lint(LOOP + f"    loss = {loss}\n    loss.backward()\n", "ML404") == []


def test_a_loss_from_a_function_parameter_is_not_reported(lint):
    source = HEADER + "def step(pred, y):\n    loss = F.mse_loss(pred, y)\n    loss.backward()\n"
    assert lint(source, "ML404") == []


TRAIN = SETUP + "x, y = torch.randn(8, 4), torch.rand(8, 3)\n"


@pytest.mark.parametrize(
    ("saved", "change"),
    [
        ("torch.sigmoid(model(x))", "p.mul_(2)"),
        ("model(x).tanh()", "p += 1"),
        ("torch.exp(model(x))", "p[p > 1] = 1"),
        ("F.softmax(model(x), dim=1)", "p.clamp_(0, 1)"),
        ("F.relu(model(x))", "p /= 2"),
        ("nn.Sigmoid()(model(x))", "p.zero_()"),
    ],
)
def test_an_in_place_change_of_a_saved_output_before_backward_is_reported(lint, saved, change):
    source = TRAIN + f"p = {saved}\n{change}\nloss = F.mse_loss(p, y)\nloss.backward()\n"
    findings = lint(source, "ML406")
    assert positions(findings) == [("ML406", 8, 1)]
    assert "`loss.backward()` (line 10) raises RuntimeError" in findings[0].message


@pytest.mark.parametrize(
    "lines",
    [
        "p = torch.sigmoid(model(x)).clone()\np.mul_(2)",  # a copy
        "p = torch.sigmoid(x)\np.mul_(2)",  # data: no graph
        "p = torch.sigmoid(model(x))\nwith torch.no_grad():\n    p.mul_(2)",  # not recorded (and not ours)
        "p = torch.sigmoid(model(x))\nif flag:\n    p.mul_(2)",  # not certain
        "p = torch.sigmoid(model(x))\np = p * 2\np.mul_(2)",  # a new tensor
        "p = F.relu(model(x), inplace=True)\np.mul_(2)",  # relu_ saves nothing of its own output here
        "p = torch.sigmoid(model(x))\nq = torch.sigmoid(model(x))\nq.mul_(2)\nloss = F.mse_loss(p, y)\nloss.backward()",
    ],
)
def test_in_place_changes_that_cannot_break_backward_are_not_reported(lint, lines):
    source = TRAIN + lines + "\n"
    if "backward" not in lines:
        source += "loss = F.mse_loss(p, y)\nloss.backward()\n"
    assert lint(source, "ML406") == []


def test_an_in_place_change_without_a_backward_after_it_is_not_reported(lint):
    source = TRAIN + "loss = F.mse_loss(model(x), y)\nloss.backward()\np = torch.sigmoid(model(x))\np.mul_(2)\n"
    assert lint(source, "ML406") == []


MODEL = HEADER + (
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.encoder = nn.Linear(4, 8)\n"
    "        self.head = nn.Linear(8, 1)\n"
    "    def forward(self, x):\n"
    "        {forward}\n"
    "        return self.head(h)\n"
    "model = Net()\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
)


@pytest.mark.parametrize("forward", ["h = self.encoder(x).detach()", "h = self.encoder(x).data"])
def test_a_detached_submodule_with_optimised_parameters_is_reported(lint, forward):
    findings = lint(MODEL.format(forward=forward), "ML405")
    assert positions(findings) == [("ML405", 10, 13)]
    assert "(line 13)" in findings[0].message


@pytest.mark.parametrize(
    ("forward", "extra"),
    [
        ("h = self.encoder(x)", ""),
        ("h = self.encoder(x).detach()", "model.encoder.requires_grad_(False)\n"),
        ("h = self.encoder(x).detach()", "aux = model.encoder(x)\n"),
        ("h = self.encoder(x).detach()", "model.head.weight = model.encoder.weight\n"),
    ],
)
def test_trained_or_frozen_submodules_are_not_reported(lint, forward, extra):
    assert lint(MODEL.format(forward=forward) + extra, "ML405") == []


def test_without_an_optimizer_over_the_module_nothing_is_reported(lint):
    source = MODEL.format(forward="h = self.encoder(x).detach()").replace("model.parameters()", "model.head.parameters()")
    assert lint(source, "ML405") == []


def test_a_long_cut_is_shown_by_its_end(lint):
    long_call = "criterion(model(x) + model(x) * model(x) - model(x) / model(x), y).item()"
    source = LOOP + f"    loss = torch.tensor({long_call}, requires_grad=True)\n    loss.backward()\n"
    message = lint(source, "ML404")[0].message
    assert "`...x) + model(x) * model(x) - model(x) / model(x), y).item()` (line 9)" in message


def test_iterating_over_model_outputs_is_not_data(lint):
    source = SETUP + "for pred, y in zip(model(data), loader):\n    loss = F.mse_loss(pred + helper().detach(), y)\n    loss.backward()\n"
    assert lint(source, "ML404") == []


@pytest.mark.parametrize(
    "lines",
    [
        "x = torch.tensor(start, requires_grad=True)",
        "x = torch.tensor([1.0, 2.0])\nx.requires_grad_()",
        "x = torch.zeros(3).requires_grad_()",
        "x = torch.tensor(start)\nx.requires_grad = True",
    ],
)
def test_a_tensor_optimised_directly_is_a_leaf_that_learns(lint, lines):
    source = HEADER + "def fit(start, target):\n" + "".join(f"    {line}\n" for line in lines.splitlines())
    source += "    loss = ((x - torch.tensor(target)) ** 2).sum()\n    loss.backward()\n"
    assert lint(source, "ML404") == []


def test_a_re_wrapped_loss_flagged_to_require_grad_is_still_cut(lint):
    source = LOOP + "    loss = torch.tensor(criterion(pred, y).item())\n    loss.requires_grad = True\n    loss.backward()\n"
    findings = lint(source, "ML404")
    assert positions(findings) == [("ML404", 11, 5)]
    assert "`criterion(pred, y).item()` (line 9) cuts it" in findings[0].message


def test_the_parameters_of_one_function_keep_their_own_flows():
    source = HEADER + "def f(a, b):\n    return b + a\n"
    tree = ast.parse(source)
    function = tree.body[-1]
    flows = FileContext("example.py", SourceText(source), tree).analysis(GradientFlow)
    assert flows.returned(function, Given(function, {"a": GRAPH, "b": NONE})).state is State.GRAPH
    assert flows.returned(function, Given(function, {"a": NONE, "b": NONE})).state is State.NONE


@pytest.mark.parametrize(
    ("steps", "line"),
    [("scaler.step(opt_g)\nscaler.update()", 11), ("sched_g.step()\nopt_g.step()", 12)],
    ids=["through a gradient scaler", "after a scheduler's step"],
)
def test_stepped_optimizer_named(lint, steps, line):
    """The optimizer a scaler steps, or the one stepped after a scheduler's step, is the one named."""
    source = HEADER + (
        "G, D = nn.Linear(4, 4), nn.Linear(4, 1)\n"
        "opt_g = torch.optim.Adam(G.parameters())\n"
        "sched_g = torch.optim.lr_scheduler.LambdaLR(opt_g, lambda s: 1.0)\n"
        "scaler = torch.cuda.amp.GradScaler()\n"
        "fake = G(torch.randn(8, 4)).detach()\n"
        "loss = D(fake).mean()\n"
        "scaler.scale(loss).backward()\n"
    ) + steps + "\n"
    [finding] = lint(source, "ML404")
    assert f"that `opt_g` (stepped at line {line})" in finding.message
