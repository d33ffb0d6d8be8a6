"""Bad input gets a clear finding, never a traceback, and never stops the run over the other files;
mllint never imports or runs the code it lints."""
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mllint.cli import main

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\n"


def run(*args: str):
    result = CliRunner().invoke(main, ["--no-cache", "--isolated", *args], catch_exceptions=False)
    return result.exit_code, result.output


def bad_inputs(directory: Path) -> dict[str, str]:
    """File name -> the code and message start mllint must report for it."""
    (directory / "python2.py").write_text('print "hello"\n')
    (directory / "invalid_utf8.py").write_bytes(b'x = "\xff"\n')
    (directory / "utf16_bom.py").write_bytes("x = 1\n".encode("utf-16"))
    (directory / "nul_byte.py").write_bytes(b"x = 1\n\x00\n")
    (directory / "huge.py").write_text("x = 1\n" * 1_000_000)
    (directory / "deep_parens.py").write_text("x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n")
    (directory / "deep_unary.py").write_text("x = " + "-" * 100_000 + "1\n")
    (directory / "empty.py").write_text("")
    (directory / "folder.py").mkdir()  # a directory with a source-like name is walked, not read
    (directory / "folder.py" / "inside.py").write_text(BUGGY)
    return {
        "python2.py": "ML002 SyntaxError: Missing parentheses in call to 'print'",
        "invalid_utf8.py": "ML001 cannot decode as utf-8",
        "utf16_bom.py": "ML001 source contains a NUL byte",
        "nul_byte.py": "ML001 source contains a NUL byte",
        "huge.py": "ML001 file is 5.7 MB, larger than the 5 MB mllint reads; not linted",
        "deep_parens.py": "ML002 SyntaxError: too many nested parentheses",
        "deep_unary.py": "ML002",
        "folder.py/inside.py": "ML301",
    }


def test_every_bad_input_gets_a_finding_and_the_rest_of_the_run_goes_on(tmp_path):
    expected = bad_inputs(tmp_path)
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "latin1.py").write_bytes("# -*- coding: latin-1 -*-\nname = 'é'\n".encode("latin-1"))
    status, output = run(str(tmp_path))
    lines = output.splitlines()
    for name, message in expected.items():
        matching = [line for line in lines if line.startswith(str(tmp_path / name) + ":")]
        assert len(matching) == 1, (name, output)
        assert message in matching[0], (name, matching[0])
    assert f"{tmp_path / 'buggy.py'}:3:1: ML301" in output
    assert not any("latin1.py" in line or "empty.py" in line for line in lines)
    assert "Traceback" not in output
    assert status == 1


def test_a_symlink_loop_does_not_hang(tmp_path):
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    status, output = run(str(tmp_path))
    assert output.splitlines()[0] == f"{tmp_path / 'buggy.py'}:3:1: ML301 `model.eval` is not called: the statement does nothing [*]"


def test_a_permission_denied_file_is_reported_even_when_running_as_root(tmp_path, monkeypatch):
    import builtins

    locked = tmp_path / "locked.py"
    locked.write_text("x = 1\n")
    (tmp_path / "buggy.py").write_text(BUGGY)
    real_open = builtins.open

    def denying_open(path, *args, **kwargs):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", denying_open)
    status, output = run("-j", "1", str(tmp_path))
    assert f"{locked}:1:1: ML001 cannot read file: Permission denied" in output
    assert f"{tmp_path / 'buggy.py'}:3:1: ML301" in output


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_a_permission_denied_file_is_reported(tmp_path):
    locked = tmp_path / "locked.py"
    locked.write_text("x = 1\n")
    locked.chmod(0)
    status, output = run(str(tmp_path))
    assert f"{locked}:1:1: ML001 cannot read file: Permission denied" in output


def test_a_file_deleted_after_discovery_is_reported(tmp_path, monkeypatch):
    import mllint.cli

    gone = tmp_path / "gone.py"
    gone.write_text("x = 1\n")
    discover = mllint.cli.discover

    def discover_then_delete(*args):
        files = discover(*args)
        gone.unlink()
        return files

    monkeypatch.setattr(mllint.cli, "discover", discover_then_delete)
    status, output = run("-j", "1", str(tmp_path))
    assert f"{gone}:1:1: ML001 cannot read file: No such file or directory" in output


def test_a_malformed_pyproject_is_a_usage_error_naming_the_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.mllint\nselect = \n")
    (tmp_path / "a.py").write_text("x = 1\n")
    result = CliRunner().invoke(main, ["--no-cache", str(tmp_path / "a.py")])
    assert result.exit_code == 2
    assert f"{tmp_path / 'pyproject.toml'}:1:13: invalid TOML" in result.output


def test_linted_code_is_never_imported_or_run(tmp_path):
    marker = tmp_path / "marker"
    payload = f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(3)\n"
    package = tmp_path / "victim"
    package.mkdir()
    (package / "__init__.py").write_text(payload)
    (package / "models.py").write_text(payload + "import torch\n")
    (tmp_path / "conftest.py").write_text(payload)
    (tmp_path / "setup.py").write_text(payload)
    (tmp_path / "train.py").write_text("import victim\nfrom victim.models import *\n" + payload)
    status, output = run(str(tmp_path))
    assert status == 0, output
    assert not marker.exists()
    assert "victim" not in sys.modules and "victim.models" not in sys.modules


def test_a_crash_outside_the_rules_is_reported_on_its_file_and_the_run_goes_on(tmp_path, monkeypatch):
    import mllint.runner

    (tmp_path / "a_crashes.py").write_text("x = 1\n")
    (tmp_path / "b_buggy.py").write_text(BUGGY)
    real = mllint.runner.check_path

    def crashing_on_a(path, selection, job):
        if path.endswith("a_crashes.py"):
            raise RecursionError("maximum recursion depth exceeded")
        return real(path, selection, job)

    monkeypatch.setattr(mllint.runner, "check_path", crashing_on_a)
    status, output = run("-j", "1", str(tmp_path))
    assert f"{tmp_path / 'a_crashes.py'}:1:1: ML009 mllint crashed on this file: RecursionError" in output
    assert f"{tmp_path / 'b_buggy.py'}:3:1: ML301" in output
    assert status == 2
