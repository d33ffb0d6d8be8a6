from mllint.rules.ml101_softmax_into_cross_entropy import SoftmaxIntoCrossEntropy

HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


def positions(findings):
    return [(f.code, f.start.line, f.start.column) for f in findings]


def test_inline_functional_softmax_is_fixed_to_its_input(lint, fix):
    source = HEADER + "loss = F.cross_entropy(F.softmax(logits, dim=1), labels)\n"
    assert positions(lint(source, "ML101")) == [("ML101", 4, 24)]
    assert fix(source, "ML101", unsafe=True) == HEADER + "loss = F.cross_entropy(logits, labels)\n"


def test_the_fix_is_unsafe_only(fix):
    source = HEADER + "loss = F.cross_entropy(F.softmax(logits, dim=1), labels)\n"
    assert fix(source, "ML101") == source


def test_a_variable_read_only_by_the_loss_is_assigned_the_logits(lint, fix):
    source = HEADER + (
        "def step(model, x, y):\n"
        "    probs = model(x).softmax(dim=-1)\n"
        "    return nn.CrossEntropyLoss()(probs, y)\n"
    )
    [finding] = lint(source, "ML101")
    assert positions([finding]) == [("ML101", 6, 34)]
    assert finding.message == (
        "`probs` is softmax output (line 5), but `nn.CrossEntropyLoss()` applies log_softmax itself: pass the raw logits"
    )
    fixed = fix(source, "ML101", unsafe=True)
    assert fixed == source.replace("probs = model(x).softmax(dim=-1)", "probs = model(x)")
    assert fix(fixed, "ML101", unsafe=True) == fixed


def test_no_fix_when_the_softmax_value_is_used_elsewhere(lint):
    source = HEADER + (
        "def step(model, x, y):\n"
        "    probs = F.softmax(model(x), 1)\n"
        "    accuracy = (probs.argmax(1) == y).float().mean()\n"
        "    return F.cross_entropy(probs, y), accuracy\n"
    )
    [finding] = lint(source, "ML101")
    assert finding.fix is None


def test_a_softmax_module_attribute_is_dropped_from_the_call(fix):
    source = HEADER + (
        "class Trainer:\n"
        "    def __init__(self):\n"
        "        self.softmax = nn.Softmax(dim=1)\n"
        "        self.criterion = nn.CrossEntropyLoss()\n"
        "    def step(self, x, y):\n"
        "        return self.criterion(self.softmax(self.model(x)), y)\n"
    )
    assert fix(source, "ML101", unsafe=True) == source.replace("self.softmax(self.model(x))", "self.model(x)")


def test_a_sequential_ending_in_softmax_is_reported_without_a_fix(lint):
    source = HEADER + (
        "model = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))\n"
        "loss = F.cross_entropy(model(x), y)\n"
    )
    [finding] = lint(source, "ML101")
    assert positions([finding]) == [("ML101", 5, 24)]
    assert finding.fix is None


def test_reassignment_on_one_path_only_is_not_reported(lint):
    source = HEADER + (
        "def step(model, x, y, flag):\n"
        "    out = model(x)\n"
        "    if flag:\n"
        "        out = out.softmax(1)\n"
        "    return F.cross_entropy(out, y)\n"
    )
    assert lint(source, "ML101") == []


def test_reassignment_after_the_softmax_is_followed(lint):
    source = HEADER + (
        "def step(model, x, y):\n"
        "    out = F.softmax(model(x), 1)\n"
        "    out = model(x)\n"
        "    return F.cross_entropy(out, y)\n"
    )
    assert lint(source, "ML101") == []


def test_softmax_assigned_later_in_the_loop_reaches_the_next_iteration(lint):
    source = HEADER + (
        "def train(model, loader):\n"
        "    out = None\n"
        "    for x, y in loader:\n"
        "        if out is not None:\n"
        "            F.cross_entropy(out, y)\n"
        "        out = F.softmax(model(x), 1)\n"
    )
    assert lint(source, "ML101") == []  # the first iteration reads None: not every path is softmax


def test_a_loss_function_imported_under_an_alias_inside_a_function_is_followed(lint):
    source = HEADER + (
        "def step(logits, labels):\n"
        "    from torch.nn.functional import cross_entropy as ce\n"
        "    return ce(F.softmax(logits, dim=1), labels)\n"
    )
    assert positions(lint(source, "ML101")) == [("ML101", 6, 15)]


def test_soft_targets_and_log_softmax_are_not_reported(lint):
    source = HEADER + (
        "a = F.cross_entropy(student, F.softmax(teacher / 2.0, dim=1))\n"
        "b = F.cross_entropy(F.log_softmax(logits, 1), y)\n"
        "c = F.nll_loss(F.log_softmax(logits, 1), y)\n"
    )
    assert lint(source, "ML101") == []


def test_documentation_examples():
    from mllint.engine import Selection, lint_text

    selection = Selection.of(["ML101"])
    assert lint_text(SoftmaxIntoCrossEntropy.doc_code("Example"), "x.py", selection)
    assert not lint_text(SoftmaxIntoCrossEntropy.doc_code("Use instead"), "x.py", selection)
