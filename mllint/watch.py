"""`--watch`: lint, then lint again whenever a source or configuration file changes, appears or goes. It
polls file stamps (the standard library has no portable change notification), twice a second."""
from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Callable
from pathlib import Path

import click

from mllint.config import CONFIG_FILES, DEFAULT_EXCLUDE
from mllint.discovery import READ_DATA_SUFFIXES, SOURCE_SUFFIXES

POLL_SECONDS = 0.5
WATCHED_NAMES = (*CONFIG_FILES, ".gitignore")


def watch_paths(paths: list[str], run: Callable[[], None], max_runs: int | None = None) -> int:
    """Call `run` (a whole lint run, which ends with sys.exit) now and after each change below `paths`;
    stop on Ctrl-C, or after `max_runs` runs (for tests). Returns the exit status of the watch."""
    runs = 0
    try:
        while True:
            before = snapshot(paths)
            _run_once(run)
            runs += 1
            if max_runs is not None and runs >= max_runs:
                return 0
            click.echo("Watching for file changes (Ctrl-C to stop).", err=True)
            while snapshot(paths) == before:
                time.sleep(POLL_SECONDS)
            click.clear()
            click.echo("File change detected, linting again.", err=True)
    except KeyboardInterrupt:
        return 0


def _run_once(run: Callable[[], None]) -> None:
    """A run's exit status and usage errors end that run, not the watch."""
    try:
        run()
    except SystemExit:
        pass
    except click.ClickException as error:
        error.show()


def snapshot(paths: list[str]) -> dict[str, tuple[int, int]]:
    """The modification time and size of every file that can change a run's findings."""
    stamps = {}
    for path in watched_files(paths):
        try:
            status = os.stat(path)
        except OSError:
            continue
        stamps[path] = (status.st_mtime_ns, status.st_size)
    return stamps


def watched_files(paths: list[str]) -> list[str]:
    """The source, configuration and YAML files below `paths` (not in the default excludes, so not in `.venv`),
    and the configuration files in the directories above them."""
    found = []
    for given in paths:
        absolute = Path(os.path.abspath(given))
        found += [str(folder / name) for folder in absolute.parents for name in WATCHED_NAMES]
        if not absolute.is_dir():
            found.append(str(absolute))
            continue
        for directory, subdirectories, names in os.walk(absolute):
            subdirectories[:] = [d for d in subdirectories if not _excluded_by_default(d)]
            found += [os.path.join(directory, n) for n in names if n.endswith(SOURCE_SUFFIXES + READ_DATA_SUFFIXES) or n in WATCHED_NAMES]
    return found


def _excluded_by_default(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in DEFAULT_EXCLUDE)
