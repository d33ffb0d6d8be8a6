"""A lint leaves no reference cycles behind: what it built (the tree, the analyses, the rules) is freed by
reference counting as it returns. A cycle through the file's context would keep its whole tree for the
cyclic garbage collector, which then scans every node: a fifth of a run's time on a corpus."""
import gc
import itertools
from pathlib import Path

import pytest

from mllint import runner
from mllint.analysis.program import project as project_cache
from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path
from mllint.registry import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DIRECTORIES = sorted(p.parent for p in FIXTURES.rglob("expected.txt"))


@pytest.mark.parametrize("directory", DIRECTORIES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_a_lint_leaves_no_garbage_cycles(directory):
    _assert_each_lint_leaves_no_garbage(directory)  # the modules read are kept: no garbage


@pytest.mark.parametrize(
    "directory", [d for d in DIRECTORIES if d.name.endswith(("project", "callers"))], ids=lambda p: p.name
)
def test_the_modules_a_project_lets_go_leave_no_garbage_cycles(directory, monkeypatch):
    """A module parsed to read another's code, then let go (`KEPT_SOURCE_BYTES`) while a lint may still
    read it, is freed by reference counting too."""
    monkeypatch.setattr(project_cache, "KEPT_SOURCE_BYTES", 0)
    monkeypatch.setattr(project_cache, "_CONTEXTS", {})
    monkeypatch.setattr(project_cache, "_kept_bytes", 0)
    _assert_each_lint_leaves_no_garbage(directory)


def _assert_each_lint_leaves_no_garbage(directory: Path) -> None:
    selection = Selection.of(all_rules())
    project = ProjectIndex.for_paths([str(directory)])
    gc.collect()
    gc.freeze()  # what earlier tests keep is no lint's garbage: each collection below scans only what lints make
    gc.disable()
    try:
        for path in sorted(str(p) for p in directory.rglob("*.py")):
            lint_path(path, selection, project=project)
            assert gc.collect() == 0, path
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_run_with_the_collector_off_still_collects_now_and_then(tmp_path, monkeypatch):
    """What no test foresaw (a cycle made while fixing) is freed every so many files."""
    for number in range(5):
        (tmp_path / f"m{number}.py").write_text("import torch\n")
    collections = []
    monkeypatch.setattr(runner, "FILES_PER_COLLECTION", 2)
    monkeypatch.setattr(runner, "_files_checked", itertools.count(1))
    monkeypatch.setattr(runner.gc, "collect", lambda: collections.append(gc.isenabled()))
    runner.check_files([(str(p), Selection.of(all_rules())) for p in sorted(tmp_path.glob("*.py"))], runner.Job())
    assert collections == [False, False]
