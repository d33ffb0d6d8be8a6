"""The command line, as the README and `mllint --help` promise it: through click's test runner, and a few
runs of the installed `mllint` command in a real process."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mllint.cli import main
from mllint.registry import all_rules

MLLINT = Path(sys.executable).parent / "mllint"

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\n"
FIXED = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\n"
CLEAN = FIXED
# ML301 on line 3, an unused `# noqa: ML301` (ML003) on line 4, an unknown code (ML004) on line 5.
MIXED = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\nmodel.train()  # noqa: ML301\nx = 1  # noqa: ML999\n"
# Only a warning: an unknown code in a `# noqa` comment.
WARNING_ONLY = "x = 1  # noqa: ML999\n"
# The summary after one ML301 finding.
FOUND_ONE_FIXABLE = "Found 1 error.\n[*] 1 fixable with the `--fix` option.\n"


def ml301(path: str, line: int = 3, method: str = "model.eval") -> str:
    return f"{path}:{line}:1: ML301 `{method}` is not called: the statement does nothing [*]"


def ml003(path: str) -> str:
    return f"{path}:4:16: ML003 [warning] unused `noqa` directive (unused: ML301) [*]"


def ml004(path: str, line: int = 5) -> str:
    return f"{path}:{line}:8: ML004 [warning] unknown rule code in `# noqa`: ML999"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project directory, made the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def mllint(*args: str, input: str | bytes | None = None):
    """Run the command in-process; the result has exit_code, stdout and stderr."""
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def lines(text: str) -> list[str]:
    return text.splitlines()


def run_installed(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess:
    """Run the installed `mllint` command in a real process."""
    return subprocess.run(
        [str(MLLINT), *args], cwd=cwd, input=input, capture_output=True, text=True, timeout=300, check=False
    )


# Linting and exit codes.


def test_findings_are_listed_with_a_summary_and_exit_1(project):
    write(project, {"train.py": BUGGY})
    result = mllint("train.py")
    assert result.exit_code == 1
    assert result.stdout == ml301("train.py") + "\n" + FOUND_ONE_FIXABLE
    assert result.stderr == ""


def test_check_subcommand_is_the_default_command(project):
    write(project, {"train.py": BUGGY})
    default, check = mllint("train.py"), mllint("check", "train.py")
    assert (check.exit_code, check.stdout, check.stderr) == (default.exit_code, default.stdout, default.stderr)
    assert check.stdout == ml301("train.py") + "\n" + FOUND_ONE_FIXABLE


def test_no_path_lints_the_working_directory(project):
    write(project, {"train.py": BUGGY, "pkg/model.py": BUGGY})
    result = mllint("-q")
    assert result.exit_code == 1
    assert lines(result.stdout) == [ml301("pkg/model.py"), ml301("train.py")]


def test_nothing_found_exits_0(project):
    write(project, {"train.py": CLEAN})
    result = mllint(".")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "All checks passed!\n", "")


def test_unknown_selector_is_a_usage_error_naming_it(project):
    write(project, {"train.py": BUGGY})
    result = mllint("--select", "ML301,ML999", "train.py")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert lines(result.stderr)[-1] == "Error: command line: `select`: unknown rule selector: ML999"


@pytest.mark.parametrize("option", ["--ignore", "--extend-select"])
def test_unknown_selector_in_other_options_is_a_usage_error(project, option):
    write(project, {"train.py": BUGGY})
    result = mllint(option, "XY1", "train.py")
    assert result.exit_code == 2
    assert lines(result.stderr)[-1] == f"Error: command line: `{option[2:]}`: unknown rule selector: XY1"


def test_unknown_option_is_a_usage_error(project):
    result = mllint("--frobnicate", ".")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert lines(result.stderr)[-1].startswith("Error: No such option")  # click's wording varies
    assert "--frobnicate" in lines(result.stderr)[-1]


def test_malformed_pyproject_is_a_configuration_error_naming_the_file(project):
    write(project, {"pyproject.toml": "[tool.mllint\nselect = \n", "train.py": BUGGY})
    result = mllint("train.py")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"Configuration error: {project / 'pyproject.toml'}:1:13: invalid TOML: ")
    assert "Usage:" not in result.stderr


def test_unknown_configuration_key_is_a_configuration_error_naming_file_key_and_the_close_one(project):
    write(project, {"pyproject.toml": '[tool.mllint]\nselct = ["ML3"]\n', "train.py": BUGGY})
    result = mllint("train.py")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(
        f"Configuration error: {(project / 'pyproject.toml').resolve()}:2:1: unknown key `tool.mllint.selct` "
        "(did you mean `select`?); the keys are extend, select, extend-select, "
    )
    assert len(lines(result.stderr)) == 1


def test_a_string_where_an_array_is_expected_is_a_configuration_error(project):
    write(project, {"pyproject.toml": '[tool.mllint]\nselect = "ML1"\n', "train.py": BUGGY})
    result = mllint("train.py")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"Configuration error: {(project / 'pyproject.toml').resolve()}:2:1: `tool.mllint.select`: "
        "expected an array of strings, got a string ('ML1')\n"
    )


def test_bad_configuration_in_a_subdirectory_is_a_configuration_error(project):
    write(project, {"pkg/mllint.toml": 'fail-on = "sometimes"\n', "pkg/a.py": CLEAN, "b.py": CLEAN})
    result = mllint(".")
    assert result.exit_code == 2
    assert result.stderr == (
        f"Configuration error: {(project / 'pkg' / 'mllint.toml').resolve()}:1:1: `fail-on`: "
        "unknown severity 'sometimes' (expected info, warning or error)\n"
    )


def test_bad_configuration_in_the_working_directory_does_not_affect_another_project(project):
    write(project, {"mllint.toml": "colour = 1\n", "other/mllint.toml": "", "other/train.py": BUGGY})
    result = mllint("-q", "other")
    assert result.exit_code == 1
    assert result.stdout == ml301("other/train.py") + "\n"


def test_internal_error_of_a_rule_exits_2_and_the_other_rules_still_report(project, monkeypatch):
    from mllint.rules.ml301_method_not_called import MethodNotCalled

    def crash(self, node):
        raise RuntimeError("boom")

    monkeypatch.setattr(MethodNotCalled, "visit_Expr", crash)
    write(project, {"train.py": MIXED})
    result = mllint("--no-cache", "-q", "-j", "1", "train.py")
    assert result.exit_code == 2
    assert lines(result.stdout) == [
        "train.py:3:1: ML009 rule ML301 (method-not-called) crashed at line 3: RuntimeError: boom",
        ml003("train.py"),
        ml004("train.py"),
    ]


def crash_ml301(monkeypatch) -> None:
    from mllint.rules.ml301_method_not_called import MethodNotCalled

    def crash(self, node):
        raise RuntimeError("boom")

    monkeypatch.setattr(MethodNotCalled, "visit_Expr", crash)


def test_internal_error_says_how_to_report_it(project, monkeypatch):
    crash_ml301(monkeypatch)
    write(project, {"train.py": BUGGY})
    result = mllint("-j", "1", "train.py")
    assert result.exit_code == 2
    assert result.stderr == (
        "mllint crashed (1 internal error): a bug in mllint, not in your code. Run with --verbose for the "
        "traceback, and please report it to mllint's developers.\n"
    )


def test_verbose_prints_the_traceback_of_an_internal_error_every_run(project, monkeypatch):
    crash_ml301(monkeypatch)
    write(project, {"train.py": BUGGY})
    mllint("-j", "1", "train.py")  # a crash is not cached: the second run crashes again, with its traceback
    result = mllint("-j", "1", "--verbose", "train.py")
    assert result.exit_code == 2
    stderr = lines(result.stderr)
    assert stderr[0] == "train.py:3:1: ML009 rule ML301 (method-not-called) crashed at line 3: RuntimeError: boom"
    assert stderr[1] == "Traceback (most recent call last):"
    assert stderr[-1] == "RuntimeError: boom"
    assert '    raise RuntimeError("boom")' in stderr


def test_internal_error_exits_2_even_with_exit_zero(project, monkeypatch):
    from mllint.rules.ml301_method_not_called import MethodNotCalled

    def crash(self, node):
        raise RuntimeError("boom")

    monkeypatch.setattr(MethodNotCalled, "visit_Expr", crash)
    write(project, {"train.py": BUGGY})
    assert mllint("--no-cache", "-j", "1", "--exit-zero", "train.py").exit_code == 2


def test_directory_with_an_unparsable_and_a_buggy_file_reports_both(project):
    write(project, {"src/broken.py": "def f(:\n", "src/train.py": BUGGY})
    result = mllint("src")
    assert result.exit_code == 1
    assert lines(result.stdout) == [
        "src/broken.py:1:7: ML002 SyntaxError: invalid syntax",
        ml301("src/train.py"),
        "Found 2 errors.",
        "[*] 1 fixable with the `--fix` option.",
    ]


def test_missing_path_is_a_usage_error_even_with_exit_zero(project):
    write(project, {"train.py": BUGGY})
    result = mllint("--exit-zero", "train.py", "missing.py")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "Error: Path 'missing.py' does not exist.\n"  # no Usage block: the error alone


def test_mistyped_command_is_a_missing_path_with_a_did_you_mean(project):
    write(project, {"src/train.py": BUGGY})
    result = mllint("chek", "src/")
    assert (result.exit_code, result.stdout) == (2, "")
    assert lines(result.stderr)[-2:] == ["Error: Path 'chek' does not exist.", "Did you mean the command 'check'?"]


def test_a_dangling_symbolic_link_is_reported_as_unreadable(project):
    os.symlink(project / "gone.py", project / "link.py")
    result = mllint("-q", "link.py")
    assert (result.exit_code, result.stdout) == (1, "link.py:1:1: ML001 cannot read file: No such file or directory\n")


# Standard input.


def test_stdin_is_reported_under_stdin_filename(project):
    result = mllint("-q", "-", "--stdin-filename", "src/train.py", input=BUGGY)
    assert result.exit_code == 1
    assert result.stdout == ml301("src/train.py") + "\n"


def test_stdin_without_a_filename_is_reported_as_dash(project):
    result = mllint("-q", "-", input=BUGGY)
    assert result.exit_code == 1
    assert result.stdout == ml301("-") + "\n"


def test_stdin_filename_selects_the_configuration_and_per_file_ignores(project):
    write(project, {"mllint.toml": 'per-file-ignores = { "tests/*" = ["ML301"] }\n'})
    ignored = mllint("-q", "-", "--stdin-filename", "tests/test_train.py", input=BUGGY)
    reported = mllint("-q", "-", "--stdin-filename", "src/train.py", input=BUGGY)
    assert (ignored.exit_code, ignored.stdout) == (0, "")
    assert (reported.exit_code, reported.stdout) == (1, ml301("src/train.py") + "\n")


def test_stdin_with_fix_prints_the_fixed_source_on_stdout(project):
    result = mllint("-", "--fix", "--stdin-filename", "train.py", input=BUGGY)
    assert result.exit_code == 0
    assert result.stdout == FIXED
    assert result.stderr == "Found 1 finding (1 fixed, 0 remaining).\n"
    assert sorted(p.name for p in project.iterdir()) == []  # nothing written, not even a cache


def test_stdin_with_fix_reports_what_remains_on_stderr(project):
    source = BUGGY + "x = 1  # noqa: ML999\n"
    result = mllint("-", "--fix", "--stdin-filename", "train.py", input=source)
    assert result.exit_code == 1
    assert result.stdout == FIXED + "x = 1  # noqa: ML999\n"
    assert lines(result.stderr) == [ml004("train.py", line=4), "Found 2 findings (1 fixed, 1 remaining: 1 warning)."]


def test_stdin_with_fix_prints_unfixable_source_unchanged(project):
    result = mllint("-", "--fix", "--stdin-filename", "broken.py", input="def f(:\n")
    assert result.exit_code == 1
    assert result.stdout == "def f(:\n"
    assert lines(result.stderr) == ["broken.py:1:7: ML002 SyntaxError: invalid syntax", "Found 1 error."]


def test_stdin_with_fix_prints_undecodable_source_unchanged(project):
    data = b"model.eval\nname = '\xe9'\n"
    result = mllint("-", "--fix", "--stdin-filename", "latin.py", input=data)
    assert result.exit_code == 1
    assert result.stdout_bytes == data
    assert lines(result.stderr) == [
        "latin.py:2:9: ML001 cannot decode as utf-8: invalid continuation byte (byte 0xe9)",
        "Found 1 error.",
    ]


def test_stdin_with_fix_keeps_the_declared_encoding(project):
    data = "# -*- coding: latin-1 -*-\nname = 'é'\nmodel.eval\n".encode("latin-1")
    result = mllint("-", "--fix", "--stdin-filename", "latin.py", input=data)
    assert result.exit_code == 0
    assert result.stdout_bytes == "# -*- coding: latin-1 -*-\nname = 'é'\nmodel.eval()\n".encode("latin-1")


def test_stdin_fail_on_comes_from_the_configuration_of_stdin_filename(project):
    write(project, {"pkg/mllint.toml": 'fail-on = "error"\n'})
    relaxed = mllint("-q", "-", "--stdin-filename", "pkg/warn.py", input=WARNING_ONLY)
    strict = mllint("-q", "-", "--stdin-filename", "warn.py", input=WARNING_ONLY)
    assert (relaxed.exit_code, relaxed.stdout) == (0, ml004("pkg/warn.py", line=1) + "\n")
    assert (strict.exit_code, strict.stdout) == (1, ml004("warn.py", line=1) + "\n")


def test_stdin_with_diff_prints_the_diff(project):
    result = mllint("-", "--diff", "--stdin-filename", "train.py", input=BUGGY)
    assert result.exit_code == 1
    assert lines(result.stdout) == [
        "--- a/train.py",
        "+++ b/train.py",
        "@@ -1,3 +1,3 @@",
        " import torch",
        " model = torch.nn.Linear(2, 2)",
        "-model.eval",
        "+model.eval()",
    ]


# Fixes.


def test_fix_writes_the_fixed_file_and_exits_0(project):
    write(project, {"train.py": BUGGY})
    result = mllint("--fix", "train.py")
    assert result.exit_code == 0
    assert (project / "train.py").read_text() == FIXED
    assert result.stdout == "Found 1 finding (1 fixed, 0 remaining).\n"
    assert result.stderr == ""


def test_fix_fixes_every_occurrence(project):
    write(project, {"train.py": "model.train\nfor batch in data:\n    optimizer.zero_grad\n    loss.backward\n"})
    result = mllint("--fix", ".")
    assert result.exit_code == 0
    assert (project / "train.py").read_text() == (
        "model.train()\nfor batch in data:\n    optimizer.zero_grad()\n    loss.backward()\n"
    )
    assert result.stdout == "Found 3 findings (3 fixed, 0 remaining).\n"


def test_fix_exits_1_when_unfixable_findings_remain(project):
    write(project, {"train.py": BUGGY + "x = 1  # noqa: ML999\n"})
    result = mllint("--fix", "train.py")
    assert result.exit_code == 1
    assert (project / "train.py").read_text() == FIXED + "x = 1  # noqa: ML999\n"
    assert result.stdout == ml004("train.py", line=4) + "\nFound 2 findings (1 fixed, 1 remaining: 1 warning).\n"


def test_fix_also_removes_an_unused_noqa(project):
    write(project, {"train.py": MIXED})
    result = mllint("--fix", "train.py")
    assert result.exit_code == 1
    assert (project / "train.py").read_text() == (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\nmodel.train()\nx = 1  # noqa: ML999\n"
    )
    assert result.stdout == ml004("train.py") + "\nFound 3 findings (2 fixed, 1 remaining: 1 warning).\n"


def test_fix_keeps_crlf_line_endings(project):
    (project / "train.py").write_bytes(b"import torch\r\nmodel.eval\r\n")
    assert mllint("--fix", "train.py").exit_code == 0
    assert (project / "train.py").read_bytes() == b"import torch\r\nmodel.eval()\r\n"


def test_diff_prints_the_diff_exits_1_and_writes_nothing(project):
    write(project, {"train.py": BUGGY})
    result = mllint("--diff", "train.py")
    assert result.exit_code == 1
    assert result.stdout == (
        "--- a/train.py\n"
        "+++ b/train.py\n"
        "@@ -1,3 +1,3 @@\n"
        " import torch\n"
        " model = torch.nn.Linear(2, 2)\n"
        "-model.eval\n"
        "+model.eval()\n"
    )
    assert result.stderr == "Would fix 1 finding.\n"
    assert (project / "train.py").read_text() == BUGGY


def test_diff_of_a_file_without_a_final_newline(project):
    write(project, {"train.py": "model.eval"})
    result = mllint("--diff", "train.py")
    assert result.exit_code == 1
    assert result.stdout == (
        "--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n"
        "-model.eval\n\\ No newline at end of file\n+model.eval()\n\\ No newline at end of file\n"
    )


def test_diff_with_nothing_to_fix_exits_0(project):
    write(project, {"train.py": CLEAN, "warn.py": WARNING_ONLY})
    result = mllint("--diff", ".")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "Would fix 0 findings.\n")


def test_show_fixes_lists_what_was_fixed(project):
    write(project, {"a.py": BUGGY, "pkg/b.py": "model.eval\nmodel.train\n", "c.py": CLEAN})
    result = mllint("--fix", "--show-fixes", ".")
    assert result.exit_code == 0
    assert result.stdout == (
        "Fixed 3 findings:\n"
        "- a.py:\n"
        "    1 × ML301 (method-not-called)\n"
        "- pkg/b.py:\n"
        "    2 × ML301 (method-not-called)\n"
        "Found 3 findings (3 fixed, 0 remaining).\n"
    )


def test_fix_then_lint_again_is_clean(project):
    write(project, {"train.py": BUGGY})
    assert mllint("--fix", ".").exit_code == 0
    second = mllint(".")
    assert (second.exit_code, second.stdout, second.stderr) == (0, "All checks passed!\n", "")


# Selecting rules.


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ([], ["ML301", "ML003", "ML004"]),
        (["--select", "ML3"], ["ML301"]),
        (["--select", "ml3"], ["ML301"]),
        (["--select", "ML0"], ["ML004"]),  # ML301 not enabled: its `# noqa` is not reported unused
        (["--select", "ALL", "--ignore", "ML00"], ["ML301"]),
        (["--ignore", "ML003,ML004"], ["ML301"]),
        (["--ignore", "ML003", "--ignore", "ML004"], ["ML301"]),
        (["--select", "ML3", "--extend-select", "ML004"], ["ML301", "ML004"]),
        (["--select", "ML301,ML004"], ["ML301", "ML004"]),
        (["--ignore", "ALL"], []),
    ],
)
def test_select_ignore_and_extend_select(project, options, expected):
    write(project, {"train.py": MIXED})
    result = mllint("-q", *options, "train.py")
    assert [line.split()[1] for line in lines(result.stdout)] == expected
    assert result.exit_code == (1 if expected else 0)


def test_command_line_select_overrides_the_configuration(project):
    write(project, {"mllint.toml": 'select = ["ML0"]\n', "train.py": MIXED})
    result = mllint("-q", "--select", "ML301", "train.py")
    assert result.stdout == ml301("train.py") + "\n"


def test_per_file_ignores_option(project):
    write(project, {"tests/test_train.py": MIXED, "train.py": MIXED})
    result = mllint("-q", "--per-file-ignores", "tests/*:ML3", ".")
    # In tests/, ML301 is off: its `# noqa: ML301` is not reported as unused either.
    assert lines(result.stdout) == [ml004("tests/test_train.py"), ml301("train.py"), ml003("train.py"), ml004("train.py")]


def test_per_file_ignores_option_with_several_globs_and_codes(project):
    write(project, {"tests/test_train.py": MIXED, "scripts/run.py": MIXED, "train.py": BUGGY})
    result = mllint("-q", "--per-file-ignores", "tests/*:ML3,ML004", "--per-file-ignores", "*/run.py:ALL", ".")
    assert lines(result.stdout) == [ml301("train.py")]


def test_per_file_ignores_option_without_a_glob_is_a_usage_error(project):
    result = mllint("--per-file-ignores", "ML301", ".")
    assert result.exit_code == 2
    assert lines(result.stderr)[-1] == "Error: --per-file-ignores 'ML301': expected GLOB:CODES"


def test_per_file_ignores_in_configuration(project):
    write(project, {"pyproject.toml": '[tool.mllint]\nper-file-ignores = { "scripts/*" = ["ML301"] }\n'})
    write(project, {"scripts/run.py": BUGGY, "train.py": BUGGY})
    result = mllint("-q", ".")
    assert result.stdout == ml301("train.py") + "\n"


# Configuration on the command line.


def test_inline_config_overrides_a_key(project):
    write(project, {"mllint.toml": 'select = ["ML0"]\n', "train.py": MIXED})
    result = mllint("-q", "--config", 'select = ["ML3"]', "train.py")
    assert (result.exit_code, result.stdout) == (1, ml301("train.py") + "\n")


def test_inline_config_with_several_keys(project):
    write(project, {"train.py": BUGGY})
    result = mllint("-q", "--config", 'severity = { ML301 = "warning" }', "--config", 'fail-on = "error"', "train.py")
    assert (result.exit_code, result.stdout) == (0, ml301("train.py").replace("ML301", "ML301 [warning]") + "\n")


def test_inline_config_with_an_unknown_key_is_a_usage_error(project):
    result = mllint("--config", "colour = 1", ".")
    assert result.exit_code == 2
    assert lines(result.stderr)[-1].startswith("Error: command line: unknown key `colour`; the keys are extend, ")


def test_inline_config_cannot_extend_a_file(project):
    result = mllint("--config", 'extend = "base.toml"', ".")
    assert result.exit_code == 2
    assert lines(result.stderr)[-1] == (
        "Error: --config: `extend` names a file to inherit from: use `--config PATH` instead"
    )


def test_inline_config_that_is_not_toml_is_a_usage_error(project):
    result = mllint("--config", "select = [", ".")
    assert result.exit_code == 2
    assert lines(result.stderr)[-1].startswith(
        "Error: --config 'select = [': not a path to a file nor a valid `key = value`: "
    )


def test_config_path_names_the_file_to_use(project):
    write(project, {"mllint.toml": 'select = ["ML0"]\n', "ci/strict.toml": 'select = ["ML3"]\n', "train.py": MIXED})
    result = mllint("-q", "--config", "ci/strict.toml", "train.py")
    assert (result.exit_code, result.stdout) == (1, ml301("train.py") + "\n")


def test_config_path_that_does_not_exist_is_a_usage_error(project):
    result = mllint("--config", "missing.toml", ".")
    assert result.exit_code == 2
    assert lines(result.stderr)[-1] == "Error: --config 'missing.toml': no such file"


def test_two_config_paths_are_a_usage_error(project):
    write(project, {"a.toml": "", "b.toml": ""})
    result = mllint("--config", "a.toml", "--config", "b.toml", ".")
    assert result.exit_code == 2
    assert lines(result.stderr)[-1] == "Error: --config names more than one file"


def test_isolated_ignores_configuration_files(project):
    write(project, {"mllint.toml": 'ignore = ["ML301"]\n', "train.py": BUGGY})
    configured = mllint("-q", "train.py")
    assert (configured.exit_code, configured.stdout) == (0, "")
    isolated = mllint("-q", "--isolated", "train.py")
    assert (isolated.exit_code, isolated.stdout) == (1, ml301("train.py") + "\n")


def test_isolated_does_not_even_read_a_broken_configuration(project):
    write(project, {"pyproject.toml": "[tool.mllint\n", "train.py": BUGGY})
    result = mllint("-q", "--isolated", "train.py")
    assert (result.exit_code, result.stdout) == (1, ml301("train.py") + "\n")


# Output.


def test_statistics_counts_findings_per_rule(project):
    write(project, {"a.py": MIXED, "b.py": "model.eval\nmodel.train\n", "c.py": WARNING_ONLY})
    result = mllint("--statistics", ".")
    assert result.exit_code == 1
    assert result.stdout == (
        "3\tML301\t[*] method-not-called\n"
        "2\tML004\t    unknown-noqa-code\n"
        "1\tML003\t[*] unused-noqa\n"
        "Found 6 findings: 3 errors, 3 warnings.\n"
        "[*] 4 fixable with the `--fix` option.\n"
    )


def test_statistics_aligns_counts(project):
    write(project, {"a.py": "model.eval\n" * 12 + "x = 1  # noqa: ML999\n"})
    result = mllint("-q", "--statistics", ".")
    assert result.stdout == "12\tML301\t[*] method-not-called\n 1\tML004\t    unknown-noqa-code\n"


def test_exit_zero_exits_0_with_findings(project):
    write(project, {"train.py": BUGGY})
    result = mllint("-q", "--exit-zero", "train.py")
    assert (result.exit_code, result.stdout) == (0, ml301("train.py") + "\n")


def test_show_files_lists_what_would_be_checked_and_lints_nothing(project):
    write(project, {"train.py": BUGGY, "pkg/model.py": BUGGY, "pkg/types.pyi": "", "README.md": "", "build/x.py": ""})
    result = mllint("--show-files", ".")
    assert (result.exit_code, result.stdout) == (0, "pkg/model.py\npkg/types.pyi\ntrain.py\n")


def test_show_settings_prints_the_settings_of_the_first_path(project):
    write(project, {"pkg/mllint.toml": 'select = ["ML3"]\nfail-on = "warning"\n', "pkg/a.py": "", "b.py": ""})
    result = mllint("--show-settings", "pkg", "b.py")
    assert result.exit_code == 0
    output = lines(result.stdout)
    assert output[0] == f"# settings from {(project / 'pkg' / 'mllint.toml').resolve()} (root {project.resolve() / 'pkg'})"
    assert output[1] == "select = ['ML3']"
    assert output[10] == "fail-on = warning"
    assert output[12] == "analysis-budget = 30.0" and len(output) == 13


def test_show_settings_include_command_line_overrides(project):
    result = mllint("--show-settings", "--ignore", "ML3", "--fail-on", "error", ".")
    assert result.exit_code == 0
    assert lines(result.stdout)[0] == f"# settings from defaults (root {project})"
    assert lines(result.stdout)[3] == "ignore = ['ML3']"
    assert lines(result.stdout)[10] == "fail-on = error"


def test_quiet_prints_findings_only(project):
    write(project, {"train.py": BUGGY})
    result = mllint("-q", "train.py")
    assert (result.exit_code, result.stdout, result.stderr) == (1, ml301("train.py") + "\n", "")


def test_quiet_with_nothing_found_prints_nothing(project):
    write(project, {"train.py": CLEAN})
    result = mllint("--quiet", "train.py")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_output_file_receives_the_findings_and_the_summary_goes_to_stderr(project):
    write(project, {"train.py": BUGGY})
    result = mllint("-o", "report.txt", "train.py")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert (project / "report.txt").read_text() == ml301("train.py") + "\n"
    assert result.stderr == FOUND_ONE_FIXABLE


def test_output_file_with_json(project):
    write(project, {"train.py": BUGGY})
    result = mllint("--output-format", "json", "--output-file", "report.json", "train.py")
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", "")
    [finding] = json.loads((project / "report.json").read_text())
    assert finding["code"] == "ML301"


def test_fail_on_error_with_only_warnings_exits_0(project):
    write(project, {"warn.py": WARNING_ONLY})
    result = mllint("-q", "--fail-on", "error", ".")
    assert (result.exit_code, result.stdout) == (0, ml004("warn.py", line=1) + "\n")


def test_fail_on_warning_with_a_warning_exits_1(project):
    write(project, {"warn.py": WARNING_ONLY})
    assert mllint("--fail-on", "warning", ".").exit_code == 1


def test_fail_on_from_configuration(project):
    write(project, {"mllint.toml": 'fail-on = "error"\n', "warn.py": WARNING_ONLY})
    assert mllint(".").exit_code == 0
    assert mllint("--fail-on", "info", ".").exit_code == 1


def test_fail_on_counts_the_overridden_severity(project):
    write(project, {"mllint.toml": 'fail-on = "error"\nseverity = { ML301 = "warning" }\n', "train.py": BUGGY})
    result = mllint("train.py")
    assert (result.exit_code, lines(result.stdout)) == (0, [
        ml301("train.py").replace("ML301", "ML301 [warning]"),
        "Found 1 warning.",
        "None is at or above `fail-on = error`: they do not fail the run.",
        "[*] 1 fixable with the `--fix` option.",
    ])


def test_fail_on_rejects_an_unknown_level(project):
    result = mllint("--fail-on", "fatal", ".")
    assert result.exit_code == 2
    assert "'fatal' is not one of 'info', 'warning', 'error'" in result.stderr


# --add-noqa


def test_add_noqa_adds_a_comment_per_finding_line(project):
    write(project, {"train.py": "import torch\nmodel.eval\nmodel.train   \nmodel.eval()\n"})
    result = mllint("--add-noqa", "train.py")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "Added 2 noqa directives.\n")
    assert (project / "train.py").read_text() == (
        "import torch\nmodel.eval  # noqa: ML301\nmodel.train  # noqa: ML301\nmodel.eval()\n"
    )
    assert mllint("train.py").exit_code == 0


def test_add_noqa_with_a_reason(project):
    write(project, {"train.py": BUGGY})
    result = mllint("--add-noqa=legacy loop, see #12", "train.py")
    assert (result.exit_code, result.stderr) == (0, "Added 1 noqa directive.\n")
    assert lines((project / "train.py").read_text())[2] == "model.eval  # noqa: ML301 # legacy loop, see #12"
    assert mllint("train.py").exit_code == 0


def test_add_noqa_before_a_path_takes_no_reason(project):
    write(project, {"src/train.py": BUGGY, "other/train.py": BUGGY})
    result = mllint("--add-noqa", "src")
    assert (result.exit_code, result.stderr) == (0, "Added 1 noqa directive.\n")
    assert lines((project / "src" / "train.py").read_text())[2] == "model.eval  # noqa: ML301"
    assert (project / "other" / "train.py").read_text() == BUGGY


def test_add_noqa_merges_into_an_existing_noqa_comment(project):
    write(project, {"train.py": "import os  # noqa: F401\nos.sep  # noqa: E501\nmodel.eval  # noqa: F401, E501  \n"})
    result = mllint("--add-noqa", "train.py")
    assert result.stderr == "Added 1 noqa directive.\n"
    assert (project / "train.py").read_text() == (
        "import os  # noqa: F401\nos.sep  # noqa: E501\nmodel.eval  # noqa: E501, F401, ML301  \n"
    )


def test_add_noqa_leaves_a_bare_noqa_alone(project):
    write(project, {"train.py": "model.eval  # noqa\n"})
    result = mllint("--add-noqa", "train.py")
    assert result.stderr == "Added 0 noqa directives.\n"
    assert (project / "train.py").read_text() == "model.eval  # noqa\n"


def test_add_noqa_leaves_a_line_ending_inside_a_multiline_string_alone(project):
    source = 'model.eval; notes = """first\nsecond"""\nmodel.train\n'
    write(project, {"train.py": source})
    result = mllint("--add-noqa", "train.py")
    assert result.stderr == "Added 1 noqa directive.\n"
    assert (project / "train.py").read_text() == 'model.eval; notes = """first\nsecond"""\nmodel.train  # noqa: ML301\n'
    assert mllint("-q", "train.py").stdout == ml301("train.py", line=1) + "\n"


def test_add_noqa_keeps_crlf_line_endings(project):
    (project / "train.py").write_bytes(b"import torch\r\nmodel.eval\r\n")
    mllint("--add-noqa", "train.py")
    assert (project / "train.py").read_bytes() == b"import torch\r\nmodel.eval  # noqa: ML301\r\n"


# mllint rule


def test_rule_prints_the_documentation(project):
    result = mllint("rule", "ML301")
    assert result.exit_code == 0
    assert result.stdout == f"# method-not-called (ML301)\n\n{all_rules()['ML301'].documentation()}\n"
    assert lines(result.stdout)[2] == "## What it does"


def test_rule_code_is_case_insensitive(project):
    assert mllint("rule", "ml301").stdout == mllint("rule", "ML301").stdout


def test_rule_with_an_unknown_code_is_a_usage_error(project):
    result = mllint("rule", "ML999")
    assert result.exit_code == 2
    assert result.stderr == "Error: unknown rule: ML999\n"


def test_rule_all_json_lists_every_registered_rule(project):
    result = mllint("rule", "--all", "--output-format", "json")
    assert result.exit_code == 0
    entries = json.loads(result.stdout)
    assert [entry["code"] for entry in entries] == list(all_rules())
    ml301_entry = next(entry for entry in entries if entry["code"] == "ML301")
    assert ml301_entry == {
        "code": "ML301",
        "name": "method-not-called",
        "summary": all_rules()["ML301"].summary(),
        "message": "`{method}` is not called: the statement does nothing",
        "severity": "error",
        "fix": "safe",
        "explanation": all_rules()["ML301"].documentation(),
    }


def test_rule_json_of_one_rule_is_an_object(project):
    entry = json.loads(mllint("rule", "ML002", "--output-format", "json").stdout)
    assert (entry["code"], entry["name"], entry["severity"], entry["fix"]) == ("ML002", "syntax-error", "error", None)


# The installed command, in a real process.


def test_installed_command_lints_and_exits_1(tmp_path):
    write(tmp_path, {"src/train.py": BUGGY, "src/broken.py": "def f(:\n"})
    result = run_installed("src", cwd=tmp_path)
    assert result.returncode == 1
    assert lines(result.stdout) == [
        "src/broken.py:1:7: ML002 SyntaxError: invalid syntax",
        ml301("src/train.py"),
        "Found 2 errors.",
        "[*] 1 fixable with the `--fix` option.",
    ]
    assert result.stderr == ""


def test_installed_command_check_subcommand(tmp_path):
    write(tmp_path, {"train.py": BUGGY})
    result = run_installed("check", "-q", "train.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, ml301("train.py") + "\n")


def test_installed_command_usage_error_exits_2(tmp_path):
    result = run_installed("--select", "ML999", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert lines(result.stderr)[-1] == "Error: command line: `select`: unknown rule selector: ML999"
    assert "Traceback" not in result.stderr


def test_installed_command_stdin_fix_prints_the_fixed_source(tmp_path):
    result = run_installed("-", "--fix", "--stdin-filename", "train.py", cwd=tmp_path, input=BUGGY)
    assert (result.returncode, result.stdout, result.stderr) == (0, FIXED, "Found 1 finding (1 fixed, 0 remaining).\n")


def test_installed_command_clean_project_exits_0(tmp_path):
    write(tmp_path, {"train.py": CLEAN})
    result = run_installed(".", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "All checks passed!\n", "")


def many_findings(root: Path) -> None:
    """Far more output than a pipe buffers, so that mllint is still writing when the reader goes away."""
    write(root, {f"pkg/m{i:02}.py": "model.eval\n" * 500 for i in range(20)})


def test_installed_command_with_a_closed_pipe_exits_quietly(tmp_path):
    many_findings(tmp_path)
    process = subprocess.Popen([str(MLLINT), "pkg"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()  # like `| head -1`
    stderr = process.stderr.read().decode()
    process.stderr.close()
    process.wait(timeout=300)
    assert first.decode() == ml301("pkg/m00.py", line=1) + "\n"
    assert "Traceback" not in stderr
    assert "internal error" not in stderr
    assert stderr == ""
    assert process.returncode == 1


def test_installed_command_piped_into_head(tmp_path):
    many_findings(tmp_path)
    result = subprocess.run(
        f"'{MLLINT}' pkg | head -1", shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.stdout == ml301("pkg/m00.py", line=1) + "\n"
    assert result.stderr == ""


def test_symlinked_directory_named_on_the_command_line_is_linted(project):
    write(project, {"real/train.py": BUGGY})
    os.symlink(project / "real", project / "link", target_is_directory=True)
    result = mllint("-q", "link")
    assert (result.exit_code, result.stdout) == (1, ml301("link/train.py") + "\n")



@pytest.mark.parametrize(
    ("config", "options", "expected"),
    [
        ('select = ["ML004"]\nextend-select = ["ML301"]\n', ["--extend-select", "ML003"], ["ML301", "ML003", "ML004"]),
        ('ignore = ["ML004"]\n', ["--ignore", "ML003"], ["ML301"]),
        ('select = ["ML004"]\nextend-select = ["ML301"]\nignore = ["ML003"]\n', ["--select", "ML3,ML003"], ["ML301", "ML003"]),
    ],
)
def test_command_line_extend_select_and_ignore_add_to_the_configuration(project, config, options, expected):
    write(project, {"mllint.toml": config, "train.py": MIXED})
    result = mllint("-q", *options, "train.py")
    assert [line.split()[1] for line in lines(result.stdout)] == expected


def test_a_file_no_rule_lets_through_loads_no_rule(tmp_path):
    """Start-up (#28): a file that gets past no rule's text gate loads no rule module, and none of what
    only baselines, fixes and crashes need."""
    (tmp_path / "empty.py").write_text("")
    script = (
        "import sys\nsys.argv = ['mllint', 'check', '--isolated', '--no-cache', " + repr(str(tmp_path / "empty.py")) + "]\n"
        "from mllint.cli import main\ntry:\n    main()\nexcept SystemExit as exit:\n    assert exit.code == 0\n"
        "loaded = [m for m in sys.modules if m.startswith(('mllint.rules.', 'mllint.baseline', 'mllint.cross_file', 'difflib'))]\n"
        "assert loaded == [], loaded\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, timeout=60)
