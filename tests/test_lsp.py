"""The language server end to end: the real `mllint server` process driven by pytest-lsp with the
capabilities of real editors: VS Code (pushed diagnostics, UTF-16) and Neovim 0.10 (pulled diagnostics,
UTF-16) and 0.11 (pulled, UTF-8)."""
from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from mllint.analysis.program.project import use_buffers
from mllint.findings import Finding, Position, Related, Severity
from mllint.server import Buffer, RelatedPlaces, to_diagnostic

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 10  # seconds to wait for the server; a healthy one answers in well under one
START_TIMEOUT = 60  # seconds for a started server to load its libraries, on a machine however busy
PROFILES = {"vscode": "visual-studio-code@v1.65.2", "neovim-0.10": "neovim@v0.10.0", "neovim-0.11": "neovim@v0.11.0"}
CODECS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


class Editor(LanguageClient):
    """A test client that keeps the text and version of its documents, as an editor does, and records
    what the server publishes and registers."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.registrations: list[types.Registration] = []
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.seen: dict[str, int] = {}  # per document: how many of `published` were looked at
        self.encoding = "utf-16"

    async def initialize_session(self, params: types.InitializeParams) -> types.InitializeResult:
        """The session, once the server serves requests: it answers `initialize` before it has loaded its
        libraries (mllint.lsp_start), and the tests' timeouts are for linting, not for the server's start."""
        result = await super().initialize_session(params)
        document = types.TextDocumentIdentifier(uri="file:///not-open.py")
        await asyncio.wait_for(self.text_document_hover_async(types.HoverParams(document, types.Position(0, 0))), START_TIMEOUT)
        return result

    @property
    def pulls(self) -> bool:
        return self.capabilities.text_document.diagnostic is not None

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.texts[uri], self.versions[uri] = text, 1
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        self.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return uri

    def change(self, uri: str, text: str) -> None:
        self.texts[uri], self.versions[uri] = text, self.versions[uri] + 1
        document = types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        change = types.TextDocumentContentChangeWholeDocument(text=text)
        params = types.DidChangeTextDocumentParams(text_document=document, content_changes=[change])
        self.text_document_did_change(params)

    def close(self, uri: str) -> None:
        del self.versions[uri]
        document = types.TextDocumentIdentifier(uri=uri)
        self.text_document_did_close(types.DidCloseTextDocumentParams(text_document=document))

    async def diagnostics_now(self, uri: str) -> list[types.Diagnostic]:
        """The diagnostics of the document as it is now: pulled, or the next ones pushed for its version."""
        if self.pulls:
            params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            report = await asyncio.wait_for(self.text_document_diagnostic_async(params), TIMEOUT)
            return list(report.items)
        return list((await asyncio.wait_for(self._next_publish(uri), TIMEOUT)).diagnostics)

    async def _next_publish(self, uri: str) -> types.PublishDiagnosticsParams:
        while True:
            for index in range(self.seen.get(uri, 0), len(self.published)):
                params = self.published[index]
                if params.uri == uri:
                    self.seen[uri] = index + 1
                    if params.version == self.versions.get(uri):
                        return params
            await asyncio.sleep(0.01)

    async def actions(self, uri: str, diagnostics: list[types.Diagnostic], only: list[str] | None = None) -> list:
        start = types.Position(line=0, character=0)
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range if diagnostics else types.Range(start=start, end=start),
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
        return await asyncio.wait_for(self.text_document_code_action_async(params), TIMEOUT)

    async def resolved(self, action: types.CodeAction) -> types.CodeAction:
        if action.edit is None:
            action = await asyncio.wait_for(self.code_action_resolve_async(action), TIMEOUT)
        return action

    def applied(self, uri: str, edit: types.WorkspaceEdit) -> str:
        """The document's text after the edit, as the editor would apply it."""
        assert set(edit.changes) == {uri}
        text = self.texts[uri]
        spans = [(self.offset(text, e.range.start), self.offset(text, e.range.end), e.new_text) for e in edit.changes[uri]]
        for start, end, new_text in sorted(spans, reverse=True):  # from the end: earlier offsets stay valid
            text = text[:start] + new_text + text[end:]
        return text

    def offset(self, text: str, position: types.Position) -> int:
        lines = text.split("\n")
        codec, unit = CODECS[self.encoding]
        before = lines[position.line].encode(codec)[: position.character * unit].decode(codec)
        return sum(len(line) + 1 for line in lines[: position.line]) + len(before)

    def units(self, text: str) -> int:
        codec, unit = CODECS[self.encoding]
        return len(text.encode(codec)) // unit


def record_publish(ls: Editor, params: types.PublishDiagnosticsParams) -> None:
    ls.published.append(params)


def record_registration(ls: Editor, params: types.RegistrationParams) -> None:
    ls.registrations += params.registrations


def make_editor() -> Editor:
    editor = Editor(converter_factory=default_converter)
    register_lsp_features(editor, {
        **DEFAULT_CLIENT_FEATURES,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: record_publish,
        types.CLIENT_REGISTER_CAPABILITY: record_registration,
    })  # fmt: skip
    return editor


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "mllint", "server"], client_factory=make_editor)


@pytest_lsp.fixture(config=SERVER, scope="module", params=list(PROFILES))
async def editor(lsp_client: Editor, request):
    """One server per profile for the whole module; each test uses its own directory and documents."""
    capabilities = client_capabilities(PROFILES[request.param])
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


def codes(diagnostics: list[types.Diagnostic]) -> list[tuple[int, str]]:
    return [(d.range.start.line, d.code) for d in diagnostics]


async def test_the_encoding_is_the_one_the_client_prefers(editor: Editor):
    offered = editor.capabilities.general.position_encodings if editor.capabilities.general else None
    assert editor.encoding == (offered or ["utf-16"])[0]


async def test_diagnostics_of_the_buffer_with_ranges_in_the_client_encoding(editor: Editor, tmp_path: Path):
    (tmp_path / "train.py").write_text("total = 1\n")  # the file on disk has no finding: the buffer has one
    text = 'import torch\nlabel = "🔥 héllo"; model.eval\n'
    uri = editor.open(tmp_path / "train.py", text)
    [diagnostic] = await editor.diagnostics_now(uri)
    # 19 characters before it: 20 UTF-16 units (🔥 takes 2), 23 UTF-8 bytes (🔥 takes 4, é 2).
    start = {"utf-16": 20, "utf-8": 23}[editor.encoding]
    assert diagnostic.range == types.Range(
        start=types.Position(line=1, character=start), end=types.Position(line=1, character=start + len("model.eval"))
    )
    assert diagnostic.code == "ML301"
    assert diagnostic.source == "mllint"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.message == "`model.eval` is not called: the statement does nothing"
    assert diagnostic.code_description is None  # no documentation URL is set: no link
    editor.close(uri)


async def test_quick_fix_edit_produces_the_fixed_text(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", 'label = "🔥"; model.eval\nx = 1\n')
    [diagnostic] = await editor.diagnostics_now(uri)
    actions = await editor.actions(uri, [diagnostic])
    [fix] = [a for a in actions if a.is_preferred]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.title == "mllint (ML301): Call `model.eval()`"
    assert editor.applied(uri, fix.edit) == 'label = "🔥"; model.eval()\nx = 1\n'
    assert [a.title for a in actions if a.kind == types.CodeActionKind.QuickFix and not a.is_preferred] == [
        "mllint (ML301): Disable for this line"
    ]
    editor.close(uri)


async def test_an_unsafe_fix_is_offered_but_not_preferred_nor_in_fix_all(editor: Editor, tmp_path: Path):
    text = "import torch.nn.functional as F\nloss = F.cross_entropy(F.softmax(logits, dim=1), target)\n"
    uri = editor.open(tmp_path / "train.py", text)
    [diagnostic] = await editor.diagnostics_now(uri)
    [fix, _noqa] = await editor.actions(uri, [diagnostic], only=[types.CodeActionKind.QuickFix])
    assert fix.title == "mllint (ML101): Remove the softmax: pass the logits (unsafe fix)" and not fix.is_preferred
    assert editor.applied(uri, fix.edit) == text.replace("F.softmax(logits, dim=1)", "logits")
    [fix_all] = await editor.actions(uri, [], only=[types.CodeActionKind.SourceFixAll])
    assert not (await editor.resolved(fix_all)).edit.changes[uri]
    editor.close(uri)


async def test_noqa_action_adds_a_comment_or_merges_into_one(editor: Editor, tmp_path: Path):
    text = 'model.eval\nmodel.train  # noqa: F401\nnote = "é"; model.step\n"""a string\n""".eval\n'
    uri = editor.open(tmp_path / "train.py", text)
    diagnostics = await editor.diagnostics_now(uri)
    assert codes(diagnostics) == [(0, "ML301"), (1, "ML301"), (2, "ML301"), (3, "ML301")]
    results = []
    for diagnostic in diagnostics:
        actions = await editor.actions(uri, [diagnostic], only=[types.CodeActionKind.QuickFix])
        [noqa] = [a for a in actions if a.title == "mllint (ML301): Disable for this line"]
        fixed = editor.applied(uri, (await editor.resolved(noqa)).edit)
        results.append(fixed.split("\n")[diagnostic.range.start.line])
    assert results == [
        "model.eval  # noqa: ML301",
        "model.train  # noqa: F401, ML301",
        'note = "é"; model.step  # noqa: ML301',
        '"""a string',  # a comment there would be inside the string: no edit
    ]
    editor.close(uri)


async def test_fix_all_edit_is_computed_on_resolve(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", "model.eval\nloss = 1\noptimizer.zero_grad\n")
    await editor.diagnostics_now(uri)
    [action] = await editor.actions(uri, [], only=[types.CodeActionKind.SourceFixAll])
    assert action.kind == "source.fixAll.mllint" and action.edit is None
    resolved = await asyncio.wait_for(editor.code_action_resolve_async(action), TIMEOUT)
    assert editor.applied(uri, resolved.edit) == "model.eval()\nloss = 1\noptimizer.zero_grad()\n"
    editor.close(uri)


async def test_hover_on_a_noqa_code_shows_the_rule_documentation(editor: Editor, tmp_path: Path):
    line = 'label = "🔥"; model.eval  # noqa: ML301, ML999'
    uri = editor.open(tmp_path / "train.py", line + "\n")
    start = editor.units(line[: line.index("ML301")])

    async def hover(line: int, character: int) -> types.Hover | None:
        position = types.Position(line=line, character=character)
        params = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
        return await asyncio.wait_for(editor.text_document_hover_async(params), TIMEOUT)

    result = await hover(0, start + 2)
    assert result.contents.kind == types.MarkupKind.Markdown
    assert result.contents.value.startswith("**ML301** `method-not-called`")
    assert "## What it does" in result.contents.value
    code_start, code_end = types.Position(line=0, character=start), types.Position(line=0, character=start + 5)
    assert result.range == types.Range(start=code_start, end=code_end)
    assert await hover(0, 0) is None  # not in a noqa comment
    assert await hover(0, editor.units(line) - 1) is None  # ML999 is no rule
    assert await hover(7, 3) is None  # past the end of the document
    editor.close(uri)


async def test_a_changed_configuration_is_picked_up(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", "model.eval\n")
    assert codes(await editor.diagnostics_now(uri)) == [(0, "ML301")]
    config = tmp_path / "pyproject.toml"
    broken = f"mllint configuration error: {config}:2:1: `tool.mllint.ignore`: expected an array of strings, got an integer"
    finding = "`model.eval` is not called: the statement does nothing"
    for ignore, expected in (('["ML301"]', []), ("5", [broken]), ("[]", [finding])):
        config.write_text(f"[tool.mllint]\nignore = {ignore}\n")
        change = types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Changed)
        editor.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[change]))
        assert [d.message for d in await editor.diagnostics_now(uri)] == expected
    if editor.capabilities.workspace.did_change_watched_files.dynamic_registration:
        [registration] = [r for r in editor.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
        watched = [watcher["globPattern"] for watcher in registration.register_options["watchers"]]
        assert watched == ["**/mllint.toml", "**/pyproject.toml", "**/*.yaml", "**/*.yml"]
    editor.close(uri)


CONFIGURED = """import torch.nn as nn
import yaml

LOSSES = {"NLLLoss": nn.NLLLoss, "CrossEntropyLoss": nn.CrossEntropyLoss}


def run(x, y):
    settings = yaml.safe_load(open("run.yaml"))
    objective = LOSSES[settings["loss"]]()
    objective(nn.Linear(4, 3)(x), y).backward()
"""


async def test_a_changed_yaml_file_the_code_loads_is_picked_up(editor: Editor, tmp_path: Path):
    """A document whose lint read `run.yaml` is linted again when that file changes; the others are not."""
    run_yaml = tmp_path / "run.yaml"
    run_yaml.write_text("loss: NLLLoss\n")
    uri = editor.open(tmp_path / "train.py", CONFIGURED)
    other = editor.open(tmp_path / "other.py", "x = 1\n")
    assert codes(await editor.diagnostics_now(uri)) == [(9, "ML102")]
    assert await editor.diagnostics_now(other) == []
    published = len(editor.published)
    run_yaml.write_text("loss: CrossEntropyLoss\n")
    change = types.FileEvent(uri=run_yaml.as_uri(), type=types.FileChangeType.Changed)
    editor.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[change]))
    assert await editor.diagnostics_now(uri) == []
    if not editor.pulls:
        assert {p.uri for p in editor.published[published:]} == {uri}
    editor.close(uri)
    editor.close(other)


async def test_a_syntax_error_is_a_diagnostic_and_the_server_carries_on(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", "def train(:\n    pass\n")
    [diagnostic] = await editor.diagnostics_now(uri)
    assert diagnostic.code == "ML002" and diagnostic.range.start.line == 0
    editor.change(uri, "def train(model):\n    model.train\n")
    assert codes(await editor.diagnostics_now(uri)) == [(1, "ML301")]
    editor.close(uri)


async def test_a_document_over_the_size_limit_gets_the_commands_ml001(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "huge.py", "x = 1\n" * 1_000_000 + "model.eval\n")
    [diagnostic] = await editor.diagnostics_now(uri)
    assert (diagnostic.code, diagnostic.message) == ("ML001", "file is 5.7 MB, larger than the 5 MB mllint reads; not linted")
    editor.change(uri, "model.eval\n")
    assert codes(await editor.diagnostics_now(uri)) == [(0, "ML301")]
    editor.close(uri)


async def test_quick_edits_are_linted_once_for_the_last_text(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", "x = 1\n")
    assert await editor.diagnostics_now(uri) == []
    for text in ("model.eval\n", "model.eval\nmodel.train\n", "x = 1\nmodel.train\n"):
        editor.change(uri, text)
    assert codes(await editor.diagnostics_now(uri)) == [(1, "ML301")]
    assert [p.version for p in editor.published if p.uri == uri][1:] == ([] if editor.pulls else [4])
    editor.close(uri)


async def test_closing_a_document_clears_its_diagnostics(editor: Editor, tmp_path: Path):
    (tmp_path / "train.py").write_text("model.eval\n")  # never read: only open buffers are linted
    uri = editor.open(tmp_path / "train.py", "model.eval\n")
    assert len(await editor.diagnostics_now(uri)) == 1
    editor.close(uri)
    assert await editor.diagnostics_now(uri) == []


async def test_excluded_files_get_no_diagnostics(editor: Editor, tmp_path: Path):
    (tmp_path / "mllint.toml").write_text('extend-exclude = ["generated"]\n')
    uri = editor.open(tmp_path / "generated" / "train.py", "model.eval\n")
    assert await editor.diagnostics_now(uri) == []
    editor.close(uri)


async def test_a_failing_request_gets_an_error_and_the_server_carries_on(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", "model.eval\n")
    await editor.diagnostics_now(uri)
    data = {"uri": uri, "version": 1}  # no line number
    broken = types.CodeAction(title="mllint (ML301): Disable for this line", kind=types.CodeActionKind.QuickFix, data=data)
    with pytest.raises(JsonRpcInternalError):
        await asyncio.wait_for(editor.code_action_resolve_async(broken), TIMEOUT)
    editor.change(uri, "model.train\n")
    assert codes(await editor.diagnostics_now(uri)) == [(0, "ML301")]
    editor.close(uri)


async def test_the_check_command_does_not_load_the_server(tmp_path: Path):
    (tmp_path / "train.py").write_text("model.eval\n")
    script = (
        "import sys\nfrom click.testing import CliRunner\nfrom mllint.cli import main\n"
        f"result = CliRunner().invoke(main, ['check', '--no-cache', {str(tmp_path / 'train.py')!r}])\n"
        "assert result.exit_code == 1, result.output\nassert 'pygls' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, timeout=60)


async def test_a_notebooks_python_cells_are_linted_as_one_program(editor: Editor, tmp_path: Path):
    notebook_uri = (tmp_path / "train.ipynb").as_uri()
    cells = [
        (types.NotebookCellKind.Code, "%matplotlib inline\nimport torch.nn as nn\ncriterion = nn.CrossEntropyLoss()"),
        (types.NotebookCellKind.Markup, "## Training"),
        (types.NotebookCellKind.Code, "probs = logits.softmax(dim=1)\nloss = criterion(probs, y)\nmodel.eval"),
    ]
    uris = [f"vscode-notebook-cell:{tmp_path / 'train.ipynb'}#cell{i}" for i in range(len(cells))]
    documents = []
    for uri, (kind, text) in zip(uris, cells):
        editor.texts[uri], editor.versions[uri] = text, 1
        language = "python" if kind == types.NotebookCellKind.Code else "markdown"
        documents.append(types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text))
    notebook = types.NotebookDocument(
        uri=notebook_uri, notebook_type="jupyter-notebook", version=1,
        cells=[types.NotebookCell(kind=kind, document=uri) for uri, (kind, _) in zip(uris, cells)],
    )  # fmt: skip
    editor.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(notebook_document=notebook, cell_text_documents=documents)
    )
    assert codes(await editor.diagnostics_now(uris[0])) == []
    diagnostics = await editor.diagnostics_now(uris[2])
    assert codes(diagnostics) == [(1, "ML101"), (2, "ML301")]
    assert diagnostics[0].message.startswith("`probs` is softmax output (cell 3, line 1)")
    actions = await editor.actions(uris[2], [diagnostics[1]])
    [fix] = [a for a in actions if a.is_preferred]
    assert editor.applied(uris[2], fix.edit) == cells[2][1] + "()"
    assert not await editor.actions(uris[2], [], only=["source.fixAll.mllint"])  # it would see one cell only
    editor.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=notebook_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=uri) for uri in uris],
        )
    )


async def test_the_language_server_logs_the_traceback_of_an_internal_error(caplog):
    crash = Finding("train.py", Position(1, 1), Position(1, 1), "ML009", "internal-error", "rule crashed", Severity.ERROR)
    crash = dataclasses.replace(crash, traceback="Traceback (most recent call last):\nValueError: boom\n")
    to_diagnostic(crash, Buffer("model\n", None), 1)
    assert caplog.records[-1].getMessage() == (
        "train.py:1: ML009 rule crashed\nTraceback (most recent call last):\nValueError: boom\n"
    )


async def test_saving_a_caller_lints_the_open_callee_again(editor: Editor, tmp_path: Path):
    models = "import torch.nn.functional as F\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return F.softmax(x, dim=1)\n"
    (tmp_path / "models.py").write_text(models)
    caller = "from torch import nn\n\nfrom engine import train\nfrom models import Net\n\ntrain({model}, nn.CrossEntropyLoss())\n"
    main = tmp_path / "main.py"
    main.write_text(caller.format(model="None"))
    engine = editor.open(tmp_path / "engine.py", "def train(model, criterion):\n    return criterion(model(1), 0)\n")
    assert codes(await editor.diagnostics_now(engine)) == []
    main.write_text(caller.format(model="Net()"))
    editor.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=main.as_uri())))
    assert codes(await editor.diagnostics_now(engine)) == [(1, "ML101")]
    editor.close(engine)


async def test_an_unsaved_caller_counts_and_its_edits_and_closing_lint_the_open_callee_again(editor: Editor, tmp_path: Path):
    models = "import torch.nn.functional as F\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return F.softmax(x, dim=1)\n"
    (tmp_path / "models.py").write_text(models)
    caller = "from torch import nn\n\nfrom engine import train\nfrom models import Net\n\ntrain({model}, nn.CrossEntropyLoss())\n"
    (tmp_path / "main.py").write_text(caller.format(model="None"))
    engine = editor.open(tmp_path / "engine.py", "def train(model, criterion):\n    return criterion(model(1), 0)\n")
    assert codes(await editor.diagnostics_now(engine)) == []
    main = editor.open(tmp_path / "main.py", caller.format(model="None"))
    editor.change(main, caller.format(model="Net()"))  # not saved: the file still passes None
    assert codes(await editor.diagnostics_now(engine)) == [(1, "ML101")]
    editor.close(main)
    assert codes(await editor.diagnostics_now(engine)) == []
    editor.close(engine)


async def test_a_finding_made_through_a_call_site_points_to_it(editor: Editor, tmp_path: Path):
    models = "import torch.nn.functional as F\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return F.softmax(x, dim=1)\n"
    (tmp_path / "models.py").write_text(models)
    main = 'from torch import nn\n\nfrom engine import train\nfrom models import Net\n\nlabel = "🔥"; train(Net(), nn.CrossEntropyLoss())\n'
    (tmp_path / "main.py").write_text(main, encoding="utf-8")
    engine = editor.open(tmp_path / "engine.py", "def train(model, criterion):\n    return criterion(model(1), 0)\n")
    [diagnostic] = await editor.diagnostics_now(engine)
    assert diagnostic.code == "ML101"
    [related] = diagnostic.related_information
    # `train` after 14 characters: 15 UTF-16 units (🔥 takes 2), 17 UTF-8 bytes (🔥 takes 4).
    start = types.Position(line=5, character=editor.units('label = "🔥"; '))
    end = types.Position(line=5, character=editor.units('label = "🔥"; train(Net(), nn.CrossEntropyLoss())'))
    assert related.location == types.Location((tmp_path / "main.py").as_uri(), types.Range(start, end))
    assert related.message == "call site: `train(...)`"
    editor.close(engine)


async def test_related_call_sites_in_open_buffers_and_in_notebooks_on_disk(tmp_path: Path):
    engine = str(tmp_path / "engine.py")
    sites = (
        Related(engine, Position(2, 5), Position(2, 16), "call site: `step(...)`"),
        Related(str(tmp_path / "explore.ipynb"), Position(3, 1), Position(3, 9), "call site: `train(...)`", cell=2),
    )
    finding = dataclasses.replace(
        Finding(engine, Position(1, 1), Position(1, 6), "ML101", "softmax-into-cross-entropy", "m", Severity.ERROR),
        related=sites,
    )
    buffer = Buffer("model\né = step(model)\n", "utf-8")
    places = RelatedPlaces("utf-8", {(engine, None): ("untitled:engine", buffer)})
    [here, notebook] = to_diagnostic(finding, buffer, 1, places).related_information
    start = types.Position(line=1, character=len("é = ".encode()))  # the open buffer's text, in UTF-8 bytes
    end = types.Position(line=1, character=len("é = step(model)".encode()))
    assert here == types.DiagnosticRelatedInformation(types.Location("untitled:engine", types.Range(start, end)), sites[0].message)
    origin = types.Position(line=0, character=0)
    location = types.Location((tmp_path / "explore.ipynb").as_uri(), types.Range(origin, origin))
    assert notebook == types.DiagnosticRelatedInformation(location, "call site: `train(...)` (cell 2, line 3)")


async def test_a_related_call_site_in_another_open_document_is_placed_in_its_unsaved_text(tmp_path: Path):
    """The lint read the open buffer, not the file: the call site's range is the buffer's."""
    main = tmp_path / "main.py"
    main.write_text("train(model)\n")
    use_buffers({str(main): "é = train(model)\n"})
    try:
        site = Related(str(main), Position(1, 5), Position(1, 17), "call site: `train(...)`")
        finding = dataclasses.replace(
            Finding(str(tmp_path / "engine.py"), Position(1, 1), Position(1, 2), "ML101", "softmax-into-cross-entropy", "m", Severity.ERROR),
            related=(site,),
        )
        [related] = to_diagnostic(finding, Buffer("x\n", "utf-8"), 1, RelatedPlaces("utf-8", {})).related_information
    finally:
        use_buffers({})
    start = types.Position(line=0, character=len("é = ".encode()))
    end = types.Position(line=0, character=len("é = train(model)".encode()))
    assert related.location == types.Location(main.as_uri(), types.Range(start, end))


async def test_a_cross_file_fix_is_one_workspace_edit_of_the_file_with_the_activation(editor: Editor, tmp_path: Path):
    """The softmax is in models.py (open, with unsaved edits), the loss in engine.py: the quick fix of
    engine.py's finding edits models.py's buffer, titled and graded like the fix of the same file."""
    models = "import torch.nn.functional as F\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return F.softmax(x, dim=1)\n"
    (tmp_path / "models.py").write_text(models)
    unsaved = '"""Models."""\n' + models
    models_uri = editor.open(tmp_path / "models.py", unsaved)
    engine_text = "from torch import nn\n\nfrom models import Net\n\nloss = nn.CrossEntropyLoss()(Net()(1), 0)\n"
    engine = editor.open(tmp_path / "engine.py", engine_text)
    [diagnostic] = [d for d in await editor.diagnostics_now(engine) if d.code == "ML101"]
    [fix, _noqa] = await editor.actions(engine, [diagnostic], only=[types.CodeActionKind.QuickFix])
    assert fix.title == "mllint (ML101): Remove the softmax: pass the logits (in models.py) (unsafe fix)"
    assert not fix.is_preferred
    assert editor.applied(models_uri, fix.edit) == unsaved.replace("F.softmax(x, dim=1)", "x")
    [fix_all] = await editor.actions(engine, [], only=[types.CodeActionKind.SourceFixAll])
    assert not (await editor.resolved(fix_all)).edit.changes[engine]  # fix-all: this document's safe fixes only
    editor.close(engine)
    editor.close(models_uri)
