"""A run's progress on a terminal: after a second, how many files are done, on one line of standard error,
erased when the run ends."""
from __future__ import annotations

import time
from typing import TextIO

DELAY = 1.0  # seconds before the first line: a short run shows nothing
INTERVAL = 0.1  # seconds between redraws


class Progress:
    def __init__(self, total: int, stream: TextIO, shown: bool) -> None:
        self.total, self.stream, self.shown = total, stream, shown
        self.files = 0
        self.start = time.monotonic()
        self._drawn = 0.0  # when the line was last drawn (0: never)

    def done(self, result: object) -> None:
        """One file's result has come."""
        self.files += 1
        now = time.monotonic()
        if self.shown and now - self.start >= DELAY and now - self._drawn >= INTERVAL:
            self.stream.write(f"\rmllint: {self.files}/{self.total} files checked")
            self.stream.flush()
            self._drawn = now

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
