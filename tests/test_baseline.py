"""`--write-baseline` records today's findings; `--baseline` reports only new ones, surviving line shifts."""
from click.testing import CliRunner

from mllint.cli import main

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\n"


def run(*args):
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "-q", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_only_new_findings_are_reported_and_known_ones_survive_line_shifts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    assert run("--write-baseline", "baseline.json", "train.py") == (0, "", "Recorded 1 finding in baseline.json.\n")
    assert run("--baseline", "baseline.json", "train.py")[:2] == (0, "")
    (tmp_path / "train.py").write_text("# a comment added above\n" + BUGGY + "model.train\nmodel.eval\n")
    status, output, _ = run("--baseline", "baseline.json", "train.py")
    assert status == 1
    assert output == (
        "train.py:5:1: ML301 `model.train` is not called: the statement does nothing [*]\n"
        "train.py:6:1: ML301 `model.eval` is not called: the statement does nothing [*]\n"
    )


def test_an_unreadable_baseline_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "baseline.json").write_text("not json")
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--baseline", "baseline.json", "train.py"])
    assert result.exit_code == 2
    assert "baseline.json: not a readable mllint baseline" in result.output
