import json
import xml.etree.ElementTree as ElementTree

import pytest

from mllint.findings import Applicability, Edit, Finding, Fix, Position, Severity
from mllint.registry import all_rules
from mllint.reporters import FORMAT_NAMES, Report, render

SOURCE = "import torch\nname = 'é'; model.eval\nmodel.eval\nmodel.eval\n"
RULES = tuple(all_rules().values())


def finding(line, column, end_column, code="ML301", message="`model.eval` is not called", fix=True, severity=Severity.ERROR):
    edit = Edit(Position(line, end_column), Position(line, end_column), "()")
    return Finding(
        path="src/train.py",
        start=Position(line, column),
        end=Position(line, end_column),
        code=code,
        name=all_rules()[code].name,
        message=message,
        severity=severity,
        fix=Fix("Call `model.eval()`", (edit,), Applicability.SAFE) if fix else None,
        noqa_line=line,
    )


FINDINGS = [finding(2, 13, 23), finding(3, 1, 11), finding(4, 1, 11)]
ODD = finding(1, 1, 2, code="ML004", message="100% odd, this: that\nnext", fix=False, severity=Severity.WARNING)


def report(findings=FINDINGS, root="."):
    return Report(findings=findings, rules=RULES, sources={"src/train.py": SOURCE}, root=root)


def test_concise():
    assert render(report(), "concise") == (
        "src/train.py:2:13: ML301 `model.eval` is not called [*]\n"
        "src/train.py:3:1: ML301 `model.eval` is not called [*]\n"
        "src/train.py:4:1: ML301 `model.eval` is not called [*]\n"
    )


def test_full_shows_the_line_the_carets_and_the_fix():
    assert render(report(FINDINGS[:1]), "full") == (
        "src/train.py:2:13: ML301 `model.eval` is not called [*]\n"
        "  |\n"
        "2 | name = 'é'; model.eval\n"
        "  |             ^^^^^^^^^^\n"
        "  = help: Call `model.eval()`\n"
        "    @@ -1,3 +1,3 @@\n"
        "     import torch\n"
        "    -name = 'é'; model.eval\n"
        "    +name = 'é'; model.eval()\n"
        "     model.eval\n"
    )


def test_pylint():
    assert render(report([ODD]), "pylint") == "src/train.py:1: [ML004(unknown-noqa-code), ] 100% odd, this: that\nnext\n"


def test_github_escapes_data_and_properties():
    assert render(report([ODD]), "github") == (
        "::warning title=mllint (ML004),file=src/train.py,line=1,col=1,endLine=1,endColumn=2::"
        "ML004 100%25 odd, this: that%0Anext\n"
    )


def test_json_has_ruffs_fields():
    [item, *_] = json.loads(render(report(), "json"))
    assert item == {
        "cell": None,
        "code": "ML301",
        "name": "method-not-called",
        "message": "`model.eval` is not called",
        "severity": "error",
        "filename": "src/train.py",
        "location": {"row": 2, "column": 13},
        "end_location": {"row": 2, "column": 23},
        "fix": {
            "applicability": "safe",
            "message": "Call `model.eval()`",
            "edits": [{"content": "()", "location": {"row": 2, "column": 23}, "end_location": {"row": 2, "column": 23}}],
        },
        "url": item["url"],
        "noqa_row": 2,
    }
    assert item["url"].endswith("#ml301")


def test_json_lines_are_the_json_objects():
    lines = render(report(), "json-lines").splitlines()
    assert [json.loads(line) for line in lines] == json.loads(render(report(), "json"))


def test_empty_documents_are_valid():
    assert json.loads(render(report([]), "json")) == []
    assert render(report([]), "json-lines") == ""
    assert json.loads(render(report([]), "sarif"))["runs"][0]["results"] == []
    suite = ElementTree.fromstring(render(report([]), "junit"))
    assert suite.get("failures") == "0" and suite.find("testsuite/testcase").get("name") == "mllint"


def sarif_results(findings, root="."):
    document = json.loads(render(report(findings, root), "sarif"))
    assert document["version"] == "2.1.0"
    return document["runs"][0]


def test_sarif_lists_every_enabled_rule_and_points_results_at_them():
    run = sarif_results(FINDINGS)
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in RULES]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == "ML301"
        assert result["level"] == "error"
    location = run["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 2, "startColumn": 13, "endLine": 2, "endColumn": 23}


def test_sarif_fingerprints_are_distinct_for_identical_lines_and_survive_line_shifts():
    fingerprints = [r["partialFingerprints"]["mllint/v1"] for r in sarif_results(FINDINGS)["results"]]
    assert len(set(fingerprints)) == 3
    shifted = Report(
        findings=[finding(3, 13, 23)],
        rules=RULES,
        sources={"src/train.py": "import torch\n\nname = 'é'; model.eval\n"},
    )
    moved = json.loads(render(shifted, "sarif"))["runs"][0]["results"][0]["partialFingerprints"]["mllint/v1"]
    assert moved == fingerprints[0]


def test_gitlab_fingerprints_are_unique_and_severities_mapped():
    issues = json.loads(render(report([*FINDINGS, ODD]), "gitlab"))
    assert len({i["fingerprint"] for i in issues}) == 4
    assert [i["severity"] for i in issues] == ["major", "major", "major", "minor"]
    assert issues[0]["location"] == {"path": "src/train.py", "lines": {"begin": 2, "end": 2}}
    assert issues[0]["description"] == "ML301 `model.eval` is not called"


def test_junit_counts_failures_per_file():
    suites = ElementTree.fromstring(render(report(), "junit"))
    assert suites.get("tests") == "3" and suites.get("failures") == "3"
    [suite] = suites.findall("testsuite")
    assert suite.get("name") == "src/train.py"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["org.mllint.ML301"] * 3
    assert cases[0].find("failure").text == "line 2, col 13, `model.eval` is not called"


@pytest.mark.parametrize("output_format", FORMAT_NAMES)
def test_every_format_renders_non_ascii_and_newlines(output_format):
    assert isinstance(render(report([*FINDINGS, ODD]), output_format), str)
