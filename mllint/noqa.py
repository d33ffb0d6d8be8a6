"""Suppression comments: `# noqa`, `# noqa: ML101, ML203`, and file-level `# mllint: noqa[: ML101]`.

Comments are found with the tokenizer, so a `# noqa` inside a string is not one; files that do not
contain the word are not tokenized at all.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from mllint.findings import Finding

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


def parse(text: str) -> Suppressions:
    suppressions = Suppressions()
    if "noqa" not in text.lower():
        return suppressions
    for line, column, comment in _comments(text):
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


def _comments(text: str):
    """(line, 0-based column, text) of every comment."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.start[1], token.string
    except (tokenize.TokenError, SyntaxError):
        return
