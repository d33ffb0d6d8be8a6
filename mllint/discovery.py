"""Which files to lint: `*.py`, `*.pyi` and `*.ipynb` below the named directories, minus excluded and git-ignored
ones. Explicitly named files are linted unless `force-exclude` is set."""
from __future__ import annotations

import os
from pathlib import Path

from mllint.config import Resolver
from mllint.gitignore import GitIgnore, ignored, inherited_ignores, repository_root

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")
READ_DATA_SUFFIXES = (".yaml", ".yml")  # configurations a lint may read for the code that loads them


def discover(paths: list[str], resolver: Resolver) -> list[str]:
    """The files to lint, in a stable order; paths that do not exist are kept so they get reported."""
    found: list[str] = []
    for given in paths:
        if _force_excluded(given, resolver):
            continue
        if os.path.isdir(given):  # a symbolic link to a directory named here is followed, as git and Ruff do
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
    absolute = Path(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))
    root = repository_root(absolute.parent)
    if root is None:  # no repository: only the .gitignore next to the path
        local = GitIgnore.load(absolute.parent)
        return local is not None and ignored(absolute, os.path.isdir(absolute), [local])
    # Ignored itself, or inside an ignored directory (below the repository's root).
    candidates = [absolute, *(folder for folder in absolute.parents if root in folder.parents)]
    return any(
        ignored(candidate, candidate != absolute or os.path.isdir(absolute), inherited_ignores(candidate))
        for candidate in candidates
    )


def _walk(top: Path, resolver: Resolver) -> list[str]:
    # Ignore files are matched where the directory really is: a symbolic link named on the command line
    # (`link -> ../repo/src`) is under the rules of the repository it points into.
    absolute_top = Path(os.path.realpath(top))
    inherited = inherited_ignores(absolute_top)
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
            is_dir = _is(entry.is_dir, follow_symlinks=False)
            if settings.is_excluded(entry.path) or (
                settings.respect_gitignore and ignored(absolute_path, is_dir, ignores)
            ):
                continue
            if is_dir:
                subdirectories.append((path, absolute_path, ignores))
            elif entry.name.endswith(SOURCE_SUFFIXES) and _is(entry.is_file, unknown=entry.is_symlink()):
                found.append(os.path.normpath(entry.path))  # a link that loops is reported, not followed
        stack += reversed(subdirectories)
    return sorted(found, key=_path_sort_key)


def _is(test, unknown: bool = False, **options) -> bool:
    """An entry's type test, `unknown` when it cannot tell (a symbolic link that loops)."""
    try:
        return test(**options)
    except OSError:
        return unknown


def _path_sort_key(path: str) -> tuple[str, ...]:
    return tuple(Path(path).parts)
