"""Fixes that edit another file than their finding's (`Fix.path`): the softmax a model's `forward` in
`models.py` returns, for the finding where `engine.py` feeds it to cross-entropy. `--fix` applies them
(the unsafe ones with `--unsafe-fixes`) after every file's own fixes, each target file once, with the same
re-parse guard and atomic write; `--diff` shows them. A finding that several call sites share (two losses
fed by one model) is fixed by one edit."""
from __future__ import annotations

import os
from collections import defaultdict

from mllint.engine import Event, Selection, event_findings
from mllint.findings import Applicability, Finding, Position
from mllint.fixer import FileChanged, apply_fixes, write_atomically
from mllint.runner import FileResult, Mode, unified_diff
from mllint.source import SourceError, parse_python, read_source


def wanted(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return fix is not None and fix.path is not None and (
        fix.applicability is Applicability.SAFE or unsafe and fix.applicability is Applicability.UNSAFE
    )


def apply_cross_file_fixes(results: list[FileResult], mode: Mode, unsafe: bool, selections: dict[str, Selection]) -> None:
    """Apply (or, for `--diff`, show) the wanted fixes of other files; the findings fixed move from their
    result's `findings` to its `fixed`. A target whose own fixes were written in this run is left alone:
    the edits were computed on its old text (the next run offers them again)."""
    changed = {os.path.realpath(r.path) for r in results if r.fixed}
    by_target: dict[str, list[tuple[FileResult, Finding]]] = defaultdict(list)
    for result in results:
        for finding in result.findings:
            if wanted(finding, unsafe) and os.path.realpath(finding.fix.path) not in changed:
                by_target[finding.fix.path].append((result, finding))
    for target, pending in by_target.items():
        _fix_target(target, pending, mode, selections)


def _fix_target(target: str, pending: list[tuple[FileResult, Finding]], mode: Mode, selections: dict[str, Selection]) -> None:
    first_result, first = pending[0]

    def failed(message: str) -> None:
        selection = selections[first_result.path]
        first_result.findings += event_findings(selection, Event.FIX_ERROR, first.path, Position(1, 1), message)

    try:
        source = read_source(target)
    except SourceError as error:
        return failed(f"cannot fix {target}: {error.message}")
    unique = list({f.fix.edits: f for _, f in pending}.values())  # one edit for the findings that share it
    text, applied = apply_fixes(source.text, unique)
    try:
        parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        codes = ", ".join(sorted({f.code for f in applied}))
        return failed(f"fixes for {codes} in {target} produced code that does not parse ({error}); file left unchanged")
    if mode is Mode.DIFF:
        first_result.diff += unified_diff(source.text, text, target)
    else:
        try:
            write_atomically(target, text, source.encoding, source.data)
        except (FileChanged, OSError) as error:
            return failed(str(error) if isinstance(error, FileChanged) else f"cannot write the fixed file {target}: {error}")
    done = {f.fix.edits for f in applied}
    for result, finding in pending:
        if finding.fix.edits in done:
            result.findings.remove(finding)
            result.fixed.append(finding)
