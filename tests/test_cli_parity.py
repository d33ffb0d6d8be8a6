"""The options users reach for from Ruff: --fix-only, --exit-non-zero-on-fix, --unfixable, --extend-exclude,
colour on a terminal and --watch."""
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mllint.cli import main

MLLINT = Path(sys.executable).parent / "mllint"
BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\n"
FIXED = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\n"
# ML301 (fixable) on line 3 and ML004 (an unknown code in a `# noqa`, not fixable) on line 4.
BUGGY_AND_UNFIXABLE = BUGGY + "x = 1  # noqa: ML999\n"
ML301 = "train.py:3:1: ML301 `model.eval` is not called: the statement does nothing"
ML004 = "train.py:4:8: ML004 [warning] unknown rule code in `# noqa`: ML999"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return tmp_path


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def mllint(*args: str, input: str | None = None):
    return CliRunner().invoke(main, ["--no-cache", *args], input=input, catch_exceptions=False)


# --fix-only and --exit-non-zero-on-fix.


def test_fix_only_fixes_reports_what_it_fixed_and_exits_0_with_findings_left(project):
    write(project, {"train.py": BUGGY_AND_UNFIXABLE})
    result = mllint("--fix-only", "train.py")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "Fixed 1 finding.\n", "")
    assert (project / "train.py").read_text() == FIXED + "x = 1  # noqa: ML999\n"


def test_fix_only_with_show_fixes_lists_what_was_fixed_once(project):
    write(project, {"train.py": BUGGY_AND_UNFIXABLE})
    result = mllint("--fix-only", "--show-fixes", "train.py")
    assert result.stdout == "Fixed 1 finding:\n- train.py:\n    1 × ML301 (method-not-called)\n"


def test_fix_only_with_nothing_to_fix_prints_nothing(project):
    write(project, {"train.py": "x = 1  # noqa: ML999\n"})
    result = mllint("--fix-only", "train.py")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_fix_only_on_stdin_prints_the_fixed_source(project):
    result = mllint("--fix-only", "-", "--stdin-filename", "train.py", input=BUGGY_AND_UNFIXABLE)
    assert result.exit_code == 0
    assert result.stdout == FIXED + "x = 1  # noqa: ML999\n"
    assert result.stderr == "Fixed 1 finding.\n"


def test_fix_only_still_reports_an_unreadable_file_and_exits_1(project):
    write(project, {"broken.ipynb": "{not json"})
    result = mllint("--fix-only", "-q", "broken.ipynb")
    assert result.exit_code == 1
    assert result.stdout.startswith("broken.ipynb:1:2: ML001 ")


@pytest.mark.parametrize("fix_option", ["--fix", "--fix-only"])
def test_exit_non_zero_on_fix_exits_1_when_something_was_fixed(project, fix_option):
    write(project, {"train.py": BUGGY})
    result = mllint(fix_option, "--exit-non-zero-on-fix", "train.py")
    assert result.exit_code == 1
    assert (project / "train.py").read_text() == FIXED


def test_exit_non_zero_on_fix_exits_0_when_nothing_was_fixed(project):
    write(project, {"train.py": FIXED})
    assert mllint("--fix", "--exit-non-zero-on-fix", "train.py").exit_code == 0


def test_exit_zero_wins_over_exit_non_zero_on_fix(project):
    write(project, {"train.py": BUGGY})
    assert mllint("--fix", "--exit-non-zero-on-fix", "--exit-zero", "train.py").exit_code == 0


# --unfixable and `unfixable`.


def test_unfixable_rule_is_reported_without_a_fix_and_not_fixed(project):
    write(project, {"train.py": BUGGY})
    result = mllint("--fix", "--unfixable", "ML3", "train.py")
    assert result.exit_code == 1
    assert result.stdout == ML301 + "\nFound 1 error.\n"
    assert (project / "train.py").read_text() == BUGGY


def test_unfixable_in_the_configuration_and_on_the_command_line_add_up(project):
    unused_noqa = "x = 1  # noqa: ML101\n"
    write(project, {"mllint.toml": 'unfixable = ["ML301"]\n', "train.py": BUGGY + unused_noqa})
    result = mllint("--fix", "-q", "--unfixable", "ML003", "train.py")
    assert result.exit_code == 1
    assert result.stdout == ML301 + "\ntrain.py:4:8: ML003 [warning] unused `noqa` directive (unused: ML101)\n"
    assert (project / "train.py").read_text() == BUGGY + unused_noqa
    assert mllint("--fix", "-q", "train.py").stdout == ML301 + "\n"  # the configuration alone
    assert (project / "train.py").read_text() == BUGGY + "x = 1\n"


def test_unfixable_rules_are_not_offered_as_fixes_in_the_summary_nor_the_diff(project):
    write(project, {"train.py": BUGGY})
    assert mllint("--unfixable", "ML301", "train.py").stdout == ML301 + "\nFound 1 error.\n"
    assert mllint("--diff", "--unfixable", "ML301", "train.py").exit_code == 0


def test_unknown_unfixable_selector_is_a_usage_error(project):
    result = mllint("--unfixable", "ML3O1", ".")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "Error: command line: `unfixable`: unknown rule selector: ML3O1"


# --extend-exclude.


def test_extend_exclude_on_the_command_line_adds_to_the_configuration(project):
    write(project, {
        "mllint.toml": 'extend-exclude = ["legacy"]\n',
        "legacy/a.py": BUGGY, "experiments/old/b.py": BUGGY, "experiments/new/c.py": BUGGY, "gen_pb2.py": BUGGY,
    })  # fmt: skip
    result = mllint("--show-files", "--extend-exclude", "experiments/old", "--extend-exclude", "*_pb2.py", ".")
    assert result.stdout == "experiments/new/c.py\n"


def test_extend_exclude_paths_are_relative_to_the_working_directory(project, monkeypatch):
    write(project, {"mllint.toml": "", "pkg/old/a.py": BUGGY, "pkg/new/b.py": BUGGY})
    monkeypatch.chdir(project / "pkg")
    assert mllint("--show-files", "--extend-exclude", "old", ".").stdout == "new/b.py\n"
    assert mllint("--show-files", "--extend-exclude", "./old/", ".").stdout == "new/b.py\n"


def test_extend_exclude_keeps_explicitly_named_files_unless_force_exclude(project):
    write(project, {"old/a.py": BUGGY})
    assert mllint("--show-files", "--extend-exclude", "old", "old/a.py").stdout == "old/a.py\n"
    assert mllint("--show-files", "--extend-exclude", "old", "--force-exclude", "old/a.py").stdout == "\n"


# Colour.

COLOURED_ML301 = (
    "\x1b[1mtrain.py\x1b[0m:3:1: \x1b[1;31mML301\x1b[0m `model.eval` is not called: the statement does nothing "
    "\x1b[36m[*]\x1b[0m"
)


def test_no_colour_when_the_output_is_not_a_terminal(project):
    write(project, {"train.py": BUGGY})
    assert "\x1b[" not in mllint("train.py").stdout


def test_force_color_colours_output_that_is_not_a_terminal(project, monkeypatch):
    write(project, {"train.py": BUGGY})
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert mllint("-q", "train.py").stdout == COLOURED_ML301 + "\n"


def test_no_color_wins_over_force_color(project, monkeypatch):
    write(project, {"train.py": BUGGY})
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    assert mllint("-q", "train.py").stdout == ML301 + " [*]\n"


def test_full_format_colours_the_snippet_and_the_fix(project, monkeypatch):
    write(project, {"train.py": BUGGY})
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert mllint("-q", "--output-format", "full", "train.py").stdout.splitlines() == [
        COLOURED_ML301,
        "\x1b[1;34m  |\x1b[0m",
        "\x1b[1;34m3 |\x1b[0m model.eval",
        "\x1b[1;34m  |\x1b[0m \x1b[1;31m^^^^^^^^^^\x1b[0m",
        "  \x1b[1;36m= help\x1b[0m: Call `model.eval()`",
        "    @@ -2,2 +2,2 @@",
        "     model = torch.nn.Linear(2, 2)",
        "\x1b[31m    -model.eval\x1b[0m",
        "\x1b[32m    +model.eval()\x1b[0m",
    ]


def test_machine_formats_and_output_files_are_never_coloured(project, monkeypatch):
    write(project, {"train.py": BUGGY})
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" not in mllint("--output-format", "json", "train.py").stdout
    mllint("-o", "report.txt", "train.py")
    assert "\x1b[" not in (project / "report.txt").read_text()


def run_on_a_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """What the installed `mllint` prints when its standard output is a terminal."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([str(MLLINT), *args], cwd=cwd, env=env, stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal is closed once the process has exited
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_colour_on_a_terminal_unless_no_color(project):
    write(project, {"train.py": BUGGY})
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    assert run_on_a_terminal(["-q", "--no-cache", "train.py"], project, env) == COLOURED_ML301 + "\n"
    plain = run_on_a_terminal(["-q", "--no-cache", "train.py"], project, {**env, "NO_COLOR": "1"})
    assert plain == ML301 + " [*]\n"


# --watch.


def test_watch_lints_again_when_a_file_changes(project):
    write(project, {"train.py": BUGGY})

    def edit_soon():
        time.sleep(1.0)
        (project / "train.py").write_text(FIXED + "\n")

    editor = threading.Thread(target=edit_soon)
    editor.start()
    result = mllint("--watch", "--watch-runs", "2", "-q", ".")
    editor.join()
    assert result.exit_code == 0
    assert result.stdout == "train.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]\n"
    assert result.stderr == "Watching for file changes (Ctrl-C to stop).\nFile change detected, linting again.\n"


def test_watch_notices_a_new_file_and_a_changed_configuration(project):
    from mllint.watch import snapshot

    write(project, {"src/train.py": FIXED})
    before = snapshot(["src"])
    write(project, {"src/new.py": BUGGY})
    with_new_file = snapshot(["src"])
    assert with_new_file != before
    write(project, {"pyproject.toml": "[tool.mllint]\n"})
    with_configuration = snapshot(["src"])
    assert with_configuration != with_new_file
    write(project, {"src/run.yaml": "loss: NLLLoss\n"})  # code may load it: what it chooses is linted
    assert snapshot(["src"]) != with_configuration


def test_watch_does_not_look_into_default_excluded_directories(project):
    from mllint.watch import watched_files

    write(project, {"train.py": FIXED, ".venv/lib/torch.py": "", "notes.txt": ""})
    assert [p for p in watched_files(["."]) if p.startswith(str(project))] == [str(project / "train.py")]


def test_watch_keeps_going_after_a_configuration_error(project):
    write(project, {"mllint.toml": "colour = 1\n", "train.py": FIXED})

    def repair_soon():
        time.sleep(1.0)
        (project / "mllint.toml").write_text("")

    editor = threading.Thread(target=repair_soon)
    editor.start()
    result = mllint("--watch", "--watch-runs", "2", ".")
    editor.join()
    assert result.exit_code == 0
    assert result.stdout == "All checks passed!\n"
    assert result.stderr.startswith(f"Configuration error: {project.resolve() / 'mllint.toml'}:1:1: unknown key `colour`")


def test_watch_cannot_read_standard_input(project):
    result = mllint("--watch", "-")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "Error: --watch cannot read standard input"
