"""The language server's settings from the editor (`initializationOptions`, `workspace/configuration`,
`workspace/didChangeConfiguration`), a documentation URL when one is set, and its robustness to broken
messages: a request with malformed parameters gets an error response, a broken header loses nothing
after it. Driven by pytest-lsp with the client profiles of tests/test_lsp.py."""
from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, client_capabilities

from mllint.editor_settings import EditorSettings
from tests.test_lsp import PROFILES, TIMEOUT, Editor, codes, make_editor

pytestmark = pytest.mark.asyncio(loop_scope="module")

INITIAL = {"mllint": {"extendSelect": ["ML801"]}}  # an opt-in rule, on only through the editor's settings
DOCS = "https://docs.example.org/mllint/rules"
SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "mllint", "server"], client_factory=make_editor,
    server_env={**os.environ, "MLLINT_DOCS_URL": DOCS},
)  # fmt: skip
LOAD = "import torch\nstate = torch.load('model.pt')\nmodel.eval\n"


@pytest_lsp.fixture(config=SERVER, scope="module", params=list(PROFILES))
async def editor(lsp_client: Editor, request):
    capabilities = client_capabilities(PROFILES[request.param])
    params = types.InitializeParams(capabilities=capabilities, initialization_options=INITIAL)
    result = await lsp_client.initialize_session(params)
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


def change_settings(editor: Editor, settings: dict | None) -> None:
    """Settings as an editor changes them: served for `workspace/configuration`, and announced."""
    editor.set_configuration(settings, section="mllint")
    editor.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"mllint": settings}))


async def pulled_or_pushed(editor: Editor, uri: str, expected: list) -> list[types.Diagnostic]:
    """Diagnostics after a settings change: pulled again until they match, or the next pushed ones."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        if editor.pulls:
            diagnostics = await editor.diagnostics_now(uri)
        else:
            diagnostics = list((await asyncio.wait_for(editor._next_publish(uri), TIMEOUT)).diagnostics)
        if codes(diagnostics) == expected or time.monotonic() > deadline:
            return diagnostics
        if editor.pulls:
            await asyncio.sleep(0.05)


async def test_initialization_options_select_rules(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", LOAD)
    assert codes(await editor.diagnostics_now(uri)) == [(1, "ML801"), (2, "ML301")]
    editor.close(uri)


async def test_settings_from_workspace_configuration_replace_them_and_apply_at_once(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", LOAD)
    assert codes(await editor.diagnostics_now(uri)) == [(1, "ML801"), (2, "ML301")]
    change_settings(editor, {"ignore": ["ML301"]})
    assert codes(await pulled_or_pushed(editor, uri, [])) == []  # ML801 is opt-in again: the options are replaced
    change_settings(editor, None)  # no settings: the initialization options again
    assert codes(await pulled_or_pushed(editor, uri, [(1, "ML801"), (2, "ML301")])) == [(1, "ML801"), (2, "ML301")]
    editor.close(uri)


async def test_unsafe_fixes_setting_puts_them_in_fix_all(editor: Editor, tmp_path: Path):
    text = "import torch.nn.functional as F\nloss = F.cross_entropy(F.softmax(logits, dim=1), target)\n"
    uri = editor.open(tmp_path / "train.py", text)
    await editor.diagnostics_now(uri)
    change_settings(editor, {"unsafeFixes": True})
    await pulled_or_pushed(editor, uri, [(1, "ML101")])
    [fix_all] = await editor.actions(uri, [], only=[types.CodeActionKind.SourceFixAll])
    assert fix_all.title == "mllint: Fix all problems, unsafe fixes included"
    assert editor.applied(uri, (await editor.resolved(fix_all)).edit) == text.replace("F.softmax(logits, dim=1)", "logits")
    change_settings(editor, None)
    await pulled_or_pushed(editor, uri, [(1, "ML101")])
    editor.close(uri)


async def test_a_configuration_file_named_in_the_settings_and_a_bad_setting(editor: Editor, tmp_path: Path):
    (tmp_path / "custom.toml").write_text('ignore = ["ML301"]\n')
    uri = editor.open(tmp_path / "train.py", "model.eval\n")
    assert codes(await editor.diagnostics_now(uri)) == [(0, "ML301")]
    change_settings(editor, {"configuration": str(tmp_path / "custom.toml")})
    assert codes(await pulled_or_pushed(editor, uri, [])) == []
    change_settings(editor, {"select": "ML3"})
    [broken] = await pulled_or_pushed(editor, uri, [(0, None)])
    assert broken.message == "mllint configuration error: mllint settings error: `select`: expected a list of codes, got 'ML3'"
    change_settings(editor, None)
    assert codes(await pulled_or_pushed(editor, uri, [(0, "ML301")])) == [(0, "ML301")]
    editor.close(uri)


async def test_with_a_documentation_url_the_code_and_the_hover_link_to_the_rules_page(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", "model.eval  # noqa: ML004\n")
    [diagnostic] = [d for d in await editor.diagnostics_now(uri) if d.code == "ML301"]
    assert diagnostic.code_description.href == f"{DOCS}/ml301.md"
    position = types.Position(line=0, character=len("model.eval  # noqa: ML0"))
    hover = await editor.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), position))
    assert hover.contents.value.startswith(f"**ML004** `unknown-noqa-code` ([documentation]({DOCS}/ml004.md))")
    editor.close(uri)


async def test_a_request_with_malformed_parameters_gets_an_error_response(editor: Editor, tmp_path: Path):
    uri = editor.open(tmp_path / "train.py", "model.eval\n")
    malformed = {"textDocument": {"uri": uri}, "position": {"line": "first"}}
    typed = editor.protocol.get_message_type
    # the hover request's dict as it is, not as HoverParams (the other messages typed as usual)
    editor.protocol.get_message_type = lambda method: None if method == types.TEXT_DOCUMENT_HOVER else typed(method)
    try:
        with pytest.raises(JsonRpcInvalidParams):
            await asyncio.wait_for(editor.protocol.send_request_async(types.TEXT_DOCUMENT_HOVER, malformed), TIMEOUT)
    finally:
        editor.protocol.get_message_type = typed
    assert codes(await editor.diagnostics_now(uri)) == [(0, "ML301")]  # and it goes on
    editor.close(uri)


async def test_settings_parse_nested_or_flat_and_set_the_log_level(tmp_path):
    nested = EditorSettings.parse({"mllint": {"ignore": ["ML3"], "configuration": "cfg.toml", "logLevel": "DEBUG"}}, str(tmp_path))
    assert (nested.ignore, nested.configuration, nested.log_level) == (("ML3",), str(tmp_path / "cfg.toml"), "debug")
    assert EditorSettings.parse({"unsafeFixes": True}, None).unsafe_fixes
    assert EditorSettings.parse(None, None) == EditorSettings()
    assert EditorSettings.parse({"colour": 1}, None).error.startswith("mllint settings error: unknown setting 'colour'")
    assert "`logLevel`" in EditorSettings.parse({"logLevel": "loud"}, None).error
    from mllint.server import MllintServer

    logger = logging.getLogger("mllint")
    try:
        MllintServer().configure({"logLevel": "debug"}, None)
        assert logger.getEffectiveLevel() == logging.DEBUG
        MllintServer().configure({"logLevel": "error"}, None)
        assert logger.getEffectiveLevel() == logging.ERROR
    finally:
        logger.setLevel(logging.NOTSET)


# The transport, byte for byte: a real `mllint server` process.


def frame(message: dict | bytes, header: bytes | None = None) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return (header if header is not None else b"Content-Length: %d\r\n" % len(body)) + b"\r\n" + body


def request(number: int, method: str, params: dict | None) -> dict:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


def responses(stream, count: int) -> list[dict]:
    """The first `count` responses the server writes (notifications skipped), within the timeout."""
    found: list[dict] = []

    def read() -> None:
        while len(found) < count:
            headers = [stream.readline()]
            while headers[-1].strip():
                headers.append(stream.readline())
            if not headers[0]:
                return
            length = int(headers[0].split(b":")[1])
            message = json.loads(stream.read(length))
            if "id" in message and "method" not in message:
                found.append(message)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(TIMEOUT)
    return found


async def test_a_broken_header_loses_no_request_after_it(tmp_path):
    server = subprocess.Popen([sys.executable, "-m", "mllint", "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        initialize = request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        broken_length = frame(request(2, "shutdown", None), header=b"Content-Length: twelve\r\n")
        invalid_json = frame(b"{not json")
        server.stdin.write(frame(initialize) + broken_length + invalid_json + frame(request(3, "shutdown", None)))
        server.stdin.flush()
        first, parse_error, shutdown = responses(server.stdout, 3)
        assert first["id"] == 1 and "capabilities" in first["result"]
        assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
        assert shutdown == {"jsonrpc": "2.0", "id": 3, "result": None}
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.close()
        assert server.wait(TIMEOUT) == 0
        assert b"a message without a valid Content-Length header was skipped" in server.stderr.read()
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("first", [b"", frame(request(2, "shutdown", None), header=b"Content-Length: twelve\r\n")])
async def test_initialize_is_answered_once_whether_first_or_after_a_broken_message(tmp_path, first):
    """Answered before the server is imported when it comes first; by the server, from the bytes read
    already, when a broken message comes before it. Either way once, and the server goes on."""
    server = subprocess.Popen([sys.executable, "-m", "mllint", "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        initialize = request(1, "initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        hover = request(3, "textDocument/hover", {"textDocument": {"uri": (tmp_path / "a.py").as_uri()}, "position": {"line": 0, "character": 0}})
        server.stdin.write(first + frame(initialize) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        server.stdin.write(frame(hover) + frame(request(4, "shutdown", None)))
        server.stdin.flush()
        answers = responses(server.stdout, 3)
        assert [a["id"] for a in answers] == [1, 3, 4]
        assert answers[0]["result"]["capabilities"]["positionEncoding"] == "utf-16" and answers[1] == {"jsonrpc": "2.0", "id": 3, "result": None}
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.close()
        assert server.wait(TIMEOUT) == 0
    finally:
        server.kill()
        server.wait()
