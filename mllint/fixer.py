"""Applying fixes: non-overlapping edits, re-lint and repeat, re-parse every round, write atomically."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from mllint.atomic import replace_file
from mllint.findings import Applicability, Finding, Fix
from mllint.source import LINE_BREAK, SourceText, parse_python

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    text: str  # the fixed text (the original one when `error` is set)
    remaining: list[Finding]  # the findings of `text`
    fixed: list[Finding] = field(default_factory=list)
    error: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.fixed) and self.error is None


def allowed(fix: Fix | None, unsafe: bool) -> bool:
    """May the fix be applied to the finding's own file (a fix of another file: see `mllint.cross_file`)?"""
    if fix is None or fix.path is not None:
        return False
    return fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE)


def apply_fixes(text: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    """Apply the fixes of `findings` whose edits do not overlap an earlier fix's; return the new text and
    the findings whose fixes were applied."""
    source = SourceText(text)
    applied: list[Finding] = []
    spans: list[tuple[int, int]] = []
    edits: list[tuple[int, int, str]] = []
    for finding in sorted(findings, key=lambda f: (f.fix.span, f.code)):
        fix_edits = [(source.offset(e.start), source.offset(e.end), e.content) for e in finding.fix.edits]
        if any(_overlaps(start, end, taken) for start, end, _ in fix_edits for taken in spans):
            continue  # applied in a later round, once the text it touches has settled
        spans += [(start, end) for start, end, _ in fix_edits]
        edits += fix_edits
        applied.append(finding)
    for start, end, content in sorted(edits, reverse=True):
        text = text[:start] + _with_line_breaks(content, text, start) + text[end:]
    return text, applied


def _with_line_breaks(content: str, text: str, offset: int) -> str:
    """Content to insert at `offset`, its lines ending as the file's do there (rules write `\n`)."""
    if "\n" not in content:
        return content
    found = LINE_BREAK.search(text, offset) or LINE_BREAK.search(text)
    return content if found is None or found.group() == "\n" else content.replace("\n", found.group())


def _overlaps(start: int, end: int, taken: tuple[int, int]) -> bool:
    other_start, other_end = taken
    if start == end == other_start == other_end:
        return True  # two insertions at one place: their order would be arbitrary
    return start < other_end and other_start < end


def fix_text(text: str, lint: Callable[[str], list[Finding]], unsafe: bool) -> FixOutcome:
    """Apply fixes until none is left (at most MAX_ROUNDS rounds), checking that every round parses."""
    original_findings = findings = lint(text)
    current, fixed = text, []
    for _ in range(MAX_ROUNDS):
        fixable = [f for f in findings if allowed(f.fix, unsafe)]
        if not fixable:
            break
        new_text, applied = apply_fixes(current, fixable)
        if new_text == current:
            break
        try:
            parse_python(new_text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            codes = ", ".join(sorted({f.code for f in applied}))
            message = f"fixes for {codes} produced code that does not parse ({error}); file left unchanged"
            return FixOutcome(text, original_findings, error=message)
        fixed += applied
        current, findings = new_text, lint(new_text)
    return FixOutcome(current, findings, fixed)


class FileChanged(Exception):
    pass


def write_atomically(path: str, text: str, encoding: str, expected: bytes) -> None:
    """Replace `path` with `text`, unless its content is no longer `expected`: whole or not at all, with
    its mode, owner, group and hard links (`atomic.replace_file`). A symbolic link stays a link: the file
    it points to is the one replaced."""
    target = os.path.realpath(path)
    with open(target, "rb") as handle:
        if handle.read() != expected:
            raise FileChanged(f"{path} changed on disk while it was being fixed; not written")
        status = os.fstat(handle.fileno())
    replace_file(target, text.encode(encoding), keep=status)
