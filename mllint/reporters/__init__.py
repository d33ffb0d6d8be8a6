"""Output formats. Each format is a function `render(report) -> str` registered in FORMATS."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mllint.findings import Finding
from mllint.rule import Rule

DOCS_URL = "https://github.com/mllint/mllint/blob/main/docs/rules.md#{code}"


@dataclass
class Report:
    findings: list[Finding]  # what is left to report, sorted by path, position and code
    rules: tuple[type[Rule], ...]  # every rule enabled in the run (SARIF lists them all)
    sources: dict[str, str] = field(default_factory=dict)  # path -> text, for formats that show code
    root: str = "."  # findings' paths are relative to this directory, or absolute
    fixed: list[Finding] = field(default_factory=list)  # what --fix applied


def rule_url(code: str) -> str:
    return DOCS_URL.format(code=code.lower())


def _formats() -> dict[str, Callable[[Report], str]]:
    from mllint.reporters import machine, text

    return {
        "concise": text.concise,
        "full": text.full,
        "pylint": text.pylint,
        "github": text.github,
        "json": machine.json_array,
        "json-lines": machine.json_lines,
        "sarif": machine.sarif,
        "gitlab": machine.gitlab,
        "junit": machine.junit,
    }


FORMAT_NAMES = ("concise", "full", "json", "json-lines", "sarif", "github", "gitlab", "junit", "pylint")


def render(report: Report, output_format: str) -> str:
    return _formats()[output_format](report)
