"""Faults (issue 31): full disks, odd files, foreign owners and hostile input lose nothing and stop nothing.
Each test reproduces one failure seen when mllint was tried the way trusted linters are tested."""
import time

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
