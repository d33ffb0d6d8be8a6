"""Suppression comments, and the meta rules about them (ML003 unused, ML004 unknown)."""
import pytest

HEADER = "import torch\nmodel = torch.nn.Linear(2, 2)\n"
# Line 3 has two findings: ML402 at column 1, ML301 at column 36.
TWO_FINDINGS = "model.weight.require_grad = False; model.eval"


def codes(findings):
    return [(f.code, f.start.line) for f in findings]


def test_the_line_without_a_directive_has_both_findings(lint):
    assert codes(lint(HEADER + TWO_FINDINGS + "\n")) == [("ML402", 3), ("ML301", 3)]


@pytest.mark.parametrize("comment", ["# noqa", "#noqa", "# NOQA", "# NoQa"])
def test_a_bare_noqa_silences_every_code_on_its_line(lint, comment):
    assert codes(lint(HEADER + f"{TWO_FINDINGS}  {comment}\n")) == []


def test_a_bare_noqa_silences_only_its_own_line(lint):
    assert codes(lint(HEADER + "model.eval  # noqa\nmodel.train\n")) == [("ML301", 4)]


def test_a_noqa_with_a_code_silences_only_that_code(lint):
    assert codes(lint(HEADER + f"{TWO_FINDINGS}  # noqa: ML301\n")) == [("ML402", 3)]


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa:ML301,ML402",
        "# noqa: ML301, ML402",
        "# noqa: ML301 ML402",
        "# noqa:ML301  ML402",
        "# noqa: ML402,ML301",
        "# NOQA: ml301, ml402",
    ],
)
def test_code_lists_separated_by_commas_or_spaces(lint, comment):
    assert codes(lint(HEADER + f"{TWO_FINDINGS}  {comment}\n")) == []


def test_other_tools_codes_do_not_silence_mllint(lint):
    assert codes(lint(HEADER + "model.eval  # noqa: F401\n")) == [("ML301", 3)]


def test_a_noqa_after_another_comment_on_the_line_counts(lint):
    assert codes(lint(HEADER + "model.eval  # type: ignore  # noqa: ML301\n")) == []


def test_noqa_inside_a_string_is_not_a_directive(lint):
    assert codes(lint(HEADER + "text = '# noqa'; model.eval\n")) == [("ML301", 3)]


def test_noqa_inside_a_multi_line_string_is_not_a_directive(lint):
    source = HEADER + 'more = """\n# noqa\n"""; model.train\n'
    assert codes(lint(source)) == [("ML301", 5)]


def test_a_hash_inside_an_f_string_does_not_hide_the_real_comment(lint):
    assert codes(lint(HEADER + "text = f'{3:#x}'; model.eval  # noqa: ML301\n")) == []


def test_noqa_on_the_first_line_of_a_multi_line_statement(lint):
    source = HEADER + "(model  # noqa: ML301\n .eval)\n"
    assert codes(lint(source, "ML301")) == []


def test_noqa_on_a_later_line_of_a_multi_line_statement_does_not_count(lint):
    source = HEADER + "(model\n .eval)  # noqa: ML301\n"
    assert codes(lint(source, "ML301")) == [("ML301", 3)]


def test_a_file_level_noqa_silences_the_whole_file(lint):
    assert codes(lint("# mllint: noqa\n" + HEADER + TWO_FINDINGS + "\nmodel.train\n")) == []


def test_a_file_level_noqa_with_a_code_silences_that_code_in_the_whole_file(lint):
    source = "# mllint: noqa: ML301\n" + HEADER + TWO_FINDINGS + "\nmodel.train\n"
    assert codes(lint(source)) == [("ML402", 4)]


def test_a_file_level_noqa_with_a_list_of_codes(lint):
    source = "# mllint: noqa: ML301, ML402\n" + HEADER + TWO_FINDINGS + "\nmodel.train\n"
    assert codes(lint(source)) == []


def test_a_whole_file_noqa_silences_the_findings_about_noqa_comments(lint):
    source = "# mllint: noqa\n" + HEADER + "model.eval()  # noqa: ML301, ML999\n"
    assert codes(lint(source)) == []


def test_a_file_level_noqa_silences_unused_noqa_findings(lint):
    source = "# mllint: noqa: ML003\n" + HEADER + "model.eval()  # noqa: ML301\n"
    assert codes(lint(source)) == []


# ML003: unused `# noqa` codes.


def test_an_unused_mllint_code_is_reported_at_the_comment(lint):
    findings = lint(HEADER + "x = 1  # noqa: ML301\n", "ML301", "ML003")
    assert [(f.code, f.start.line, f.start.column, f.end.column, f.message) for f in findings] == [
        ("ML003", 3, 8, 21, "unused `noqa` directive (unused: ML301)")
    ]


def test_only_the_unused_codes_of_a_directive_are_named(lint):
    findings = lint(HEADER + "model.eval  # noqa: ML301, ML402\n", "ML301", "ML402", "ML003")
    assert [(f.code, f.message) for f in findings] == [("ML003", "unused `noqa` directive (unused: ML402)")]


def test_codes_of_rules_that_are_not_enabled_are_not_unused(lint):
    assert codes(lint(HEADER + "x = 1  # noqa: ML101\n", "ML301", "ML003")) == []


def test_a_bare_noqa_is_never_unused(lint):
    assert codes(lint(HEADER + "x = 1  # noqa\n", "ML301", "ML003")) == []


def test_other_tools_codes_are_never_unused(lint):
    assert codes(lint(HEADER + "x = 1  # noqa: F401, E501\n", "ML301", "ML003")) == []


def test_an_unused_noqa_is_not_reported_when_ml003_is_not_enabled(lint):
    assert codes(lint(HEADER + "x = 1  # noqa: ML301\n", "ML301")) == []


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ("x = 1  # noqa: ML301\n", "x = 1\n"),
        ("x = 1\t# noqa: ML301\n", "x = 1\n"),
        ("x = 1  # noqa: ML301, ML402\n", "x = 1\n"),
        ("model.eval()  # noqa: ML301, ML101\n", "model.eval()  # noqa: ML101\n"),
        ("model.eval()  # noqa: ML301, F401\n", "model.eval()  # noqa: F401\n"),
        ("x = 1  # noqa: ML301 because of reasons\n", "x = 1  # because of reasons\n"),
        ("x = 1  # noqa: ML301  # the reason\n", "x = 1  # the reason\n"),
        ("x = 1  # type: ignore  # noqa: ML301\n", "x = 1  # type: ignore\n"),
    ],
    ids=[
        "whole-comment",
        "whole-comment-after-tab",
        "every-code",
        "one-of-two",
        "keeps-foreign-code",
        "keeps-text",
        "keeps-next-comment",
        "keeps-earlier-comment",
    ],
)
def test_the_unused_noqa_fix(fix, line, fixed):
    assert fix(HEADER + line, "ML003", "ML301", "ML402") == HEADER + fixed


def test_a_used_code_is_kept_by_the_unused_noqa_fix(fix):
    source = HEADER + "model.eval  # noqa: ML301, ML402\n"
    assert fix(source, "ML003", "ML301", "ML402") == HEADER + "model.eval  # noqa: ML301\n"


def test_the_unused_noqa_fix_is_safe(lint):
    [finding] = lint(HEADER + "x = 1  # noqa: ML301\n", "ML301", "ML003")
    assert finding.fix.applicability.value == "safe"


# ML004: unknown `ML` codes.


def test_an_unknown_mllint_code_is_reported(lint):
    findings = lint(HEADER + "model.eval  # noqa: ML301, ML999\n", "ML301", "ML004")
    assert [(f.code, f.start.line, f.start.column, f.message) for f in findings] == [
        ("ML004", 3, 13, "unknown rule code in `# noqa`: ML999")
    ]


def test_an_unknown_code_is_not_unused(lint):
    findings = lint(HEADER + "x = 1  # noqa: ML999\n", "ML301", "ML003", "ML004")
    assert [f.code for f in findings] == ["ML004"]


def test_an_unknown_code_has_no_fix(lint):
    [finding] = lint(HEADER + "x = 1  # noqa: ML999\n", "ML004")
    assert finding.fix is None


def test_unknown_other_tools_codes_are_not_reported(lint):
    assert codes(lint(HEADER + "x = 1  # noqa: XYZ123\n", "ML004")) == []
