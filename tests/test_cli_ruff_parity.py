"""More of what users expect from Ruff's command line: --exclude, --ignore-noqa, --extend-per-file-ignores,
--color, --respect-gitignore, `mllint rule NAME`, the grouped and rdjson formats, pylint's notebook lines,
unsafe fixes labelled in `full`, one-line usage errors, and what a long run that found nothing checked."""
import json

import pytest
from click.testing import CliRunner

from mllint import cli
from mllint.cli import main
from tests.test_cli_parity import BUGGY, COLOURED_ML301, FIXED, ML301, mllint, project, write  # noqa: F401
from tests.test_notebook import notebook

SOFTMAX = "import torch.nn.functional as F\nloss = F.cross_entropy(F.softmax(logits, dim=1), target)\n"


def test_exclude_replaces_the_configured_excludes(project):
    write(project, {"mllint.toml": 'exclude = ["old"]\n', "old/a.py": BUGGY, "gen/b.py": BUGGY, "c.py": BUGGY})
    assert mllint("--show-files", ".").stdout == "c.py\ngen/b.py\n"
    assert mllint("--show-files", "--exclude", "gen", ".").stdout == "c.py\nold/a.py\n"
    assert mllint("--show-files", "--exclude", "gen/b.py", "--exclude", "c.py", ".").stdout == "old/a.py\n"


def test_ignore_noqa_reports_what_the_comments_silence(project):
    write(project, {"train.py": BUGGY.replace("model.eval\n", "model.eval  # noqa: ML301\n") + "# mllint: noqa\n"})
    assert mllint("train.py").exit_code == 0
    result = mllint("-q", "--ignore-noqa", "train.py")
    assert (result.exit_code, result.stdout) == (1, ML301 + " [*]\n")
    assert mllint("train.py").exit_code == 0  # the cache keeps both runs apart


def test_extend_per_file_ignores_adds_to_the_configured_ones(project):
    write(project, {"mllint.toml": 'per-file-ignores = { "tests/*" = ["ML3"] }\n', "tests/t.py": BUGGY,
                    "scripts/s.py": BUGGY, "train.py": BUGGY})  # fmt: skip
    result = mllint("-q", "--extend-per-file-ignores", "scripts/*:ML301", ".")
    assert result.stdout == ML301 + " [*]\n"


@pytest.mark.parametrize(("option", "coloured"), [("always", True), ("never", False), ("auto", False)])
def test_color_always_never_and_auto(project, monkeypatch, option, coloured):
    write(project, {"train.py": BUGGY})
    monkeypatch.setenv("FORCE_COLOR", "1") if option == "never" else None
    assert mllint("-q", "--color", option, "train.py").stdout == (COLOURED_ML301 if coloured else ML301 + " [*]") + "\n"


def test_respect_gitignore_on_the_command_line_overrides_the_configuration(project):
    write(project, {".gitignore": "gen/\n", "gen/a.py": BUGGY, "b.py": BUGGY})
    assert mllint("--show-files", ".").stdout == "b.py\n"
    assert mllint("--show-files", "--no-respect-gitignore", ".").stdout == "b.py\ngen/a.py\n"
    write(project, {"mllint.toml": "respect-gitignore = false\n"})
    assert mllint("--show-files", "--respect-gitignore", ".").stdout == "b.py\n"


def test_rule_by_name_and_a_close_name(project):
    def rule(name: str):
        return CliRunner().invoke(main, ["rule", name])

    assert rule("method-not-called").stdout == rule("ML301").stdout
    result = rule("method-not-caled")
    assert (result.exit_code, result.stderr) == (2, "Error: unknown rule: method-not-caled (did you mean `method-not-called`?)\n")


def test_grouped_lists_findings_under_their_file(project):
    write(project, {"a.py": BUGGY + "model.train\n", "b.py": BUGGY})
    result = mllint("--output-format", "grouped", ".")
    assert result.stdout == (
        "a.py:\n"
        "  3:1 ML301 `model.eval` is not called: the statement does nothing [*]\n"
        "  4:1 ML301 `model.train` is not called: the statement does nothing [*]\n"
        "\n"
        "b.py:\n"
        "  3:1 ML301 `model.eval` is not called: the statement does nothing [*]\n"
        "\n"
        "Found 3 errors.\n"
        "[*] 3 fixable with the `--fix` option.\n"
    )


def test_rdjson_for_reviewdog(project):
    first, second = SOFTMAX.splitlines()
    write(project, {"train.py": f'{first}\nname = "é"; {second}\nmodel.eval\n'})
    result = mllint("--output-format", "rdjson", "train.py")
    report = json.loads(result.stdout)
    assert report["source"] == {"name": "mllint"}  # no documentation URL is set
    softmax, eval_ = report["diagnostics"]
    assert softmax["code"] == {"value": "ML101"} and softmax["severity"] == "ERROR"
    # UTF-8 byte columns: `é` takes two bytes
    assert softmax["location"]["range"]["start"] == {"line": 2, "column": len('name = "é"; loss = F.cross_entropy('.encode()) + 1}
    assert softmax["suggestions"][0]["text"] == "logits"
    assert eval_["suggestions"] == [{"range": {"start": {"line": 3, "column": 11}, "end": {"line": 3, "column": 11}}, "text": "()"}]


def test_pylint_gives_a_notebooks_file_line(project):
    text = notebook(["import torch\n"], ["x = 1\n", "model.eval\n"])
    write(project, {"nb.ipynb": text})
    result = mllint("--output-format", "pylint", "nb.ipynb")
    line = text.splitlines().index('    "model.eval\\n"') + 1
    assert result.stdout == (
        f"nb.ipynb:{line}: [ML301(method-not-called), ] `model.eval` is not called: the statement does nothing "
        "(cell 2, line 2, column 1)\n"
    )


def test_full_labels_unsafe_fixes(project):
    write(project, {"train.py": SOFTMAX})
    result = mllint("--output-format", "full", "train.py")
    assert "  = help: Remove the softmax: pass the logits (unsafe fix: applied with `--fix --unsafe-fixes`)\n" in result.stdout


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--output-format", "xml", "."], "Error: Invalid value for '--output-format': 'xml' is not one of "),
        (["--color", "sometimes", "."], "Error: Invalid value for '--color': 'sometimes' is not one of "),
        (["-j", "0", "."], "Error: Invalid value for '-j' / '--jobs': 0 is not in the range x>=1."),
        (["--per-file-ignores", "ML3", "."], "Error: --per-file-ignores 'ML3': expected GLOB:CODES"),
    ],
)
def test_a_value_error_is_one_line_without_the_usage_block(project, args, error):
    result = mllint(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(error) and result.stderr.count("\n") == 1, result.stderr


def test_a_long_run_that_found_nothing_says_what_it_checked(project, monkeypatch):
    write(project, {"a.py": FIXED, "pkg/b.py": "x = 1\r\ny = 2", "empty.py": ""})
    assert mllint(".").stdout == "All checks passed!\n"  # a quick run: as Ruff says it
    monkeypatch.setattr(cli, "LONG_RUN_SECONDS", 0)
    assert mllint(".").stdout == "All checks passed!\n"  # not on a terminal: output stays the same on a slow machine
    monkeypatch.setattr(cli, "_on_terminal", lambda stream: True)
    assert mllint(".").stdout == "All checks passed!\nChecked 3 files, 5 lines.\n"
    assert mllint("-q", ".").stdout == ""
