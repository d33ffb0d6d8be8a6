"""The language server, `mllint server`: diagnostics, quick fixes, `# noqa` actions, fix-all and hover in any
LSP editor, over standard input and output (pygls).

A document is linted from the editor's buffer, never from disk, with the configuration the command line
would use for its path. The configuration is discovered again on every lint (configuration files are parsed
again only when their modification time or size changed), so an edited `pyproject.toml` or `mllint.toml`
applies without a restart. mllint counts columns in characters; the client in its negotiated code units
(UTF-16 unless it asks for another).
"""
from __future__ import annotations

import asyncio
import difflib
import json
import logging
import os
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter
from pygls.uris import from_fs_path, to_fs_path

from mllint import __version__
from mllint.editor_settings import LOG_LEVELS, EditorSettings
from mllint.findings import Applicability, Finding, Position, Related, Severity
from mllint.noqa import CODE, FILE_NOQA, LINE_NOQA, with_noqa
from mllint.source import LINE_BREAK, SourceError, SourceText, is_notebook, read_source, syntax_tree_dump

# The lint machinery (configuration, engine, analyses, rules, fixer, reporters) is imported where it is
# first used, and warmed up once the client is initialized: `initialize` is answered without waiting for it.
if TYPE_CHECKING:
    from mllint.analysis.program.project import ProjectIndex
    from mllint.engine import Selection

logger = logging.getLogger("mllint.server")

SOURCE = "mllint"
DEBOUNCE_SECONDS = 0.15  # typing pauses shorter than this start no lint
SETTINGS_TIMEOUT = 5.0  # seconds to wait for the client's answer to `workspace/configuration`
FIX_ALL_KIND = "source.fixAll.mllint"
QUICK_FIX = types.CodeActionKind.QuickFix
SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
CODE_UNITS = {
    types.PositionEncodingKind.Utf8: lambda text: len(text.encode("utf-8", "surrogatepass")),
    types.PositionEncodingKind.Utf16: lambda text: len(text.encode("utf-16-le", "surrogatepass")) // 2,
    types.PositionEncodingKind.Utf32: len,
}
CONVERTER = default_converter()  # the server's too: building a converter takes ~15 ms of start-up


@dataclass(frozen=True)
class Snapshot:
    """An open document's buffer at one version: what worker threads get, as the live document changes."""

    uri: str
    path: str
    text: str
    version: int | None


@dataclass(frozen=True)
class NotebookSnapshot:
    """An open notebook: its code cells' buffers, None for its markdown cells (they count in numbering)."""

    uri: str
    path: str
    cells: tuple[Snapshot | None, ...]

    def as_json(self) -> str:
        cells = [{"cell_type": "code" if c else "markdown", "source": c.text if c else ""} for c in self.cells]
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


class Buffer:
    """A text split into lines as Python and the LSP split them (\\r\\n, \\r, \\n), with conversions between
    mllint's positions (1-based, columns in characters) and the client's (0-based, in its code units)."""

    def __init__(self, text: str, encoding: str | None) -> None:
        self.source = SourceText(text)
        self.lines = self.source.lines
        self.units = CODE_UNITS.get(encoding, CODE_UNITS[types.PositionEncodingKind.Utf16])

    def to_client(self, position: Position) -> types.Position:
        if position.line > len(self.lines):
            return self.end
        line = self.lines[position.line - 1]
        return types.Position(line=position.line - 1, character=self.units(line[: position.column - 1]))

    def from_client(self, position: types.Position) -> Position:
        if position.line >= len(self.lines):
            return Position(len(self.lines), len(self.lines[-1]) + 1)
        line, column, units = self.lines[position.line], 0, 0
        while column < len(line) and units < position.character:
            units += self.units(line[column])
            column += 1
        return Position(position.line + 1, column + 1)

    def range(self, start: Position, end: Position) -> types.Range:
        return types.Range(start=self.to_client(start), end=self.to_client(end))

    @property
    def end(self) -> types.Position:
        last = len(self.lines) - 1
        return types.Position(line=last, character=self.units(self.lines[last]))

    def with_line(self, number: int, content: str) -> str:
        """The text with line `number` (1-based) replaced."""
        start = self.source.offset(Position(number, 1))
        return self.source.text[:start] + content + self.source.text[start + len(self.lines[number - 1]) :]


# Linting and fixing a snapshot (these run in worker threads).

def selection_for(path: str, editor: EditorSettings) -> Selection | None:
    """The rules for a document, from the configuration the command line would use and the editor's
    settings on top; None when excluded. A new Resolver each time, so that configuration files created or
    edited since the last lint count."""
    from mllint.config import ConfigError

    if editor.error:
        raise ConfigError(editor.error)
    settings = editor.resolver().settings_for(path)
    if settings.is_excluded_with_parents(path):
        return None
    return settings.selection_for(path)


def project_of(path: str) -> ProjectIndex:
    """The document's project, found again on every lint: the buffer is its own module, and the other
    modules are read from disk (their summaries are rebuilt when a file's modification time changes)."""
    from mllint.analysis.program.project import ProjectIndex

    return ProjectIndex.for_paths([path])


@dataclass(frozen=True)
class Lint:
    """A document's last lint: the findings of its text under its selection in its project, and what else
    the lint consulted (module, `name(` or `file:PATH` -> digest, as the result cache records them)."""

    text: str
    selection: Selection
    roots: dict[str, frozenset[str] | None]
    consulted: dict[str, str | None]
    findings: list[Finding]

    def stands(self, text: str, selection: Selection, project: ProjectIndex, path: str) -> bool:
        """Are these findings those a lint would give now: the same text, selection and project, and
        nothing it consulted changed (an open buffer's edit, a file's modification time)?"""
        if (text, selection, project.roots) != (self.text, self.selection, self.roots):
            return False
        with project.running(path):  # modules found as the lint found them
            return all(project.digest(module) == digest for module, digest in self.consulted.items())


def diagnose(
    snapshot: Snapshot, encoding: str | None, last: dict[str, Lint] | None = None, editor: EditorSettings = EditorSettings()
) -> list[types.Diagnostic]:
    """The document's diagnostics. `last`: each document's last lint, taken again while it stands (a client
    pulls an unchanged document again, a save lints every open one), and replaced by this one's."""
    from mllint.config import ConfigError
    from mllint.engine import lint_text
    from mllint.registry import RegistryError

    try:
        selection = selection_for(snapshot.path, editor)
    except (ConfigError, RegistryError) as error:
        return [configuration_diagnostic(error)]
    if selection is None or is_notebook(snapshot.path):  # a notebook opened as JSON text: not Python
        return []
    buffer = Buffer(snapshot.text, encoding)
    project = project_of(snapshot.path)
    lint = (last or {}).get(snapshot.uri)
    if lint is None or not lint.stands(snapshot.text, selection, project, snapshot.path):
        with project.recording() as consulted:
            findings = lint_text(snapshot.text, snapshot.path, selection, project)
        lint = Lint(snapshot.text, selection, project.roots, dict(consulted), findings)
    if last is not None:
        last[snapshot.uri] = lint
    places = RelatedPlaces(encoding, {(snapshot.path, None): (snapshot.uri, buffer)})
    return [to_diagnostic(finding, buffer, snapshot.version, places) for finding in lint.findings]


def diagnose_notebook(
    notebook: NotebookSnapshot, encoding: str | None, editor: EditorSettings = EditorSettings()
) -> dict[str, list[types.Diagnostic]]:
    """Each code cell's diagnostics, the cells linted as one program."""
    from mllint.config import ConfigError
    from mllint.engine import lint_notebook
    from mllint.registry import RegistryError

    code_cells = [cell for cell in notebook.cells if cell is not None]
    result: dict[str, list[types.Diagnostic]] = {cell.uri: [] for cell in code_cells}
    try:
        selection = selection_for(notebook.path, editor)
    except (ConfigError, RegistryError) as error:
        return {uri: [configuration_diagnostic(error)] for uri in result}
    if selection is None or not code_cells:
        return result
    buffers = {cell.uri: Buffer(cell.text, encoding) for cell in code_cells}
    cells = {(notebook.path, number): cell for number, cell in enumerate(notebook.cells, 1) if cell is not None}
    places = RelatedPlaces(encoding, {key: (cell.uri, buffers[cell.uri]) for key, cell in cells.items()})
    for finding in lint_notebook(notebook.as_json(), notebook.path, selection, project_of(notebook.path)):
        cell = notebook.cells[finding.cell - 1] if finding.cell else code_cells[0]
        result[cell.uri].append(to_diagnostic(finding, buffers[cell.uri], cell.version, places))
    return result


def configuration_diagnostic(error: Exception) -> types.Diagnostic:
    """A broken configuration (often one being edited) is shown on the documents it applies to."""
    start = types.Position(line=0, character=0)
    return types.Diagnostic(
        range=types.Range(start=start, end=start),
        message=f"mllint configuration error: {error}",
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
    )


class RelatedPlaces:
    """Where a finding's related call sites are for the client: in an open document or notebook cell (its
    buffer, keyed by (path, cell)), else in the file on disk, read once per lint."""

    def __init__(self, encoding: str | None, open_buffers: dict[tuple[str, int | None], tuple[str, Buffer]]) -> None:
        self.encoding = encoding
        self.buffers = {(os.path.abspath(path), cell): found for (path, cell), found in open_buffers.items()}
        self.open = set(self.buffers)

    def information(self, finding: Finding) -> list[types.DiagnosticRelatedInformation] | None:
        if not finding.related:
            return None
        return [self._information(related) for related in finding.related]

    def _information(self, related: Related) -> types.DiagnosticRelatedInformation:
        key = (os.path.abspath(related.path), related.cell)
        message = related.message
        if related.cell is not None and key not in self.open:  # a cell of a notebook that is not open: its file
            message = f"{message} (cell {related.cell}, line {related.start.line})"
        uri, buffer = self.place(related.path, related.cell)
        return types.DiagnosticRelatedInformation(types.Location(uri, buffer.range(related.start, related.end)), message)

    def place(self, path: str, cell: int | None = None) -> tuple[str, Buffer]:
        """The URI and text of a file (or a notebook's cell) as the lint read it."""
        key = (os.path.abspath(path), cell)
        if key not in self.buffers:
            self.buffers[key] = (from_fs_path(key[0]), self._read(key[0], cell))
        return self.buffers[key]

    def _read(self, path: str, cell: int | None) -> Buffer:
        """The text the lint read: an open document's buffer, else the file's (none for a notebook's cell,
        or a file that cannot be read: its start)."""
        from mllint.analysis.program.project import open_buffer

        try:
            text = (open_buffer(path) or read_source(path).text) if cell is None else ""
        except SourceError:
            text = ""
        return Buffer(text, self.encoding)


def to_diagnostic(finding: Finding, buffer: Buffer, version: int | None, places: RelatedPlaces | None = None) -> types.Diagnostic:
    from mllint.reporters import rule_url

    if finding.traceback:  # mllint's own bug: its traceback goes to the log the editor keeps, for a report
        logger.error("%s:%s: %s %s\n%s", finding.path, finding.start.line, finding.code, finding.message, finding.traceback)
    data = {"version": version, "fix": fix_data(finding, buffer, places)}
    if not finding.code.startswith("ML00"):  # mllint's own errors: nothing a `# noqa` should hide
        data["noqaLine"] = finding.noqa_line or finding.start.line
    return types.Diagnostic(
        range=buffer.range(finding.start, finding.end),
        message=finding.message,
        severity=SEVERITIES[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=url) if (url := rule_url(finding.code)) else None,
        source=SOURCE,
        related_information=places.information(finding) if places else None,
        data=data,  # what the code actions need, so that building them needs no new lint
    )


def fix_data(finding: Finding, buffer: Buffer, places: RelatedPlaces | None) -> dict | None:
    """What a quick fix needs: its title, safety and edits, and the URI of the document they edit when it
    is another one than the diagnostic's (the file with the activation), then only if the edited text
    still parses."""
    from mllint.fixer import apply_fixes

    fix = finding.fix
    if fix is None or fix.applicability is Applicability.DISPLAY_ONLY:
        return None
    data = {"title": fix.message, "safe": fix.applicability is Applicability.SAFE}
    if fix.path is not None:
        if places is None:
            return None
        data["uri"], buffer = places.place(fix.path)
        if not _parses(apply_fixes(buffer.source.text, [finding])[0]):
            return None
    edits = [types.TextEdit(range=buffer.range(edit.start, edit.end), new_text=edit.content) for edit in fix.edits]
    return {**data, "edits": CONVERTER.unstructure(edits)}


def _parses(text: str) -> bool:
    return syntax_tree_dump(text) is not None


def fix_all_edits(snapshot: Snapshot, encoding: str | None, editor: EditorSettings = EditorSettings()) -> list[types.TextEdit]:
    """The edits that apply every safe fix, and the unsafe ones where the editor's settings say so (none
    when the fixes would not parse)."""
    from mllint.engine import lint_text
    from mllint.fixer import fix_text

    selection = selection_for(snapshot.path, editor)
    if selection is None:
        return []
    project = project_of(snapshot.path)
    lint = lambda text: lint_text(text, snapshot.path, selection, project)  # noqa: E731
    outcome = fix_text(snapshot.text, lint, unsafe=editor.unsafe_fixes)
    if outcome.error:
        logger.warning("%s: %s", snapshot.path, outcome.error)
        return []
    return replacement_edits(Buffer(snapshot.text, encoding), outcome.text)


def replacement_edits(buffer: Buffer, new_text: str) -> list[types.TextEdit]:
    """Edits turning the buffer into `new_text`, one per changed block of lines, so that the editor keeps
    its cursor and folds where nothing changed."""
    old_lines, new_lines = _lines_with_breaks(buffer.source.text), _lines_with_breaks(new_text)

    def start_of(index: int) -> types.Position:
        return types.Position(line=index, character=0) if index < len(old_lines) else buffer.end

    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [
        types.TextEdit(range=types.Range(start=start_of(i1), end=start_of(i2)), new_text="".join(new_lines[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _lines_with_breaks(text: str) -> list[str]:
    """The lines with their line breaks; as many as `LINE_BREAK.split` gives (the last may be empty)."""
    breaks = LINE_BREAK.findall(text) + [""]
    return [line + line_break for line, line_break in zip(LINE_BREAK.split(text), breaks)]


def noqa_edits(snapshot: Snapshot, line_number: int, code: str, encoding: str | None) -> list[types.TextEdit]:
    """Add the code to the line's `# noqa` comment, or add one; nothing where that would change the
    program (a line that ends inside a string)."""
    buffer = Buffer(snapshot.text, encoding)
    if not 0 < line_number <= len(buffer.lines):
        return []
    line = buffer.lines[line_number - 1]
    new_line = with_noqa(line, {code}, None)
    if new_line == line or not _same_program(snapshot.text, buffer.with_line(line_number, new_line)):
        return []
    whole_line = buffer.range(Position(line_number, 1), Position(line_number, len(line) + 1))
    return [types.TextEdit(range=whole_line, new_text=new_line)]


def _same_program(before: str, after: str) -> bool:
    dump = syntax_tree_dump(before)
    return dump is not None and dump == syntax_tree_dump(after)


def deferred_edit(
    action: types.CodeAction, snapshot: Snapshot, encoding: str | None, editor: EditorSettings = EditorSettings()
) -> types.WorkspaceEdit:
    """The edit of a fix-all or `# noqa` action: it costs a fix run or two parses, so it is computed only
    when the user picks the action (or at once, for a client that cannot resolve actions)."""
    data = action.data
    if action.kind == FIX_ALL_KIND:
        edits = fix_all_edits(snapshot, encoding, editor)
    elif data.get("version") == snapshot.version:
        edits = noqa_edits(snapshot, data["noqaLine"], data["code"], encoding)
    else:
        edits = []  # the buffer changed since: the line number may be wrong
    return types.WorkspaceEdit(changes={snapshot.uri: edits})


# Code actions and hover, built from the diagnostics' data.

def fix_action(uri: str, diagnostic: types.Diagnostic) -> types.CodeAction | None:
    fix = diagnostic.data.get("fix")
    if not fix:
        return None
    title = f"mllint ({diagnostic.code}): {fix['title']}"
    return types.CodeAction(
        title=title if fix["safe"] else f"{title} (unsafe fix)",
        kind=QUICK_FIX,
        diagnostics=[diagnostic],
        is_preferred=fix["safe"],
        edit=types.WorkspaceEdit(changes={fix.get("uri", uri): CONVERTER.structure(fix["edits"], list[types.TextEdit])}),
    )


def noqa_action(uri: str, diagnostic: types.Diagnostic) -> types.CodeAction | None:
    line_number = diagnostic.data.get("noqaLine")
    if line_number is None:
        return None
    code = str(diagnostic.code)
    data = {"uri": uri, "version": diagnostic.data["version"], "noqaLine": line_number, "code": code}
    title = f"mllint ({code}): Disable for this line"
    return types.CodeAction(title=title, kind=QUICK_FIX, diagnostics=[diagnostic], data=data)


def fix_all_action(uri: str, unsafe: bool) -> types.CodeAction:
    title = "mllint: Fix all problems, unsafe fixes included" if unsafe else "mllint: Fix all safely fixable problems"
    return types.CodeAction(title=title, kind=FIX_ALL_KIND, data={"uri": uri})


def _wanted(kind: str, only: list | None) -> bool:
    """Does the client's `only` filter let actions of `kind` through (`source` lets `source.fixAll...`)?"""
    if only is None:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in (getattr(k, "value", k) for k in only))


def noqa_code_at(line: str, column: int) -> tuple[str, int, int] | None:
    """The rule code under a 0-based column inside a `# noqa:` or `# mllint: noqa:` comment, with its
    0-based start and end columns."""
    for pattern in (FILE_NOQA, LINE_NOQA):
        for match in pattern.finditer(line):
            if not match.group("codes"):
                continue
            offset = match.start("codes")
            for code in CODE.finditer(match.group("codes").upper()):
                start, end = offset + code.start(), offset + code.end()
                if start <= column < end:
                    return code.group(), start, end
    return None


def rule_markdown(code: str) -> str | None:
    from mllint.registry import all_rules
    from mllint.reporters import rule_url

    rule = all_rules().get(code)
    if rule is None:
        return None
    url = rule_url(rule.code)
    link = f" ([documentation]({url}))" if url else ""
    return f"**{rule.code}** `{rule.name}`{link}\n\n{rule.documentation()}"


# The server.

class MllintServer(LanguageServer):
    def __init__(self) -> None:
        # Full synchronisation: the client sends the whole buffer, so that no difference between its line
        # splitting and pygls's (form feeds, U+2028) can garble the text.
        # Notebooks: every notebook's Python cells, linted together as the command line lints a notebook.
        notebooks = types.NotebookDocumentSyncOptions(
            notebook_selector=[
                types.NotebookDocumentFilterWithCells(notebook="*", cells=[types.NotebookCellLanguage(language="python")])
            ],
            save=True,
        )
        super().__init__(
            "mllint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full,
            notebook_document_sync=notebooks, converter_factory=lambda: CONVERTER,
        )  # fmt: skip
        self.pending: dict[str, asyncio.Task] = {}  # the scheduled or running lint of each document
        self.linted: dict[str, Lint] = {}  # per open document: its last lint (what it read, its findings)
        self.initialization_options: object = None
        self.editor = EditorSettings()

    def configure(self, value: object, root: str | None) -> None:
        """Take the editor's settings (`initializationOptions`, or what `workspace/configuration` answered);
        `root` is the workspace's, which a relative configuration path is relative to."""
        self.editor = EditorSettings.parse(value, root)
        logging.getLogger("mllint").setLevel(LOG_LEVELS[self.editor.log_level])
        if self.editor.error:
            logger.error("%s", self.editor.error)

    @property
    def pulls_diagnostics(self) -> bool:
        return get_capability(self.client_capabilities, "text_document.diagnostic") is not None

    @property
    def resolves_edits(self) -> bool:
        capability = "text_document.code_action.resolve_support.properties"
        return "edit" in get_capability(self.client_capabilities, capability, [])

    @property
    def encoding(self) -> str | None:
        return self.workspace.position_encoding

    def snapshot(self, uri: str) -> Snapshot | None:
        """The open document's buffer; None for a document that is not open (never the file on disk)."""
        document = self.workspace.text_documents.get(unquote(uri))
        if document is None:
            return None
        return Snapshot(document.uri, document.path, document.source, document.version)

    def notebook_snapshot(self, uri: str) -> NotebookSnapshot | None:
        """The open notebook with this URI or with a cell of this URI."""
        workspace = self.workspace
        notebook = workspace.get_notebook_document(notebook_uri=uri) or workspace.get_notebook_document(cell_uri=uri)
        if notebook is None:
            return None
        cells = tuple(
            self.snapshot(cell.document) if cell.kind == types.NotebookCellKind.Code else None
            for cell in notebook.cells
        )
        return NotebookSnapshot(notebook.uri, to_fs_path(notebook.uri) or notebook.uri, cells)

    async def diagnostics_of(self, snapshot: Snapshot) -> list[types.Diagnostic]:
        """Lint in a worker thread, so that the server keeps answering meanwhile (a notebook's cell: with
        the other cells of its notebook)."""
        notebook = self.notebook_snapshot(snapshot.uri)
        if notebook is not None:
            return (await asyncio.to_thread(diagnose_notebook, notebook, self.encoding, self.editor)).get(snapshot.uri, [])
        return await asyncio.to_thread(diagnose, snapshot, self.encoding, self.linted, self.editor)

    def sync_buffers(self) -> None:
        """The project reads the open Python documents from their buffers, unsaved edits included."""
        from mllint.analysis.program.project import use_buffers

        documents = self.workspace.text_documents.values()
        use_buffers({d.path: d.source for d in documents if d.uri.startswith("file:") and d.path.endswith(".py")})

    def lint_readers(self, uri: str, text: str | None) -> None:
        """Lint again the open documents whose last lint read this one, or may now read it because its
        `text` calls a function they looked for callers of (None: the document was closed)."""
        from mllint.analysis.program.project import CALLS_KEY, module_name_of

        module = module_name_of(to_fs_path(uri) or uri)[1].name
        readers = [
            other for other, lint in list(self.linted.items()) if other != uri and any(
                name == module or (name.endswith(CALLS_KEY) and (text is None or name in text)) for name in lint.consulted
            )
        ]  # fmt: skip
        self._lint_again(readers)

    def lint_documents_reading(self, files: set[str]) -> None:
        """Lint again the open documents whose last lint read one of these files (`FILE_KEY` + path)."""
        self._lint_again([uri for uri, lint in list(self.linted.items()) if files & lint.consulted.keys()])

    def _lint_again(self, readers: list[str]) -> None:
        if not readers:
            return
        if not self.pulls_diagnostics:
            for reader in readers:
                self.push_soon(reader, DEBOUNCE_SECONDS)
        elif get_capability(self.client_capabilities, "workspace.diagnostics.refresh_support", False):
            self.workspace_diagnostic_refresh(None)

    def push_soon(self, uri: str, delay: float) -> None:
        """Publish the document's diagnostics after `delay` seconds, replacing a lint already scheduled."""
        if self.pulls_diagnostics:
            return
        self.cancel_lint(uri)
        self.pending[uri] = asyncio.create_task(self._publish_after(uri, delay))

    def cancel_lint(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()

    async def _publish_after(self, uri: str, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            notebook = self.notebook_snapshot(uri)
            if notebook is not None:
                versions = {cell.uri: cell.version for cell in notebook.cells if cell is not None}
                per_cell = await asyncio.to_thread(diagnose_notebook, notebook, self.encoding, self.editor)
                for cell_uri, diagnostics in per_cell.items():
                    self.publish(cell_uri, diagnostics, versions[cell_uri])
                return
            snapshot = self.snapshot(uri)
            if snapshot is not None:
                self.publish(uri, await self.diagnostics_of(snapshot), snapshot.version)
        except Exception:  # asyncio.CancelledError is no Exception: a newer lint replaced this one
            logger.exception("linting %s failed", uri)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None = None) -> None:
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        self.text_document_publish_diagnostics(params)

    def start_io(self, stdin=None, stdout=None, answered: bytes | None = None) -> None:
        """Serve over standard input and output, reading messages with `server_io` (pygls's loop loses
        the message after a broken header, and answers nothing to a request it cannot read). `answered`:
        the body of the `initialize` request `lsp_start` answered, handled first without a reply."""
        from pygls.io_ import StdinAsyncReader, StdoutWriter

        from mllint.server_io import Dropped, handle, read_messages

        async def serve() -> None:
            if answered is not None:
                self.protocol.set_writer(Dropped())
                handle(answered, self.protocol)
            self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
            await read_messages(self._stop_event, reader, self.protocol)

        self._stop_event = threading.Event()
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        try:
            asyncio.run(serve())
        except BrokenPipeError:
            logger.error("the connection to the client is lost: shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def report_server_error(self, error: Exception, source) -> None:
        """A handler failed: log it (editors keep the server's standard error) and carry on. pygls has
        logged a failed request with its traceback already; other failures carry theirs in `data`."""
        if source is not FeatureRequestError:
            data = getattr(error, "data", None)
            details = "".join(data.get("traceback", [])) if isinstance(data, dict) else ""
            logger.error("%s: %s\n%s", source.__name__, error, details)


server = MllintServer()


def warm_up() -> None:
    """Import the lint machinery and load the rules, before the first lint needs them."""
    from mllint.config import Resolver  # noqa: F401
    from mllint.engine import lint_text  # noqa: F401
    from mllint.registry import all_rules
    from mllint.reporters import rule_url  # noqa: F401

    all_rules()


@server.feature(types.INITIALIZE)
def initialize(ls: MllintServer, params: types.InitializeParams) -> None:
    ls.initialization_options = params.initialization_options
    ls.configure(params.initialization_options, ls.workspace.root_path)


async def pull_settings(ls: MllintServer) -> bool:
    """Ask a client that supports it for the `mllint` section of its settings; True when it answered
    with some (the initialization options stay otherwise)."""
    if not get_capability(ls.client_capabilities, "workspace.configuration", False):
        return False
    try:
        params = types.ConfigurationParams(items=[types.ConfigurationItem(section=SOURCE)])
        [answer] = await asyncio.wait_for(ls.workspace_configuration_async(params), SETTINGS_TIMEOUT)
    except Exception as error:  # a client that fails the request, or never answers it
        logger.warning("the client did not send its settings: %s", error)
        return False
    if answer is None:
        return False
    ls.configure(answer, ls.workspace.root_path)
    return True


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def settings_changed(ls: MllintServer, params: types.DidChangeConfigurationParams) -> None:
    """New settings: pulled from a client that serves them, else those sent (`{"mllint": {...}}`)."""
    if not await pull_settings(ls):
        sent = params.settings.get(SOURCE, params.settings) if isinstance(params.settings, dict) else None
        ls.configure(sent or ls.initialization_options, ls.workspace.root_path)
    lint_open_documents(ls)


@server.feature(types.INITIALIZED)
async def watch_configuration_files(ls: MllintServer, params: types.InitializedParams) -> None:
    threading.Thread(target=warm_up, daemon=True).start()
    if await pull_settings(ls):
        lint_open_documents(ls)
    from mllint.config import CONFIG_FILES

    if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    from mllint.discovery import READ_DATA_SUFFIXES

    patterns = [*CONFIG_FILES, *(f"*{suffix}" for suffix in READ_DATA_SUFFIXES)]
    watchers = [types.FileSystemWatcher(glob_pattern=f"**/{pattern}") for pattern in patterns]
    registration = types.Registration(
        id="mllint-configuration-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
    )
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
    except Exception as error:
        logger.warning("the client did not watch the configuration files: %s", error)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MllintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.sync_buffers()
    ls.push_soon(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MllintServer, params: types.DidChangeTextDocumentParams) -> None:
    """An edit counts for the other open documents before it is saved: those that read this one are linted again."""
    uri = params.text_document.uri
    ls.sync_buffers()
    ls.push_soon(uri, DEBOUNCE_SECONDS)
    snapshot = ls.snapshot(uri)
    ls.lint_readers(uri, snapshot.text if snapshot else None)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: MllintServer, params: types.DidSaveTextDocumentParams) -> None:
    """A saved file may be a caller or a callee of the other open documents: lint them all again."""
    ls.push_soon(params.text_document.uri, 0)
    lint_open_documents(ls)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MllintServer, params: types.DidCloseTextDocumentParams) -> None:
    """The closed document is read from its file again, unsaved edits gone: its readers are linted again."""
    uri = params.text_document.uri
    ls.cancel_lint(uri)
    ls.linted.pop(uri, None)
    ls.sync_buffers()
    if not ls.pulls_diagnostics:
        ls.publish(uri, [])
    ls.lint_readers(uri, None)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: MllintServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.push_soon(params.notebook_document.uri, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: MllintServer, params: types.DidChangeNotebookDocumentParams) -> None:
    ls.push_soon(params.notebook_document.uri, DEBOUNCE_SECONDS)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: MllintServer, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.push_soon(params.notebook_document.uri, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: MllintServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.cancel_lint(params.notebook_document.uri)
    if not ls.pulls_diagnostics:
        for cell in params.cell_text_documents:
            ls.publish(cell.uri, [])


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def watched_files_changed(ls: MllintServer, params: types.DidChangeWatchedFilesParams) -> None:
    """A configuration file changed: lint the open documents again (each lint discovers its settings). A
    file some lints read (a YAML configuration of the linted code): lint those documents again."""
    from mllint.analysis.program.project import FILE_KEY
    from mllint.config import CONFIG_FILES

    paths = [os.path.abspath(to_fs_path(change.uri) or change.uri) for change in params.changes]
    if any(os.path.basename(path) in CONFIG_FILES for path in paths):
        lint_open_documents(ls)
    else:
        ls.lint_documents_reading({FILE_KEY + path for path in paths})


def lint_open_documents(ls: MllintServer) -> None:
    """Publish every open document's diagnostics again, or ask a pulling client to pull them again."""
    if not ls.pulls_diagnostics:
        for document in list(ls.workspace.text_documents.values()):
            notebook = ls.notebook_snapshot(document.uri)
            ls.push_soon(notebook.uri if notebook else document.uri, 0)
    elif get_capability(ls.client_capabilities, "workspace.diagnostics.refresh_support", False):
        ls.workspace_diagnostic_refresh(None)


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
)
async def pull_diagnostics(ls: MllintServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    snapshot = ls.snapshot(params.text_document.uri)
    items = [] if snapshot is None else await ls.diagnostics_of(snapshot)
    return types.RelatedFullDocumentDiagnosticReport(items=items)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[QUICK_FIX, FIX_ALL_KIND], resolve_provider=True),
)
def code_actions(ls: MllintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    snapshot = ls.snapshot(params.text_document.uri)
    if snapshot is None:
        return []
    only = params.context.only
    fixes, deferred = [], []
    if _wanted(QUICK_FIX, only):
        for diagnostic in params.context.diagnostics:
            data = diagnostic.data
            # The data of an older version of the buffer would edit the wrong places.
            if diagnostic.source == SOURCE and isinstance(data, dict) and data.get("version") == snapshot.version:
                fixes += filter(None, [fix_action(snapshot.uri, diagnostic)])
                deferred += filter(None, [noqa_action(snapshot.uri, diagnostic)])
    # A client that cannot resolve gets fix-all only when it asks for it by kind, as editors do on save.
    # Not in a notebook's cell: fixing a cell alone would miss what the other cells say.
    in_notebook = ls.notebook_snapshot(snapshot.uri) is not None
    if _wanted(FIX_ALL_KIND, only) and (ls.resolves_edits or only is not None) and not in_notebook:
        deferred.append(fix_all_action(snapshot.uri, ls.editor.unsafe_fixes))
    if not ls.resolves_edits:
        for action in deferred:
            action.edit = deferred_edit(action, snapshot, ls.encoding, ls.editor)
    return fixes + deferred


@server.feature(types.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: MllintServer, action: types.CodeAction) -> types.CodeAction:
    uri = action.data.get("uri") if isinstance(action.data, dict) else None
    snapshot = ls.snapshot(uri) if isinstance(uri, str) else None
    if snapshot is not None:
        action.edit = await asyncio.to_thread(deferred_edit, action, snapshot, ls.encoding, ls.editor)
    return action


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: MllintServer, params: types.HoverParams) -> types.Hover | None:
    """The documentation of the rule code under the cursor in a `# noqa:` comment."""
    snapshot = ls.snapshot(params.text_document.uri)
    if snapshot is None:
        return None
    buffer = Buffer(snapshot.text, ls.encoding)
    position = buffer.from_client(params.position)
    found = noqa_code_at(buffer.lines[position.line - 1], position.column - 1)
    markdown = rule_markdown(found[0]) if found else None
    if markdown is None:
        return None
    _, start, end = found
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
        range=buffer.range(Position(position.line, start + 1), Position(position.line, end + 1)),
    )


def start(unread: bytes = b"", answered: bytes | None = None) -> None:
    """Serve one client over standard input and output until it says `exit`. `lsp_start` read the first
    message: `unread`, the bytes it read and did not answer; `answered`, the `initialize` it answered."""
    from mllint.server_io import Prefixed

    logging.basicConfig(level=logging.WARNING, format="mllint server: %(levelname)s: %(message)s")
    server.start_io(Prefixed(unread, sys.stdin.buffer) if unread else None, answered=answered)
