"""Formats for people and CI logs: concise, full, grouped, pylint, github."""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from mllint.findings import Applicability, Finding, Severity
from mllint.fixer import apply_fixes
from mllint.reporters import Report, cell_position
from mllint.reporters.colour import BLUE, BOLD, CYAN, GREEN, RED, Palette
from mllint.source import SourceText

TAB_WIDTH = 4
GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
FIX_LABEL = {
    Applicability.SAFE: "",
    Applicability.UNSAFE: " (unsafe fix: applied with `--fix --unsafe-fixes`)",
    Applicability.DISPLAY_ONLY: " (shown only, never applied)",
}


def _lines(texts: Iterable[str]) -> str:
    """The texts as lines, each ending with a newline ("" when there is none)."""
    return "".join(text + "\n" for text in texts)


def _one_line(text: str) -> str:
    """A message on one line, so that line-oriented formats keep one finding per line."""
    return " ".join(text.splitlines())


def _concise_line(finding: Finding, paint: Palette, with_location: bool = True) -> str:
    location = f"{paint(finding.location, BOLD)}:{finding.start.line}:{finding.start.column}: " if with_location else ""
    # Errors are the norm, as in Ruff; a warning or info says so.
    severity = "" if finding.severity is Severity.ERROR else f"[{finding.severity.label}] "
    line = f"{location}{paint(finding.code, BOLD, RED)} {severity}{_one_line(finding.message)}"
    safely_fixable = finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    return f"{line} {paint('[*]', CYAN)}" if safely_fixable else line


def concise(report: Report) -> str:
    paint = Palette(report.colour)
    return _lines(_concise_line(f, paint) for f in report.findings)


def pylint(report: Report) -> str:
    """`path:line: [CODE(name), ] message`; a notebook's finding at the notebook file's line, which
    `path:line:` parsers can open, the cell said after the message."""
    return _lines(
        f"{f.path}:{report.file_lines(f)[0]}: [{f.code}({f.name}), ] {_one_line(f.message)}"
        + ("" if f.cell is None else f" ({cell_position(f)})")
        for f in report.findings
    )


def grouped(report: Report) -> str:
    """The findings under their file's name, as Ruff's `grouped` format: `  line:column CODE message`."""
    paint = Palette(report.colour)
    blocks, path = [], None
    for finding in report.findings:
        if finding.path != path:
            path = finding.path
            blocks.append([f"{paint(path, BOLD)}:"])
        cell = "" if finding.cell is None else f"cell {finding.cell}:"
        where = f"{cell}{finding.start.line}:{finding.start.column}"
        blocks[-1].append(f"  {where} {_concise_line(finding, paint, with_location=False)}")
    return "".join(_lines(block) + "\n" for block in blocks)


def full(report: Report) -> str:
    """Each finding's concise line, its source line with carets under the range, and its fix as a diff."""
    locations = {f.location for f in report.findings}
    sources = {key: SourceText(text) for key, text in report.sources.items() if key in locations}
    paint = Palette(report.colour)
    return "\n".join(_full_entry(f, sources.get(f.location), paint) for f in report.findings)


def _full_entry(finding: Finding, source: SourceText | None, paint: Palette) -> str:
    lines = [_concise_line(finding, paint)]
    if source is not None and 0 < finding.start.line <= len(source.lines):
        lines += _snippet(finding, source.line(finding.start.line), paint)
    if finding.fix is not None:
        label = FIX_LABEL[finding.fix.applicability]
        lines.append(f"  {paint('= help', BOLD, CYAN)}: {_one_line(finding.fix.message)}{label}")
        if source is not None and finding.fix.path is None:  # a fix of another file: its message names it
            lines += [paint(line, *_DIFF_COLOURS.get(line[4:5], ())) for line in _fix_diff(finding, source)]
    return _lines(lines)


_DIFF_COLOURS = {"+": (GREEN,), "-": (RED,)}  # by the first character after the diff's indent


def _snippet(finding: Finding, source_line: str, paint: Palette) -> list[str]:
    """The line in a gutter, with carets under the range (up to the end of the line when it goes on)."""
    number = str(finding.start.line)
    gutter = " " * len(number)
    start = finding.start.column - 1
    end = finding.end.column - 1 if finding.end.line == finding.start.line else len(source_line)
    caret_start = _display_width(source_line[:start])
    caret_width = max(1, _display_width(source_line[:end]) - caret_start)
    return [
        paint(f"{gutter} |", BOLD, BLUE),
        f"{paint(f'{number} |', BOLD, BLUE)} {source_line.expandtabs(TAB_WIDTH)}",
        f"{paint(f'{gutter} |', BOLD, BLUE)} {' ' * caret_start}{paint('^' * caret_width, BOLD, RED)}",
    ]


def _display_width(text: str) -> int:
    """The terminal columns `text` takes: tabs expanded, wide (East Asian) characters count two, combining
    marks none, so that carets stay under the characters they point at."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text.expandtabs(TAB_WIDTH)
    )


def _fix_diff(finding: Finding, source: SourceText) -> list[str]:
    """The file's text with only this finding's fix applied, as an indented unified diff (no file header)."""
    import difflib  # here: a report without fixes to show does not load it

    fixed, _ = apply_fixes(source.text, [finding])
    diff = difflib.unified_diff(_diff_lines(source), _diff_lines(SourceText(fixed)), n=1, lineterm="")
    return ["    " + line for line in list(diff)[2:]]


def _diff_lines(source: SourceText) -> list[str]:
    """The lines as Python counts them, without the empty one after a final line break."""
    lines = source.lines
    return lines[:-1] if lines[-1] == "" else lines


def github(report: Report) -> str:
    """GitHub Actions workflow commands, which annotate the lines of a pull request."""
    return _lines(_github_command(f, report) for f in report.findings)


def _github_command(finding: Finding, report: Report) -> str:
    properties = {
        "title": f"mllint ({finding.code})",
        "file": finding.path,
        "line": finding.start.line,
        "col": finding.start.column,
        "endLine": finding.end.line,
        "endColumn": finding.end.column,
    }
    message = f"{finding.code} {finding.message}"
    if finding.cell is not None:  # annotate the notebook file's lines; say where in the cell
        properties["line"], properties["endLine"] = report.file_lines(finding)
        del properties["col"], properties["endColumn"]
        message += f" ({cell_position(finding)})"
    rendered = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    command = GITHUB_COMMAND[finding.severity]
    return f"::{command} {rendered}::{_escape_data(message)}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
