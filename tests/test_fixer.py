"""Applying fixes (rounds, overlaps, the round limit, parse checks) and writing fixed files back."""
import os
import stat
from pathlib import Path

import pytest

from mllint import fixer
from mllint.engine import Selection, lint_text
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Severity
from mllint.fixer import FileChanged, apply_fixes, fix_text, write_atomically
from mllint.registry import all_rules
from mllint.source import read_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def edit_finding(start, end, content, applicability=Applicability.SAFE, code="ML301"):
    edit = Edit(Position(*start), Position(*end), content)
    fix = Fix("fix", (edit,), applicability)
    return Finding("x.py", Position(*start), Position(*end), code, "name", "message", Severity.ERROR, fix, start[0])


# One round: which edits go together.


def test_non_overlapping_fixes_are_applied_in_one_round():
    first, second = edit_finding((1, 1), (1, 3), "X"), edit_finding((1, 4), (1, 5), "Y")
    assert apply_fixes("abcdef\n", [second, first]) == ("XcYef\n", [first, second])


def test_an_overlapping_fix_waits_for_the_next_round():
    first, second = edit_finding((1, 1), (1, 3), "X"), edit_finding((1, 4), (1, 5), "Y")
    overlapping = edit_finding((1, 2), (1, 5), "Z")
    assert apply_fixes("abcdef\n", [overlapping, second, first]) == ("XcYef\n", [first, second])


def test_touching_fixes_do_not_overlap():
    first, second = edit_finding((1, 1), (1, 3), "X"), edit_finding((1, 3), (1, 5), "Y")
    assert apply_fixes("abcdef\n", [first, second]) == ("XYef\n", [first, second])


def test_an_insertion_at_the_end_of_a_replacement_follows_it():
    replacement, insertion = edit_finding((1, 1), (1, 3), "XY"), edit_finding((1, 3), (1, 3), "()")
    assert apply_fixes("abcd\n", [insertion, replacement]) == ("XY()cd\n", [replacement, insertion])


def test_two_insertions_at_one_point_are_not_applied_in_the_same_round():
    first, second = edit_finding((1, 2), (1, 2), "X"), edit_finding((1, 2), (1, 2), "Y")
    assert apply_fixes("ab\n", [first, second]) == ("aXb\n", [first])


def test_edits_on_later_lines_use_character_offsets():
    fixed, _ = apply_fixes("é = 1\nmodel.eval\n", [edit_finding((2, 11), (2, 11), "()")])
    assert fixed == "é = 1\nmodel.eval()\n"


# The fix loop.


def upper_case_pairs(text: str) -> list[Finding]:
    """Two overlapping fixes: upper-case characters 1-2, and upper-case characters 2-3."""
    findings = []
    if not text[0:2].isupper():
        findings.append(edit_finding((1, 1), (1, 3), text[0:2].upper()))
    if not text[1:3].isupper():
        findings.append(edit_finding((1, 2), (1, 4), text[1:3].upper()))
    return findings


def test_an_overlapping_fix_is_applied_in_the_next_round():
    calls = []

    def lint(text):
        calls.append(text)
        return upper_case_pairs(text)

    outcome = fix_text("abc\n", lint, unsafe=False)
    assert (outcome.text, outcome.remaining, outcome.error) == ("ABC\n", [], None)
    assert len(outcome.fixed) == 2
    assert calls == ["abc\n", "ABc\n", "ABC\n"]


def test_the_fix_loop_stops_after_max_rounds_on_a_fix_that_never_converges():
    calls = []

    def never_converges(text):
        calls.append(text)
        return [edit_finding((1, 1), (1, 1), "#")]

    outcome = fix_text("x = 1\n", never_converges, unsafe=False)
    assert fixer.MAX_ROUNDS == 10
    assert outcome.text == "#" * fixer.MAX_ROUNDS + "x = 1\n"
    assert len(calls) == fixer.MAX_ROUNDS + 1
    assert len(outcome.fixed) == fixer.MAX_ROUNDS


def test_a_fix_that_changes_nothing_ends_the_loop():
    calls = []

    def lint(text):
        calls.append(text)
        return [edit_finding((1, 1), (1, 2), "x")]

    outcome = fix_text("x = 1\n", lint, unsafe=False)
    assert (outcome.text, outcome.fixed, outcome.changed) == ("x = 1\n", [], False)
    assert len(calls) == 1


def test_a_round_that_breaks_the_syntax_leaves_the_text_unchanged_and_sets_error():
    broken = edit_finding((1, 1), (1, 2), "def")
    outcome = fix_text("x = 1\n", lambda text: [broken], unsafe=False)
    assert (outcome.text, outcome.fixed, outcome.remaining, outcome.changed) == ("x = 1\n", [], [broken], False)
    assert outcome.error.startswith("fixes for ML301 produced code that does not parse (")
    assert outcome.error.endswith("); file left unchanged")


def test_a_later_round_that_breaks_the_syntax_undoes_the_earlier_rounds():
    def lint(text):
        if text.startswith("x"):
            return [edit_finding((1, 1), (1, 2), "y")]  # round 1: fine
        return [edit_finding((1, 1), (1, 2), "def")] if text.startswith("y") else []  # round 2: broken

    outcome = fix_text("x = 1\n", lint, unsafe=False)
    assert (outcome.text, outcome.fixed) == ("x = 1\n", [])
    assert outcome.error is not None


def unsafe_rename(text):
    return [edit_finding((1, 1), (1, 2), "y", Applicability.UNSAFE)] if text.startswith("x") else []


def test_unsafe_fixes_are_not_applied_by_default():
    outcome = fix_text("x = 1\n", unsafe_rename, unsafe=False)
    assert (outcome.text, outcome.fixed, [f.code for f in outcome.remaining]) == ("x = 1\n", [], ["ML301"])


def test_unsafe_fixes_are_applied_with_unsafe():
    outcome = fix_text("x = 1\n", unsafe_rename, unsafe=True)
    assert (outcome.text, len(outcome.fixed), outcome.remaining) == ("y = 1\n", 1, [])


def test_display_only_fixes_are_never_applied():
    display_only = edit_finding((1, 1), (1, 2), "y", Applicability.DISPLAY_ONLY)
    assert fix_text("x = 1\n", lambda text: [display_only], unsafe=True).text == "x = 1\n"


# Every fixture file.

EVERY_RULE = Selection.of(all_rules())


def fix_all(text: str) -> str:
    return fix_text(text, lambda t: lint_text(t, "example.py", EVERY_RULE), unsafe=True).text


FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))
FIXABLE = [p for p in FIXTURE_FILES if fix_all(p.read_text(encoding="utf-8")) != p.read_text(encoding="utf-8")]


def test_some_fixture_files_are_fixable():
    assert FIXTURES / "ml301" / "positives.py" in FIXABLE


@pytest.mark.parametrize("path", FIXABLE, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixing_twice_equals_fixing_once(path):
    once = fix_all(path.read_text(encoding="utf-8"))
    assert fix_all(once) == once


@pytest.mark.parametrize("path", FIXABLE, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_a_fixed_fixture_has_no_fixable_finding_left(path):
    outcome = fix_text(path.read_text(encoding="utf-8"), lambda t: lint_text(t, "x.py", EVERY_RULE), unsafe=True)
    assert outcome.error is None
    assert [f.code for f in outcome.remaining if fixer.allowed(f.fix, unsafe=True)] == []


# Writing files back.


def test_write_replaces_the_content_and_keeps_the_mode(tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes(b"model.eval\n")
    path.chmod(0o640)
    write_atomically(str(path), "model.eval()\n", "utf-8", b"model.eval\n")
    assert path.read_bytes() == b"model.eval()\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_write_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes(b"model.eval\n")
    write_atomically(str(path), "model.eval()\n", "utf-8", b"model.eval\n")
    assert os.listdir(tmp_path) == ["a.py"]


def test_write_encodes_with_the_files_encoding(tmp_path):
    path = tmp_path / "latin.py"
    original = "# -*- coding: latin-1 -*-\nname = 'é'\n".encode("latin-1")
    path.write_bytes(original)
    source = read_source(str(path))
    write_atomically(str(path), source.text.replace("é", "è"), source.encoding, source.data)
    assert path.read_bytes() == "# -*- coding: latin-1 -*-\nname = 'è'\n".encode("latin-1")


@pytest.mark.parametrize(
    "data",
    [
        "# -*- coding: latin-1 -*-\nname = 'é'\n".encode("latin-1"),
        "name = 'é'\n".encode("utf-8-sig"),
        "name = 'é'\r\nmodel.eval\r\n".encode("utf-8"),
        "name = 'é'\rmodel.eval\r".encode("utf-8-sig"),
    ],
    ids=["latin-1-cookie", "utf-8-bom", "crlf", "cr-and-bom"],
)
def test_an_unchanged_text_round_trips_byte_for_byte(tmp_path, data):
    path = tmp_path / "a.py"
    path.write_bytes(data)
    source = read_source(str(path))
    write_atomically(str(path), source.text, source.encoding, source.data)
    assert path.read_bytes() == data


def test_a_bom_is_kept_when_the_text_changes(tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes("model.eval\n".encode("utf-8-sig"))
    source = read_source(str(path))
    write_atomically(str(path), "model.eval()\n", source.encoding, source.data)
    assert path.read_bytes() == b"\xef\xbb\xbfmodel.eval()\n"


def test_writing_through_a_symbolic_link_keeps_the_link_and_fixes_its_target(tmp_path):
    target = tmp_path / "target.py"
    target.write_bytes(b"model.eval\n")
    link = tmp_path / "link.py"
    link.symlink_to("target.py")
    write_atomically(str(link), "model.eval()\n", "utf-8", b"model.eval\n")
    assert (link.is_symlink(), os.readlink(link)) == (True, "target.py")
    assert target.read_bytes() == b"model.eval()\n"
    assert sorted(os.listdir(tmp_path)) == ["link.py", "target.py"]


def test_a_file_changed_on_disk_is_not_overwritten(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("changed by someone else\n")
    path.chmod(0o640)
    with pytest.raises(FileChanged):
        write_atomically(str(path), "fixed\n", "utf-8", b"what mllint read\n")
    assert path.read_text() == "changed by someone else\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["a.py"]


def test_a_failed_replace_leaves_the_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text("old\n")

    def failing_replace(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left on device"):
        write_atomically(str(path), "new\n", "utf-8", b"old\n")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["a.py"]


def test_an_interrupted_write_leaves_the_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text("old\n")

    def interrupted(source, destination):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(path), "new\n", "utf-8", b"old\n")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["a.py"]


def test_a_text_the_encoding_cannot_hold_is_not_written(tmp_path):
    path = tmp_path / "latin.py"
    original = "# -*- coding: latin-1 -*-\nx = 1\n".encode("latin-1")
    path.write_bytes(original)
    with pytest.raises(UnicodeEncodeError):
        write_atomically(str(path), "# -*- coding: latin-1 -*-\nx = '🔥'\n", "iso-8859-1", original)
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["latin.py"]
