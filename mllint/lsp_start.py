"""The language server's start, `mllint server`: `initialize` is answered before pygls is imported.

An editor sends nothing else until `initialize` is answered, and importing pygls and lsprotocol (whose
`types` module builds some thousand classes) costs about half a second of CPU. So the first message is
read here, with the standard library alone: a well-formed `initialize` request gets the answer pygls would
give (tests/test_lsp_start.py compares the two for every client capability that changes it), then the
server is imported and handles the request, its own answer dropped. Anything else is handed to the server
unread.
"""
from __future__ import annotations

import json
import re
import sys

from mllint import __version__

# `search`, not `match`: a header glued to the end of a broken message's body (which ends without a line
# break) still starts the next message.
CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n?$", re.IGNORECASE)
ENCODINGS = ("utf-8", "utf-16", "utf-32")  # the position encodings pygls can use, chosen in the client's order
NOTEBOOK_SYNC = {"notebookSelector": [{"cells": [{"language": "python"}], "notebook": "*"}], "save": True}
CODE_ACTION_KINDS = ["quickfix", "source.fixAll.mllint"]


def capabilities(client: dict) -> dict | None:
    """The server's capabilities for a client's (None: capabilities not of the shape the protocol gives them)."""
    general, document = _part(client, "general"), _part(client, "textDocument")
    synchronization = _part(document, "synchronization") if document is not None else {}
    if general is None or document is None or synchronization is None:
        return None
    offered = general.get("positionEncodings")
    if offered is not None and not (isinstance(offered, list) and all(isinstance(e, str) for e in offered)):
        return None
    sync: dict = {"openClose": True, "change": 1}
    for key in ("willSave", "willSaveWaitUntil"):  # offered by the client, refused: mllint handles neither
        if synchronization.get(key) is not None:
            sync[key] = False
    sync["save"] = True
    answer: dict = {
        "positionEncoding": next((e for e in offered or () if e in ENCODINGS), "utf-16"),
        "textDocumentSync": sync,
        **({"notebookDocumentSync": NOTEBOOK_SYNC} if client.get("notebookDocument") is not None else {}),
        "hoverProvider": True,
        "codeActionProvider": {"codeActionKinds": CODE_ACTION_KINDS, "resolveProvider": True},
        "executeCommandProvider": {"commands": []},
        "diagnosticProvider": {"interFileDependencies": True, "workspaceDiagnostics": False, "identifier": "mllint"},
        "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
    }
    return answer


def _part(capabilities: dict, key: str) -> dict | None:
    """A part of the client's capabilities, empty when absent (None: not an object)."""
    part = capabilities.get(key)
    return {} if part is None else part if isinstance(part, dict) else None


def initialize_reply(body: bytes) -> bytes | None:
    """The answer to a message that is an `initialize` request (None: it is not one, or not well formed)."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not (isinstance(message, dict) and message.get("method") == "initialize" and isinstance(message.get("id"), (int, str))):
        return None
    params = message.get("params")
    client = params.get("capabilities") if isinstance(params, dict) else None
    answer = capabilities(client) if isinstance(client, dict) else None
    if answer is None:
        return None
    result = {"capabilities": answer, "serverInfo": {"name": "mllint", "version": __version__}}
    reply = json.dumps({"id": message["id"], "jsonrpc": "2.0", "result": result})
    return f"Content-Length: {len(reply)}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{reply}".encode()


def read_first(stdin) -> tuple[bytes, bytes | None]:
    """The bytes of the first message (its headers and body) and its body (None: not one well-framed message)."""
    read, length = b"", None
    while True:
        line = stdin.readline()
        read += line
        if not line:
            return read, None
        if match := CONTENT_LENGTH.search(line):
            length = int(match.group(1))
        elif line.strip():
            continue
        elif length is None:
            return read, None
        else:
            body = stdin.read(length)
            return read + body, body


def start() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    read, body = read_first(stdin)
    reply = initialize_reply(body) if body is not None else None
    if reply is not None:
        stdout.write(reply)
        stdout.flush()
    from mllint.server import start as serve

    serve(read if reply is None else b"", body if reply is not None else None)
