"""The result cache: keyed by content, version and settings; an unchanged file is not linted again."""
import json

from click.testing import CliRunner

import mllint.runner
from mllint.cli import main

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\n"


def run(*args):
    result = CliRunner().invoke(main, ["--isolated", "--output-format", "json", "-q", *args], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def count_lints(monkeypatch) -> list[str]:
    linted: list[str] = []
    real = mllint.runner.lint_text

    def counting(text, path, *args):
        linted.append(path)
        return real(text, path, *args)

    monkeypatch.setattr(mllint.runner, "lint_text", counting)
    return linted


def test_an_unchanged_file_with_findings_is_a_cache_hit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    linted = count_lints(monkeypatch)
    first = run("-j", "1", "train.py")
    second = run("-j", "1", "train.py")
    assert first == second and first[0] == 1 and [f["code"] for f in first[1]] == ["ML301"]
    assert linted == ["train.py"]
    cache = tmp_path / ".mllint_cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / ".gitignore").read_text() == "*\n"


def test_changed_content_or_settings_miss_the_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "train.py"
    path.write_text(BUGGY)
    linted = count_lints(monkeypatch)
    run("-j", "1", "train.py")
    path.write_text(BUGGY + "model.train\n")
    _, findings = run("-j", "1", "train.py")
    assert [f["location"]["row"] for f in findings] == [3, 4]
    _, findings = run("-j", "1", "--ignore", "ML301", "train.py")
    assert findings == []
    assert len(linted) == 3


def test_no_cache_neither_reads_nor_writes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    linted = count_lints(monkeypatch)
    run("--no-cache", "train.py")
    run("--no-cache", "train.py")
    assert len(linted) == 2
    assert not (tmp_path / ".mllint_cache").exists()


def test_fix_mode_fixes_a_cached_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "train.py"
    path.write_text(BUGGY)
    run("train.py")
    status, findings = run("--fix", "train.py")
    assert (status, findings) == (0, [])
    assert path.read_text() == BUGGY.replace("model.eval", "model.eval()")


def test_clean_removes_the_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    run("train.py")
    result = CliRunner().invoke(main, ["clean"])
    assert result.exit_code == 0 and not (tmp_path / ".mllint_cache").exists()


def test_parallel_results_come_in_a_stable_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for i in range(12):
        (tmp_path / f"m{i:02}.py").write_text(BUGGY)
    serial = run("--no-cache", "-j", "1", ".")
    parallel = run("--no-cache", "-j", "2", ".")
    assert serial == parallel
    assert [f["filename"] for f in parallel[1]] == [f"m{i:02}.py" for i in range(12)]


ENGINE = """\
def train(model, criterion, loader):
    for x, y in loader:
        criterion(model(x), y).backward()
"""
MODELS = """\
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)


class LogitNet(Classifier):
    def forward(self, x):
        return self.fc(x)
"""
MAIN = """\
from torch import nn

from engine import train
from models import {model}

train({model}(), nn.CrossEntropyLoss(), [])
"""


def test_a_changed_caller_invalidates_the_callee_findings(tmp_path, monkeypatch):
    """`engine.py`'s findings depend on what `main.py` passes to `train`: changing the caller, or adding
    one, lints the callee again."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "main.py").write_text(MAIN.format(model="LogitNet"))
    linted = count_lints(monkeypatch)
    assert run("-j", "1", "engine.py") == (0, [])
    assert run("-j", "1", "engine.py") == (0, []) and linted == ["engine.py"]
    (tmp_path / "main.py").write_text(MAIN.format(model="Classifier"))
    _, findings = run("-j", "1", "engine.py")
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("ML101", 3)]
    assert "passed at main.py:6" in findings[0]["message"] and len(linted) == 2
    (tmp_path / "main.py").write_text(MAIN.format(model="LogitNet"))
    assert run("-j", "1", "engine.py") == (0, []) and len(linted) == 3
    (tmp_path / "other.py").write_text(MAIN.format(model="Classifier"))
    _, findings = run("-j", "1", "engine.py")
    assert [f["code"] for f in findings] == ["ML101"] and len(linted) == 4


def test_a_cached_finding_keeps_its_call_sites(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "main.py").write_text(MAIN.format(model="Classifier"))
    sarif = ["--output-format", "sarif", "-j", "1", "--exit-zero", "engine.py"]
    first = CliRunner().invoke(main, ["--isolated", *sarif]).stdout
    linted = count_lints(monkeypatch)
    second = CliRunner().invoke(main, ["--isolated", *sarif]).stdout
    assert linted == [] and first == second
    [result] = json.loads(second)["runs"][0]["results"]
    [site] = result["relatedLocations"]
    assert site["physicalLocation"]["artifactLocation"]["uri"] == "main.py"
    assert site["physicalLocation"]["region"] == {"startLine": 6, "startColumn": 1, "endLine": 6, "endColumn": 47}


def test_a_changed_notebook_caller_invalidates_the_callee_findings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "models.py").write_text(MODELS)

    def notebook(model):
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": MAIN.format(model=model)}
        return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    (tmp_path / "explore.ipynb").write_text(notebook("LogitNet"))
    linted = count_lints(monkeypatch)
    assert run("-j", "1", "engine.py") == (0, [])
    (tmp_path / "explore.ipynb").write_text(notebook("Classifier"))
    _, findings = run("-j", "1", "engine.py")
    assert [f["code"] for f in findings] == ["ML101"] and len(linted) == 2
    assert "passed at explore.ipynb:cell 1:6" in findings[0]["message"]


def test_a_changed_base_class_module_invalidates_its_subclasses_findings(tmp_path, monkeypatch):
    """Whether `Net` is a Module depends on `base.py`: changing it lints `nets.py` again."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.py").write_text("from torch import nn\n\n\nclass BaseModel(nn.Module):\n    pass\n")
    (tmp_path / "nets.py").write_text(
        "from base import BaseModel\n\n\nclass Net(BaseModel):\n    def __init__(self):\n        self.width = 4\n"
    )
    linted = count_lints(monkeypatch)
    _, findings = run("--select", "ML803", "-j", "1", "nets.py")
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("ML803", 5)]
    (tmp_path / "base.py").write_text("class BaseModel:\n    pass\n")
    assert run("--select", "ML803", "-j", "1", "nets.py") == (0, []) and len(linted) == 2


def test_the_key_changes_with_mllints_own_code(tmp_path, monkeypatch):
    import os

    import mllint.cache

    package = tmp_path / "package"
    (package / "rules").mkdir(parents=True)
    rule = package / "rules" / "ml101.py"
    rule.write_text("CODE = 1\n")
    before = mllint.cache.sources_fingerprint("0.1.0", [str(package)])
    assert mllint.cache.sources_fingerprint("0.1.0", [str(package)]) == before
    rule.write_text("CODE = 2\n")
    os.utime(rule, ns=(1, 1))
    assert mllint.cache.sources_fingerprint("0.1.0", [str(package)]) != before
    assert mllint.cache.sources_fingerprint("0.2.0", [str(package)]) != mllint.cache.sources_fingerprint("0.1.0", [str(package)])

    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    linted = count_lints(monkeypatch)
    run("-j", "1", "train.py")
    monkeypatch.setattr(mllint.cache, "linter_fingerprint", lambda: "edited")
    run("-j", "1", "train.py")
    assert linted == ["train.py", "train.py"]


CONFIGURED = """import torch
import torch.nn as nn
import yaml

LOSSES = {"NLLLoss": nn.NLLLoss, "CrossEntropyLoss": nn.CrossEntropyLoss}


def run(x, y):
    settings = yaml.safe_load(open("run.yaml"))
    objective = LOSSES[settings["loss"]]()
    model = nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    loss = objective(model(x), y)
    loss.backward()
    opt.step()
"""


def test_a_changed_configuration_file_invalidates_the_findings_it_chose(tmp_path, monkeypatch):
    """A lint that read `run.yaml` to choose the loss depends on it: editing it lints the file again."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(CONFIGURED)
    (tmp_path / "run.yaml").write_text("loss: NLLLoss\n")
    linted = count_lints(monkeypatch)
    _, findings = run("-j", "1", "train.py")
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("ML102", 14)]
    assert run("-j", "1", "train.py")[1] == findings and linted == ["train.py"]
    (tmp_path / "run.yaml").write_text("loss: CrossEntropyLoss\n")
    assert run("-j", "1", "train.py") == (0, []) and len(linted) == 2
