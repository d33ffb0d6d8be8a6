"""Source text: reading files safely, and converting between `ast` positions and character positions."""
from __future__ import annotations

import ast
import codecs
import io
import os
import re
import stat
import tokenize
import warnings
from dataclasses import dataclass

from mllint.findings import Position

# Parsing takes about 400 times a file's size in memory: past this, a file is reported, not parsed. The
# largest real source files (generated tables, test catalogues) are near 1.5 MB.
MAX_FILE_BYTES = 5 * 1024 * 1024
# A notebook carries its outputs (images, tables): the limit above is on its code, this one on the file.
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024
# Names that became keywords in Python 3.7, and that older training code used (`.cuda(async=True)`).
FORMER_NAMES = frozenset({"async", "await"})
# The line breaks Python's tokenizer knows; str.splitlines() knows more (form feed, U+2028, ...).
LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Longer modules are parsed a piece of about this many lines at a time (see `_parse_in_pieces`).
PIECE_LINES = 4000
PIECE_START = re.compile(r"(?!(?:else|elif|except|finally)\b)[A-Za-z]")


def parse_python(text: str, path: str = "<unknown>") -> ast.Module:
    """`ast.parse`, without printing the SyntaxWarnings of code that is not ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if text.count("\n") > 2 * PIECE_LINES and "barry_as_FLUFL" not in text:
            tree = _parse_in_pieces(text, path)
            if tree is not None:
                return tree
        return ast.parse(text, filename=path)


def _parse_in_pieces(text: str, path: str) -> ast.Module | None:
    """The tree of a long module, parsed a piece at a time: the parser's own memory, as large again as
    the tree, is then held for one piece only. A piece starts on a line that starts with a letter (not
    `else`, `except`...), and is parsed after as many empty lines as precede it, so that its positions
    are the module's. A piece that parses alone ends at a top-level statement's end (a cut inside a
    string, brackets or a block leaves it incomplete); a piece that does not is parsed again with the
    next one. None when that fails too: the caller parses the whole text."""
    starts = [0] + [match.end() for match in LINE_BREAK.finditer(text)]
    cuts, last = [(0, 0)], 0
    for line, offset in enumerate(starts):
        if line - last >= PIECE_LINES and PIECE_START.match(text, offset):
            cuts.append((line, offset))
            last = line
    cuts.append((len(starts), len(text)))
    body: list[ast.stmt] = []
    first = 0
    for last in range(1, len(cuts)):
        (line, start), end = cuts[first], cuts[last][1]
        try:
            body += ast.parse("\n" * line + text[start:end], filename=path).body
            first = last
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            if last - first == 2:
                return None
    return ast.Module(body=body, type_ignores=[]) if first == len(cuts) - 1 else None


def parse_former_names(text: str, path: str = "<unknown>") -> tuple[ast.Module, tuple[str, ...]] | None:
    """A tolerant parse for code older than Python 3.7, where `async` and `await` were names
    (`.cuda(async=True)`, `def load(self, async=False)`, `args.async`): the tree of the text with each such
    name replaced by an identifier of the same length (`_sync`), so that every position stays where it
    is, and the names replaced; None when there is none or the text still does not parse."""
    lines = io.StringIO(text).readlines()  # the rows the tokenizer counts
    try:
        tokens = list(tokenize.generate_tokens(iter(lines).__next__))
    except (tokenize.TokenError, SyntaxError, StopIteration):
        return None
    replaced: list[str] = []
    significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.COMMENT)]
    for before, token, after in zip(significant, significant[1:], significant[2:]):
        if token.type != tokenize.NAME or token.string not in FORMER_NAMES:
            continue
        argument = before.string in ("(", ",") and after.string == "="
        if not (argument or before.string == "."):
            continue
        row, column = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:column] + "_" + token.string[1:] + line[column + len(token.string) :]
        replaced.append(token.string)
    if not replaced:
        return None
    try:
        return parse_python("".join(lines), path), tuple(dict.fromkeys(replaced))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def syntax_tree_dump(text: str) -> str | None:
    """The syntax tree as text (None: it does not parse): equal dumps mean the same program, whatever
    the comments say."""
    try:
        return ast.dump(parse_python(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def one_line(text: str, limit: int, keep_end: bool = False) -> str:
    """Source text for a message: on one line, at most `limit` characters, cut with "..." at the end (or,
    with `keep_end`, at the start, where the end says more: `...).item()`)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return "..." + text[-(limit - 3) :] if keep_end else text[: limit - 3] + "..."


class SourceError(Exception):
    """A file that cannot be turned into text: its message and, where known, the position."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.position = Position(line, column)


@dataclass(frozen=True)
class SourceFile:
    text: str
    encoding: str  # what to encode the text with to get the same kind of file back (BOM included)
    data: bytes


def is_notebook(path: str) -> bool:
    return path.lower().endswith(".ipynb")


def decode(data: bytes, path: str = "") -> tuple[str, str]:
    """Decode Python source as the interpreter does (BOM, encoding cookie, else UTF-8), a notebook as
    UTF-8 (BOM allowed): text and encoding."""
    limit = MAX_NOTEBOOK_BYTES if is_notebook(path) else MAX_FILE_BYTES
    if len(data) > limit:
        raise too_large(len(data), limit)
    if is_notebook(path):
        encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
        return _decode(data, encoding), encoding
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise SourceError("source contains a NUL byte", line)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        _decode(data, "utf-8")  # raises where the first lines are not UTF-8
        raise SourceError(f"cannot determine encoding: {error}") from None
    return _decode(data, encoding), encoding


def _decode(data: bytes, encoding: str) -> str:
    try:
        return data.decode(encoding)
    except LookupError:
        raise SourceError(f"unknown encoding: {encoding}") from None
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        message = f"cannot decode as {encoding}: {error.reason} (byte 0x{data[error.start]:02x})"
        raise SourceError(message, line, column) from None


def read_source(path: str) -> SourceFile:
    try:
        data = read_regular(path, MAX_NOTEBOOK_BYTES if is_notebook(path) else MAX_FILE_BYTES)
    except OSError as error:
        what = "directory" if os.path.isdir(path) and not isinstance(error, IsADirectoryError) else "file"
        raise SourceError(f"cannot read {what}: {error.strerror or error}") from None
    return SourceFile(*decode(data, path), data)


def read_regular(path: str, limit: int) -> bytes:
    """The content of a regular file of at most `limit` bytes. Anything else is never read (SourceError):
    a FIFO would block, `/dev/zero` never ends. The file is opened without blocking (a FIFO's open waits
    for a writer) and read up to the limit, should it grow meanwhile."""
    with open(path, "rb", opener=_without_blocking) as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise SourceError(f"not a regular file ({_file_kind(status.st_mode)}): not read")
        data = handle.read(limit + 1)
    if max(status.st_size, len(data)) > limit:
        raise too_large(max(status.st_size, len(data)), limit)
    return data


def too_large(size: int, limit: int) -> SourceError:
    return SourceError(f"file is {size / 1024 / 1024:.1f} MB, larger than the {limit >> 20} MB mllint reads; not linted")


def _without_blocking(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def _file_kind(mode: int) -> str:
    kinds = {stat.S_ISDIR: "a directory", stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket"}
    return next((kind for test, kind in kinds.items() if test(mode)), "a device")


@dataclass
class SourceText:
    text: str

    def __post_init__(self) -> None:
        self.line_starts = [0] + [m.end() for m in LINE_BREAK.finditer(self.text)]
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        """The lines without their line breaks."""
        if self._lines is None:
            self._lines = LINE_BREAK.split(self.text)
        return self._lines

    def line(self, number: int) -> str:
        lines = self.lines
        return lines[number - 1] if 0 < number <= len(lines) else ""

    def position(self, line: int, utf8_column: int) -> Position:
        """The character position of an `ast` (line, UTF-8 byte column) pair."""
        text = self.line(line)
        if text.isascii():
            return Position(line, utf8_column + 1)
        return Position(line, len(text.encode("utf-8")[:utf8_column].decode("utf-8", "ignore")) + 1)

    def offset(self, position: Position) -> int:
        """The index into `text` of a character position."""
        index = min(position.line, len(self.line_starts)) - 1
        return min(self.line_starts[index] + position.column - 1, len(self.text))

    def slice(self, start: Position, end: Position) -> str:
        return self.text[self.offset(start) : self.offset(end)]
