"""Wrong loss sign (ML408, ML409), parameters that never train (ML410-ML412) and statistics fitted
before the split (ML805): cases beside the fixtures."""


def codes(findings):
    return [(f.code, f.start.line) for f in findings]


def test_ml402_and_ml411_report_a_misspelt_flag_once(lint):
    source = "import torch\n\nnet = torch.nn.Linear(2, 2)\nnet.require_grad = False\nfor p in net.parameters():\n    p.require_grad = False\n"
    assert codes(lint(source, "ML402", "ML411")) == [("ML411", 4), ("ML402", 6)]


def test_ml411_fixes_a_single_assignment_only(lint, fix):
    source = "import torch\n\nnet = torch.nn.Linear(2, 2)\nnet.requires_grad = frozen = False\n"
    assert codes(lint(source, "ML411")) == [("ML411", 4)]
    assert fix(source, "ML411") == source
    single = "import torch\n\nnet = torch.nn.Linear(2, 2)\nif True: net.requires_grad = not tune\n"
    fixed = fix(single, "ML411")
    assert fixed.endswith("if True: net.requires_grad_(not tune)\n")
    assert fix(fixed, "ML411") == fixed


def test_ml408_ml409_need_an_optimizer_step_on_the_gradients(lint):
    gradient_check = "def check(dist, x):\n    loss = dist.log_prob(x).sum()\n    loss.backward()\n    return x.grad\n"
    cleared = (
        "import torch.nn.functional as F\n\ndef step(model, opt, x, y):\n    loss = -F.mse_loss(model(x), y)\n"
        "    loss.backward()\n    opt.zero_grad()\n    opt.step()\n"
    )
    assert lint(gradient_check, "ML408") == lint(cleared, "ML409") == []
    stepped = cleared.replace("    opt.zero_grad()\n", "")
    assert codes(lint(stepped, "ML409")) == [("ML409", 5)]


def test_ml805_a_statistic_in_an_assignment_target_is_no_transformation(lint):
    source = "import torch\n\ndef f(x, k):\n    x[x <= x.topk(k)[0].min()] = 0\n    x_train, x_test = x[:k], x[k:]\n"
    assert lint(source, "ML805") == []
