"""Output formats. Each format is a function `render(report) -> str` registered in FORMATS."""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import mllint
from mllint.docs import page_name
from mllint.findings import Finding
from mllint.notebook import file_lines
from mllint.rule import Rule
from mllint.source import SourceError, read_source


@dataclass
class Report:
    findings: list[Finding]  # what is left to report, sorted by path, position and code
    rules: tuple[type[Rule], ...]  # every rule enabled in the run (SARIF lists them all)
    # Text by location, for formats that show code: path -> file text; for a notebook also its JSON text,
    # and `path:cell N` -> the cell's source (what a notebook finding's positions refer to).
    sources: dict[str, str] = field(default_factory=dict)
    root: str = "."  # findings' paths are relative to this directory, or absolute
    fixed: list[Finding] = field(default_factory=list)  # what --fix applied
    colour: bool = False  # ANSI colour in the text formats for people (concise, full)
    _notebook_lines: dict[str, dict[int, list[int]]] = field(default_factory=dict, repr=False)

    def file_lines(self, finding: Finding) -> tuple[int, int]:
        """The first and last line of the file that a finding covers. For a notebook's finding, the lines
        of the JSON file that hold its cell's lines (1 when the notebook's text is not at hand)."""
        return self.lines_in_file(finding.path, finding.cell, finding.start.line, finding.end.line)

    def lines_in_file(self, path: str, cell: int | None, start: int, end: int) -> tuple[int, int]:
        """Lines `start` to `end` of a file, or of a cell of a notebook: the lines of the JSON file that
        hold them (1 when the notebook's text is not at hand)."""
        if cell is None:
            return start, end
        if path not in self._notebook_lines:
            self._notebook_lines[path] = file_lines(self.sources.get(path) or _text_of(path))
        lines = self._notebook_lines[path].get(cell) or [1]
        return tuple(lines[min(line, len(lines)) - 1] for line in (start, end))


def cell_position(finding: Finding) -> str:
    """Where a notebook's finding is, in words, for formats whose positions are the file's lines."""
    return f"cell {finding.cell}, line {finding.start.line}, column {finding.start.column}"


def rule_url(code: str) -> str | None:
    """The rule's page in the generated rule reference (`python -m mllint.docs`) where `mllint.DOCS_URL`
    says it is served; None where it is not set (no link to a page that may not exist)."""
    return f"{mllint.DOCS_URL.rstrip('/')}/{page_name(code)}" if mllint.DOCS_URL else None


# Each format's module and function: a run imports the module of its format only (the machine formats
# import XML, hashing and URL parsing).
FORMATS = {
    "concise": ("text", "concise"),
    "full": ("text", "full"),
    "grouped": ("text", "grouped"),
    "pylint": ("text", "pylint"),
    "github": ("text", "github"),
    "json": ("machine", "json_array"),
    "json-lines": ("machine", "json_lines"),
    "sarif": ("machine", "sarif"),
    "gitlab": ("machine", "gitlab"),
    "junit": ("machine", "junit"),
    "rdjson": ("machine", "rdjson"),
}
FORMAT_NAMES = ("concise", "full", "grouped", "json", "json-lines", "sarif", "github", "gitlab", "junit", "pylint", "rdjson")


def render(report: Report, output_format: str) -> str:
    module, function = FORMATS[output_format]
    return getattr(importlib.import_module(f"mllint.reporters.{module}"), function)(report)


def _text_of(path: str) -> str:
    """A notebook's text read for its lines: a call site's notebook that was not linted itself."""
    try:
        return read_source(path).text
    except SourceError:
        return ""
