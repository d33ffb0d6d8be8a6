"""What git ignores: `.gitignore` files, the repository's `.git/info/exclude` and the user's excludes file
(`core.excludesFile`, by default `~/.config/git/ignore`), in git's order of precedence (Ruff's
`respect-gitignore` reads the same files)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mllint.source import SourceError, read_regular

MAX_BYTES = 1024 * 1024  # of an ignore or git configuration file


def _text(path: Path) -> str:
    """A regular file's text (OSError: anything else, a FIFO that would block, or too large a file)."""
    try:
        return read_regular(str(path), MAX_BYTES).decode("utf-8", "replace")
    except SourceError as error:
        raise OSError(error.message) from None


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
    def load(cls, directory: Path, file: Path | None = None) -> "GitIgnore | None":
        """The patterns of `file` (default: the directory's `.gitignore`), relative to `directory`."""
        try:
            text = _text(file or directory / ".gitignore")
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


def repository_root(directory: Path) -> Path | None:
    for folder in (directory, *directory.parents):
        if (folder / ".git").exists():
            return folder
    return None


def inherited_ignores(directory: Path) -> list[GitIgnore]:
    """What applies to `directory`'s entries but its own `.gitignore`, weakest first: the repository's
    excludes, then the `.gitignore` files above it, up to its repository's root."""
    root = repository_root(directory)
    if root is None:
        return []
    folders = [directory.parent, *directory.parent.parents] if directory != root else []
    chain = []
    for folder in folders:
        if folder == root or root in folder.parents:
            chain.append(folder)
    return repository_excludes(root) + [g for g in (GitIgnore.load(f) for f in reversed(chain)) if g is not None]


def repository_excludes(root: Path) -> list[GitIgnore]:
    """The user's excludes file, then the repository's `info/exclude`: patterns relative to the root."""
    git_directory = _git_directory(root)
    files = [_excludes_file(git_directory), git_directory / "info" / "exclude"]
    return [g for g in (GitIgnore.load(root, file) for file in files) if g is not None]


def _git_directory(root: Path) -> Path:
    """The repository's git directory: `.git`, or for a worktree or submodule (`.git` is then a file
    saying `gitdir: PATH`) the common directory it shares with the main worktree."""
    dot_git = root / ".git"
    try:
        text = _text(dot_git) if dot_git.is_file() else ""
    except OSError:
        return dot_git
    if not text.startswith("gitdir:"):
        return dot_git
    directory = root / text[len("gitdir:"):].strip()
    try:
        return directory / _text(directory / "commondir").strip()
    except OSError:
        return directory


def _excludes_file(git_directory: Path) -> Path:
    """`core.excludesFile` as git reads it: the user's configuration files, then the repository's (the
    last one saying wins); by default `$XDG_CONFIG_HOME/git/ignore`."""
    home = Path(os.path.expanduser("~"))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "git"
    global_config = os.environ.get("GIT_CONFIG_GLOBAL")
    user_configs = [Path(global_config)] if global_config else [xdg / "config", home / ".gitconfig"]
    value = None
    for config in (*user_configs, git_directory / "config"):
        value = _core_excludes_file(config) or value
    return Path(os.path.expanduser(value)) if value else xdg / "ignore"


def _core_excludes_file(config: Path) -> str | None:
    """The value of `excludesFile` in the `[core]` section of a git configuration file, if set."""
    try:
        lines = _text(config).splitlines()
    except OSError:
        return None
    section, value = "", None
    for line in map(str.strip, lines):
        if line.startswith("["):
            section = line[1:].split("]")[0].strip().lower()
            continue
        key, equals, rest = line.partition("=")
        if section == "core" and equals and key.strip().lower() == "excludesfile":
            rest = rest.strip()
            value = rest[1:].split('"')[0] if rest.startswith('"') else re.split(r"\s[#;]", rest)[0].strip()
    return value


def ignored(path: Path, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    result = False
    for ignore in ignores:
        decision = ignore.decision(path, is_dir)
        if decision is not None:
            result = decision
    return result
