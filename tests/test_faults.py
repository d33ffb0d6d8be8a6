"""Faults (issue 31): full disks, odd files, foreign owners and hostile input lose nothing and stop nothing.
Each test reproduces one failure seen when mllint was tried the way trusted linters are tested."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from mllint.analysis.gradients import GradientFlow
from mllint.budget import check as check_budget
from mllint.cli import main

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\n"
SLOW = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\nloss = model(1)\nloss.backward()\n"


def run(*args: str):
    result = CliRunner().invoke(main, ["--no-cache", "--isolated", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_a_file_past_its_analysis_budget_is_reported_cut_short_and_the_run_goes_on(tmp_path, monkeypatch):
    """An analysis that never ends (as 2**N paths did) is stopped at the budget: the findings made before
    it are reported with ML006, and the other files are linted."""
    flow = GradientFlow.flow

    def endless_in_slow(self, expr, binding=None):
        while self.ctx.path.endswith("slow.py"):
            check_budget()
            time.sleep(0.01)
        return flow(self, expr, binding)

    monkeypatch.setattr(GradientFlow, "flow", endless_in_slow)
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "z.py").write_text(BUGGY)
    code, output = run("--config", "analysis-budget = 0.5", "-j", "1", str(tmp_path))
    assert sorted(line.split(str(tmp_path))[1] for line in output.splitlines() if str(tmp_path) in line) == [
        "/a.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]",
        "/slow.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]",
        "/slow.py:5:1: ML006 [warning] the analysis of this file was cut short at line 5, past its budget of 0.5 s "
        "(`analysis-budget`): the findings before that point are reported, the rest of the file is unchecked",
        "/z.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]",
    ]
    assert code == 1


def test_the_analysis_budget_is_a_number_of_seconds(tmp_path):
    (tmp_path / "a.py").write_text(BUGGY)
    result = CliRunner().invoke(main, ["--isolated", "--config", "analysis-budget = 'long'", str(tmp_path)])
    assert result.exit_code == 2
    assert "`analysis-budget`: expected a number of seconds, 0 or more (0: no limit), got a string ('long')" in result.output


def found(output: str, root) -> list[str]:
    """The findings of a run, paths relative to `root`."""
    return [line.split(f"{root}/", 1)[1] for line in output.splitlines() if f"{root}/" in line]


def test_symbolic_links_that_loop_are_reported_and_the_rest_is_linted(tmp_path):
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "self.py").symlink_to("self.py")
    (tmp_path / "b.py").symlink_to("c.py")
    (tmp_path / "c.py").symlink_to("b.py")
    code, output = run(str(tmp_path))
    loop = "1:1: ML001 cannot read file: Too many levels of symbolic links"
    assert found(output, tmp_path) == [
        "a.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]",
        f"b.py:{loop}", f"c.py:{loop}", f"self.py:{loop}",
    ]  # fmt: skip
    assert code == 1


def test_a_fifo_is_never_read_named_imported_or_extended(tmp_path):
    """Opening a FIFO waits for a writer, reading `/dev/zero` never ends: only regular files are read."""
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / "pipe.toml")
    (tmp_path / "a.py").write_text("import pipe\n" + BUGGY)
    code, output = run(str(tmp_path), str(tmp_path / "pipe.py"))
    assert found(output, tmp_path) == [
        "a.py:4:1: ML301 `model.eval` is not called: the statement does nothing [*]",
        "pipe.py:1:1: ML001 not a regular file (a FIFO): not read",
    ]
    for extended in ("pipe.toml", "/dev/zero"):
        (tmp_path / "mllint.toml").write_text(f'extend = "{extended}"\n')
        result = CliRunner().invoke(main, ["--no-cache", str(tmp_path / "a.py")])
        assert result.exit_code == 2
        assert "cannot read: not a regular file" in result.output


def unprivileged(*args: str) -> subprocess.CompletedProcess:
    """`python -m mllint ARGS` in a process that file permissions apply to: as root, without the
    capabilities that bypass them."""
    command = [sys.executable, "-m", "mllint", "--no-cache", *args]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("no setpriv to drop root's capabilities")
        drop = "-dac_override,-dac_read_search"
        command = ["setpriv", f"--inh-caps={drop}", f"--bounding-set={drop}", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_an_unreadable_directory_is_one_ml001_and_the_rest_is_linted(tmp_path):
    (tmp_path / "a.py").write_text(BUGGY)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.py").write_text(BUGGY)
    locked.chmod(0)
    try:
        result = unprivileged(str(tmp_path))
    finally:
        locked.chmod(0o755)
    assert found(result.stdout, tmp_path) == [
        "a.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]",
        "locked:1:1: ML001 cannot read directory: Permission denied",
    ]
    assert (result.returncode, result.stderr) == (1, "")


def notebook(*cells: str, **top) -> str:
    data = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c} for c in cells],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5, **top,
    }  # fmt: skip
    return json.dumps(data, indent=1) + "\n"


def test_a_notebook_holding_a_number_past_pythons_int_limit_is_linted(tmp_path):
    (tmp_path / "n.ipynb").write_text(notebook(BUGGY).replace('"nbformat_minor"', f'"big": {"9" * 5000},\n "nbformat_minor"'))
    code, output = run(str(tmp_path))
    assert found(output, tmp_path) == ["n.ipynb:cell 1:3:1: ML301 `model.eval` is not called: the statement does nothing [*]"]


TRAIN = (
    "import functools\nimport torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for x in range(3):\n    @functools.cache\n    def f(y):\n        return y\n    loss = model(torch.ones(2)).sum()\n"
    "    loss.backward()\n    opt.step()\n"
)
FIXED = TRAIN.replace("range(3):\n", "range(3):\n    opt.zero_grad()\n")


@pytest.mark.parametrize("line_break", ["\n", "\r\n", "\r"])
def test_the_zero_grad_fix_lands_above_decorators_with_the_files_line_breaks(tmp_path, line_break):
    path = tmp_path / "train.py"
    path.write_bytes(TRAIN.replace("\n", line_break).encode())
    code, output = run("--fix", "--unsafe-fixes", str(path))
    assert (code, path.read_bytes()) == (0, FIXED.replace("\n", line_break).encode())


def test_diff_reports_fixes_it_had_to_reject(tmp_path, monkeypatch):
    def not_parsing(text, path="<unknown>"):
        raise SyntaxError("invalid syntax")

    monkeypatch.setattr("mllint.fixer.parse_python", not_parsing)
    (tmp_path / "train.py").write_text(TRAIN)
    result = CliRunner().invoke(main, ["--no-cache", "--isolated", "--diff", "--unsafe-fixes", str(tmp_path / "train.py")])
    assert result.exit_code == 1
    assert f"{tmp_path}/train.py:1:1: ML005 fixes for ML201 produced code that does not parse" in result.output
    assert "Would fix 0 findings." in result.output


def test_a_notebooks_findings_name_lines_of_their_cells(tmp_path):
    cells = [TRAIN[: TRAIN.index("for")], TRAIN[TRAIN.index("for") :]]
    (tmp_path / "n.ipynb").write_text(notebook(*cells))
    code, output = run("--select", "ML201", "--output-format", "json", str(tmp_path))
    [finding] = json.loads(output)
    assert finding["message"].startswith(
        "`opt` steps without its gradients being cleared in the iteration of the loop on cell 2, line 1"
    )
    assert finding["fix"]["message"] == "Call `opt.zero_grad()` at the top of the iteration"
