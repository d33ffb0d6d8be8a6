"""Baselines: record today's findings, then report only new ones (how a team adopts mllint on a legacy
codebase without a thousand `# noqa`s). A finding is keyed by its file, code and the text of its line,
not the line number (nor a notebook's cell number), so it survives lines and cells added above it."""
from __future__ import annotations

import collections
import hashlib
import json
import os
from pathlib import Path

from mllint.atomic import replace_file
from mllint.findings import Finding

VERSION = 1


class BaselineError(Exception):
    pass


def _key(finding: Finding, sources: dict[str, str]) -> tuple[str, str, str]:
    lines = sources.get(finding.location, "").splitlines()
    text = lines[finding.start.line - 1].strip() if 0 < finding.start.line <= len(lines) else finding.message
    path = Path(os.path.relpath(os.path.abspath(finding.path))).as_posix()
    return path, finding.code, hashlib.sha256(text.encode()).hexdigest()[:16]


def write(file: str, findings: list[Finding], sources: dict[str, str]) -> int:
    counts = collections.Counter(_key(f, sources) for f in findings)
    entries = [{"path": p, "code": c, "line_hash": h, "count": n} for (p, c, h), n in sorted(counts.items())]
    text = json.dumps({"version": VERSION, "findings": entries}, indent=2) + "\n"
    try:
        keep = os.stat(file)
    except OSError:
        keep = None
    try:  # whole or not at all: on a full disk, the old baseline stays
        replace_file(os.path.realpath(file), text.encode("utf-8"), keep)
    except OSError as error:
        raise BaselineError(f"{file}: cannot write the baseline ({error.strerror or error}); the old one is kept") from None
    return len(findings)


def new_findings(file: str, findings: list[Finding], sources: dict[str, str]) -> list[Finding]:
    """The findings the baseline does not account for (as many of each key as it recorded are known)."""
    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
        known = collections.Counter(
            {(e["path"], e["code"], e["line_hash"]): int(e["count"]) for e in data["findings"]}
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BaselineError(f"{file}: not a readable mllint baseline ({error})") from None
    kept = []
    for finding in findings:
        key = _key(finding, sources)
        if known[key] > 0:
            known[key] -= 1
        else:
            kept.append(finding)
    return kept
