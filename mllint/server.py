"""The language server, `mllint server`: diagnostics, quick fixes, `# noqa` actions, fix-all and hover in any
LSP editor, over standard input and output (pygls).

A document is linted from the editor's buffer, never from disk, with the configuration the command line
would use for its path. The configuration is discovered again on every lint (configuration files are parsed
again only when their modification time or size changed), so an edited `pyproject.toml` or `mllint.toml`
applies without a restart. mllint counts columns in characters; the client in its negotiated code units
(UTF-16 unless it asks for another).
"""
from __future__ import annotations

import ast
import asyncio
import difflib
import logging
from urllib.parse import unquote

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from mllint import __version__
from mllint.config import CONFIG_FILES, ConfigError, Resolver
from mllint.engine import Selection, lint_text
from mllint.findings import Applicability, Finding, Fix, Position, Severity
from mllint.fixer import fix_text
from mllint.noqa import CODE, FILE_NOQA, LINE_NOQA
from mllint.registry import RegistryError, all_rules
from mllint.reporters import rule_url
from mllint.runner import with_noqa
from mllint.source import LINE_BREAK, SourceText, parse_python

logger = logging.getLogger("mllint.server")

SOURCE = "mllint"
DEBOUNCE_SECONDS = 0.3  # typing pauses shorter than this do not start a lint
FIX_ALL_KIND = "source.fixAll.mllint"
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
CONVERTER = get_converter()


class Buffer:
    """A document's text, split into lines as Python and the LSP split them (\\r\\n, \\r, \\n), with
    conversions between mllint's positions (1-based, columns in characters) and the client's (0-based,
    columns in the negotiated code units)."""

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

    def line_range(self, number: int) -> types.Range:
        """The range of a whole line (0-based), without its line break."""
        end = self.units(self.lines[number])
        return types.Range(start=types.Position(line=number, character=0), end=types.Position(line=number, character=end))

    @property
    def end(self) -> types.Position:
        last = len(self.lines) - 1
        return types.Position(line=last, character=self.units(self.lines[last]))

    def with_line(self, number: int, content: str) -> str:
        """The text with line `number` (0-based) replaced."""
        start = self.source.offset(Position(number + 1, 1))
        return self.source.text[:start] + content + self.source.text[start + len(self.lines[number]) :]


# Linting and fixing a buffer (pure functions of a snapshot: they run in worker threads).

def selection_for(path: str) -> Selection | None:
    """The rules for a document, from the configuration the command line would use; None when excluded.
    A new Resolver each time, so that configuration files created or edited since the last lint count."""
    settings = Resolver({}).settings_for(path)
    if settings.is_excluded_with_parents(path):
        return None
    return settings.selection_for(path)


def diagnose(text: str, path: str, version: int | None, encoding: str | None) -> list[types.Diagnostic]:
    buffer = Buffer(text, encoding)
    try:
        selection = selection_for(path)
    except (ConfigError, RegistryError) as error:
        message = f"mllint configuration error: {error}"
        return [types.Diagnostic(range=buffer.range(Position(1, 1), Position(1, 1)), message=message,
                                 severity=types.DiagnosticSeverity.Error, source=SOURCE)]  # fmt: skip
    if selection is None:
        return []
    return [to_diagnostic(finding, buffer, version) for finding in lint_text(text, path, selection)]


def to_diagnostic(finding: Finding, buffer: Buffer, version: int | None) -> types.Diagnostic:
    data = {"version": version, "fix": fix_data(finding.fix, buffer)}
    if not finding.code.startswith("ML00"):  # mllint's own errors: nothing a `# noqa` should hide
        data["noqaLine"] = (finding.noqa_line or finding.start.line) - 1
    return types.Diagnostic(
        range=buffer.range(finding.start, finding.end),
        message=finding.message,
        severity=SEVERITIES[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=rule_url(finding.code)),
        source=SOURCE,
        data=data,  # what the code actions need, so that building them needs no new lint
    )


def fix_data(fix: Fix | None, buffer: Buffer) -> dict | None:
    if fix is None or fix.applicability is Applicability.DISPLAY_ONLY:
        return None
    edits = [types.TextEdit(range=buffer.range(edit.start, edit.end), new_text=edit.content) for edit in fix.edits]
    return {"title": fix.message, "safe": fix.applicability is Applicability.SAFE, "edits": CONVERTER.unstructure(edits)}


def fix_all_edits(text: str, path: str, encoding: str | None) -> list[types.TextEdit]:
    """The edits that apply every safe fix to the buffer (none when a fix would break it)."""
    selection = selection_for(path)
    if selection is None:
        return []
    outcome = fix_text(text, lambda current: lint_text(current, path, selection), unsafe=False)
    if outcome.error:
        logger.warning("%s: %s", path, outcome.error)
        return []
    return replacement_edits(Buffer(text, encoding), outcome.text)


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


# Code actions and hover.

def fix_action(uri: str, diagnostic: types.Diagnostic) -> types.CodeAction | None:
    fix = diagnostic.data.get("fix")
    if not fix:
        return None
    edits = CONVERTER.structure(fix["edits"], list[types.TextEdit])
    return types.CodeAction(
        title=fix["title"] if fix["safe"] else f"{fix['title']} (unsafe fix)",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=fix["safe"],
        edit=types.WorkspaceEdit(changes={uri: edits}),
    )


def noqa_action(uri: str, diagnostic: types.Diagnostic, buffer: Buffer) -> types.CodeAction | None:
    """Add the code to the line's `# noqa` comment, or add one; unless that would change the program (a
    line that ends inside a string or after a backslash)."""
    number = diagnostic.data.get("noqaLine")
    if number is None or number >= len(buffer.lines):
        return None
    line = buffer.lines[number]
    new_line = with_noqa(line, {str(diagnostic.code)}, None)
    if new_line == line or not _same_program(buffer.source.text, buffer.with_line(number, new_line)):
        return None
    return types.CodeAction(
        title=f"Disable {diagnostic.code} for this line",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=buffer.line_range(number), new_text=new_line)]}),
    )


def _same_program(before: str, after: str) -> bool:
    try:
        return ast.dump(parse_python(before)) == ast.dump(parse_python(after))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


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
    rule = all_rules().get(code)
    if rule is None:
        return None
    return f"**{rule.code}** `{rule.name}` ([documentation]({rule_url(rule.code)}))\n\n{rule.documentation()}"


def _wanted(kind: str, only: list | None) -> bool:
    """Does the client's `only` filter let actions of `kind` through (`source` lets `source.fixAll...`)?"""
    if only is None:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in (getattr(k, "value", k) for k in only))


# The server.

class MllintServer(LanguageServer):
    def __init__(self) -> None:
        # Full synchronisation: the client sends the whole buffer, so that no line-splitting difference
        # between it and pygls (form feeds, U+2028) can garble the text.
        super().__init__("mllint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.pending: dict[str, asyncio.Task] = {}  # the scheduled or running lint of each document

    @property
    def pulls_diagnostics(self) -> bool:
        return get_capability(self.client_capabilities, "text_document.diagnostic") is not None

    @property
    def encoding(self) -> str | None:
        return self.workspace.position_encoding

    def open_document(self, uri: str) -> TextDocument | None:
        """The editor's buffer; None for a document that is not open (mllint never reads it from disk)."""
        return self.workspace.text_documents.get(unquote(uri))

    async def diagnostics_of(self, document: TextDocument) -> list[types.Diagnostic]:
        """Lint a snapshot of the buffer in a worker thread, so that the server keeps answering."""
        return await asyncio.to_thread(diagnose, document.source, document.path, document.version, self.encoding)

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
            document = self.open_document(uri)
            if document is None:
                return
            version = document.version
            diagnostics = await self.diagnostics_of(document)
            self.publish(uri, diagnostics, version)
        except Exception:  # asyncio.CancelledError is not an Exception: a newer lint replaced this one
            logger.exception("linting %s failed", uri)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None = None) -> None:
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        self.text_document_publish_diagnostics(params)

    def report_server_error(self, error: Exception, source) -> None:
        """A handler failed: log it (editors keep the server's standard error) and carry on."""
        logger.error("%s: %s", source.__name__, error, exc_info=error)


server = MllintServer()


@server.feature(types.INITIALIZED)
async def watch_configuration_files(ls: MllintServer, params: types.InitializedParams) -> None:
    if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
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
    ls.push_soon(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MllintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.push_soon(params.text_document.uri, DEBOUNCE_SECONDS)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: MllintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.push_soon(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MllintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.cancel_lint(params.text_document.uri)
    if not ls.pulls_diagnostics:
        ls.publish(params.text_document.uri, [])


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def configuration_changed(ls: MllintServer, params: types.DidChangeWatchedFilesParams) -> None:
    """A configuration file changed: lint the open documents again (each lint discovers its settings)."""
    if not ls.pulls_diagnostics:
        for document in list(ls.workspace.text_documents.values()):
            ls.push_soon(document.uri, 0)
    elif get_capability(ls.client_capabilities, "workspace.diagnostics.refresh_support", False):
        ls.workspace_diagnostic_refresh(None)


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=False, workspace_diagnostics=False),
)
async def pull_diagnostics(ls: MllintServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    document = ls.open_document(params.text_document.uri)
    items = [] if document is None else await ls.diagnostics_of(document)
    return types.RelatedFullDocumentDiagnosticReport(items=items)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True),
)
def code_actions(ls: MllintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    document = ls.open_document(uri)
    if document is None:
        return []
    actions = []
    if _wanted(types.CodeActionKind.QuickFix, params.context.only):
        buffer = Buffer(document.source, ls.encoding)
        for diagnostic in params.context.diagnostics:
            data = diagnostic.data
            # Diagnostics of an older version of the buffer would edit the wrong places.
            if diagnostic.source == SOURCE and isinstance(data, dict) and data.get("version") == document.version:
                actions += filter(None, [fix_action(uri, diagnostic), noqa_action(uri, diagnostic, buffer)])
    if _wanted(FIX_ALL_KIND, params.context.only):
        action = types.CodeAction(title="mllint: fix all safely fixable problems", kind=FIX_ALL_KIND, data={"uri": uri})
        if "edit" not in (get_capability(ls.client_capabilities, "text_document.code_action.resolve_support.properties", [])):
            action.edit = types.WorkspaceEdit(changes={uri: fix_all_edits(document.source, document.path, ls.encoding)})
        actions.append(action)
    return actions


@server.feature(types.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: MllintServer, action: types.CodeAction) -> types.CodeAction:
    """Compute the fix-all edit, only when the user picks the action."""
    uri = action.data.get("uri") if isinstance(action.data, dict) else None
    document = ls.open_document(uri) if action.kind == FIX_ALL_KIND and uri else None
    if document is not None:
        edits = await asyncio.to_thread(fix_all_edits, document.source, document.path, ls.encoding)
        action.edit = types.WorkspaceEdit(changes={document.uri: edits})
    return action


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: MllintServer, params: types.HoverParams) -> types.Hover | None:
    """The documentation of the rule code under the cursor in a `# noqa:` comment."""
    document = ls.open_document(params.text_document.uri)
    if document is None:
        return None
    buffer = Buffer(document.source, ls.encoding)
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


def start() -> None:
    """Serve one client over standard input and output until it says `exit`."""
    logging.basicConfig(level=logging.WARNING, format="mllint server: %(levelname)s: %(message)s")
    server.start_io()
