"""The result cache: findings per file, keyed by the file's content, mllint's own code and the settings,
and valid while the other modules of the project that the lint consulted keep their content.

Not by modification time: a fresh CI checkout resets every mtime. Entries live under `.mllint_cache/`
(with a CACHEDIR.TAG and a .gitignore), one small JSON file each, written atomically.
"""
from __future__ import annotations

import hashlib
from contextlib import nullcontext
from functools import cache
import json
import os
import re
from pathlib import Path

import mllint
import mllint.rules

from mllint import __version__
from mllint.analysis.program.project import ProjectIndex
from mllint.atomic import replace_file
from mllint.engine import Selection
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Related, Severity

CACHE_DIRECTORY = ".mllint_cache"
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This directory is mllint's cache.\n"


@cache
def linter_fingerprint() -> str:
    """mllint's version and its own source files: an edited checkout (an editable install) or a
    reinstalled rule does not read findings its old code made."""
    folders = [os.path.dirname(package.__file__) for package in (mllint, mllint.rules)]
    return sources_fingerprint(__version__, folders)


def sources_fingerprint(version: str, folders: list[str]) -> str:
    """A digest of the version and the path, size and modification time of every `.py` file under
    `folders` (a stat per file: about a millisecond for mllint's)."""
    digest = hashlib.sha256(version.encode())
    for root in folders:
        for folder, subfolders, files in os.walk(root):
            subfolders.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    stat = os.stat(os.path.join(folder, name))
                    digest.update(f"{folder}/{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


def selection_key(selection: Selection) -> str:
    codes = ",".join(rule.code for rule in selection.rules)
    severities = ",".join(f"{code}={level.label}" for code, level in sorted(selection.severities.items()))
    unfixable = ",".join(sorted(selection.unfixable))
    return f"{linter_fingerprint()}|{codes}|{severities}|{unfixable}" + ("|ignore-noqa" if selection.ignore_noqa else "")


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
            with project.running(path) if project is not None else nullcontext():  # found as the lint found them
                for module, digest in entry["dependencies"].items():
                    if (project.digest(module) if project else None) != digest:
                        return None
            return [_finding_from_json(item) for item in entry["findings"]]
        except Exception:  # a missing, unreadable, corrupt (nested past the recursion limit) or stale entry: a miss
            return None

    def put(self, data: bytes, path: str, selection: Selection, findings: list[Finding], dependencies: dict[str, str | None] | None = None) -> None:
        """Record a file's findings, with the modules of the project its lint consulted (module name ->
        digest of its file, None when there was no such module): they are part of what the findings
        depend on."""
        entry = self._entry(data, path, selection)
        try:
            self._initialise()
            entry.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps({"findings": [_finding_to_json(f) for f in findings], "dependencies": dependencies or {}})
            replace_file(str(entry), text.encode("utf-8"))
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


ENTRY_FOLDER = re.compile(r"[0-9a-f]{2}")
ENTRY_FILE = re.compile(r"[0-9a-f]{64}\.json|(?:\.mllint-|tmp).*\.tmp")  # entries, and writes cut short


def clean(directory: Path) -> bool:
    """Remove a cache directory; False if there was none. Only what mllint's layout makes is removed: its
    CACHEDIR.TAG (the one mllint writes), .gitignore, and folders of entries (`VERSION/ab/<digest>.json`);
    the directory itself only once that leaves it empty. Another program's cache is not mllint's."""
    try:
        if (directory / "CACHEDIR.TAG").read_text(encoding="utf-8") != CACHEDIR_TAG:
            return False
        children = list(directory.iterdir())
    except (OSError, UnicodeDecodeError):
        return False
    import shutil  # here: only cleaning needs it

    for child in children:
        if child.is_dir() and not child.is_symlink() and _holds_entries_only(child):
            shutil.rmtree(child, ignore_errors=True)
    if {child.name for child in directory.iterdir()} <= {"CACHEDIR.TAG", ".gitignore"}:
        shutil.rmtree(directory, ignore_errors=True)
    return True


def _holds_entries_only(version: Path) -> bool:
    """Is `version` a folder of mllint's entries, and nothing else?"""
    for folder in version.iterdir():
        if not (ENTRY_FOLDER.fullmatch(folder.name) and folder.is_dir() and not folder.is_symlink()):
            return False
        if not all(ENTRY_FILE.fullmatch(entry.name) and entry.is_file() for entry in folder.iterdir()):
            return False
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
            "path": fix.path,
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
            fix.get("path"),
        ),
    )
