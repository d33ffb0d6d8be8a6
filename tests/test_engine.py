import ast

import pytest

from mllint.engine import Selection, lint_path, lint_text
from mllint.findings import Severity
from mllint.registry import all_rules
from mllint.rule import DOC_SECTIONS, Rule
from mllint.rules.ml009_internal_error import InternalError
from mllint.rules.ml301_method_not_called import MethodNotCalled


def positions(findings):
    return [(f.code, f.start.line, f.start.column, f.end.line, f.end.column) for f in findings]


@pytest.mark.parametrize("prefix", ["é = 1; ", "emoji = '🔥'; ", "名前 = 2; "])
def test_columns_are_counted_in_characters(lint, fix, prefix):
    source = f"{prefix}model.eval\n"
    start = len(prefix) + 1
    assert positions(lint(source, "ML301")) == [("ML301", 1, start, 1, start + 10)]
    assert fix(source, "ML301") == f"{prefix}model.eval()\n"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_fixes_keep_line_endings(lint, fix, newline):
    source = newline.join(["import torch", "model.eval", "x = 1", ""])
    assert positions(lint(source, "ML301")) == [("ML301", 2, 1, 2, 11)]
    assert fix(source, "ML301") == newline.join(["import torch", "model.eval()", "x = 1", ""])


def test_form_feed_and_unicode_line_separators_do_not_shift_lines(lint):
    source = "x = 1\n\x0c\ns = 'a\u2028b'\nmodel.eval\n"
    assert positions(lint(source, "ML301")) == [("ML301", 4, 1, 4, 11)]


def test_a_syntax_error_is_one_finding_with_the_parsers_position(lint):
    findings = lint("import torch\ndef f(:\n    model.eval\n")
    assert [(f.code, f.start.line, f.start.column, f.message) for f in findings] == [
        ("ML002", 2, 7, "SyntaxError: invalid syntax")
    ]


def test_files_with_a_bom_or_an_encoding_cookie_are_linted(tmp_path):
    selection = Selection.of(["ML301"])
    bom = tmp_path / "bom.py"
    bom.write_bytes("é = 1; model.eval\n".encode("utf-8-sig"))
    cookie = tmp_path / "cookie.py"
    cookie.write_bytes("# -*- coding: latin-1 -*-\né = 1; model.eval\n".encode("latin-1"))
    assert positions(lint_path(str(bom), selection)) == [("ML301", 1, 8, 1, 18)]
    assert positions(lint_path(str(cookie), selection)) == [("ML301", 2, 8, 2, 18)]


def test_undecodable_bytes_are_reported_where_they_are(tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = 1\ny = '\xff'\n")
    [finding] = lint_path(str(path), Selection.of([]))
    assert (finding.code, finding.start.line, finding.start.column) == ("ML001", 2, 6)
    assert finding.message == "cannot decode as utf-8: invalid start byte (byte 0xff)"


class Crashing(Rule):
    """Crashes on every call."""

    code = "ML999"
    name = "crashing"
    message = "never"

    def visit_Call(self, node: ast.Call) -> None:
        raise ValueError("boom")


def test_a_crashing_rule_is_reported_and_the_others_still_run():
    selection = Selection(rules=(Crashing, MethodNotCalled, InternalError))
    findings = lint_text("print(1)\nmodel.eval\n", "x.py", selection)
    assert [(f.code, f.message) for f in findings] == [
        ("ML009", "rule ML999 (crashing) crashed at line 1: ValueError: boom"),
        ("ML301", "`model.eval` is not called: the statement does nothing"),
    ]


def test_severity_overrides():
    selection = Selection.of(["ML301"], {"ML301": Severity.INFO})
    [finding] = lint_text("model.eval\n", "x.py", selection)
    assert finding.severity is Severity.INFO


def test_mandatory_rules_are_always_selected():
    codes = {rule.code for rule in Selection.of([]).rules}
    assert codes == {code for code, rule in all_rules().items() if rule.mandatory} == {"ML001", "ML002", "ML005", "ML009"}


def test_registry_codes_names_and_documentation():
    rules = all_rules()
    assert len({rule.name for rule in rules.values()}) == len(rules)
    for code, rule in rules.items():
        assert rule.code == code and code.startswith("ML") and len(code) == 5
        assert rule.name.replace("-", "").isalnum() and rule.name == rule.name.lower()
        titles = [line[3:] for line in rule.documentation().splitlines() if line.startswith("## ")]
        assert titles == list(DOC_SECTIONS), code


@pytest.mark.parametrize("rule", [r for r in all_rules().values() if r.doc_code("Example")], ids=lambda r: r.code)
def test_documentation_examples_trigger_their_rule_and_the_alternative_does_not(rule):
    selection = Selection.of(all_rules())
    assert rule.code in {f.code for f in lint_text(rule.doc_code("Example"), "example.py", selection)}
    assert rule.code not in {f.code for f in lint_text(rule.doc_code("Use instead"), "example.py", selection)}


@pytest.mark.parametrize("rule", list(all_rules().values()), ids=lambda r: r.code)
def test_fixes_are_no_stronger_than_the_rule_declares(rule):
    order = {"safe": 0, "unsafe": 1, "display-only": 2}
    selection = Selection.of(all_rules())
    for text in (rule.doc_code("Example"), rule.doc_code("Use instead")):
        for finding in lint_text(text, "example.py", selection):
            if finding.code == rule.code and finding.fix is not None:
                assert rule.fix_applicability is not None
                assert order[finding.fix.applicability.value] >= order[rule.fix_applicability.value]


class NeedsTorch(Crashing):
    """Crashes whenever it runs: it must not run on files that never mention torch."""

    requires_any_text = ("torch",)


def test_rules_are_skipped_on_files_without_their_required_text():
    selection = Selection(rules=(NeedsTorch, InternalError))
    assert lint_text("print(1)\n", "x.py", selection) == []
    assert [f.code for f in lint_text("import torch\nprint(1)\n", "x.py", selection)] == ["ML009"]
