"""`mllint server` and `mllint --version` start without the command line's check machinery: editors and hooks
wait for them. `initialize` is answered before pygls is imported, as pygls would answer it."""
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder

from mllint import __version__
from mllint.lsp_start import initialize_reply
from mllint.server import CONVERTER, server

PROBE = """
import sys
import mllint.lsp_start
mllint.lsp_start.start = lambda: print(sorted(m for m in {modules} if m in sys.modules))
sys.argv = {argv}
from mllint.__main__ import run
run()
"""
VERSION_PROBE = """
import sys
sys.argv = ["mllint", "--version"]
from mllint.__main__ import run
run()
print(sorted(m for m in {modules} if m in sys.modules))
"""
CHECK_MACHINERY = ["mllint.cli", "mllint.config", "mllint.engine", "mllint.registry", "mllint.runner", "click"]
SERVER_LIBRARIES = ["lsprotocol", "pygls", "mllint.server"]


@pytest.mark.parametrize("argv", [["mllint", "server"], ["mllint", "server", "--stdio"]])
def test_the_server_starts_without_the_check_machinery(argv):
    probe = PROBE.format(modules=CHECK_MACHINERY + SERVER_LIBRARIES, argv=argv)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"


def test_the_version_is_answered_without_the_command_line_and_as_it_says_it():
    probe = VERSION_PROBE.format(modules=CHECK_MACHINERY)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout == f"mllint, version {__version__}\n[]\n"
    from mllint.cli import main

    assert CliRunner().invoke(main, ["--version"]).output == f"mllint, version {__version__}\n"


def test_a_check_imports_only_the_rules_a_file_gets_past_the_text_gates_of(tmp_path):
    """Selecting rules and naming findings needs the rule index only: a rule's module, and the analyses
    it imports, are loaded for a file that mentions what the rule looks for."""
    probe = """
import sys
from mllint.cli import main
sys.argv = ["mllint", "check", "--isolated", "--no-cache", "-q", "--select", "ALL", {path!r}]
try:
    main()
except SystemExit:
    pass
print(sorted(m.rpartition(".")[2][:5] for m in sys.modules if m.startswith(("mllint.rules.", "mllint.analysis.facets."))))
"""
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "step.py").write_text("model.eval\n")
    loaded = [subprocess.run([sys.executable, "-c", probe.format(path=str(tmp_path / name))], capture_output=True, text=True,
                             check=True).stdout.splitlines()[-1] for name in ("empty.py", "step.py")]  # fmt: skip
    assert loaded[0] == "[]"
    assert "ml301" in loaded[1] and "ml101" not in loaded[1] and "ml602" not in loaded[1]


def test_other_commands_still_go_through_the_command_line():
    result = subprocess.run([sys.executable, "-m", "mllint", "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("Usage: ")


# What changes pygls's answer: the position encodings offered, `willSave`/`willSaveWaitUntil` offered (and
# refused), notebooks supported; and what must not (file operations, other capabilities).
CLIENTS = [
    {},
    {"general": {"positionEncodings": ["utf-8", "utf-16"]}},
    {"general": {"positionEncodings": ["utf-32"]}, "notebookDocument": {"synchronization": {}}},
    {"general": {"positionEncodings": ["utf-7"]}},
    {"general": {}, "textDocument": {}, "notebookDocument": None},
    {"textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": False, "didSave": True}}},
    {"textDocument": {"synchronization": {"willSave": False}, "diagnostic": {}, "codeAction": {"resolveSupport": {"properties": ["edit"]}}},
     "workspace": {"workspaceFolders": True, "configuration": True, "fileOperations": {"didCreate": True, "willRename": True}},
     "window": {"workDoneProgress": True}},
]


def pygls_answer(request: dict) -> dict:
    """The result pygls gives the `initialize` request, from the server's features."""
    client = CONVERTER.structure(request["params"]["capabilities"], types.ClientCapabilities)
    features = server.protocol.fm
    capabilities = ServerCapabilitiesBuilder(
        client, {*features.features, *features.builtin_features}, features.feature_options, list(features.commands),
        server._text_document_sync_kind, server._notebook_document_sync,
        ServerCapabilitiesBuilder.choose_position_encoding(client),
    ).build()  # fmt: skip
    return CONVERTER.unstructure(types.InitializeResult(capabilities=capabilities, server_info=server.protocol.server_info))


@pytest.mark.parametrize("client", CLIENTS)
def test_initialize_is_answered_as_pygls_answers_it(client):
    request = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": client}}
    header, _, body = initialize_reply(json.dumps(request).encode()).partition(b"\r\n\r\n")
    assert header.startswith(b"Content-Length: %d\r\n" % len(body))
    assert json.loads(body) == {"jsonrpc": "2.0", "id": 7, "result": pygls_answer(request)}


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "id": 1, "method": "shutdown"},
    {"jsonrpc": "2.0", "method": "initialize", "params": {"capabilities": {}}},  # a notification
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {"general": []}}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {"general": {"positionEncodings": "utf-8"}}}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {"textDocument": {"synchronization": 1}}}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": None},
])  # fmt: skip
def test_other_first_messages_are_left_to_the_server(message):
    assert initialize_reply(json.dumps(message).encode()) is None
    assert initialize_reply(b"{not json") is None
