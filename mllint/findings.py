"""The values a lint run produces: findings, fixes and the edits they are made of."""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected info, warning or error)") from None


class Applicability(enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Position:
    """A place in a file: 1-based line, 1-based column counted in characters."""

    line: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between `start` and `end` (exclusive) with `content`."""

    start: Position
    end: Position
    content: str


@dataclass(frozen=True)
class Fix:
    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability
    # The file the edits change, when it is not the finding's: the activation of a model or helper defined
    # in another file of the project (the path as findings show paths). Applied by `mllint.cross_file`.
    path: str | None = None

    @property
    def span(self) -> tuple[Position, Position]:
        return min(e.start for e in self.edits), max(e.end for e in self.edits)


@dataclass(frozen=True)
class Related:
    """Another place a finding depends on: the call site whose arguments make it (SARIF's related locations)."""

    path: str  # as findings show paths
    start: Position
    end: Position
    message: str
    cell: int | None = None  # in a notebook: the cell, `start` and `end` relative to it


@dataclass(frozen=True)
class Finding:
    path: str
    start: Position
    end: Position
    code: str
    name: str
    message: str
    severity: Severity
    fix: Fix | None = None
    # Where a `# noqa` for this finding must sit (the first line of the reported node).
    noqa_line: int | None = None
    # A notebook's finding: the cell (1-based, counting every cell), its positions relative to the cell.
    cell: int | None = None
    # An internal error's traceback (printed by `--verbose`; never cached).
    traceback: str | None = None
    # A finding made through a parameter: the call sites that pass what makes it, innermost first.
    related: tuple[Related, ...] = ()

    @property
    def location(self) -> str:
        """What text formats print before `:line:column`: the path, and the cell of a notebook's finding."""
        return self.path if self.cell is None else f"{self.path}:cell {self.cell}"

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.start, self.code, self.message)
