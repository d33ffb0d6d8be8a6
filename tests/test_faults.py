"""Faults (issue 31): full disks, odd files, foreign owners and hostile input lose nothing and stop nothing.
Each test reproduces one failure seen when mllint was tried the way trusted linters are tested."""
import errno
import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from mllint.analysis.facets.gradients import GradientFlow
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
        while self.ctx.path.endswith("slow.py"):  # busy: the budget is CPU time
            check_budget()
        return flow(self, expr, binding)

    monkeypatch.setattr(GradientFlow, "flow", endless_in_slow)
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "z.py").write_text(BUGGY)
    code, output = run("--config", "analysis-budget = 0.5", "-j", "1", str(tmp_path))
    assert sorted(line.split(str(tmp_path))[1] for line in output.splitlines() if str(tmp_path) in line) == [
        "/a.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]",
        "/slow.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]",
        "/slow.py:5:1: ML006 [warning] the analysis of this file was cut short at line 5, past its budget of 0.5 s of CPU time "
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


FULL = OSError(errno.ENOSPC, "No space left on device")


def test_fix_as_root_keeps_the_owner_group_mode_and_hard_links(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user takes root")
    path, twin = tmp_path / "train.py", tmp_path / "twin.py"
    path.write_text(BUGGY)
    os.chown(path, 1234, 2345)
    path.chmod(0o640)
    alone = tmp_path / "alone.py"
    alone.write_text(BUGGY)
    os.chown(alone, 1234, 2345)
    alone.chmod(0o640)
    os.link(path, twin)
    run("--fix", str(path), str(alone))
    for fixed in (path, twin, alone):
        status = fixed.stat()
        assert (fixed.read_text(), status.st_uid, status.st_gid, oct(status.st_mode & 0o777)) == (
            BUGGY.replace("model.eval", "model.eval()"), 1234, 2345, "0o640"
        )
    assert path.stat().st_ino == twin.stat().st_ino and path.stat().st_nlink == 2


class FaultyDisk:
    """Stands for the disk in `mllint.atomic`: the `fail_at`-th write, sync, rename or metadata change
    fails with ENOSPC (a write after writing half its data)."""

    def __init__(self, fail_at: int) -> None:
        self.fail_at, self.points, self.failed = fail_at, 0, False

    def point(self) -> None:
        self.points += 1
        if self.points == self.fail_at:
            self.failed = True
            raise FULL

    def file(self, handle):
        disk = self

        class Handle:
            def __getattr__(self, name):
                return getattr(handle, name)

            def __enter__(self):
                handle.__enter__()
                return self

            def __exit__(self, *exc):
                return handle.__exit__(*exc)

            def write(self, data):
                handle.write(data[: len(data) // 2])
                disk.point()
                return handle.write(data[len(data) // 2 :])

        return Handle()

    def install(self, monkeypatch) -> None:
        import mllint.atomic as atomic

        disk, real = self, os

        class FaultyOs:
            def __getattr__(self, name):
                return getattr(real, name)

            def fdopen(self, *args, **kwargs):
                return disk.file(real.fdopen(*args, **kwargs))

            def fsync(self, descriptor):
                disk.point()
                real.fsync(descriptor)

            def replace(self, source, target):
                disk.point()
                real.replace(source, target)

            def chmod(self, path, mode):
                disk.point()
                real.chmod(path, mode)

            def chown(self, path, uid, gid):
                disk.point()
                real.chown(path, uid, gid)

        monkeypatch.setattr(atomic, "os", FaultyOs())
        monkeypatch.setattr(atomic, "open", lambda *args, **kwargs: disk.file(open(*args, **kwargs)), raising=False)


def test_fix_and_write_baseline_lose_nothing_whichever_write_fails(tmp_path, monkeypatch):
    """Every point where a write can fail, one at a time: each file is left as it was or fully fixed
    (hard links kept), the baseline as it was or fully written, and no temporary file is left behind."""
    sources = {"a.py": BUGGY, "b.py": BUGGY.replace("\n", "\r\n"), "c.py": TRAIN, "d.py": "x = 1\n"}
    fixed = {name: text.replace("model.eval\r", "model.eval()\r").replace("model.eval\n", "model.eval()\n") for name, text in sources.items()}
    fixed["c.py"] = FIXED
    old_baseline = '{"version": 1, "findings": []}\n'
    fail_at = 0
    while True:
        fail_at += 1
        root = tmp_path / str(fail_at)
        root.mkdir()
        for name, text in sources.items():
            (root / name).write_bytes(text.encode())
        os.link(root / "a.py", root / "a_link.py")
        (root / "baseline.json").write_text(old_baseline)
        disk = FaultyDisk(fail_at)
        with monkeypatch.context() as patch:
            disk.install(patch)
            files = [str(root / name) for name in sources]
            run("-j", "1", "--fix", "--unsafe-fixes", *files)
            run("--write-baseline", str(root / "baseline.json"), *files)
        for name in sources:
            assert (root / name).read_bytes().decode() in (sources[name], fixed[name]), (fail_at, name)
        assert (root / "a.py").stat().st_ino == (root / "a_link.py").stat().st_ino
        baseline = (root / "baseline.json").read_text()
        assert baseline == old_baseline or json.loads(baseline)["version"] == 1, fail_at  # whole, never a part
        assert not list(root.glob(".mllint-*")), fail_at
        if not disk.failed:
            break
    assert fail_at > 10  # every point was tried, then a run with none failing
    assert all((root / name).read_bytes().decode() == fixed[name] for name in sources)


def test_write_baseline_on_a_full_disk_keeps_the_old_baseline(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(BUGGY)
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"version": 1, "findings": []}\n')
    FaultyDisk(fail_at=1).install(monkeypatch)
    result = CliRunner().invoke(main, ["--no-cache", "--isolated", "--write-baseline", str(baseline), str(tmp_path / "a.py")])
    assert result.exit_code == 2
    assert f"{baseline}: cannot write the baseline (No space left on device); the old one is kept" in result.output
    assert baseline.read_text() == '{"version": 1, "findings": []}\n'
    assert run("--baseline", str(baseline), str(tmp_path / "a.py"))[0] == 1  # still a baseline


def test_output_file_on_a_full_disk_is_an_io_error(tmp_path, monkeypatch):
    real_open = open

    def full_disk_open(path, mode="r", *args, **kwargs):
        handle = real_open(path, mode, *args, **kwargs)
        return FaultyDisk(fail_at=1).file(handle) if "w" in mode else handle

    monkeypatch.setattr("mllint.cli.open", full_disk_open, raising=False)
    (tmp_path / "a.py").write_text(BUGGY)
    result = CliRunner().invoke(main, ["--no-cache", "--isolated", "-o", str(tmp_path / "out.txt"), str(tmp_path / "a.py")])
    assert (result.exit_code, result.output) == (2, f"mllint: cannot write {tmp_path / 'out.txt'}: No space left on device\n")


def test_a_cache_on_a_full_disk_leaves_no_temporary_files(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(BUGGY)
    cache = tmp_path / "cache"
    monkeypatch.setattr("mllint.atomic.os.fsync", lambda descriptor: (_ for _ in ()).throw(FULL))
    for _ in range(2):
        result = CliRunner().invoke(main, ["--isolated", "--cache-dir", str(cache), str(tmp_path / "a.py")])
        assert result.exit_code == 1
    assert sorted(p.name for p in cache.rglob("*") if p.is_file()) == [".gitignore", "CACHEDIR.TAG"]


def test_a_cache_entry_that_cannot_be_read_is_a_miss(tmp_path):
    (tmp_path / "a.py").write_text(BUGGY)
    cache = tmp_path / "cache"
    arguments = ["--isolated", "--cache-dir", str(cache), str(tmp_path / "a.py")]
    first = CliRunner().invoke(main, arguments)
    [entry] = cache.rglob("*.json")
    entry.write_text("[" * 100_000 + "]" * 100_000)  # nested past the recursion limit
    for _ in range(2):
        result = CliRunner().invoke(main, arguments)
        assert (result.exit_code, result.output) == (first.exit_code, first.output)
    assert "ML301" in first.output


def test_clean_removes_only_what_mllints_cache_layout_makes(tmp_path):
    other = tmp_path / "other"  # another program's cache, tagged as the standard says
    other.mkdir()
    (other / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# Another tool's cache.\n")
    (other / "data").write_text("precious")
    result = CliRunner().invoke(main, ["clean", "--cache-dir", str(other)])
    assert (result.exit_code, (other / "data").read_text()) == (0, "precious")
    (tmp_path / "a.py").write_text(BUGGY)
    mine = tmp_path / "mine"
    CliRunner().invoke(main, ["--isolated", "--cache-dir", str(mine), str(tmp_path / "a.py")])
    (mine / "notes.txt").write_text("kept")  # put there by someone else
    assert CliRunner().invoke(main, ["clean", "--cache-dir", str(mine)]).exit_code == 0
    assert sorted(p.name for p in mine.iterdir()) == [".gitignore", "CACHEDIR.TAG", "notes.txt"]
    (mine / "notes.txt").unlink()
    CliRunner().invoke(main, ["clean", "--cache-dir", str(mine)])
    assert not mine.exists()


def test_python_m_mllint_does_not_import_the_projects_modules_over_the_standard_library(tmp_path):
    (tmp_path / "json.py").write_text('raise SystemExit("the project\'s json.py was imported")\n')
    (tmp_path / "a.py").write_text(BUGGY)
    result = subprocess.run(
        [sys.executable, "-m", "mllint", "--no-cache", "--isolated", "a.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert (result.returncode, result.stdout.splitlines()[0]) == (1, "a.py:3:1: ML301 `model.eval` is not called: the statement does nothing [*]")


MODELS = (
    "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = nn.Linear(4, 3)\n\n    def forward(self, x):\n        return torch.softmax(self.fc(x), dim=1)\n"
)
USES_MODELS = (
    "import torch\nfrom torch import nn\nfrom models import Net\n\nmodel = Net()\ncriterion = nn.CrossEntropyLoss()\n"
    "loss = criterion(model(torch.randn(2, 4)), torch.tensor([0, 1]))\n"
)


def test_a_files_findings_do_not_depend_on_what_else_is_on_the_command_line(tmp_path, monkeypatch):
    """The project of a file is that of the first path naming it (README: Projects): a sibling directory
    named too is another project."""
    for directory in ("a", "b", "c"):
        (tmp_path / directory).mkdir()
    (tmp_path / "a" / "train.py").write_text(USES_MODELS)
    (tmp_path / "b" / "models.py").write_text(MODELS)
    (tmp_path / "c" / "train.py").write_text(USES_MODELS)
    (tmp_path / "c" / "models.py").write_text(MODELS)
    monkeypatch.chdir(tmp_path)

    def findings(*paths: str) -> list[str]:
        return [" ".join(line.split(" ")[:2]) for line in run("-j", "1", *paths)[1].splitlines() if line[:2] in ("a/", "b/", "c/")]

    assert findings("a") == findings("b") == []
    assert findings("c") == ["c/train.py:7:18: ML101"]
    for paths in (("a", "b", "c"), ("c", "b", "a"), ("a/train.py", "b/models.py", "c"), ("b", "a/train.py", "c")):
        assert findings(*paths) == findings("c"), paths
