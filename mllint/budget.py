"""The per-file analysis budget: how long the rules may spend on one file (`analysis-budget`, seconds of
CPU time of the thread linting it: a loaded machine, where a lint waits for the CPU, cuts nothing short).

A lint runs under `limit(seconds)`; the engine between nodes, and the analyses at the steps they repeat
(`FileContext.analysis`, a gradient flow's expression), call `check()`, which raises `CutShort` once the
time is spent. The engine then reports what the rules found so far and that the file was cut short, and
the run goes on with the next file. `CutShort` is no `Exception`: no rule's or analysis's handler
swallows it.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_SECONDS = 30.0
_local = threading.local()  # the language server lints in several threads


class CutShort(BaseException):
    """The file's analysis budget is spent."""


@contextmanager
def limit(seconds: float) -> Iterator[None]:
    """Run the block under a budget of `seconds` (0: none); an enclosing, earlier deadline still holds."""
    outer = getattr(_local, "deadline", None)
    deadlines = [d for d in (outer, time.thread_time() + seconds if seconds > 0 else None) if d is not None]
    _local.deadline = min(deadlines, default=None)
    try:
        yield
    finally:
        _local.deadline = outer


CLOCK_EVERY = 64  # checks between two reads of the clock (reading it at every check was 5% of a run)
_checks = 0  # checks so far, in all threads: it only spaces the clock's reads


def check() -> None:
    global _checks
    _checks += 1
    if _checks % CLOCK_EVERY:
        return
    deadline = getattr(_local, "deadline", None)
    if deadline is not None and time.thread_time() > deadline:
        raise CutShort
