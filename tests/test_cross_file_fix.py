"""Fixes across files: a finding in `engine.py` whose activation is returned by a model or helper in
`models.py` is fixed in `models.py`, as an edit of that file with `--fix --unsafe-fixes` (and in `--diff`),
graded and guarded as a fix of the finding's own file (tests/test_lsp.py and test_neovim.py: the editor)."""
from pathlib import Path

import pytest
from click.testing import CliRunner

from mllint.cli import main
from mllint.cross_file import _fix_target
from mllint.engine import Selection
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Severity
from mllint.registry import all_rules
from mllint.runner import FileResult, Mode

MODELS = """import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        return {activation}


def make_scores(x):
    return {helper}
"""
ENGINE = """import torch
import torch.nn.functional as F
from torch import nn

from models import Net, make_scores

model = Net()
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
{use}
"""
CASES = {
    # rule: (the model's activation, what the fix makes of it, the loss in engine.py)
    "ML101": ("F.softmax(h, dim=1)", "h", "loss = nn.CrossEntropyLoss()(model(x), y)"),
    "ML103": ("torch.sigmoid(h)", "h", "loss = F.binary_cross_entropy_with_logits(model(x), y.float())"),
    "ML105": ("torch.sigmoid(h)", "h", "loss = F.cross_entropy(model(x), y)"),
    "ML102": ("h.softmax(dim=1)", "h.log_softmax(dim=1)", "loss = F.nll_loss(model(x), y)"),
    "ML106": ("torch.softmax(h, 1)", "torch.log_softmax(h, 1)", "loss = F.kl_div(model(x), y, reduction='batchmean')"),
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root: Path, activation: str, use: str, helper: str = "x") -> None:
    (root / "models.py").write_text(MODELS.format(activation=activation, helper=helper))
    (root / "engine.py").write_text(ENGINE.format(use=use))


def mllint(*args: str):
    return CliRunner().invoke(main, ["--no-cache", *args])


@pytest.mark.parametrize("code", CASES)
def test_the_fix_edits_the_file_with_the_activation(project, code):
    activation, fixed, use = CASES[code]
    write(project, activation, use)
    assert mllint("--select", code, "-q", "engine.py").stdout.startswith(f"engine.py:9:")
    diff = mllint("--select", code, "--diff", "--unsafe-fixes", "engine.py")
    assert (diff.exit_code, diff.stdout.splitlines()[:2]) == (1, ["--- a/models.py", "+++ b/models.py"])
    assert f"-        return {activation}\n+        return {fixed}\n" in diff.stdout
    result = mllint("--select", code, "--fix", "--unsafe-fixes", "engine.py")
    assert (result.exit_code, result.stdout) == (0, "Found 1 finding (1 fixed, 0 remaining).\n")
    assert (project / "models.py").read_text() == MODELS.format(activation=fixed, helper="x")
    assert (project / "engine.py").read_text() == ENGINE.format(use=use)


def test_the_fix_is_unsafe_as_in_the_findings_own_file(project):
    write(project, "F.softmax(h, dim=1)", "loss = F.cross_entropy(model(x), y)")
    result = mllint("--fix", "engine.py")
    assert result.exit_code == 1 and "1 hidden fix can be enabled with the `--unsafe-fixes` option." in result.stdout
    assert "F.softmax(h, dim=1)" in (project / "models.py").read_text()
    full = mllint("--output-format", "full", "engine.py").stdout
    assert "= help: Remove the softmax: pass the logits (in models.py) (unsafe fix: applied with `--fix --unsafe-fixes`)" in full
    assert "@@" not in full  # no diff against engine.py's text


def test_two_losses_fed_by_one_model_are_fixed_by_one_edit(project):
    write(project, "F.softmax(h, dim=1)", "loss = F.cross_entropy(model(x), y)\nother = nn.CrossEntropyLoss()(model(x), y)")
    result = mllint("--fix", "--unsafe-fixes", "engine.py")
    assert result.stdout == "Found 2 findings (2 fixed, 0 remaining).\n"
    assert "        return h\n" in (project / "models.py").read_text()


def test_a_helpers_activation_is_fixed_too_but_not_a_value_it_does_not_return_directly(project):
    write(project, "h", "loss = F.cross_entropy(make_scores(x), y)", helper="F.softmax(x, dim=1)")
    assert mllint("--fix", "--unsafe-fixes", "engine.py").exit_code == 0
    assert "    return x\n" in (project / "models.py").read_text()
    (project / "models.py").write_text(MODELS.format(activation="h", helper="x").replace("    return x\n", "    p = F.softmax(x, dim=1)\n    q = p\n    return q\n"))
    result = mllint("--fix", "--unsafe-fixes", "engine.py")
    assert result.exit_code == 1 and "p = F.softmax(x, dim=1)" in (project / "models.py").read_text()


def test_a_target_with_fixes_of_its_own_in_the_run_waits_for_the_next_run(project):
    write(project, "F.softmax(h, dim=1)", "loss = F.cross_entropy(model(x), y)")
    models = project / "models.py"
    models.write_text(models.read_text() + "\nNet().eval\n")  # ML301, a safe fix of models.py itself
    first = mllint("--fix", "--unsafe-fixes", "engine.py", "models.py")
    assert first.exit_code == 1 and "Net().eval()" in models.read_text() and "F.softmax(h, dim=1)" in models.read_text()
    second = mllint("--fix", "--unsafe-fixes", "engine.py", "models.py")
    assert second.exit_code == 0 and "        return h\n" in models.read_text()


def test_a_fix_that_would_not_parse_leaves_the_target_unchanged(project):
    (project / "models.py").write_text("def f(x):\n    return g(x)\n")
    breaking = Fix("Break it", (Edit(Position(2, 12), Position(2, 16), "("),), Applicability.UNSAFE, path="models.py")
    finding = Finding("engine.py", Position(1, 1), Position(1, 2), "ML101", "softmax-into-cross-entropy", "m", Severity.ERROR, breaking)
    result = FileResult("engine.py", [finding])
    _fix_target("models.py", [(result, finding)], Mode.FIX, {"engine.py": Selection.of(all_rules())})
    assert (project / "models.py").read_text() == "def f(x):\n    return g(x)\n"
    assert [f.code for f in result.findings] == ["ML101", "ML005"] and not result.fixed
    assert "produced code that does not parse" in result.findings[1].message


@pytest.mark.parametrize(
    ("forward", "fixed"),
    [
        ("        h = F.softmax(h, dim=1)\n        return h\n", "        return h\n"),  # the line goes
        ("        probs = F.softmax(h, dim=1)\n        return probs\n", "        probs = h\n        return probs\n"),
        ("        h = F.softmax(h, dim=1)  # probabilities\n        return h\n", None),  # a comment shares the line
        ("        probs = F.softmax(h, dim=1)\n        self.last = probs\n        return probs\n", None),  # kept too
    ],
)
def test_an_activation_assigned_just_before_it_is_returned(project, forward, fixed):
    models = MODELS.format(activation="h", helper="x").replace("        return h\n", forward)
    write(project, "h", "loss = F.cross_entropy(model(x), y)")
    (project / "models.py").write_text(models)
    result = mllint("--fix", "--unsafe-fixes", "engine.py")
    assert result.exit_code == (1 if fixed is None else 0)
    assert (project / "models.py").read_text() == (models if fixed is None else models.replace(forward, fixed))
