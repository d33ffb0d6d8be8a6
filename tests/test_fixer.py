import os
import stat

import pytest

from mllint import fixer
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Severity
from mllint.fixer import FileChanged, apply_fixes, fix_text, write_atomically


def edit_finding(start, end, content, applicability=Applicability.SAFE, code="ML301"):
    edit = Edit(Position(*start), Position(*end), content)
    fix = Fix("fix", (edit,), applicability)
    return Finding("x.py", Position(*start), Position(*end), code, "name", "message", Severity.ERROR, fix, start[0])


def test_non_overlapping_fixes_apply_together_and_overlapping_ones_wait():
    text = "abcdef\n"
    first = edit_finding((1, 1), (1, 3), "X")
    second = edit_finding((1, 4), (1, 5), "Y")
    overlapping = edit_finding((1, 2), (1, 5), "Z")
    fixed, applied = apply_fixes(text, [overlapping, second, first])
    assert fixed == "XcYef\n"
    assert applied == [first, second]


def test_two_insertions_at_one_place_are_not_applied_in_the_same_round():
    text = "ab\n"
    fixed, applied = apply_fixes(text, [edit_finding((1, 2), (1, 2), "X"), edit_finding((1, 2), (1, 2), "Y")])
    assert fixed == "aXb\n" and len(applied) == 1


def test_the_fix_loop_is_bounded():
    calls = []

    def never_converges(text):
        calls.append(text)
        return [edit_finding((1, 1), (1, 1), "#")]

    outcome = fix_text("x = 1\n", never_converges, unsafe=False)
    assert outcome.text == "#" * fixer.MAX_ROUNDS + "x = 1\n"
    assert len(calls) == fixer.MAX_ROUNDS + 1


def test_a_round_that_breaks_the_syntax_leaves_the_text_unchanged():
    outcome = fix_text("x = 1\n", lambda text: [edit_finding((1, 1), (1, 2), "def")], unsafe=False)
    assert outcome.text == "x = 1\n"
    assert outcome.error.startswith("fixes for ML301 produced code that does not parse")
    assert outcome.fixed == []


def test_unsafe_fixes_need_unsafe():
    lint = lambda text: [edit_finding((1, 1), (1, 2), "y", Applicability.UNSAFE)] if text.startswith("x") else []
    assert fix_text("x = 1\n", lint, unsafe=False).text == "x = 1\n"
    assert fix_text("x = 1\n", lint, unsafe=True).text == "y = 1\n"


def test_write_keeps_mode_and_encoding(tmp_path):
    path = tmp_path / "latin.py"
    original = "# -*- coding: latin-1 -*-\nname = 'é'\n".encode("latin-1")
    path.write_bytes(original)
    path.chmod(0o640)
    write_atomically(str(path), "# -*- coding: latin-1 -*-\nname = 'è'\n", "latin-1", original)
    assert path.read_bytes() == "# -*- coding: latin-1 -*-\nname = 'è'\n".encode("latin-1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["latin.py"]


def test_write_keeps_a_bom(tmp_path):
    path = tmp_path / "bom.py"
    original = "x = 1\n".encode("utf-8-sig")
    path.write_bytes(original)
    write_atomically(str(path), "x = 2\n", "utf-8-sig", original)
    assert path.read_bytes() == "x = 2\n".encode("utf-8-sig")


def test_a_file_changed_on_disk_is_not_overwritten(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("changed by someone else\n")
    with pytest.raises(FileChanged):
        write_atomically(str(path), "fixed\n", "utf-8", b"what mllint read\n")
    assert path.read_text() == "changed by someone else\n"


def test_a_failed_write_leaves_the_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text("old\n")

    def interrupted(source, destination):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(path), "new\n", "utf-8", b"old\n")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["a.py"]


def test_fixing_every_fixture_twice_equals_fixing_once(fix):
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.py")):
        once = fix(path.read_text(encoding="utf-8"), unsafe=True)
        assert fix(once, unsafe=True) == once, path
