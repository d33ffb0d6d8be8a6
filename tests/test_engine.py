"""The engine: positions, line endings, bad input, crashing rules, selections, and the registry's rules."""
import ast
import importlib
import os
import pkgutil
import re
from functools import cache
from pathlib import Path

import pytest

import mllint.rules
from mllint.engine import Selection, lint_path, lint_text
from mllint.findings import Applicability, Position, Severity
from mllint.registry import all_rules
from mllint.rule import DOC_SECTIONS, Rule
from mllint.rules.ml009_internal_error import InternalError
from mllint.rules.ml301_method_not_called import MethodNotCalled

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EVERY_RULE = Selection.of(all_rules())


def positions(findings):
    return [(f.code, f.start.line, f.start.column, f.end.line, f.end.column) for f in findings]


# Positions: character columns, line endings, and what is not a line break.


@pytest.mark.parametrize(
    "prefix",
    ["é = 1; ", "emoji = '🔥'; ", "名前 = 2; ", "s = 'a\u2028b'; "],
    ids=["accent", "emoji", "cjk", "line-separator"],
)
def test_columns_after_non_ascii_text_are_counted_in_characters(lint, prefix):
    start = len(prefix) + 1
    assert positions(lint(f"{prefix}model.eval\n", "ML301")) == [("ML301", 1, start, 1, start + 10)]


@pytest.mark.parametrize("prefix", ["é = 1; ", "emoji = '🔥'; ", "名前 = 2; "], ids=["accent", "emoji", "cjk"])
def test_a_fix_after_non_ascii_text_lands_after_the_attribute(fix, prefix):
    assert fix(f"{prefix}model.eval  # ünïcödé\n", "ML301") == f"{prefix}model.eval()  # ünïcödé\n"


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_findings_on_files_with_other_line_endings(lint, newline):
    source = newline.join(["import torch", "model.eval", "x = 1", ""])
    assert positions(lint(source, "ML301")) == [("ML301", 2, 1, 2, 11)]


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_fixes_keep_the_line_endings(fix, newline):
    source = newline.join(["import torch", "model.eval", "x = 1", ""])
    assert fix(source, "ML301") == newline.join(["import torch", "model.eval()", "x = 1", ""])


# Characters `str.splitlines()` breaks on but Python's tokenizer does not.
NOT_LINE_BREAKS = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("separator", NOT_LINE_BREAKS, ids=ascii)
def test_splitlines_separators_in_comments_and_strings_do_not_shift_lines(lint, separator):
    source = f"# a{separator}b\ns = 'a{separator}b'\nmodel.eval\n"
    assert positions(lint(source, "ML301")) == [("ML301", 3, 1, 3, 11)]


@pytest.mark.parametrize("separator", NOT_LINE_BREAKS, ids=ascii)
def test_splitlines_separators_do_not_shift_fixes(fix, separator):
    source = f"# a{separator}b\ns = 'a{separator}b'\nmodel.eval\n"
    assert fix(source, "ML301") == f"# a{separator}b\ns = 'a{separator}b'\nmodel.eval()\n"


@pytest.mark.parametrize("separator", NOT_LINE_BREAKS, ids=ascii)
def test_splitlines_separators_do_not_shift_noqa_lines(lint, separator):
    source = f"# a{separator}b\nmodel.eval  # noqa: ML301\nmodel.train\n"
    assert positions(lint(source, "ML301", "ML003")) == [("ML301", 3, 1, 3, 12)]


def test_a_form_feed_starting_a_line_is_one_column(lint, fix):
    assert positions(lint("x = 1\n\x0cmodel.eval\n", "ML301")) == [("ML301", 2, 2, 2, 12)]
    assert fix("x = 1\n\x0cmodel.eval\n", "ML301") == "x = 1\n\x0cmodel.eval()\n"


# Syntax errors.


def test_a_syntax_error_is_exactly_one_finding_at_the_parsers_position(lint):
    findings = lint("import torch\ndef f(:\n    model.eval\n")
    assert [(f.code, f.start.line, f.start.column, f.message) for f in findings] == [
        ("ML002", 2, 7, "SyntaxError: invalid syntax")
    ]


def test_a_syntax_error_column_counts_characters(lint):
    findings = lint("x = 1\n名前 = é $\n")
    assert [(f.code, f.start.line, f.start.column) for f in findings] == [("ML002", 2, 8)]


def test_an_indentation_error_names_its_kind(lint):
    [finding] = lint("def f():\nreturn 1\n")
    assert (finding.code, finding.start.line, finding.message) == (
        "ML002",
        2,
        "IndentationError: expected an indented block after function definition on line 1",
    )


# Bytes on disk: encodings, BOMs, NUL bytes, unreadable paths.


def test_a_nul_byte_is_an_unreadable_file_at_its_line(tmp_path):
    path = tmp_path / "nul.py"
    path.write_bytes(b"x = 1\ny = 2\x00\nmodel.eval\n")
    assert [(f.code, f.start.line, f.start.column, f.message) for f in lint_path(str(path), EVERY_RULE)] == [
        ("ML001", 2, 1, "source contains a NUL byte")
    ]


def test_invalid_utf8_is_reported_at_the_bad_byte(tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = 1\ny = '\xff'\nmodel.eval\n")
    assert [(f.code, f.start.line, f.start.column, f.message) for f in lint_path(str(path), EVERY_RULE)] == [
        ("ML001", 2, 6, "cannot decode as utf-8: invalid start byte (byte 0xff)")
    ]


def test_a_latin1_file_with_a_coding_cookie_decodes(tmp_path):
    path = tmp_path / "cookie.py"
    path.write_bytes("# -*- coding: latin-1 -*-\né = 1; model.eval\n".encode("latin-1"))
    assert positions(lint_path(str(path), EVERY_RULE)) == [("ML301", 2, 8, 2, 18)]


def test_a_utf8_file_with_a_bom_decodes_and_line_one_is_not_shifted(tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes("é = 1; model.eval\nmodel.train\n".encode("utf-8-sig"))
    assert positions(lint_path(str(path), EVERY_RULE)) == [("ML301", 1, 8, 1, 18), ("ML301", 2, 1, 2, 12)]


def test_a_directory_is_an_unreadable_file(tmp_path):
    [finding] = lint_path(str(tmp_path), EVERY_RULE)
    assert (finding.code, finding.start, finding.message) == (
        "ML001",
        Position(1, 1),
        "cannot read file: Is a directory",
    )


def test_a_missing_file_is_an_unreadable_file(tmp_path):
    [finding] = lint_path(str(tmp_path / "gone.py"), EVERY_RULE, display_path="gone.py")
    assert (finding.path, finding.code, finding.start.line, finding.start.column, finding.message) == (
        "gone.py",
        "ML001",
        1,
        1,
        "cannot read file: No such file or directory",
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_a_file_without_read_permission_is_an_unreadable_file(tmp_path):
    path = tmp_path / "locked.py"
    path.write_text("model.eval\n")
    path.chmod(0)
    try:
        [finding] = lint_path(str(path), EVERY_RULE)
    finally:
        path.chmod(0o644)
    assert (finding.code, finding.message) == ("ML001", "cannot read file: Permission denied")


def test_unreadable_files_are_reported_even_with_no_rule_selected(tmp_path):
    assert [f.code for f in lint_path(str(tmp_path / "gone.py"), Selection.of([]))] == ["ML001"]


# A rule that crashes.


class CrashingRule(Rule):
    """Crashes on every call."""

    code = "ML999"
    name = "crashing-rule"
    message = "never reported"

    def visit_Call(self, node: ast.Call) -> None:
        raise ValueError("boom")


class CrashingAtTheEnd(Rule):
    """Crashes after the traversal."""

    code = "ML998"
    name = "crashing-at-the-end"
    message = "never reported"

    def end_file(self) -> None:
        raise KeyError("state")


def test_a_crashing_rule_is_reported_as_ml009_and_the_other_rules_still_report():
    selection = Selection(rules=(CrashingRule, MethodNotCalled, InternalError))
    findings = lint_text("model.eval\nx = [print(1)]\nmodel.train\n", "x.py", selection)
    assert [(f.code, f.start.line, f.start.column, f.message) for f in findings] == [
        ("ML301", 1, 1, "`model.eval` is not called: the statement does nothing"),
        ("ML009", 2, 6, "rule ML999 (crashing-rule) crashed at line 2: ValueError: boom"),  # at the node checked
        ("ML301", 3, 1, "`model.train` is not called: the statement does nothing"),
    ]
    assert findings[1].traceback.splitlines()[-1] == "ValueError: boom"


def test_a_crash_after_the_traversal_names_no_line():
    selection = Selection(rules=(CrashingAtTheEnd, MethodNotCalled, InternalError))
    findings = lint_text("model.eval\n", "x.py", selection)
    assert [(f.code, f.message) for f in findings] == [
        ("ML009", "rule ML998 (crashing-at-the-end) crashed: KeyError: 'state'"),
        ("ML301", "`model.eval` is not called: the statement does nothing"),
    ]


def test_a_crash_is_not_hidden_by_a_bare_noqa_on_line_one():
    selection = Selection(rules=(CrashingRule, MethodNotCalled, InternalError))
    findings = lint_text("import torch  # noqa\nprint(1)\n", "x.py", selection)
    assert [f.code for f in findings] == ["ML009"]


# Selections.


def test_a_severity_override_changes_only_the_named_code():
    selection = Selection.of(["ML301", "ML402"], {"ML301": Severity.INFO})
    findings = lint_text("model.eval\nw.require_grad = True\n", "x.py", selection)
    assert [(f.code, f.severity) for f in findings] == [("ML301", Severity.INFO), ("ML402", Severity.ERROR)]


def test_a_severity_override_applies_to_syntax_errors():
    [finding] = lint_text("def f(:\n", "x.py", Selection.of([], {"ML002": Severity.WARNING}))
    assert (finding.code, finding.severity) == ("ML002", Severity.WARNING)


def test_a_severity_override_applies_to_unreadable_files(tmp_path):
    [finding] = lint_path(str(tmp_path / "gone.py"), Selection.of([], {"ML001": Severity.INFO}))
    assert (finding.code, finding.severity) == ("ML001", Severity.INFO)


def test_the_rule_index_is_the_rules():
    from mllint.registry import index_rows
    from mllint.rule_index import RULES

    assert RULES == index_rows(), "the rule index is out of date: run `python -m mllint.registry`"


def test_the_mandatory_rules_are_in_every_selection():
    assert [rule.code for rule in Selection.of([]).rules] == ["ML001", "ML002", "ML005", "ML006", "ML009"]
    assert [rule.code for rule in Selection.of(["ML301"]).rules] == ["ML001", "ML002", "ML005", "ML006", "ML009", "ML301"]


def test_the_mandatory_rules_are_the_ones_marked_mandatory():
    assert sorted(code for code, rule in all_rules().items() if rule.mandatory) == ["ML001", "ML002", "ML005", "ML006", "ML009"]


# The registry and every rule's documentation.


def rule_classes_by_module() -> list[type[Rule]]:
    """Every Rule subclass of the rule modules, read without the registry (which keys them by code)."""
    found = []
    for info in pkgutil.iter_modules(mllint.rules.__path__):
        module = importlib.import_module(f"mllint.rules.{info.name}")
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__
        ]
    return found


def test_rule_codes_are_unique_and_well_formed():
    codes = [rule.code for rule in rule_classes_by_module()]
    assert len(codes) == len(set(codes))
    assert [code for code in codes if not re.fullmatch(r"ML\d{3}", code)] == []
    assert sorted(codes) == list(all_rules())


def test_the_registry_keys_rules_by_their_code():
    assert [(code, rule.code) for code, rule in all_rules().items() if code != rule.code] == []


def test_rule_names_are_unique_kebab_case():
    names = [rule.name for rule in all_rules().values()]
    assert len(names) == len(set(names))
    assert [name for name in names if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name)] == []


@pytest.mark.parametrize("rule", list(all_rules().values()), ids=lambda r: r.code)
def test_documentation_has_the_five_sections_in_order(rule):
    titles = [line[3:] for line in rule.documentation().splitlines() if line.startswith("## ")]
    assert titles == list(DOC_SECTIONS) == ["What it does", "Why is this bad?", "Example", "Use instead", "Fix safety"]
    assert all(rule.doc_section(title) for title in DOC_SECTIONS)


EXAMPLED = [rule for rule in all_rules().values() if rule.doc_code("Example")]


def test_documentation_examples_in_code_are_found():
    assert {"ML002", "ML003", "ML004", "ML101", "ML301"} <= {rule.code for rule in EXAMPLED}


@pytest.mark.parametrize("rule", EXAMPLED, ids=lambda r: r.code)
def test_the_documentation_example_triggers_its_rule(rule):
    assert rule.code in {f.code for f in lint_text(rule.doc_code("Example"), "example.py", EVERY_RULE)}


@pytest.mark.parametrize("rule", EXAMPLED, ids=lambda r: r.code)
def test_the_documentation_alternative_does_not_trigger_its_rule(rule):
    alternative = rule.doc_code("Use instead")
    assert alternative, f"{rule.code} has an Example in code but no Use instead in code"
    assert rule.code not in {f.code for f in lint_text(alternative, "example.py", EVERY_RULE)}


# Fixes are never stronger than the rule declares.

STRENGTH = {Applicability.DISPLAY_ONLY: 0, Applicability.UNSAFE: 1, Applicability.SAFE: 2}


@cache
def findings_of_every_sample():
    """The findings of every fixture file and every documentation code block."""
    findings = []
    for path in sorted(FIXTURES.rglob("*.py")):
        findings += lint_path(str(path), EVERY_RULE)
    for rule in all_rules().values():
        for title in ("Example", "Use instead"):
            findings += lint_text(rule.doc_code(title), f"{rule.code}-{title}.py", EVERY_RULE)
    return findings


def test_the_samples_produce_fixes():
    assert {f.code for f in findings_of_every_sample() if f.fix} >= {"ML003", "ML301", "ML402"}


@pytest.mark.parametrize(
    "rule", [r for r in all_rules().values() if r.fix_applicability is None], ids=lambda r: r.code
)
def test_a_rule_without_fix_applicability_never_fixes(rule):
    assert [f for f in findings_of_every_sample() if f.code == rule.code and f.fix is not None] == []


@pytest.mark.parametrize(
    "rule", [r for r in all_rules().values() if r.fix_applicability is not None], ids=lambda r: r.code
)
def test_a_rules_fixes_are_no_stronger_than_it_declares(rule):
    fixes = [f.fix for f in findings_of_every_sample() if f.code == rule.code and f.fix is not None]
    assert [fix for fix in fixes if STRENGTH[fix.applicability] > STRENGTH[rule.fix_applicability]] == []


# The text pre-filter.


class NeedsTorch(CrashingRule):
    """Crashes whenever it runs: it must not run on files that never mention torch."""

    requires_any_text = ("torch",)


def test_rules_are_skipped_on_files_without_their_required_text():
    selection = Selection(rules=(NeedsTorch, InternalError))
    assert lint_text("print(1)\n", "x.py", selection) == []
    assert [f.code for f in lint_text("import torch\nprint(1)\n", "x.py", selection)] == ["ML009"]
