"""Suppression comments: `# noqa`, `# noqa: ML101, ML203`, and file-level `# mllint: noqa[: ML101]`.

Only lines that mention `noqa` are looked at, and a `#` inside a string literal does not start a comment.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from mllint.findings import Finding, Position

CODE_LIST = r"[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*"
LINE_NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{CODE_LIST}))?", re.IGNORECASE)
FILE_NOQA = re.compile(rf"#\s*mllint:\s*noqa(?::\s*(?P<codes>{CODE_LIST}))?", re.IGNORECASE)
CODE = re.compile(r"[A-Z]+[0-9]+")


@dataclass
class Directive:
    line: int
    column: int  # 0-based character column where the `# noqa` starts
    end_column: int  # 0-based character column where its code list ends
    codes: tuple[str, ...] | None  # None: a bare `# noqa`, which silences every code
    used: set[str] = field(default_factory=set)

    def silences(self, code: str) -> bool:
        return self.codes is None or code in self.codes


@dataclass
class Suppressions:
    lines: dict[int, Directive] = field(default_factory=dict)
    file_codes: set[str] = field(default_factory=set)  # codes silenced in the whole file
    whole_file: bool = False  # a bare `# mllint: noqa`

    def suppresses(self, finding: Finding) -> bool:
        if self.whole_file or finding.code in self.file_codes:
            return True
        directive = self.lines.get(finding.noqa_line or finding.start.line)
        if directive is not None and directive.silences(finding.code):
            directive.used.add(finding.code)
            return True
        return False


def parse(lines: list[str], string_spans: Callable[[], list[tuple[Position, Position]]]) -> Suppressions:
    """The directives in a file's comments. `string_spans` gives the string literals' character spans,
    so that a `#` inside a string is not taken for a comment; it is only called when a line mentions
    `noqa`, which most files don't."""
    suppressions = Suppressions()
    for line, column, comment in _comments(lines, string_spans):
        match = FILE_NOQA.search(comment)
        if match:
            if match.group("codes"):
                suppressions.file_codes.update(CODE.findall(match.group("codes").upper()))
            else:
                suppressions.whole_file = True
            continue
        match = LINE_NOQA.search(comment)
        if match:
            codes = match.group("codes")
            suppressions.lines[line] = Directive(
                line=line,
                column=column + match.start(),
                end_column=column + match.end(),
                codes=tuple(CODE.findall(codes.upper())) if codes else None,
            )
    return suppressions


def _comments(lines: list[str], string_spans) -> Iterator[tuple[int, int, str]]:
    """(line, 0-based character column, text) of the comments on lines that mention noqa."""
    spans = None
    for number, text in enumerate(lines, start=1):
        if "noqa" not in text and "NOQA" not in text.upper():
            continue
        spans = string_spans() if spans is None else spans
        for column, character in enumerate(text):
            if character == "#" and not _inside(number, column + 1, spans):
                yield number, column, text[column:]
                break


def _inside(line: int, column: int, spans: list[tuple[Position, Position]]) -> bool:
    position = Position(line, column)
    return any(start <= position < end for start, end in spans)


def with_noqa(line: str, codes: set[str], reason: str | None) -> str:
    """The line with `codes` added to its `# noqa:` comment, or with a new one (and the reason)."""
    match = LINE_NOQA.search(line)
    if match and match.group("codes"):
        existing = [c.strip() for c in match.group("codes").replace(",", " ").split()]
        merged = ", ".join(sorted(set(existing) | codes))
        return line[: match.start()] + f"# noqa: {merged}" + line[match.end() :]
    if match:
        return line  # a bare `# noqa` already silences everything
    comment = f"# noqa: {', '.join(sorted(codes))}" + (f" # {reason}" if reason else "")
    return f"{line.rstrip()}  {comment}"
