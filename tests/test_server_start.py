"""`mllint server` starts without the command line's check machinery: editors wait for `initialize`."""
import subprocess
import sys

import pytest

PROBE = """
import sys
import mllint.server
mllint.server.start = lambda: print(sorted(m for m in {modules} if m in sys.modules))
sys.argv = {argv}
from mllint.__main__ import run
run()
"""
CHECK_MACHINERY = ["mllint.cli", "mllint.config", "mllint.engine", "mllint.registry", "mllint.runner", "click"]


@pytest.mark.parametrize("argv", [["mllint", "server"], ["mllint", "server", "--stdio"]])
def test_the_server_starts_without_the_check_machinery(argv):
    probe = PROBE.format(modules=CHECK_MACHINERY, argv=argv)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"


def test_other_commands_still_go_through_the_command_line():
    result = subprocess.run([sys.executable, "-m", "mllint", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("mllint, version")
