"""Editor latency through the language server, with a real LSP client (pygls's) over standard input/output.

    python benchmarks/editor.py                  # the first script of the series' corpus unit (or fixtures)
    python benchmarks/editor.py --file train.py --edits 20
    python benchmarks/editor.py --baseline /work/final/.venv/bin/python   # and another build's server, interleaved

Measured, as medians: `initialize` (from starting `mllint server` to its answer, and the request alone);
in pull mode (a client with the `textDocument/diagnostic` capability, as Neovim 0.10+), the time from an
edit to the diagnostics of the edited text, and of a pull of the unchanged text again (with `--baseline`,
both servers run side by side, their edits interleaved); in push mode (VS Code), the time from an edit to the
published diagnostics of its version, and that minus the server's debounce. The file is a training
script of about 2,000 lines (eight concatenated). On a busy machine wall times stretch: each is printed
with the CPU time the server process spent meanwhile (from /proc, on Linux), which does not.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from series import unit  # noqa: E402

PULL = types.ClientCapabilities(
    text_document=types.TextDocumentClientCapabilities(
        diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=False),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
    )
)
PUSH = types.ClientCapabilities(
    text_document=types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
    )
)


class Editor(LanguageClient):
    def __init__(self) -> None:
        super().__init__("mllint-benchmark", "1")
        self.published: dict[tuple[str, int | None], float] = {}

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.published[(params.uri, params.version)] = time.perf_counter()

    def cpu(self) -> float:
        """CPU seconds the server process has used so far (0 where /proc is not there)."""
        try:
            with open(f"/proc/{self._server.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def until_published(self, uri: str, version: int) -> float:
        while (uri, version) not in self.published:
            await asyncio.sleep(0.001)
        return self.published[(uri, version)]


async def session(capabilities: types.ClientCapabilities, directory: Path, python: str = sys.executable) -> tuple[Editor, float, float]:
    """A started server (run by `python`): the client, seconds from start to initialized, and the server's CPU seconds."""
    editor = Editor()
    start = time.perf_counter()
    await editor.start_io(python, "-m", "mllint", "server", cwd=str(directory))
    await editor.initialize_async(types.InitializeParams(capabilities=capabilities, root_uri=directory.as_uri()))
    done = time.perf_counter()
    cpu = editor.cpu()
    editor.initialized(types.InitializedParams())
    return editor, done - start, cpu


def open_document(editor: Editor, uri: str, text: str) -> None:
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    editor.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))


def change(editor: Editor, uri: str, text: str, version: int) -> None:
    document = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
    changes = [types.TextDocumentContentChangeWholeDocument(text=text)]
    editor.text_document_did_change(types.DidChangeTextDocumentParams(text_document=document, content_changes=changes))


def edited(text: str, version: int) -> str:
    """The text with a comment line added in the middle, as typing does (a comment: the text still parses)."""
    lines = text.splitlines(keepends=True)
    middle = len(lines) // 2
    return "".join(lines[:middle]) + f"# edit {version}\n" + "".join(lines[middle:])


async def pull_latency(directory: Path, path: Path, edits: int, pythons: list[str]) -> dict[str, dict[str, list[float]]]:
    """Per server interpreter, edits interleaved between the servers: seconds from an edit to the
    diagnostics of the edited text, and from a pull of the unchanged text again (as a client pulls when
    the user switches back to the document) to its diagnostics, each with the server's CPU seconds."""
    uri, text = path.as_uri(), path.read_text(encoding="utf-8")
    params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    editors = {}
    for python in pythons:
        editors[python], _, _ = await session(PULL, directory, python)
        open_document(editors[python], uri, text)
        await editors[python].text_document_diagnostic_async(params)  # the first lint reads the project
    times: dict[str, dict[str, list[float]]] = {python: {} for python in pythons}
    for version in range(2, edits + 2):
        for python, editor in editors.items():
            for name, edit in (("edit", True), ("again", False)):
                start, cpu_start = time.perf_counter(), editor.cpu()
                if edit:
                    change(editor, uri, edited(text, version), version)
                await editor.text_document_diagnostic_async(params)
                times[python].setdefault(name, []).append(time.perf_counter() - start)
                times[python].setdefault(f"{name} cpu", []).append(editor.cpu() - cpu_start)
    for editor in editors.values():
        await stop(editor)
    return times


async def push_latency(directory: Path, path: Path, edits: int) -> tuple[list[float], list[float]]:
    editor, _, _ = await session(PUSH, directory)
    uri, text = path.as_uri(), path.read_text(encoding="utf-8")
    open_document(editor, uri, text)
    await editor.until_published(uri, 1)
    samples, cpu = [], []
    for version in range(2, edits + 2):
        start, cpu_start = time.perf_counter(), editor.cpu()
        change(editor, uri, edited(text, version), version)
        samples.append(await editor.until_published(uri, version) - start)
        cpu.append(editor.cpu() - cpu_start)
    await stop(editor)
    return samples, cpu


async def initialize_times(directory: Path, runs: int, pythons: list[str]) -> dict[str, tuple[list[float], list[float]]]:
    """Per server interpreter, runs interleaved: seconds from start to the answer, and the server's CPU seconds then."""
    times: dict[str, tuple[list[float], list[float]]] = {python: ([], []) for python in pythons}
    for _ in range(runs):
        for python in pythons:
            editor, seconds, seconds_cpu = await session(PUSH, directory, python)
            times[python][0].append(seconds)
            times[python][1].append(seconds_cpu)
            await stop(editor)
    return times


async def stop(editor: Editor) -> None:
    await editor.shutdown_async(None)
    editor.exit(None)
    await editor.stop()


def milliseconds(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.0f} ms (min {min(samples) * 1000:.0f}, max {max(samples) * 1000:.0f})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, help="the document to edit (default: the series' unit)")
    parser.add_argument("--edits", type=int, default=15)
    parser.add_argument("--runs", type=int, default=5, help="server starts for `initialize`")
    parser.add_argument("--baseline", help="another build's python: its server is timed too (initialize interleaved)")
    args = parser.parse_args()
    pythons = [sys.executable, *([args.baseline] if args.baseline else [])]
    from mllint.server import DEBOUNCE_SECONDS

    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        path = directory / "train.py"
        if args.file:
            path = args.file.resolve()
            directory = path.parent
        else:
            try:
                path.write_text(unit("corpus"), encoding="utf-8")
            except SystemExit:
                path.write_text(unit("fixtures"), encoding="utf-8")
        lines = path.read_text(encoding="utf-8").count("\n")
        for python, (whole, cpu) in (await initialize_times(directory, args.runs, pythons)).items():
            print(f"{python}: initialize, from starting the server: {milliseconds(whole)}; server CPU {milliseconds(cpu)}")
        pulls = await pull_latency(directory, path, args.edits, pythons)
        for python, pull in pulls.items():
            print(f"{python}: pull, {lines}-line file, edit to diagnostics: {milliseconds(pull['edit'])}; server CPU {milliseconds(pull['edit cpu'])}")
            print(f"{python}: pull again, unchanged: {milliseconds(pull['again'])}; server CPU {milliseconds(pull['again cpu'])}")
        if args.baseline:
            this, baseline = pulls[sys.executable], pulls[args.baseline]
            ratios = {name: statistics.median(this[name]) / statistics.median(baseline[name]) for name in this}
            print("pull, this / baseline (medians): " + ", ".join(f"{name} {ratio:.2f}" for name, ratio in ratios.items()))
        push, cpu = await push_latency(directory, path, args.edits)
        print(f"push, edit to published diagnostics: {milliseconds(push)}; server CPU {milliseconds(cpu)}; "
              f"minus the {DEBOUNCE_SECONDS * 1000:.0f} ms debounce: {milliseconds([s - DEBOUNCE_SECONDS for s in push])}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
