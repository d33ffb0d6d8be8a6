"""Which files to lint: `*.py`, `*.pyi` and `*.ipynb` below the named directories, minus excluded and git-ignored
ones. Explicitly named files are linted unless `force-exclude` is set."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mllint.config import Resolver

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class IgnorePattern:
    regex: re.Pattern
    negated: bool
    directory_only: bool


class GitIgnore:
    """The patterns of one `.gitignore` file, matched against paths relative to its directory."""

    def __init__(self, directory: Path, lines: list[str]) -> None:
        self.directory = directory
        self.patterns = [p for p in map(_compile, lines) if p is not None]

    @classmethod
    def load(cls, directory: Path) -> "GitIgnore | None":
        try:
            text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        return cls(directory, text.splitlines())

    def decision(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a `!` pattern, None: no pattern speaks of it."""
        relative = path.relative_to(self.directory).as_posix()
        result = None
        for pattern in self.patterns:
            if pattern.directory_only and not is_dir:
                continue
            if pattern.regex.fullmatch(relative):
                result = not pattern.negated
        return result


def _compile(line: str) -> IgnorePattern | None:
    line = line.rstrip("\n")
    if not line.strip() or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    line = re.sub(r"(?<!\\)\s+$", "", line)
    directory_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    regex = _glob_to_regex(line)
    if not anchored:
        regex = f"(?:.*/)?{regex}"
    return IgnorePattern(re.compile(regex, re.DOTALL), negated, directory_only)


def _glob_to_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 1 :]:
            end = glob.index("]", i + 1)
            body = glob[i + 1 : end].replace("\\", "\\\\")
            out.append(f"[^{body[1:]}]" if body.startswith("!") else f"[{body}]")
            i = end + 1
        elif glob[i] == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def _repository_root(directory: Path) -> Path | None:
    for folder in (directory, *directory.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _inherited_ignores(directory: Path) -> list[GitIgnore]:
    """The `.gitignore` files above `directory`, up to its repository's root."""
    root = _repository_root(directory)
    if root is None:
        return []
    folders = [directory.parent, *directory.parent.parents] if directory != root else []
    chain = []
    for folder in folders:
        if folder == root or root in folder.parents:
            chain.append(folder)
    return [g for g in (GitIgnore.load(f) for f in reversed(chain)) if g is not None]


def _ignored(path: Path, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    result = False
    for ignore in ignores:
        decision = ignore.decision(path, is_dir)
        if decision is not None:
            result = decision
    return result


def discover(paths: list[str], resolver: Resolver) -> list[str]:
    """The files to lint, in a stable order; paths that do not exist are kept so they get reported."""
    found: list[str] = []
    for given in paths:
        if _force_excluded(given, resolver):
            continue
        if os.path.isdir(given) and not os.path.islink(given.rstrip("/")):
            found += _walk(Path(given), resolver)
        else:
            found.append(given)
    return list(dict.fromkeys(found))


def _force_excluded(path: str, resolver: Resolver) -> bool:
    settings = resolver.settings_for(path)
    if not settings.force_exclude:
        return False
    if settings.is_excluded_with_parents(path):
        return True
    if not settings.respect_gitignore:
        return False
    absolute = Path(os.path.abspath(path))
    root = _repository_root(absolute.parent)
    if root is None:  # no repository: only the .gitignore next to the path
        local = GitIgnore.load(absolute.parent)
        return local is not None and _ignored(absolute, os.path.isdir(absolute), [local])
    # Ignored itself, or inside an ignored directory (below the repository's root).
    candidates = [absolute, *(folder for folder in absolute.parents if root in folder.parents)]
    return any(
        _ignored(candidate, candidate != absolute or os.path.isdir(absolute), _inherited_ignores(candidate))
        for candidate in candidates
    )


def _walk(top: Path, resolver: Resolver) -> list[str]:
    absolute_top = Path(os.path.abspath(top))
    inherited = _inherited_ignores(absolute_top)
    found: list[str] = []
    stack = [(top, absolute_top, inherited)]
    while stack:
        directory, absolute, ignores = stack.pop()
        settings = resolver.settings_for(str(directory))
        local = GitIgnore.load(absolute) if settings.respect_gitignore else None
        ignores = ignores + [local] if local else ignores
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            found.append(str(directory))  # unreadable directory: reported as an unreadable path
            continue
        subdirectories = []
        for entry in entries:
            path, absolute_path = Path(entry.path), absolute / entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if settings.is_excluded(entry.path) or (
                settings.respect_gitignore and _ignored(absolute_path, is_dir, ignores)
            ):
                continue
            if is_dir:
                subdirectories.append((path, absolute_path, ignores))
            elif entry.name.endswith(SOURCE_SUFFIXES) and entry.is_file():
                found.append(os.path.normpath(entry.path))
        stack += reversed(subdirectories)
    return sorted(found, key=_path_sort_key)


def _path_sort_key(path: str) -> tuple[str, ...]:
    return tuple(Path(path).parts)
