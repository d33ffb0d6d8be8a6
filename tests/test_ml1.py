"""ML102 (NLL on probabilities or logits), ML103 (sigmoid into BCEWithLogitsLoss), ML104 (redundant
log_softmax before cross-entropy), and what the value kinds follow for all ML1 rules."""
from mllint.rules.ml102_nll_loss_without_log_softmax import NllLossWithoutLogSoftmax
from mllint.rules.ml103_sigmoid_into_bce_with_logits import SigmoidIntoBceWithLogits
from mllint.rules.ml104_log_softmax_into_cross_entropy import LogSoftmaxIntoCrossEntropy

HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"


def positions(findings):
    return [(f.code, f.start.line, f.start.column) for f in findings]


def test_nll_on_softmax_is_fixed_to_log_softmax(lint, fix):
    source = HEADER + "a = F.nll_loss(F.softmax(z, dim=1), y)\nb = nn.NLLLoss()(z.softmax(1), y)\n"
    assert positions(lint(source, "ML102")) == [("ML102", 4, 16), ("ML102", 5, 18)]
    fixed = fix(source, "ML102", unsafe=True)
    assert fixed == HEADER + "a = F.nll_loss(F.log_softmax(z, dim=1), y)\nb = nn.NLLLoss()(z.log_softmax(1), y)\n"
    assert fix(fixed, "ML102", unsafe=True) == fixed
    assert fix(source, "ML102") == source  # unsafe only


def test_nll_on_a_linear_layers_output_is_reported_without_a_fix(lint):
    source = HEADER + (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.out = nn.Linear(8, 3)\n"
        "    def forward(self, x):\n"
        "        return self.out(x)\n"
        "def step(x, y):\n"
        "    return F.nll_loss(Net()(x), y)\n"
    )
    [finding] = lint(source, "ML102")
    assert positions([finding]) == [("ML102", 11, 23)]
    assert finding.message == (
        "`Net()(x)` is raw logits from a Linear layer: `Net.forward` returns raw logits from a Linear layer "
        "(line 9), but `F.nll_loss` expects log-probabilities: apply `log_softmax` first"
    )
    assert finding.fix is None


def test_nll_on_log_softmax_or_unknown_values_is_not_reported(lint):
    source = HEADER + (
        "a = F.nll_loss(F.log_softmax(z, dim=1), y)\n"
        "b = F.nll_loss(z, y)\n"
        "c = F.nll_loss(torch.log(F.softmax(z, 1) + 1e-8), y)\n"
    )
    assert lint(source, "ML102") == []


def test_sigmoid_into_bce_with_logits_is_dropped_when_read_only_there(lint, fix):
    source = HEADER + (
        "def step(model, x, t):\n"
        "    probs = torch.sigmoid(model(x))\n"
        "    return F.binary_cross_entropy_with_logits(probs, t)\n"
    )
    assert positions(lint(source, "ML103")) == [("ML103", 6, 47)]
    assert fix(source, "ML103", unsafe=True) == source.replace("torch.sigmoid(model(x))", "model(x)")


def test_a_sigmoid_module_and_a_sequential_ending_in_one(lint):
    source = HEADER + (
        "head = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())\n"
        "gate = nn.Sigmoid()\n"
        "loss = nn.BCEWithLogitsLoss()(head(x), t) + nn.BCEWithLogitsLoss()(gate(x), t)\n"
    )
    findings = lint(source, "ML103")
    assert positions(findings) == [("ML103", 6, 31), ("ML103", 6, 68)]
    assert [f.fix is None for f in findings] == [True, False]


def test_redundant_log_softmax_is_info_and_safely_removed_over_dim_1(lint, fix):
    source = HEADER + "a = F.cross_entropy(F.log_softmax(z, dim=1), y)\nb = F.cross_entropy(z.log_softmax(-1), y)\n"
    findings = lint(source, "ML104")
    assert positions(findings) == [("ML104", 4, 21), ("ML104", 5, 21)]
    assert findings[0].severity.label == "info"
    assert fix(source, "ML104") == HEADER + "a = F.cross_entropy(z, y)\nb = F.cross_entropy(z.log_softmax(-1), y)\n"


def test_exp_of_log_softmax_is_softmax_output(lint):
    source = HEADER + "loss = F.cross_entropy(F.log_softmax(z, dim=1).exp(), y)\n"
    assert positions(lint(source, "ML101", "ML104")) == [("ML101", 4, 24)]


def test_a_factory_and_a_trainer_attribute_are_followed(lint):
    source = HEADER + (
        "def make():\n"
        "    return nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(dim=1))\n"
        "class Trainer:\n"
        "    def __init__(self):\n"
        "        self.model = make().to('cpu')\n"
        "        self.criterion = nn.CrossEntropyLoss()\n"
        "    def step(self, x, y):\n"
        "        out = self.model(x)\n"
        "        return self.criterion(out, y)\n"
    )
    [finding] = lint(source, "ML104")
    assert positions([finding]) == [("ML104", 12, 31)]
    assert "`make` returns log_softmax output (line 5)" in finding.message


def test_documentation_examples(lint):
    for rule in (NllLossWithoutLogSoftmax, SigmoidIntoBceWithLogits, LogSoftmaxIntoCrossEntropy):
        assert [f.code for f in lint(rule.doc_code("Example"), rule.code)] == [rule.code]
        assert lint(rule.doc_code("Use instead"), rule.code) == []


def test_tuple_unpacking_and_indexing_of_a_forward_that_returns_two_values(lint):
    source = HEADER + (
        "class TwoHeads(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 3)\n"
        "    def forward(self, x):\n"
        "        logits = self.fc(x)\n"
        "        return logits, F.softmax(logits, dim=1)\n"
        "def step(model: nn.Module, x, y):\n"
        "    model = TwoHeads()\n"
        "    logits, probs = model(x)\n"
        "    out = model(x)\n"
        "    first, *rest = model(x)\n"
        "    return F.cross_entropy(logits, y) + F.cross_entropy(probs, y) + F.cross_entropy(out[-1], y) + F.nll_loss(first, y)\n"
    )
    findings = lint(source, "ML101", "ML102", "ML104")
    assert positions(findings) == [("ML101", 16, 57), ("ML101", 16, 85)]
    assert "`TwoHeads.forward` returns softmax output (line 10)" in findings[0].message


def test_a_model_a_default_chose_is_named_with_that_default(lint):
    source = HEADER + (
        "import argparse\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--out', default='sigmoid')\n"
        "parser.set_defaults(out='linear')\n"
        "args = parser.parse_args()\n"
        "head = nn.Linear(16, 1)\n"
        "if args.out == 'sigmoid':\n"
        "    head = nn.Sequential(head, nn.Sigmoid())\n"
        "bce = nn.BCELoss()\n"
        "loss = bce(head(x), y)\n"
    )
    [finding] = lint(source, "ML107")
    assert "`bce`, with the default `args.out` = 'linear', expects probabilities" in finding.message
