import dataclasses
import json
import os
from xml.etree import ElementTree

import pytest

import mllint
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Related, Severity
from mllint.registry import all_rules
from mllint.reporters import FORMAT_NAMES, Report, render

RULES = tuple(all_rules().values())
TRAIN = "src/train.py"
LOADER = "src/data loader.py"  # no source: formats fall back to what the finding says
SOURCE = (
    "import torch  # noqa: ML999\n"
    "name = 'é'; model.eval\n"
    "model.eval\n"
    "model.eval\n"
    "logp = torch.log(torch.softmax(\n"
    "    x, dim=1))\n"
    "if name:\n"
    "\tmodel.train\n"
)


def finding(path, start, end, code, message, severity=None, fix=None):
    rule = all_rules()[code]
    return Finding(
        path=path,
        start=Position(*start),
        end=Position(*end),
        code=code,
        name=rule.name,
        message=message,
        severity=severity or rule.severity,
        fix=fix,
        noqa_line=start[0],
    )


def call_fix(line, column, method):
    return Fix(f"Call `{method}()`", (Edit(Position(line, column), Position(line, column), "()"),), Applicability.SAFE)


ODD_MESSAGE = "100% unknown: ML999, see\nthe docs"
UNKNOWN_CODE = finding(TRAIN, (1, 23), (1, 28), "ML004", ODD_MESSAGE)
NON_ASCII = finding(TRAIN, (2, 13), (2, 23), "ML301", "`model.eval` is not called", fix=call_fix(2, 23, "model.eval"))
SAME_LINE_1 = finding(TRAIN, (3, 1), (3, 11), "ML301", "`model.eval` is not called", fix=call_fix(3, 11, "model.eval"))
SAME_LINE_2 = finding(TRAIN, (4, 1), (4, 11), "ML301", "`model.eval` is not called", fix=call_fix(4, 11, "model.eval"))
TWO_EDITS = finding(
    TRAIN,
    (5, 8),
    (6, 15),
    "ML701",
    "`torch.log` of `torch.softmax`",
    fix=Fix(
        "Use `torch.log_softmax`",
        (Edit(Position(5, 8), Position(5, 32), "torch.log_softmax("), Edit(Position(6, 14), Position(6, 15), "")),
        Applicability.UNSAFE,
    ),
)
EMPTY_RANGE = finding(TRAIN, (7, 4), (7, 4), "ML403", "an info", severity=Severity.INFO)
AFTER_TAB = finding(TRAIN, (8, 2), (8, 13), "ML301", "`model.train` is not called", fix=call_fix(8, 13, "model.train"))
NO_SOURCE = finding(LOADER, (3, 5), (3, 9), "ML802", "`model.forward` is called directly")

FINDINGS = [UNKNOWN_CODE, NON_ASCII, SAME_LINE_1, SAME_LINE_2, TWO_EDITS, EMPTY_RANGE, AFTER_TAB, NO_SOURCE]


def make_report(findings=FINDINGS, root=".", sources=None):
    return Report(
        findings=sorted(findings, key=lambda f: f.sort_key),
        rules=RULES,
        sources={TRAIN: SOURCE} if sources is None else sources,
        root=root,
    )


def test_concise():
    assert render(make_report(), "concise") == (
        "src/data loader.py:3:5: ML802 [warning] `model.forward` is called directly\n"
        "src/train.py:1:23: ML004 [warning] 100% unknown: ML999, see the docs\n"
        "src/train.py:2:13: ML301 `model.eval` is not called [*]\n"
        "src/train.py:3:1: ML301 `model.eval` is not called [*]\n"
        "src/train.py:4:1: ML301 `model.eval` is not called [*]\n"
        "src/train.py:5:8: ML701 [warning] `torch.log` of `torch.softmax`\n"
        "src/train.py:7:4: ML403 [info] an info\n"
        "src/train.py:8:2: ML301 `model.train` is not called [*]\n"
    )


def test_full_shows_lines_carets_and_each_fix_alone():
    assert render(make_report(), "full") == (
        "src/data loader.py:3:5: ML802 [warning] `model.forward` is called directly\n"
        "\n"
        "src/train.py:1:23: ML004 [warning] 100% unknown: ML999, see the docs\n"
        "  |\n"
        "1 | import torch  # noqa: ML999\n"
        "  |                       ^^^^^\n"
        "\n"
        "src/train.py:2:13: ML301 `model.eval` is not called [*]\n"
        "  |\n"
        "2 | name = 'é'; model.eval\n"
        "  |             ^^^^^^^^^^\n"
        "  = help: Call `model.eval()`\n"
        "    @@ -1,3 +1,3 @@\n"
        "     import torch  # noqa: ML999\n"
        "    -name = 'é'; model.eval\n"
        "    +name = 'é'; model.eval()\n"
        "     model.eval\n"
        "\n"
        "src/train.py:3:1: ML301 `model.eval` is not called [*]\n"
        "  |\n"
        "3 | model.eval\n"
        "  | ^^^^^^^^^^\n"
        "  = help: Call `model.eval()`\n"
        "    @@ -2,3 +2,3 @@\n"
        "     name = 'é'; model.eval\n"
        "    -model.eval\n"
        "    +model.eval()\n"
        "     model.eval\n"
        "\n"
        "src/train.py:4:1: ML301 `model.eval` is not called [*]\n"
        "  |\n"
        "4 | model.eval\n"
        "  | ^^^^^^^^^^\n"
        "  = help: Call `model.eval()`\n"
        "    @@ -3,3 +3,3 @@\n"
        "     model.eval\n"
        "    -model.eval\n"
        "    +model.eval()\n"
        "     logp = torch.log(torch.softmax(\n"
        "\n"
        "src/train.py:5:8: ML701 [warning] `torch.log` of `torch.softmax`\n"
        "  |\n"
        "5 | logp = torch.log(torch.softmax(\n"
        "  |        ^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "  = help: Use `torch.log_softmax` (unsafe fix: applied with `--fix --unsafe-fixes`)\n"
        "    @@ -4,4 +4,4 @@\n"
        "     model.eval\n"
        "    -logp = torch.log(torch.softmax(\n"
        "    -    x, dim=1))\n"
        "    +logp = torch.log_softmax(\n"
        "    +    x, dim=1)\n"
        "     if name:\n"
        "\n"
        "src/train.py:7:4: ML403 [info] an info\n"
        "  |\n"
        "7 | if name:\n"
        "  |    ^\n"
        "\n"
        "src/train.py:8:2: ML301 `model.train` is not called [*]\n"
        "  |\n"
        "8 |     model.train\n"
        "  |     ^^^^^^^^^^^\n"
        "  = help: Call `model.train()`\n"
        "    @@ -7,2 +7,2 @@\n"
        "     if name:\n"
        "    -\tmodel.train\n"
        "    +\tmodel.train()\n"
    )


def test_full_carets_count_wide_characters_twice():
    wide = finding(TRAIN, (1, 9), (1, 19), "ML301", "`model.eval` is not called")
    output = render(make_report([wide], sources={TRAIN: "s = '训练'; model.eval\n"}), "full")
    assert output.splitlines()[2:] == ["1 | s = '训练'; model.eval", "  |           ^^^^^^^^^^"]


def test_pylint():
    assert render(make_report(FINDINGS[:2]), "pylint") == (
        "src/train.py:1: [ML004(unknown-noqa-code), ] 100% unknown: ML999, see the docs\n"
        "src/train.py:2: [ML301(method-not-called), ] `model.eval` is not called\n"
    )


def test_github_commands_by_severity_with_escaped_data():
    assert render(make_report([UNKNOWN_CODE, NON_ASCII, EMPTY_RANGE]), "github") == (
        "::warning title=mllint (ML004),file=src/train.py,line=1,col=23,endLine=1,endColumn=28::"
        "ML004 100%25 unknown: ML999, see%0Athe docs\n"
        "::error title=mllint (ML301),file=src/train.py,line=2,col=13,endLine=2,endColumn=23::"
        "ML301 `model.eval` is not called\n"
        "::notice title=mllint (ML403),file=src/train.py,line=7,col=4,endLine=7,endColumn=4::ML403 an info\n"
    )


def test_github_escapes_properties():
    odd_path = dataclasses.replace(UNKNOWN_CODE, path="a,b:c%d/x.py", message="m\r\n")
    assert render(make_report([odd_path]), "github") == (
        "::warning title=mllint (ML004),file=a%2Cb%3Ac%25d/x.py,line=1,col=23,endLine=1,endColumn=28::ML004 m%0D%0A\n"
    )


RUFF_FIELDS = {
    "cell", "code", "name", "message", "severity", "filename", "location", "end_location", "fix", "url", "noqa_row"
}


def test_json_has_ruffs_fields_and_values():
    output = render(make_report(), "json")
    assert output.isascii() and output.endswith("]\n")
    items = json.loads(output)
    assert len(items) == len(FINDINGS)
    assert all(set(item) == RUFF_FIELDS for item in items)
    by_code = {item["code"]: item for item in items}
    assert by_code["ML701"] == {
        "cell": None,
        "code": "ML701",
        "name": "log-of-probabilities",
        "message": "`torch.log` of `torch.softmax`",
        "severity": "warning",
        "filename": "src/train.py",
        "location": {"row": 5, "column": 8},
        "end_location": {"row": 6, "column": 15},
        "fix": {
            "applicability": "unsafe",
            "message": "Use `torch.log_softmax`",
            "edits": [
                {
                    "content": "torch.log_softmax(",
                    "location": {"row": 5, "column": 8},
                    "end_location": {"row": 5, "column": 32},
                },
                {"content": "", "location": {"row": 6, "column": 14}, "end_location": {"row": 6, "column": 15}},
            ],
        },
        "url": None,
        "noqa_row": 5,
    }
    assert by_code["ML004"]["message"] == ODD_MESSAGE and by_code["ML004"]["fix"] is None
    assert by_code["ML403"]["severity"] == "info"
    assert [item["filename"] for item in items] == [f.path for f in make_report().findings]


def test_json_lines_are_the_json_objects():
    output = render(make_report(), "json-lines")
    lines = output.splitlines()
    assert output.endswith("\n") and len(lines) == len(FINDINGS)
    assert [json.loads(line) for line in lines] == json.loads(render(make_report(), "json"))


@pytest.mark.parametrize("output_format", ["concise", "full", "pylint", "github", "json-lines"])
def test_line_formats_print_nothing_for_no_finding(output_format):
    assert render(make_report([]), output_format) == ""


def test_documents_are_valid_without_findings():
    assert render(make_report([]), "json") == "[]\n"
    assert render(make_report([]), "gitlab") == "[]\n"
    run = json.loads(render(make_report([]), "sarif"))["runs"][0]
    driver = run["tool"]["driver"]
    assert run["results"] == [] and len(driver["rules"]) + len(driver["notifications"]) == len(RULES)
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


@pytest.mark.parametrize("output_format", FORMAT_NAMES)
def test_every_format_ends_with_a_newline(output_format):
    assert render(make_report(), output_format).endswith("\n")


def sarif_run(report):
    document = json.loads(render(report, "sarif"))
    assert document["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert document["version"] == "2.1.0"
    [run] = document["runs"]
    return run


def test_sarif_driver_lists_every_enabled_rule():
    driver = sarif_run(make_report())["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("mllint", mllint.__version__)
    assert [r["id"] for r in driver["rules"]] == [r.code for r in RULES if not r.tool_failure]
    assert [r["id"] for r in driver["notifications"]] == ["ML001", "ML005", "ML006", "ML009"]
    levels = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    described_rules = sorted(driver["notifications"] + driver["rules"], key=lambda r: r["id"])
    for described, rule in zip(described_rules, RULES, strict=True):
        assert described["name"] == rule.name
        assert described["help"] == {"text": rule.documentation(), "markdown": rule.documentation()}
        assert "helpUri" not in described  # no documentation URL is set (tests/test_docs.py sets one)
        assert described["defaultConfiguration"] == {"level": levels[rule.severity]}


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_sarif_descriptions_keep_to_githubs_limits(rule):
    [described] = [
        r for part in ("rules", "notifications") for r in sarif_run(make_report([]))["tool"]["driver"][part]
        if r["id"] == rule.code
    ]
    short, full = described["shortDescription"]["text"], described["fullDescription"]["text"]
    what = " ".join(rule.doc_section("What it does").split())
    assert short.startswith("Reports ") and short.endswith(".") and short in what
    assert 0 < len(full) <= 1024 and full.endswith(".") and what.startswith(full)


def test_sarif_short_description_is_the_first_sentence_and_full_one_fits():
    rules = {r["id"]: r for r in sarif_run(make_report([]))["tool"]["driver"]["rules"]}
    assert rules["ML102"]["shortDescription"]["text"] == (
        "Reports softmax or sigmoid output (probabilities), `logsigmoid` output or a Linear layer's raw logits "
        "passed as the input of `NLLLoss` or `F.nll_loss`: made in the same function, through local variables "
        "and `self.` attributes, averaged or otherwise combined linearly, or returned by a model's `forward` or "
        "a helper function in another file of the project."
    )
    assert rules["ML801"]["shortDescription"]["text"].startswith("Reports `torch.load(...)` without")
    what = " ".join(all_rules()["ML302"].doc_section("What it does").split())
    assert len(what) > 1024 and rules["ML302"]["fullDescription"]["text"] == what[: len(rules["ML302"]["fullDescription"]["text"])]


def test_sarif_reports_mllints_own_failures_as_notifications_not_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    crash = finding(TRAIN, (3, 1), (3, 1), "ML009", "rule ML301 (method-not-called) crashed at line 3: ValueError")
    unreadable = finding(LOADER, (1, 1), (1, 1), "ML001", "cannot read file: Permission denied")
    report = make_report([crash, unreadable, SAME_LINE_1], root=str(tmp_path), sources={})
    run = sarif_run(report)
    assert [r["ruleId"] for r in run["results"]] == ["ML301"]
    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is False
    notifications = invocation["toolExecutionNotifications"]
    assert [(n["descriptor"], n["level"], n["message"]["text"]) for n in notifications] == [
        ({"id": "ML001", "index": 0}, "error", "cannot read file: Permission denied"),
        ({"id": "ML009", "index": 3}, "error", "rule ML301 (method-not-called) crashed at line 3: ValueError"),
    ]
    assert notifications[1]["locations"] == [{"physicalLocation": {
        "artifactLocation": {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 1},
    }}]


def test_sarif_results_point_at_their_rules_and_regions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = sarif_run(make_report(root=str(tmp_path)))
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.as_uri() + "/"}}
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == len(FINDINGS)
    for result, expected in zip(results, make_report().findings, strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == expected.code
        assert result["message"]["text"] == expected.message
    levels = ["warning", "warning", "error", "error", "error", "warning", "note", "error"]
    assert [r["level"] for r in results] == levels
    [location] = results[5]["locations"]  # TWO_EDITS: a range over two lines
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 5, "startColumn": 8, "endLine": 6, "endColumn": 15},
    }
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/data%20loader.py"


def test_sarif_uris_are_relative_to_the_root_and_absolute_outside_it(tmp_path):
    root = tmp_path / "project"
    inside = finding(str(root / "pkg" / "train.py"), (1, 1), (1, 2), "ML301", "m")
    outside = finding(str(tmp_path / "other.py"), (1, 1), (1, 2), "ML301", "m")
    results = sarif_run(make_report([inside, outside], root=str(root), sources={}))["results"]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results]
    assert locations == [{"uri": (tmp_path / "other.py").as_uri()}, {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}]


def fingerprints(report):
    return [r["partialFingerprints"]["mllint/v1"] for r in sarif_run(report)["results"]]


def test_sarif_fingerprints_are_distinct_for_identical_lines():
    found = fingerprints(make_report())
    assert len(set(found)) == len(found)
    assert all(len(f) == 64 and set(f) <= set("0123456789abcdef") for f in found)


def test_sarif_fingerprints_survive_line_shifts():
    shifted = make_report(
        [dataclasses.replace(f, start=Position(f.start.line + 1, f.start.column)) for f in FINDINGS if f.path == TRAIN],
        sources={TRAIN: "# a new first line\n" + SOURCE},
    )
    original = make_report([f for f in FINDINGS if f.path == TRAIN])
    assert fingerprints(shifted) == fingerprints(original)


def test_gitlab_fingerprints_are_unique_and_severities_mapped():
    issues = json.loads(render(make_report(), "gitlab"))
    assert len({i["fingerprint"] for i in issues}) == len(FINDINGS)
    assert [i["severity"] for i in issues] == ["minor", "minor", "major", "major", "major", "minor", "info", "major"]
    by_check = {i["check_name"]: i for i in issues}
    assert by_check["ML701"] == {
        "description": "ML701 `torch.log` of `torch.softmax`",
        "check_name": "ML701",
        "fingerprint": by_check["ML701"]["fingerprint"],
        "severity": "minor",
        "location": {"path": "src/train.py", "lines": {"begin": 5, "end": 6}},
    }


def test_junit_has_a_suite_per_file_and_a_failure_per_finding():
    suites = ElementTree.fromstring(render(make_report(), "junit"))
    assert suites.tag == "testsuites"
    assert (suites.get("name"), suites.get("tests"), suites.get("failures")) == ("mllint", "8", "8")
    loader, train = suites.findall("testsuite")
    assert (loader.get("name"), loader.get("tests"), loader.get("failures")) == (LOADER, "1", "1")
    assert (train.get("name"), train.get("tests"), train.get("failures")) == (TRAIN, "7", "7")
    cases = train.findall("testcase")
    assert [c.get("name") for c in cases][:3] == ["org.mllint.ML004", "org.mllint.ML301", "org.mllint.ML301"]
    assert {c.get("classname") for c in cases} == {"src/train"}
    failure = cases[0].find("failure")
    assert failure.get("message") == ODD_MESSAGE
    assert failure.text == f"line 1, col 23, {ODD_MESSAGE}"
    assert cases[1].find("failure").text == "line 2, col 13, `model.eval` is not called"


def test_junit_is_ascii_and_parses_whatever_the_message_holds():
    odd = dataclasses.replace(NON_ASCII, message="é \x1b[31m <tag> & \udcff")
    output = render(make_report([odd]), "junit")
    assert output.isascii() and output.startswith("<?xml")
    failure = ElementTree.fromstring(output).find("testsuite/testcase/failure")
    assert failure.get("message") == "é \ufffd[31m <tag> & \ufffd"


def test_junit_without_findings_is_a_passing_document():
    suites = ElementTree.fromstring(render(make_report([]), "junit"))
    assert (suites.get("tests"), suites.get("failures")) == ("1", "0")
    [suite] = suites.findall("testsuite")
    [case] = suite.findall("testcase")
    assert case.get("name") == "mllint" and case.find("failure") is None


def test_machine_formats_are_ascii_and_keep_non_ascii_text():
    odd = dataclasses.replace(NON_ASCII, message="é 训练 \U0001f600")
    for output_format in ("json", "json-lines", "sarif", "gitlab"):
        output = render(make_report([odd]), output_format)
        assert output.isascii()
        assert "é 训练 \U0001f600" in json.dumps(json.loads(output), ensure_ascii=False)


def test_reports_with_absolute_paths(tmp_path):
    path = str(tmp_path / "train.py")
    report = make_report([dataclasses.replace(NON_ASCII, path=path)], root=str(tmp_path), sources={path: SOURCE})
    assert render(report, "concise").startswith(f"{path}:2:13: ")
    issue = json.loads(render(report, "gitlab"))[0]
    assert issue["location"]["path"] == "train.py"
    assert os.path.isabs(json.loads(render(report, "json"))[0]["filename"])
    assert ElementTree.fromstring(render(report, "junit")).find("testsuite").get("name") == path


def test_sarif_related_locations_are_the_call_sites_a_finding_depends_on(tmp_path):
    sites = (
        Related(str(tmp_path / "src" / "main.py"), Position(12, 5), Position(13, 9), "call site: `train(...)`"),
        Related(str(tmp_path / "explore.ipynb"), Position(2, 1), Position(2, 12), "call site: `run(...)`", cell=3),
    )
    through = dataclasses.replace(NO_SOURCE, path=str(tmp_path / "src" / "engine.py"), related=sites)
    [result] = sarif_run(make_report([through], root=str(tmp_path), sources={}))["results"]
    assert result["relatedLocations"] == [
        {
            "id": 0,
            "physicalLocation": {
                "artifactLocation": {"uri": "src/main.py", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 12, "startColumn": 5, "endLine": 13, "endColumn": 9},
            },
            "message": {"text": "call site: `train(...)`"},
        },
        {
            "id": 1,
            "physicalLocation": {
                "artifactLocation": {"uri": "explore.ipynb", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 1, "endLine": 1},
            },
            "message": {"text": "call site: `run(...)`"},
            "properties": {"cell": 3, "cellRegion": {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 12}},
        },
    ]
    assert "relatedLocations" not in sarif_run(make_report())["results"][0]


def test_json_keeps_ruffs_fields_for_a_finding_with_call_sites():
    """Ruff's JSON has no field for related locations: the call site stays in the message only."""
    through = dataclasses.replace(NO_SOURCE, related=(Related("src/main.py", Position(12, 5), Position(12, 30), "call site: `train(...)`"),))
    [item] = json.loads(render(make_report([through], sources={}), "json"))
    assert set(item) == RUFF_FIELDS
