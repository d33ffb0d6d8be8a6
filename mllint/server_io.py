"""Reading the client's messages from standard input, more forgiving than pygls's own loop: a message whose
header is broken (no valid `Content-Length`) is skipped without losing the next one, and a request that
cannot be read (invalid JSON, parameters of the wrong shape) gets an error response instead of none."""
from __future__ import annotations

import io
import json
import logging
import threading

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcParseError
from pygls.protocol import JsonRPCProtocol

from mllint.lsp_start import CONTENT_LENGTH

logger = logging.getLogger("mllint.server")


class Prefixed:
    """Standard input with the bytes already read from it (by `lsp_start`) put back in front."""

    def __init__(self, prefix: bytes, stream) -> None:
        self.prefix, self.stream = io.BytesIO(prefix), stream

    def readline(self) -> bytes:
        line = self.prefix.readline()
        return line if line.endswith(b"\n") else line + self.stream.readline()

    def read(self, size: int) -> bytes:
        data = self.prefix.read(size)
        return data if len(data) == size else data + self.stream.read(size - len(data))


class Dropped:
    """A writer that sends nothing: the server's answer to an `initialize` request `lsp_start` answered."""

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


async def read_messages(stop_event: threading.Event, reader, protocol: JsonRPCProtocol) -> None:
    """Hand each message read to the protocol until standard input ends or the server stops."""
    length: int | None = None
    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            return
        if match := CONTENT_LENGTH.search(line):
            length = int(match.group(1))
        elif line.strip():
            continue  # another header (Content-Type), or what is left of a broken message
        elif length is None:
            logger.error("a message without a valid Content-Length header was skipped")
        else:
            body = await reader.readexactly(length)
            length = None
            if not body:
                return
            handle(body, protocol)


def handle(body: bytes, protocol: JsonRPCProtocol) -> None:
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except Exception as error:  # noqa: BLE001 - whatever the message, the server answers and goes on
        logger.error("a message could not be read: %s", error)
        reply_error(body, protocol, error)
        return
    try:
        protocol.handle_message(message)
    except Exception:  # the handlers' own failures: answered by pygls where it can
        logger.exception("a message could not be handled")


def reply_error(body: bytes, protocol: JsonRPCProtocol, error: Exception) -> None:
    """The error response of a request that could not be read (JSON-RPC: id null when even the id is lost)."""
    try:
        data = json.loads(body)
    except ValueError:
        error = JsonRpcParseError()  # sent as a plain dict: the converter would drop the `"id": null` it needs
        protocol._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": error.code, "message": error.message}})
        return
    if not isinstance(data, dict) or "method" not in data or "id" not in data:
        return  # a notification or a response: nothing to answer
    cause = error.__cause__ or error
    failure = error if isinstance(error, JsonRpcException) else JsonRpcInternalError()
    response = failure.to_response_error()
    response.message = f"{response.message}: {data['method']}: {type(cause).__name__}: {cause}"
    protocol._send_response(data["id"], error=response)
