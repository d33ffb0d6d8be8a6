"""The result cache: findings per file, keyed by the file's content, mllint's version and the settings,
and valid while the other modules of the project that the lint consulted keep their content.

Not by modification time: a fresh CI checkout resets every mtime. Entries live under `.mllint_cache/`
(with a CACHEDIR.TAG and a .gitignore), one small JSON file each, written atomically.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from mllint import __version__
from mllint.analysis.project import ProjectIndex
from mllint.engine import Selection
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Related, Severity

CACHE_DIRECTORY = ".mllint_cache"
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is mllint's cache.\n"


def selection_key(selection: Selection) -> str:
    codes = ",".join(rule.code for rule in selection.rules)
    severities = ",".join(f"{code}={level.label}" for code, level in sorted(selection.severities.items()))
    unfixable = ",".join(sorted(selection.unfixable))
    return f"{__version__}|{codes}|{severities}|{unfixable}" + ("|ignore-noqa" if selection.ignore_noqa else "")


class Cache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._initialised = False

    def _entry(self, data: bytes, path: str, selection: Selection) -> Path:
        key = hashlib.sha256()
        for part in (selection_key(selection).encode(), path.encode(), data):
            key.update(hashlib.sha256(part).digest())
        digest = key.hexdigest()
        return self.directory / __version__ / digest[:2] / f"{digest}.json"

    def get(self, data: bytes, path: str, selection: Selection, project: ProjectIndex | None = None) -> list[Finding] | None:
        """The findings recorded for this content, if the other modules they depend on are unchanged."""
        try:
            with open(self._entry(data, path, selection), encoding="utf-8") as handle:
                entry = json.load(handle)
            for module, digest in entry["dependencies"].items():
                if (project.digest(module) if project else None) != digest:
                    return None
            return [_finding_from_json(item) for item in entry["findings"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # a missing, unreadable or stale entry is a miss

    def put(self, data: bytes, path: str, selection: Selection, findings: list[Finding], dependencies: dict[str, str | None] | None = None) -> None:
        """Record a file's findings, with the modules of the project its lint consulted (module name ->
        digest of its file, None when there was no such module): they are part of what the findings
        depend on."""
        entry = self._entry(data, path, selection)
        try:
            self._initialise()
            entry.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump({"findings": [_finding_to_json(f) for f in findings], "dependencies": dependencies or {}}, handle)
            os.replace(temporary, entry)
        except OSError:
            pass  # a read-only checkout still lints; it only does not remember

    def _initialise(self) -> None:
        if self._initialised:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "*\n")):
            if not (self.directory / name).exists():
                (self.directory / name).write_text(text, encoding="utf-8")
        self._initialised = True


def clean(directory: Path) -> bool:
    """Remove a cache directory; False if there was none."""
    if not (directory / "CACHEDIR.TAG").exists():
        return False
    shutil.rmtree(directory, ignore_errors=True)
    return True


def _position(value: Position) -> list[int]:
    return [value.line, value.column]


def _finding_to_json(finding: Finding) -> dict:
    fix = finding.fix
    return {
        "path": finding.path,
        "start": _position(finding.start),
        "end": _position(finding.end),
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "severity": finding.severity.value,
        "noqa_line": finding.noqa_line,
        "cell": finding.cell,
        "related": [[r.path, _position(r.start), _position(r.end), r.message, r.cell] for r in finding.related],
        "fix": None
        if fix is None
        else {
            "message": fix.message,
            "applicability": fix.applicability.value,
            "edits": [[_position(e.start), _position(e.end), e.content] for e in fix.edits],
        },
    }


def _finding_from_json(item: dict) -> Finding:
    fix = item["fix"]
    return Finding(
        path=item["path"],
        start=Position(*item["start"]),
        end=Position(*item["end"]),
        code=item["code"],
        name=item["name"],
        message=item["message"],
        severity=Severity(item["severity"]),
        noqa_line=item["noqa_line"],
        cell=item["cell"],
        related=tuple(
            Related(path, Position(*start), Position(*end), message, cell) for path, start, end, message, cell in item["related"]
        ),
        fix=None
        if fix is None
        else Fix(
            fix["message"],
            tuple(Edit(Position(*start), Position(*end), content) for start, end, content in fix["edits"]),
            Applicability(fix["applicability"]),
        ),
    )
