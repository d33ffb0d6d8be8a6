"""`mllint server` and `mllint --version` start without the command line's check machinery: editors and hooks wait for them."""
import subprocess
import sys

import pytest
from click.testing import CliRunner

from mllint import __version__

PROBE = """
import sys
import mllint.server
mllint.server.start = lambda: print(sorted(m for m in {modules} if m in sys.modules))
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


@pytest.mark.parametrize("argv", [["mllint", "server"], ["mllint", "server", "--stdio"]])
def test_the_server_starts_without_the_check_machinery(argv):
    probe = PROBE.format(modules=CHECK_MACHINERY, argv=argv)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"


def test_the_version_is_answered_without_the_command_line_and_as_it_says_it():
    probe = VERSION_PROBE.format(modules=CHECK_MACHINERY)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout == f"mllint, version {__version__}\n[]\n"
    from mllint.cli import main

    assert CliRunner().invoke(main, ["--version"]).output == f"mllint, version {__version__}\n"


def test_other_commands_still_go_through_the_command_line():
    result = subprocess.run([sys.executable, "-m", "mllint", "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("Usage: ")
