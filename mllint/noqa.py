"""Suppression comments: `# noqa`, `# noqa: ML101, ML203`, and file-level `# mllint: noqa[: ML101]`.

Only lines that mention `noqa` are looked at, and a `#` inside a string literal does not start a comment.
"""
from __future__ import annotations

import re
from bisect import bisect_right
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
    strings = None
    for number, text in enumerate(lines, start=1):
        if "noqa" not in text and "NOQA" not in text.upper():
            continue
        strings = _merged(string_spans()) if strings is None else strings
        for column, character in enumerate(text):
            if character == "#" and not _inside((number, column + 1), strings):
                yield number, column, text[column:]
                break


def _merged(spans: list[tuple[Position, Position]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The union of the spans (an f-string holds its parts' spans) as sorted disjoint (starts, ends)."""
    starts: list[tuple[int, int]] = []
    ends: list[tuple[int, int]] = []
    for start, end in sorted(((s.line, s.column), (e.line, e.column)) for s, e in spans):
        if ends and start <= ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


def _inside(position: tuple[int, int], strings: tuple[list[tuple[int, int]], list[tuple[int, int]]]) -> bool:
    starts, ends = strings
    i = bisect_right(starts, position) - 1
    return i >= 0 and position < ends[i]


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
