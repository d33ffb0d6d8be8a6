"""Every fixture directory holds example programs and `expected.txt`: the exact findings (path, line,
column, code) of linting its `.py` files and notebooks with every rule selected (a notebook's findings
as `nb.ipynb:cell N:line:column: CODE`). Files with no line there are negatives: they must produce no
finding at all."""
from pathlib import Path

import pytest

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path
from mllint.registry import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DIRECTORIES = sorted(p.parent for p in FIXTURES.rglob("expected.txt"))


def findings_of(directory: Path) -> list[str]:
    """As `mllint DIRECTORY` finds them: the directory is the project its files import from."""
    selection = Selection.of(all_rules())
    project = ProjectIndex.for_paths([str(directory)])
    lines = []
    for path in sorted([*directory.rglob("*.py"), *directory.rglob("*.ipynb")]):
        relative = path.relative_to(directory).as_posix()
        for f in lint_path(str(path), selection, display_path=relative, project=project):
            lines.append(f"{f.location}:{f.start.line}:{f.start.column}: {f.code}")
    return lines


@pytest.mark.parametrize("directory", DIRECTORIES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_findings(directory):
    expected = [line for line in (directory / "expected.txt").read_text().splitlines() if line.strip()]
    assert findings_of(directory) == expected


def test_every_rule_has_fixtures():
    expected_text = "".join((d / "expected.txt").read_text() for d in DIRECTORIES)
    for code, rule in all_rules().items():
        if rule.event is None:
            assert f": {code}" in expected_text, f"{code} has no positive fixture"
