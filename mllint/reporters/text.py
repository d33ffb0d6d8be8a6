"""Formats for people and CI logs: concise, full, pylint, github."""
from __future__ import annotations

import difflib

from mllint.findings import Applicability, Finding
from mllint.fixer import apply_fixes
from mllint.reporters import Report


def _location(finding: Finding) -> str:
    return f"{finding.path}:{finding.start.line}:{finding.start.column}"


def _concise_line(finding: Finding) -> str:
    fixable = finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    return f"{_location(finding)}: {finding.code} {finding.message}" + (" [*]" if fixable else "")


def _lines(texts: list[str]) -> str:
    return "".join(line + "\n" for line in texts)


def concise(report: Report) -> str:
    return _lines([_concise_line(f) for f in report.findings])


def pylint(report: Report) -> str:
    return _lines([f"{f.path}:{f.start.line}: [{f.code}({f.name}), ] {f.message}" for f in report.findings])


def full(report: Report) -> str:
    return "\n".join(_full_entry(f, report.sources.get(f.path)) for f in report.findings)


def _full_entry(finding: Finding, text: str | None) -> str:
    lines = [_concise_line(finding)]
    if text is not None:
        source_lines = text.splitlines()
        if 0 < finding.start.line <= len(source_lines):
            lines += _snippet(finding, source_lines[finding.start.line - 1])
    if finding.fix is not None:
        lines.append(f"  = help: {finding.fix.message}")
        if text is not None:
            lines += _fix_diff(finding, text)
    return _lines(lines)


def _snippet(finding: Finding, source_line: str) -> list[str]:
    gutter = len(str(finding.start.line))
    start = finding.start.column - 1
    end = finding.end.column - 1 if finding.end.line == finding.start.line else len(source_line)
    shown = source_line.expandtabs(4)
    # Tabs before the range shift the carets as they shift the text.
    caret_start = len(source_line[:start].expandtabs(4))
    caret_width = max(1, len(source_line[:end].expandtabs(4)) - caret_start)
    return [
        f"{' ' * gutter} |",
        f"{finding.start.line} | {shown}",
        f"{' ' * gutter} | {' ' * caret_start}{'^' * caret_width}",
    ]


def _fix_diff(finding: Finding, text: str) -> list[str]:
    fixed, _ = apply_fixes(text, [finding])
    diff = difflib.unified_diff(text.splitlines(), fixed.splitlines(), "before", "after", n=1, lineterm="")
    return ["    " + line for line in list(diff)[2:]]


def github(report: Report) -> str:
    return _lines([_github_line(f) for f in report.findings])


GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _github_line(finding: Finding) -> str:
    properties = {
        "title": f"mllint ({finding.code})",
        "file": finding.path,
        "line": finding.start.line,
        "col": finding.start.column,
        "endLine": finding.end.line,
        "endColumn": finding.end.column,
    }
    rendered = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    level = GITHUB_LEVEL[finding.severity.label]
    return f"::{level} {rendered}::{_escape_data(f'{finding.code} {finding.message}')}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
