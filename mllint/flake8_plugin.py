"""A flake8 plugin: `flake8 --select ML` reports mllint's findings (report only; fixes need mllint).

flake8 selects codes and honours `# noqa` itself; every rule but the opt-in ones runs, with
mllint's configuration files ignored so the two tools do not disagree about selection."""
from __future__ import annotations

from collections.abc import Iterator

from mllint import __version__
from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_text
from mllint.registry import rule_index


class Plugin:
    name = "mllint"
    version = __version__

    def __init__(self, tree, filename: str, lines: list[str]) -> None:  # flake8 asks for `tree` by name
        self.filename = filename
        self.text = "".join(lines)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        codes = [code for code, rule in rule_index().items() if not rule.opt_in]
        project = ProjectIndex.for_paths([self.filename])  # the file's package: models in sibling modules count
        for finding in lint_text(self.text, self.filename, Selection.of(codes), project):
            yield finding.start.line, finding.start.column - 1, f"{finding.code} {finding.message}", type(self)
