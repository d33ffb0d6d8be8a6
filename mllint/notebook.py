"""Jupyter notebooks: their code cells as one Python program, findings mapped back to cells, and fixed code
written back into the cells' `source` without touching anything else of the file.

The program is the code cells in order, separated by a boundary comment line. IPython syntax (`%magic`,
`!shell`, `obj?`, magics without their `%` such as `cd ..` or `pip install x`, and their `\\` continuation
lines) becomes a placeholder line that is valid Python and finds nothing; the other lines keep their text
and columns. Cells whose cell magic does not run Python (`%%bash`, `%%writefile`, ...) are left out. Cells
are numbered as Ruff and editors number them: every cell, markdown included, from 1.
"""
from __future__ import annotations

import bisect
import dataclasses
import io
import json
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from mllint.findings import Edit, Finding, Position, Related
from mllint.source import LINE_BREAK, MAX_FILE_BYTES, SourceError, SourceText

BOUNDARY = "# [mllint: cell boundary]"
PLACEHOLDER = "# [mllint: IPython syntax]"
# Cell magics whose body is Python run in the kernel: such cells are linted, the others are not.
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "python", "python3", "debug", "memit"}
# `?obj`, `obj?`, `%magic?`, `obj??`: IPython's help syntax, a whole line.
HELP = re.compile(r"\?{1,2}[\w.*%]+|%{0,2}[\w.*]+\?{1,2}")
# `files = !ls`, `result = %timeit -o f()`: a magic's output assigned.
ASSIGNED_MAGIC = re.compile(r"[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*[%!]")
# Line magics IPython runs without their `%` (automagic) when the line is no Python: `cd ..`, `pip install x`.
AUTOMAGICS = frozenset(
    "cd ls ll pwd pip conda mamba env who whos run load_ext reload_ext matplotlib timeit time cat mkdir rmdir rm "
    "cp mv clear history reset load pdb debug autoreload alias bookmark pushd popd dirs dhist sx system store "
    "pylab config xmode lsmagic less man tensorboard".split()
)
PLACEHOLDER_LINE = re.compile(rf"[ \t]*(?:pass  )?{re.escape(PLACEHOLDER)}")
# A message's reference to another line of the program (`softmax output (line 9)`, `the loop on line 9`);
# another file's is `path:9`.
LINE_REFERENCE = re.compile(r"\bline ([0-9]+)\b")


def _integer(digits: str) -> int | float:
    """A JSON integer; one too long for Python's int conversion (4,300 digits) as a float (inf): no
    number in a notebook matters to its code."""
    return int(digits) if len(digits) < 4000 else float(digits)


_DECODER = json.JSONDecoder(parse_int=_integer)
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class CodeCell:
    number: int  # 1-based, counting every cell
    index: int  # in the notebook's `cells` list
    text: str  # the cell's source
    python: str  # what it contributes to the program: one line per line of `text`, then a line break
    magics: tuple[str, ...]  # the lines the placeholders stand for, in order


@dataclass(frozen=True)
class Notebook:
    json_text: str
    cells: tuple[CodeCell, ...]  # the linted code cells

    @property
    def python(self) -> str:
        return "".join(cell.python + BOUNDARY + "\n" for cell in self.cells[:-1]) + (
            self.cells[-1].python if self.cells else ""
        )

    def cell_texts(self, python: str) -> list[str]:
        """The cells' new sources from a (fixed) program; SourceError when it can no longer be split."""
        chunks = re.split(rf"^{re.escape(BOUNDARY)}\n", python, flags=re.MULTILINE)
        if len(chunks) != max(len(self.cells), 1):
            raise SourceError("the fixed code no longer splits into the notebook's cells")
        return [_restore(cell, chunk) for cell, chunk in zip(self.cells, chunks)]

    def with_cell_texts(self, texts: list[str]) -> str:
        """The notebook's JSON text with these cell sources; nothing else of the file changes."""
        spans = _source_spans(self.json_text)
        escape = self.json_text.isascii()
        replacements = [
            (*spans[cell.index], _encode_source(self.json_text, *spans[cell.index], text, escape))
            for cell, text in zip(self.cells, texts)
            if text != cell.text
        ]
        result = self.json_text
        for start, end, value in sorted(replacements, reverse=True):
            result = result[:start] + value + result[end:]
        return result

    def cell_position(self, position: Position) -> tuple[int, Position]:
        """Where a position of the notebook's program is: (cell number, position in the cell)."""
        return self._layout.position(position)

    @cached_property
    def _layout(self) -> "_Layout":
        return _Layout(self, self.python)

    def to_cells(self, findings: list[Finding], python: str) -> list[Finding]:
        """Findings in `python` (this notebook's program, or a fixed version of it) reported per cell, with
        only the fixes that can be written back."""
        layout = _Layout(self, python)
        return sorted((layout.finding(layout.writable(f)) for f in findings), key=lambda f: f.sort_key)

    def fixable(self, findings: list[Finding], python: str) -> list[Finding]:
        """Findings in `python` with only the fixes that can be written back."""
        layout = _Layout(self, python)
        return [layout.writable(f) for f in findings]


class _Layout:
    """Where a program's lines come from: (cell number, line in the cell) per line, and the character
    ranges that no fix may touch (boundaries with the line break before them, placeholders)."""

    def __init__(self, notebook: Notebook, python: str) -> None:
        self.rows: list[tuple[int, int]] = []
        self.protected: list[tuple[int, int]] = []
        cells = iter(notebook.cells)
        cell, row, offset = next(cells, None), 0, 0
        for line, line_break in zip(LINE_BREAK.split(python), [*LINE_BREAK.findall(python), ""]):
            end = offset + len(line) + len(line_break)
            number = cell.number if cell else 1
            if line == BOUNDARY:
                self.rows.append((number, row + 1))
                self.protected.append((max(offset - 1, 0), end))
                cell, row = next(cells, cell), 0
            else:
                row += 1
                self.rows.append((number, row))
                if PLACEHOLDER_LINE.fullmatch(line):
                    self.protected.append((offset, end))
            offset = end
        self.source = SourceText(python)

    def writable(self, finding: Finding) -> Finding:
        if finding.fix is None or not any(self._touches_protected(edit) for edit in finding.fix.edits):
            return finding
        return dataclasses.replace(finding, fix=None)

    def _touches_protected(self, edit: Edit) -> bool:
        start, end = self.source.offset(edit.start), self.source.offset(edit.end)
        if start == end:
            return any(low < start < high for low, high in self.protected)
        return any(start < high and low < end for low, high in self.protected)

    def position(self, position: Position) -> tuple[int, Position]:
        cell, row = self.rows[min(position.line, len(self.rows)) - 1]
        return cell, Position(row, position.column)

    def finding(self, finding: Finding) -> Finding:
        cell, start = self.position(finding.start)
        end_cell, end = self.position(finding.end)
        if end_cell != cell:  # a range over cells (a syntax error's): its start
            end = start
        fix = finding.fix
        if fix is not None:
            edits = tuple(Edit(self.position(e.start)[1], self.position(e.end)[1], e.content) for e in fix.edits)
            fix = dataclasses.replace(fix, edits=edits, message=LINE_REFERENCE.sub(self._line_reference, fix.message))
        noqa_line = self.position(Position(finding.noqa_line, 1))[1].line if finding.noqa_line else None
        message = LINE_REFERENCE.sub(self._line_reference, finding.message)
        related = tuple(self._related(r, finding.path) for r in finding.related)
        return dataclasses.replace(
            finding, start=start, end=end, cell=cell, fix=fix, noqa_line=noqa_line, message=message, related=related
        )

    def _related(self, related: Related, path: str) -> Related:
        """A call site in the notebook's own program, placed in its cell."""
        if related.path != path or related.cell is not None:
            return related
        cell, start = self.position(related.start)
        end_cell, end = self.position(related.end)
        return dataclasses.replace(related, start=start, end=end if end_cell == cell else start, cell=cell)

    def _line_reference(self, match: re.Match) -> str:
        cell, position = self.position(Position(int(match.group(1)), 1))
        return f"cell {cell}, line {position.line}"


# Reading a notebook.


def load(json_text: str) -> Notebook:
    """The notebook's linted code cells; SourceError for what is not a Python notebook mllint can read."""
    try:
        data = _DECODER.decode(json_text)
    except json.JSONDecodeError as error:
        raise SourceError(f"malformed notebook JSON: {error.msg}", error.lineno, error.colno) from None
    except RecursionError:
        raise SourceError("malformed notebook JSON: too deeply nested") from None
    if not isinstance(data, dict):
        raise SourceError("not a Jupyter notebook: the JSON is not an object")
    version = data.get("nbformat")
    if "worksheets" in data or (isinstance(version, int) and version < 4):
        raise SourceError(
            f"notebook format {version} is not supported (only 4); "
            "convert it with `jupyter nbconvert --to notebook --nbformat 4`"
        )
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise SourceError("not a Jupyter notebook: no `cells` list")
    language = _language(data.get("metadata"))
    if language is not None:
        raise SourceError(f"the notebook's language is {language}, not Python; not linted")
    code_cells = tuple(filter(None, (_code_cell(cell, index) for index, cell in enumerate(cells))))
    notebook = Notebook(json_text, code_cells)
    if sum(len(cell.python) for cell in code_cells) > MAX_FILE_BYTES:
        raise SourceError(f"the notebook's code is larger than the {MAX_FILE_BYTES >> 20} MB mllint reads; not linted")
    return notebook


def _language(metadata: object) -> str | None:
    """The notebook's language when it is known and not Python."""
    if not isinstance(metadata, dict):
        return None
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        entry = metadata.get(key)
        value = entry.get(field) if isinstance(entry, dict) else None
        if isinstance(value, str) and value:
            return None if value.lower() in ("python", "python3", "ipython", "ipython3") else value
    return None


def _code_cell(cell: object, index: int) -> CodeCell | None:
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
        return None
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        text = "".join(source)
    elif isinstance(source, str):
        text = source
    else:
        raise SourceError(f"cell {index + 1}: `source` is neither a string nor a list of strings")
    vscode = cell.get("metadata", {}).get("vscode") if isinstance(cell.get("metadata"), dict) else None
    language = vscode.get("languageId") if isinstance(vscode, dict) else None
    if isinstance(language, str) and language != "python":
        return None  # a cell of another language in a polyglot notebook
    magic = re.match(r"\s*%%(\w*)", text)
    if magic and magic.group(1) not in PYTHON_CELL_MAGICS:
        return None  # `%%bash`, `%%writefile`, `%%html`...: not Python run in the kernel
    python, magics = _python_of(text)
    return CodeCell(index + 1, index, text, python, magics)


def _python_of(text: str) -> tuple[str, tuple[str, ...]]:
    """The cell's code with IPython syntax lines replaced by placeholders, ending with a line break; and
    the lines replaced."""
    code: list[str] = []  # the lines of the program, without their line breaks
    breaks = [*LINE_BREAK.findall(text), "\n"]  # a line break is added after the last line
    magics: list[str] = []
    checked = 0  # the code up to this line is known to end between statements
    continued = False
    for line in LINE_BREAK.split(text):
        stripped = line.strip()
        if continued or (_is_ipython(stripped) and not _inside_statement(code, checked)):
            indent = line[: len(line) - len(line.lstrip())]
            code.append(f"{indent}{PLACEHOLDER}" if continued else f"{indent}pass  {PLACEHOLDER}")
            magics.append(line)
            continued = stripped.endswith("\\")
            checked = len(code)
        else:
            code.append(line)
    if code[-1] == "" and len(breaks) > 1:
        code.pop()  # the text ends with a line break: no line after it
    return "".join(line + line_break for line, line_break in zip(code, breaks)), tuple(magics)


def _is_ipython(stripped: str) -> bool:
    return (
        stripped.startswith(("%", "!"))
        or bool(HELP.fullmatch(stripped) or ASSIGNED_MAGIC.match(stripped))
        or _is_automagic(stripped)
    )


def _is_automagic(stripped: str) -> bool:
    """`cd ..`, `pip install torch`: a line magic's name, then arguments that are no Python, on a line
    complete in itself (`env = make_env(` starts a statement)."""
    words = stripped.split(maxsplit=1)
    if len(words) < 2 or words[0] not in AUTOMAGICS or _inside_statement([stripped], 0):
        return False
    try:
        compile(stripped, "<cell line>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return True
    return False


def _inside_statement(lines: list[str], checked: int) -> bool:
    """Does the code end inside a bracket, a string or after a backslash? Only the lines after `checked`
    are read, unless they do not tokenize alone (a dedent below their first line)."""
    for start in dict.fromkeys((checked, 0)):
        try:
            for _ in tokenize.generate_tokens(io.StringIO("".join(line + "\n" for line in lines[start:])).readline):
                pass
            return False
        except tokenize.TokenError:
            return True
        except (SyntaxError, ValueError, RecursionError):
            continue
    return False


def _restore(cell: CodeCell, chunk: str) -> str:
    """A cell's source from its part of the program: the IPython lines back, the added line break gone."""
    lines = LINE_BREAK.split(chunk)
    placeholders = [i for i, line in enumerate(lines) if PLACEHOLDER_LINE.fullmatch(line)]
    if len(placeholders) != len(cell.magics):
        raise SourceError(f"cell {cell.number}: the fixed code no longer matches the cell's IPython lines")
    for index, magic in zip(placeholders, cell.magics):
        lines[index] = magic
    text = "".join(line + line_break for line, line_break in zip(lines, [*LINE_BREAK.findall(chunk), ""]))
    if not cell.text.endswith(("\n", "\r")) and text.endswith("\n"):
        text = text[:-1]
    return text


# The cells' `source` values in the JSON text.


def _skip(text: str, index: int) -> int:
    return _JSON_SPACE.match(text, index).end()


def _value_end(text: str, index: int) -> int:
    return _DECODER.raw_decode(text, index)[1]


def _walk(text: str, index: int, on_item: Callable[[str | None, int], int]) -> int:
    """Walk the object or array at `index`: `on_item(key or None, value start)` returns the value's end.
    Returns the end of the object or array."""
    index = _skip(text, index)
    closing = "}" if text[index] == "{" else "]"
    index = _skip(text, index + 1)
    if text.startswith(closing, index):
        return index + 1
    while True:
        key = None
        if closing == "}":
            key, index = _DECODER.raw_decode(text, index)
            index = _skip(text, index) + 1  # the colon
        index = _skip(text, on_item(key, _skip(text, index)))
        if text.startswith(closing, index):
            return index + 1
        index = _skip(text, index + 1)  # after the comma


def _source_spans(text: str) -> list[tuple[int, int] | None]:
    """Per cell, the (start, end) of its `source` value in the notebook's JSON text (already validated)."""
    spans: list[tuple[int, int] | None] = []

    def member_of_cell(key: str | None, start: int) -> int:
        end = _value_end(text, start)
        if key == "source":
            spans[-1] = (start, end)
        return end

    def cell(_: str | None, index: int) -> int:
        spans.append(None)
        return _walk(text, index, member_of_cell) if text.startswith("{", index) else _value_end(text, index)

    def member(key: str | None, index: int) -> int:
        if key != "cells":
            return _value_end(text, index)
        spans.clear()  # a repeated key: the last one counts, as for `json.loads`
        return _walk(text, index, cell)

    _walk(text, 0, member)
    return spans


def _array_items(text: str, start: int) -> list[tuple[int, int]]:
    """The (start, end) of each item of the JSON array at `start`."""
    items: list[tuple[int, int]] = []

    def item(_: str | None, index: int) -> int:
        items.append((index, _value_end(text, index)))
        return items[-1][1]

    _walk(text, start, item)
    return items


def _encode_source(json_text: str, start: int, end: int, text: str, escape: bool) -> str:
    """The new `source` value, laid out as the old one: a string, or a list of lines with the same
    separators; lines that did not change keep their exact JSON text."""
    if not json_text.startswith("[", start):
        return json.dumps(text, ensure_ascii=escape)
    items = _array_items(json_text, start)
    literals = {json.loads(json_text[s:e]): json_text[s:e] for s, e in items}
    if items:
        lead = json_text[start + 1 : items[0][0]]
        separator = json_text[items[0][1] : items[1][0]] if len(items) > 1 else "," + lead
        trail = json_text[items[-1][1] : end - 1]
    else:
        lead, separator, trail = "", ", ", ""
    lines = re.findall(r"[^\n]*\n|[^\n]+", text)
    values = [literals.get(line) or json.dumps(line, ensure_ascii=escape) for line in lines]
    return "[" + lead + separator.join(values) + trail + "]" if values else "[]"


def file_lines(json_text: str) -> dict[int, list[int]]:
    """Cell number -> the line of the JSON file where each of its source lines is (where a tool that
    shows the file, such as code scanning, should point)."""
    try:
        cells = load(json_text).cells
        spans = _source_spans(json_text)
    except (SourceError, ValueError, IndexError):
        return {}
    offsets = SourceText(json_text).line_starts
    result = {}
    for cell in cells:
        start, end = spans[cell.index]
        if json_text.startswith("[", start):
            items = [item_start for item_start, _ in _array_items(json_text, start)]
        else:  # one string, on one line
            items = [start] * (cell.python.count("\n") or 1)
        result[cell.number] = [bisect.bisect_right(offsets, item) for item in items]
    return result


def cell_sources(path: str, json_text: str) -> dict[str, str]:
    """Each code cell's source by its location (`nb.ipynb:cell 3`), for formats that show code; nothing
    for a notebook that cannot be read."""
    try:
        return {f"{path}:cell {cell.number}": cell.text for cell in load(json_text).cells}
    except SourceError:
        return {}
