"""ML2xx (training-loop order) and ML5xx (swallowed errors): exact findings, fixes, and the loop model's
silence where it cannot be sure."""
import pytest

from mllint.rules.ml201_missing_zero_grad import MissingZeroGrad
from mllint.rules.ml202_zero_grad_between_backward_and_step import ZeroGradBetweenBackwardAndStep
from mllint.rules.ml203_step_before_backward import StepBeforeBackward
from mllint.rules.ml204_scheduler_before_optimizer import SchedulerBeforeOptimizer
from mllint.rules.ml205_scheduler_cadence import SchedulerCadence
from mllint.rules.ml206_backward_under_no_grad import BackwardUnderNoGrad
from mllint.rules.ml207_loss_accumulated_with_graph import LossAccumulatedWithGraph
from mllint.rules.ml501_training_error_swallowed import TrainingErrorSwallowed

HEADER = "import torch\nimport torch.nn.functional as F\n"
RULES = [
    MissingZeroGrad, ZeroGradBetweenBackwardAndStep, StepBeforeBackward, SchedulerBeforeOptimizer,
    SchedulerCadence, BackwardUnderNoGrad, LossAccumulatedWithGraph, TrainingErrorSwallowed,
]  # fmt: skip
CODES = [rule.code for rule in RULES]


def positions(findings):
    return [(f.code, f.start.line, f.start.column) for f in findings]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_the_documentation_example_is_reported_and_its_alternative_is_not(rule, lint):
    assert [f.code for f in lint(rule.doc_code("Example"), *CODES)] == [rule.code]
    assert lint(rule.doc_code("Use instead"), *CODES) == []


@pytest.mark.parametrize("rule", [MissingZeroGrad, LossAccumulatedWithGraph], ids=lambda r: r.code)
def test_the_fix_of_the_example_is_the_documented_alternative(rule, fix):
    assert fix(rule.doc_code("Example"), rule.code, unsafe=True) == rule.doc_code("Use instead")


# ML201


def test_a_helper_stepping_a_renamed_optimizer_is_followed(lint, fix):
    source = HEADER + (
        "def train_step(model, optimizer, batch):\n"
        "    x, y = batch\n"
        "    F.mse_loss(model(x), y).backward()\n"
        "    optimizer.step()\n"
        "def fit(model, loader):\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for batch in loader:\n"
        "        train_step(model, opt, batch)\n"
    )
    [finding] = lint(source, "ML201")
    assert positions([finding]) == [("ML201", 6, 5)]
    assert finding.message.startswith(
        "`opt` steps (through `train_step()`, line 10) without its gradients being cleared in the iteration of the loop on line 9"
    )
    fixed = fix(source, "ML201", unsafe=True)
    assert fixed == source.replace("    for batch in loader:\n", "    for batch in loader:\n        opt.zero_grad()\n")
    assert fix(fixed, "ML201", unsafe=True) == fixed
    assert fix(source, "ML201") == source  # unsafe only


def test_the_fix_goes_above_the_comment_on_the_first_statement(fix):
    source = HEADER + (
        "def fit(model, loader, opt):\n"
        "    for x, y in loader:  # one batch\n"
        "        # forward pass\n"
        "        # (the loss is mean squared error)\n"
        "        loss = F.mse_loss(model(x), y)\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "    while True:\n"
        "\n"
        "        # a comment above a blank line stays above the clear\n"
        "\n"
        "# a comment at another indentation stays too\n"
        "        F.mse_loss(model(x), y).backward()\n"
        "        opt.step()\n"
    )
    fixed = fix(source, "ML201", unsafe=True)
    assert fixed == source.replace(
        "  # one batch\n        # forward pass\n", "  # one batch\n        opt.zero_grad()\n        # forward pass\n"
    ).replace("too\n        F.mse_loss", "too\n        opt.zero_grad()\n        F.mse_loss")
    assert fix(fixed, "ML201", unsafe=True) == fixed


def test_recursive_helpers_and_odd_syntax_do_not_crash(lint):
    source = HEADER + (
        "def step(model, opt, n):\n"
        "    if n:\n"
        "        step(model, opt, n - 1)\n"
        "    model(n).backward()\n"
        "    opt.step()\n"
        "def fit(model, opt, data):\n"
        "    while (batch := next(data, None)) is not None:\n"
        "        match batch:\n"
        "            case {'x': x}:\n"
        "                step(*batch)\n"
        "            case _:\n"
        "                model(batch).backward(); opt.step()\n"
    )
    assert positions(lint(source)) == [("ML201", 7, 5), ("ML201", 14, 42)]


@pytest.mark.parametrize(
    "clear",
    ["reset(optimizer)", "for p in model.parameters():\n            p.grad.zero_()", "model.zero_grad()"],
)
def test_clearing_or_unknown_calls_keep_it_silent(clear, lint):
    source = HEADER + (
        "def fit(model, loader, optimizer, reset):\n"
        "    for x, y in loader:\n"
        "        F.mse_loss(model(x), y).backward()\n"
        "        optimizer.step()\n"
        f"        {clear}\n"
    )
    assert lint(source, *CODES) == []


def test_a_step_with_a_closure_is_left_alone(lint):
    source = HEADER + (
        "def fit(model, x, optimizer, closure):\n"
        "    for _ in range(3):\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step(closure)\n"
    )
    assert lint(source, *CODES) == []


def test_no_fix_for_a_loop_on_one_line(lint):
    source = HEADER + "def fit(m, d, opt):\n    for x in d: m(x).backward(); opt.step()\n"
    [finding] = lint(source, "ML201")
    assert finding.fix is None


# ML202


def test_a_gan_clearing_the_other_model_between_backward_and_step_is_not_reported(lint):
    source = HEADER + (
        "def fit(g, d, loader, opt_g):\n"
        "    for x in loader:\n"
        "        opt_g.zero_grad()\n"
        "        d(g(x)).mean().backward()\n"
        "        d.zero_grad()\n"
        "        opt_g.step()\n"
    )
    assert lint(source, *CODES) == []


def test_accumulation_with_a_guard_mllint_cannot_read_is_not_reported(lint):
    source = HEADER + (
        "def fit(model, loader, opt):\n"
        "    for i, x in enumerate(loader):\n"
        "        opt.zero_grad()\n"
        "        model(x).sum().backward()\n"
        "        if torch.isfinite(model.weight.grad).all():\n"
        "            opt.step()\n"
    )
    assert lint(source, *CODES) == []


# ML204, ML205


def test_milestones_counted_in_epochs_stepped_every_batch(lint):
    source = HEADER + (
        "def fit(model, loader, epochs):\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[30, 60])\n"
        "    for epoch in range(epochs):\n"
        "        for x in loader:\n"
        "            opt.zero_grad()\n"
        "            model(x).sum().backward()\n"
        "            opt.step()\n"
        "            sched.step()\n"
    )
    assert positions(lint(source, *CODES)) == [("ML205", 11, 13)]


@pytest.mark.parametrize("size", ["T_max=cfg.t_max", "T_max=len(loader) * epochs", "T_max=total_steps"])
def test_unknown_or_step_sized_schedules_stepped_every_batch_are_not_reported(size, lint):
    source = HEADER + (
        "def fit(model, loader, epochs, cfg, total_steps):\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        f"    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, {size})\n"
        "    for epoch in range(epochs):\n"
        "        for x in loader:\n"
        "            opt.zero_grad()\n"
        "            model(x).sum().backward()\n"
        "            opt.step()\n"
        "            sched.step()\n"
    )
    assert lint(source, *CODES) == []


def test_a_guarded_scheduler_step_before_the_optimizer_is_not_reported(lint):
    source = HEADER + (
        "def fit(model, loader, epochs):\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    sched = torch.optim.lr_scheduler.StepLR(opt, 10)\n"
        "    for epoch in range(epochs):\n"
        "        if epoch > 0:\n"
        "            sched.step()\n"
        "        for x in loader:\n"
        "            opt.zero_grad()\n"
        "            model(x).sum().backward()\n"
        "            opt.step()\n"
    )
    assert lint(source, *CODES) == []


# ML206


def test_backward_in_a_no_grad_function_and_in_an_expected_error(lint):
    source = HEADER + (
        "@torch.no_grad()\n"
        "def probe(model, x):\n"
        "    out = model(x).sum()\n"
        "    out.backward()\n"
        "def test_raises(model, x):\n"
        "    with torch.no_grad(), pytest.raises(RuntimeError):\n"
        "        out = model(x).sum()\n"
        "        out.backward()\n"
    )
    [finding] = lint(source, "ML206")
    assert positions([finding]) == [("ML206", 6, 5)]
    assert finding.message.startswith("`out` is computed and backpropagated under `@torch.no_grad()`")


# ML207


def test_a_returned_total_gets_an_unsafe_fix(lint, fix):
    source = HEADER + (
        "def fit(model, loader, opt):\n"
        "    total = 0\n"
        "    for x in loader:\n"
        "        opt.zero_grad()\n"
        "        loss = model(x).sum()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        total += loss\n"
        "    return total\n"
    )
    assert positions(lint(source, "ML207")) == [("ML207", 10, 18)]
    assert fix(source, "ML207") == source
    assert fix(source, "ML207", unsafe=True) == source.replace("total += loss", "total += loss.item()")


def test_a_model_handed_to_a_keeping_evaluator_is_no_iteration_graph(lint):
    # torchrl's ppo-async: `evaluator.trigger_eval(actor, step=...)` queues the policy's weights; the
    # module is bound before the loop, so no iteration's graph is kept.
    source = HEADER + (
        "class Evaluator:\n"
        "    def __init__(self):\n"
        "        self.requests = []\n"
        "    def trigger(self, policy, step):\n"
        "        self.requests.append((policy, step))\n"
        "def fit(actor, loader, opt):\n"
        "    evaluator = Evaluator()\n"
        "    for step, x in enumerate(loader):\n"
        "        opt.zero_grad()\n"
        "        loss = actor(x).sum()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        evaluator.trigger(actor, step)\n"
    )
    assert lint(source, "ML207") == []


def test_a_total_reset_every_iteration_or_backpropagated_is_not_reported(lint):
    source = HEADER + (
        "def fit(model, loader, opt, heads):\n"
        "    total = 0\n"
        "    for x in loader:\n"
        "        opt.zero_grad()\n"
        "        loss = model(x).sum()\n"
        "        total += loss\n"
        "        total.backward()\n"
        "        opt.step()\n"
    )
    assert lint(source, *CODES) == []


# ML501


def test_a_tuple_handler_with_a_broad_exception_is_reported(lint):
    source = HEADER + (
        "def fit(model, loader, opt):\n"
        "    try:\n"
        "        for x in loader:\n"
        "            opt.zero_grad()\n"
        "            model(x).sum().backward()\n"
        "            opt.step()\n"
        "    except (ValueError, Exception):\n"
        "        pass\n"
    )
    [finding] = lint(source, *CODES)
    assert positions([finding]) == [("ML501", 9, 5)]
    assert finding.message.startswith("`except (ValueError, Exception)` catches every error of the training loop")


def test_a_narrow_handler_is_not_reported(lint):
    source = HEADER + (
        "def fit(model, loader, opt):\n"
        "    try:\n"
        "        for x in loader:\n"
        "            opt.zero_grad()\n"
        "            model(x).sum().backward()\n"
        "            opt.step()\n"
        "    except StopIteration:\n"
        "        pass\n"
    )
    assert lint(source, *CODES) == []


def test_zero_grad_without_its_call_is_left_to_ml301(lint):
    source = HEADER + (
        "def fit(model, loader, optimizer):\n"
        "    for x in loader:\n"
        "        optimizer.zero_grad\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
    )
    assert positions(lint(source)) == [("ML301", 5, 9)]
