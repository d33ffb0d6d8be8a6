"""The activation/loss table (`losses.MISMATCHES`): every wrong pair is reported by exactly one rule, the
right pairs by none; ML105-ML107; linear combinations of probabilities (ensembles, mixtures, one-hot
products) stay probabilities."""
import pytest

from mllint.analysis.facets.losses import MISMATCHES

HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
ACTIVATIONS = {
    "softmax output": "F.softmax(z, dim=1)",
    "log_softmax output": "F.log_softmax(z, dim=1)",
    "sigmoid output": "torch.sigmoid(z)",
    "logsigmoid output": "F.logsigmoid(z)",
}
LOSSES = {
    "cross-entropy": "F.cross_entropy",
    "nll": "nn.NLLLoss()",
    "bce": "F.binary_cross_entropy",
    "bce-with-logits": "nn.BCEWithLogitsLoss()",
    "kl-div": "F.kl_div",
}
CODES = {
    "softmax applied twice": "ML101",
    "NLL of values that are not log-probabilities": "ML102",
    "sigmoid applied twice": "ML103",
    "log_softmax applied twice": "ML104",
    "a loss that applies one activation fed the output of another": "ML105",
    "KL divergence of values that are not log-probabilities": "ML106",
    "BCE of values outside [0, 1]": "ML107",
    "BCE after a sigmoid, unstable": "ML702",
}
ML1 = ("ML101", "ML102", "ML103", "ML104", "ML105", "ML106", "ML107", "ML702")


def codes(findings):
    return [f.code for f in findings]


def positions(findings):
    return [(f.code, f.start.line, f.start.column) for f in findings]


@pytest.mark.parametrize("kind", ACTIVATIONS)
@pytest.mark.parametrize("loss", LOSSES)
def test_each_pair_of_the_table_is_one_rules_finding(lint, kind, loss):
    source = HEADER + f"def step(z, t):\n    return {LOSSES[loss]}({ACTIVATIONS[kind]}, t)\n"
    problem = next((p for (l, k), p in MISMATCHES.items() if l == loss and k.value == kind), None)
    assert codes(lint(source, *ML1)) == ([CODES[problem]] if problem else [])


def test_the_right_pairs_are_not_in_the_table():
    right = {(l, k.value) for (l, k) in MISMATCHES}
    assert ("nll", "log_softmax output") not in right and ("kl-div", "log_softmax output") not in right
    assert ("bce", "softmax output") not in right  # softmax probabilities are in [0, 1]: may be meant


def test_sigmoid_into_cross_entropy_is_dropped_when_read_only_there(lint, fix):
    source = HEADER + "def step(model, x, y):\n    scores = torch.sigmoid(model(x))\n    return F.cross_entropy(scores, y)\n"
    [finding] = lint(source, "ML105")
    assert positions([finding]) == [("ML105", 6, 28)]
    assert finding.message == (
        "`scores` is sigmoid output (line 5), but `F.cross_entropy` applies log_softmax itself and expects "
        "raw logits: pass the logits"
    )
    fixed = fix(source, "ML105", unsafe=True)
    assert fixed == source.replace("torch.sigmoid(model(x))", "model(x)")
    assert fix(fixed, "ML105", unsafe=True) == fixed
    assert fix(source, "ML105") == source  # unsafe only


def test_softmax_kept_for_a_metric_is_reported_without_a_fix(lint, fix):
    source = HEADER + (
        "def step(model, x, t):\n"
        "    probs = F.softmax(model(x), dim=1)\n"
        "    accuracy = (probs.argmax(1) == t.argmax(1)).float().mean()\n"
        "    return nn.BCEWithLogitsLoss()(probs, t), accuracy\n"
    )
    [finding] = lint(source, "ML105")
    assert positions([finding]) == [("ML105", 7, 35)] and finding.fix is None


def test_kl_div_on_softmax_is_fixed_to_log_softmax_and_the_target_is_not_checked(lint, fix):
    source = HEADER + "loss = F.kl_div(F.softmax(s, dim=1), F.softmax(t, dim=1), reduction='batchmean')\n"
    assert positions(lint(source, "ML106")) == [("ML106", 4, 17)]
    fixed = fix(source, "ML106", unsafe=True)
    assert fixed == source.replace("F.kl_div(F.softmax(s", "F.kl_div(F.log_softmax(s")
    assert lint(fixed, *ML1) == []


def test_kl_div_module_on_a_linear_layers_output(lint):
    source = HEADER + "head = nn.Linear(8, 3)\ncriterion = nn.KLDivLoss(reduction='batchmean')\nloss = criterion(head(x), p)\n"
    [finding] = lint(source, "ML106")
    assert positions([finding]) == [("ML106", 6, 18)] and finding.fix is None


def test_bce_on_log_probabilities_is_reported_without_a_fix(lint):
    source = HEADER + "log_probs = nn.LogSigmoid()(z)\nloss = nn.BCELoss()(log_probs, t)\n"
    [finding] = lint(source, "ML107")
    assert positions([finding]) == [("ML107", 5, 21)] and finding.fix is None


@pytest.mark.parametrize(
    "combined",
    [
        "0.5 * pa + 0.5 * pb",
        "(pa + pb) / 2",
        "torch.stack([pa, pb]).mean(0)",
        "torch.mean(torch.stack((pa, pb)), dim=0)",
        "sum([pa, pb]) / 2",
        "pa @ F.one_hot(groups).float()",
        "torch.matmul(pa, pb)",
    ],
)
def test_probabilities_combined_linearly_stay_probabilities(lint, fix, combined):
    source = HEADER + f"pa, pb = F.softmax(za, dim=1), F.softmax(zb, dim=1)\nloss = F.cross_entropy({combined}, y)\n"
    [finding] = lint(source, "ML101")
    assert finding.message.startswith(f"`{combined}` is softmax output (combined linearly, line 4)")
    assert fix(source, "ML101", unsafe=True) == source  # no single softmax to drop


def test_an_ensemble_mean_built_in_a_list_comprehension(lint):
    source = HEADER + (
        "def step(members, x, y):\n"
        "    probs = [F.softmax(m(x), dim=1) for m in members]\n"
        "    return F.nll_loss(torch.stack(probs).mean(dim=0), y)\n"
    )
    assert positions(lint(source, *ML1)) == [("ML102", 6, 23)]


@pytest.mark.parametrize(
    "combined",
    [
        "attention @ values",  # softmax weights times features: features
        "pa - pb",  # a difference of probabilities is no probability
        "pa * pb",  # nor an element-wise product of two
        "pa + 1e-8",  # smoothed: left to ML701's rules
        "pa + torch.sigmoid(za)",  # kinds that disagree
        "F.log_softmax(za, 1) + F.log_softmax(zb, 1)",  # sums of log-probabilities are not followed
    ],
)
def test_other_combinations_are_unknown(lint, combined):
    source = HEADER + (
        "pa, pb = F.softmax(za, dim=1), F.softmax(zb, dim=1)\n"
        "attention = F.softmax(q @ k.T, dim=-1)\n"
        f"loss = F.cross_entropy({combined}, y)\n"
    )
    assert lint(source, *ML1) == []


@pytest.mark.parametrize("joined", ["torch.cat([pa, pb])", "torch.stack([pa, pb])"])
def test_softmax_outputs_joined_are_softmax_output(lint, joined):
    """Stacked or concatenated, the values are still probabilities that the loss takes for logits."""
    source = HEADER + f"pa, pb = F.softmax(za, dim=1), F.softmax(zb, dim=1)\nloss = F.cross_entropy({joined}, y)\n"
    assert [f.code for f in lint(source, *ML1)] == ["ML101"]


def test_the_log_of_an_ensemble_mean_is_no_log_of_probabilities_finding(lint):
    source = HEADER + "mean = torch.stack([F.softmax(a, 1), F.softmax(b, 1)]).mean(0)\nscore = torch.log(mean)\n"
    assert lint(source, "ML701") == []


def test_probabilities_reweighted_in_a_loop_are_a_mixture_on_every_path(lint):
    source = HEADER + (
        "def reweight(scores, g):\n"
        "    probs = torch.softmax(scores, dim=1)\n"
        "    for i in range(3):\n"
        "        probs = probs * (1 + g[:, i])\n"
        "    return torch.log(probs)\n"
    )
    assert lint(source, "ML701") == []
