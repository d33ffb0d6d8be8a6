"""A run's progress on a terminal: files done on standard error after a second, erased at the end;
nothing off a terminal, in machine formats or with --quiet."""
import io
import json
import os
import pty
import subprocess
import sys

from mllint import progress
from mllint.progress import Progress
from mllint.runner import FileResult


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_after_the_delay_the_files_done_are_drawn_on_one_line_then_erased(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    stream = Terminal()
    shown = Progress(3, stream, shown=True)
    for _ in range(3):
        shown.done(FileResult("a.py", []))
    shown.close()
    assert stream.getvalue() == "".join(f"\rmllint: {n}/3 files checked" for n in (1, 2, 3)) + "\r\x1b[K"


def test_a_short_run_or_one_not_shown_writes_nothing(monkeypatch):
    stream = Terminal()
    short = Progress(2, stream, shown=True)
    short.done(FileResult("a.py", []))
    short.close()
    monkeypatch.setattr(progress, "DELAY", 0.0)
    hidden = Progress(2, stream, shown=False)
    hidden.done(FileResult("a.py", []))
    hidden.close()
    assert stream.getvalue() == ""


PROBE = """
import sys
from mllint import progress
progress.DELAY = progress.INTERVAL = 0.0
sys.argv = ["mllint", "check", "--isolated", "--no-cache", "-j", "1", *sys.argv[1:]]
from mllint.__main__ import run
run()
"""


def run_on_a_terminal(tmp_path, *options):
    """mllint with its standard error on a terminal (a pty), standard output a pipe: (stdout, stderr)."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("import torch\nx = 1\n")
    controller, terminal = pty.openpty()
    process = subprocess.run([sys.executable, "-c", PROBE, *options, str(tmp_path)], stdout=subprocess.PIPE,
                             stderr=terminal, text=True)  # fmt: skip
    os.close(terminal)
    error = b""
    try:
        while chunk := os.read(controller, 4096):
            error += chunk
    except OSError:  # the terminal's other end is closed
        pass
    os.close(controller)
    return process.stdout, error.decode()


def test_on_a_terminal_a_long_run_shows_its_progress_on_standard_error_only(tmp_path):
    out, error = run_on_a_terminal(tmp_path)
    assert "mllint: 2/2 files checked" in error and error.endswith("\r\x1b[K")
    assert out == "All checks passed!\n"


def test_machine_formats_and_quiet_runs_show_no_progress(tmp_path):
    out, error = run_on_a_terminal(tmp_path, "--output-format", "json")
    assert json.loads(out) == [] and error == ""
    out, error = run_on_a_terminal(tmp_path, "-q")
    assert out == "" and error == ""
