"""The pre-commit hooks of `.pre-commit-hooks.yaml`, run by the real `pre-commit try-repo` against this
repository, on a project with a finding in a file and in a notebook, and an excluded file."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None,
    reason="pre-commit is not installed (it is in the test extra: pip install -e '.[test]')",
)

ROOT = Path(__file__).resolve().parent.parent
BUGGY = "import torch\n\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\n"
FIXED = "import torch\n\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\n"


def notebook(source: str) -> str:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def git(*args: str, cwd: Path) -> str:
    command = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, cwd=cwd, env=_environment(), check=True, capture_output=True, text=True).stdout


def _environment() -> dict[str, str]:
    """This environment without git's variables (set when the tests run inside a git hook)."""
    return {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}


def snapshot_of_this_repository(destination: Path) -> Path:
    """This repository's working tree (tracked and new files, not ignored ones) as a one-commit repository.
    try-repo would take uncommitted changes of tracked files, but not new files: a snapshot makes the test
    check the hooks as they are in the working tree, in a fresh clone as in a work in progress."""
    listed = git("ls-files", "--cached", "--others", "--exclude-standard", "-z", cwd=ROOT).split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():  # a tracked file deleted in the working tree is listed too
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)
    git("init", "-q", cwd=destination)
    git("add", "-A", cwd=destination)
    git("commit", "-q", "-m", "snapshot", cwd=destination)
    return destination


@pytest.fixture(scope="module")
def hook_run(tmp_path_factory):
    """Both hooks (`mllint`, then `mllint-fix`) run once by try-repo: the hook environment is built once."""
    hooks = snapshot_of_this_repository(tmp_path_factory.mktemp("hooks"))
    project = tmp_path_factory.mktemp("project")
    (project / "train.py").write_text(BUGGY)
    (project / "explore.ipynb").write_text(notebook(BUGGY))
    (project / "generated").mkdir()
    (project / "generated" / "old.py").write_text(BUGGY)
    (project / "pyproject.toml").write_text('[tool.mllint]\nextend-exclude = ["generated"]\n')
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("commit", "-q", "-m", "buggy", cwd=project)
    environment = {**_environment(), "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home"))}
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "--all-files", "--color", "never"]
    result = subprocess.run(command, cwd=project, env=environment, capture_output=True, text=True, timeout=600)
    return result, project


def hook_output(stdout: str, hook_id: str) -> str:
    """What pre-commit printed for one hook."""
    return stdout.split(f"- hook id: {hook_id}\n", 1)[1].split("- hook id: ", 1)[0]


def test_the_check_hook_fails_with_the_finding(hook_run):
    result, _ = hook_run
    assert result.returncode == 1, result.stdout + result.stderr
    output = hook_output(result.stdout, "mllint")
    assert "train.py:4:1: ML301 `model.eval` is not called: the statement does nothing" in output
    assert "explore.ipynb:cell 1:4:1: ML301 `model.eval` is not called: the statement does nothing" in output
    assert "generated" not in output  # --force-exclude: the configured exclude holds for named files


def test_the_fix_hook_fixes_the_file_and_fails(hook_run):
    result, project = hook_run
    output = hook_output(result.stdout, "mllint-fix")
    assert "files were modified by this hook" in output
    assert (project / "train.py").read_text() == FIXED
    assert (project / "explore.ipynb").read_text() == notebook(FIXED)
    assert (project / "generated" / "old.py").read_text() == BUGGY
