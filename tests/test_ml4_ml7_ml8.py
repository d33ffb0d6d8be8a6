"""Exact findings and fixes of the autograd (ML4), numerics (ML7) and API hygiene (ML8) rules."""
import pytest

HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
MODULE = HEADER + "class Net(nn.Module):\n    def forward(self, x):\n"


def positions(findings):
    return [(f.code, f.start.line, f.start.column) for f in findings]


@pytest.mark.parametrize(
    ("statement", "fixed"),
    [
        ("x /= 255", "x = x / 255"),
        ("x *= a + b", "x = x * (a + b)"),
        ("x -= self.mean", "x = x - self.mean"),
        ("x **= 2", "x = x ** 2"),
    ],
)
def test_augmented_assignment_to_a_forward_argument_is_rebound(lint, fix, statement, fixed):
    source = MODULE + f"        {statement}\n        return x\n"
    assert positions(lint(source, "ML401")) == [("ML401", 6, 9)]
    assert fix(source, "ML401") == MODULE + f"        {fixed}\n        return x\n"


def test_every_in_place_change_of_the_argument_is_rebound(fix):
    source = MODULE + "        x /= 255\n        x -= 0.5\n        return x\n"
    fixed = fix(source, "ML401")
    assert fixed == MODULE + "        x = x / 255\n        x = x - 0.5\n        return x\n"
    assert fix(fixed, "ML401") == fixed


def test_a_rebound_argument_may_change_in_place(lint):
    source = MODULE + "        x = x * 1.0\n        x /= 255\n        x.clamp_(0, 1)\n        x[x < 0] = 0\n        return x\n"
    assert lint(source, "ML401") == []


def test_an_argument_rebound_on_one_path_only_is_still_reported(lint):
    source = MODULE + "        if self.training:\n            x = x * 1.0\n        x /= 255\n        return x\n"
    assert positions(lint(source, "ML401")) == [("ML401", 8, 9)]


def test_non_tensor_arguments_and_functions_outside_modules_are_not_reported(lint):
    source = HEADER + (
        "class Net(nn.Module):\n"
        "    def forward(self, x, steps: int, cache: dict):\n"
        "        steps -= 1\n"
        "        cache['x'] = x\n"
        "        return x\n"
        "def forward(x):\n"
        "    x /= 2\n"
        "    return x\n"
    )
    assert lint(source, "ML401") == []


def test_requires_grad_typo_is_fixed(fix):
    source = HEADER + "for p in model.parameters():\n    p.require_grad = False\n"
    assert fix(source, "ML402") == HEADER + "for p in model.parameters():\n    p.requires_grad = False\n"


@pytest.mark.parametrize(
    ("expression", "fixed"),
    [
        ("torch.log(F.softmax(logits, dim=1))", "F.log_softmax(logits, dim=1)"),
        ("torch.log(torch.softmax(logits, -1))", "torch.log_softmax(logits, -1)"),
        ("logits.softmax(dim=-1).log()", "logits.log_softmax(dim=-1)"),
        ("F.softmax(logits, 1).log()", "F.log_softmax(logits, 1)"),
    ],
)
def test_log_of_softmax_becomes_log_softmax(lint, fix, expression, fixed):
    source = HEADER + f"y = {expression}\n"
    assert positions(lint(source, "ML701")) == [("ML701", 4, 5)]
    assert fix(source, "ML701") == HEADER + f"y = {fixed}\n"


def test_log_of_a_softmax_or_sigmoid_variable_is_reported_without_a_fix(lint):
    source = HEADER + "p = torch.sigmoid(z)\na = torch.log(p)\nq = F.softmax(z, 1)\nb = q.log()\n"
    findings = lint(source, "ML701")
    assert positions(findings) == [("ML701", 5, 5), ("ML701", 7, 5)]
    assert all(f.fix is None for f in findings)
    assert findings[0].message.startswith("log of sigmoid output")
    assert findings[1].message == "log of softmax output: use `log_softmax` on the logits"


def test_guarded_logs_are_not_reported(lint):
    source = HEADER + "p = F.softmax(z, 1)\na = torch.log(p + 1e-8)\nb = p.clamp(min=1e-6).log()\nc = torch.log(F.log_softmax(z, 1).exp())\n"
    assert lint(source, "ML701") == []


def test_bce_on_sigmoid(lint):
    source = HEADER + "loss = nn.BCELoss()(torch.sigmoid(z), y) + F.binary_cross_entropy(p, y) + nn.BCEWithLogitsLoss()(z, y)\n"
    findings = lint(source, "ML702")
    assert positions(findings) == [("ML702", 4, 21)]
    assert findings[0].message == (
        "`torch.sigmoid(z)` is sigmoid output, passed to `nn.BCELoss()`: "
        "`BCEWithLogitsLoss` on the logits keeps the gradient where the sigmoid saturates"
    )


def test_bce_on_sigmoid_in_a_loop_over_every_criterion_names_the_item(lint):
    """A loop (or a comprehension) calls each item of the container in turn: the one `BCELoss` of a list
    of criteria is given the sigmoid output, whatever the other items are."""
    source = HEADER + (
        "criteria = [(nn.BCELoss(), 1.0), (nn.L1Loss(), 0.1)]\n"
        "def total(prob, y):\n"
        "    return sum(w * crit(prob, y) for crit, w in criteria)\n"
        "total(torch.sigmoid(z), y).backward()\n"
    )
    [finding] = lint(source, "ML702")
    assert finding.message == (
        "`prob` is sigmoid output: `prob` is `torch.sigmoid(z)` passed at line 7 (line 7), passed to `crit` (its item "
        "`nn.BCELoss()`, line 4): `BCEWithLogitsLoss` on the logits keeps the gradient where the sigmoid saturates"
    )


def test_bce_on_sigmoid_is_an_opt_in_suggestion():
    """A DCGAN discriminator or a VAE decoder trained with `BCELoss` on its sigmoid is correct code."""
    from mllint.registry import all_rules, expand_selector

    assert "ML702" not in expand_selector("ML7") and "ML702" in expand_selector("ALL")
    assert all_rules()["ML702"].severity.label == "info"


def test_forward_called_directly_is_opt_in_and_fixed(lint, fix):
    source = HEADER + "out = model.forward(x) + self.forward(x) + super().forward(x) + Base.forward(self, x)\n"
    assert positions(lint(source, "ML802")) == [("ML802", 4, 7)]
    assert fix(source, "ML802") == source.replace("model.forward(x)", "model(x)")
    from mllint.registry import expand_selector

    assert "ML802" not in expand_selector("ML")
    assert "ML802" in expand_selector("ALL") and expand_selector("ML802") == ["ML802"]


def test_module_init_without_super(lint):
    source = HEADER + (
        "class A(nn.Module):\n    def __init__(self):\n        self.x = 1\n"
        "class B(A):\n    def __init__(self):\n        self.y = 2\n"
        "class C(A):\n    def __init__(self):\n        super(C, self).__init__()\n"
        "class D:\n    def __init__(self):\n        self.z = 3\n"
    )
    assert positions(lint(source, "ML803")) == [("ML803", 5, 5), ("ML803", 8, 5)]


def test_torch_load_gets_weights_only_unless_given_or_possible_through_kwargs(lint, fix):
    source = HEADER + (
        "a = torch.load(path)\n"
        "b = torch.load(path, map_location='cpu',)\n"
        "c = torch.load(path, weights_only=False)\n"
        "d = torch.load(path, **options)\n"
        "e = torch.load(path, pickle_module=dill)\n"
    )
    assert positions(lint(source, "ML801")) == [("ML801", 4, 5), ("ML801", 5, 5)]
    assert fix(source, "ML801") == source
    assert fix(source, "ML801", unsafe=True) == source.replace(
        "torch.load(path)\n", "torch.load(path, weights_only=True)\n"
    ).replace("map_location='cpu',)", "map_location='cpu', weights_only=True,)")


def test_fit_on_evaluation_data(lint):
    source = (
        "from sklearn.preprocessing import StandardScaler, OneHotEncoder\n"
        "scaler, encoder = StandardScaler(), OneHotEncoder()\n"
        "s = StandardScaler()\n"
        "s.fit(X_train)\n"
        "s.fit(valData)\n"
        "s.partial_fit(df_test['x'])\n"
        "s.fit(splits.holdout)\n"
        "s.fit(X_contest)\n"
        "other.fit(X_test)\n"
    )
    assert positions(lint(source, "ML804")) == [("ML804", 5, 1), ("ML804", 6, 1), ("ML804", 7, 1)]


def test_division_by_std(lint):
    source = HEADER + (
        "a = (x - x.mean()) / x.std()\n"
        "b = x / torch.std(x, dim=0, keepdim=True)\n"
        "x /= x.std(unbiased=False)\n"
        "c = x / (x.std() + 1e-8)\n"
        "d = x / x.std().clamp(min=1e-6)\n"
        "e = x * x.std()\n"
    )
    assert positions(lint(source, "ML703")) == [("ML703", 4, 5), ("ML703", 5, 5), ("ML703", 6, 1)]


def test_division_by_std_is_opt_in():
    from mllint.registry import expand_selector

    assert "ML703" not in expand_selector("ML7") and "ML703" in expand_selector("ALL")
