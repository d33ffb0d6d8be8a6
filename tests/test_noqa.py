"""Suppression comments, and the meta rules about them (ML003 unused, ML004 unknown)."""
import pytest

HEADER = "import torch\nmodel = torch.nn.Linear(2, 2)\n"


def codes(findings):
    return [(f.code, f.start.line) for f in findings]


@pytest.mark.parametrize(
    "comment",
    ["# noqa", "# noqa: ML301", "# noqa:ML301", "# NOQA: ml301", "# noqa: ML101, ML301", "# noqa: ML101 ML301"],
)
def test_directives_that_silence_the_finding(lint, comment):
    assert codes(lint(HEADER + f"model.eval  {comment}\n", "ML301", "ML101")) == []


def test_other_tools_codes_do_not_silence_mllint(lint):
    assert codes(lint(HEADER + "model.eval  # noqa: F401\n", "ML301")) == [("ML301", 3)]


def test_noqa_inside_a_string_is_not_a_directive(lint):
    source = HEADER + "text = '# noqa'; model.eval\nmore = \"\"\"\n# noqa\n\"\"\"; model.train\n"
    assert codes(lint(source, "ML301")) == [("ML301", 3), ("ML301", 6)]


def test_noqa_on_the_first_line_of_a_multi_line_statement(lint):
    source = HEADER + "(model  # noqa: ML301\n .eval)\n"
    assert codes(lint(source, "ML301")) == []


def test_file_level_directives(lint):
    assert codes(lint("# mllint: noqa\n" + HEADER + "model.eval\n", "ML301")) == []
    assert codes(lint("# mllint: noqa: ML301\n" + HEADER + "model.eval\n", "ML301")) == []
    assert codes(lint("# mllint: noqa: ML101\n" + HEADER + "model.eval\n", "ML301", "ML101")) == [("ML301", 4)]


def test_unused_codes_are_reported_only_for_enabled_mllint_rules(lint):
    source = HEADER + "x = 1  # noqa: ML301, F401\ny = 2  # noqa\nz = 3  # noqa: ML101\n"
    findings = lint(source, "ML301", "ML003")
    assert [(f.code, f.start.line, f.start.column, f.message) for f in findings] == [
        ("ML003", 3, 8, "unused `noqa` directive (unused: ML301)")
    ]


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ("x = 1  # noqa: ML301\n", "x = 1\n"),
        ("model.eval()  # noqa: ML301, ML101\n", "model.eval()  # noqa: ML101\n"),
        ("x = 1  # noqa: ML301 because of reasons\n", "x = 1  # because of reasons\n"),
    ],
)
def test_unused_noqa_fix(fix, line, fixed):
    assert fix(HEADER + line, "ML003", "ML301") == HEADER + fixed


def test_a_used_code_is_kept_by_the_unused_noqa_fix(fix):
    source = HEADER + "model.eval  # noqa: ML301, ML101\n"
    assert fix(source, "ML003", "ML301", "ML101") == HEADER + "model.eval  # noqa: ML301\n"


def test_unknown_codes(lint):
    findings = lint(HEADER + "model.eval  # noqa: ML301, ML999\n", "ML301", "ML004")
    assert [(f.code, f.message) for f in findings] == [("ML004", "unknown rule code in `# noqa`: ML999")]
