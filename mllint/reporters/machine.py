"""Formats for programs: json, json-lines (Ruff's fields), sarif, gitlab, junit."""
from __future__ import annotations

import collections
import hashlib
import json
import os
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

from mllint import __version__
from mllint.findings import Finding, Position
from mllint.reporters import Report, rule_url


def _location(position: Position) -> dict:
    return {"row": position.line, "column": position.column}


def _finding_json(finding: Finding) -> dict:
    fix = finding.fix
    return {
        "cell": None,
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "severity": finding.severity.label,
        "filename": finding.path,
        "location": _location(finding.start),
        "end_location": _location(finding.end),
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "message": fix.message,
            "edits": [
                {"content": e.content, "location": _location(e.start), "end_location": _location(e.end)}
                for e in fix.edits
            ],
        },
        "url": rule_url(finding.code),
        "noqa_row": finding.noqa_line,
    }


def json_array(report: Report) -> str:
    return json.dumps([_finding_json(f) for f in report.findings], indent=2, ensure_ascii=False) + "\n"


def json_lines(report: Report) -> str:
    return "".join(json.dumps(_finding_json(f), ensure_ascii=False) + "\n" for f in report.findings)


def _relative_uri(path: str, root: str) -> str:
    absolute = os.path.abspath(path)
    try:
        return Path(absolute).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return Path(absolute).as_posix()


def _fingerprints(report: Report) -> Iterator[tuple[Finding, str]]:
    """A stable hash per finding from its code, file and the text of its line (not the line number, so
    it survives lines added above), made unique by counting identical keys."""
    seen: collections.Counter = collections.Counter()
    for finding in report.findings:
        lines = report.sources.get(finding.path, "").splitlines()
        line_text = lines[finding.start.line - 1].strip() if 0 < finding.start.line <= len(lines) else finding.message
        key = (finding.code, _relative_uri(finding.path, report.root), line_text)
        seen[key] += 1
        digest = hashlib.sha256("\0".join([*key, str(seen[key])]).encode()).hexdigest()
        yield finding, digest


SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def sarif(report: Report) -> str:
    rule_index = {rule.code: i for i, rule in enumerate(report.rules)}
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary() or rule.message},
            "fullDescription": {"text": rule.documentation() or rule.message},
            "help": {"text": rule.documentation(), "markdown": rule.documentation()},
            "helpUri": rule_url(rule.code),
            "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity.label]},
        }
        for rule in report.rules
    ]
    results = []
    for finding, fingerprint in _fingerprints(report):
        result = {
            "ruleId": finding.code,
            "level": SARIF_LEVEL[finding.severity.label],
            "message": {"text": finding.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _relative_uri(finding.path, report.root), "uriBaseId": "%SRCROOT%"},
                        "region": {
                            "startLine": finding.start.line,
                            "startColumn": finding.start.column,
                            "endLine": finding.end.line,
                            "endColumn": finding.end.column,
                        },
                    }
                }
            ],
            "partialFingerprints": {"mllint/v1": fingerprint},
        }
        if finding.code in rule_index:
            result["ruleIndex"] = rule_index[finding.code]
        results.append(result)
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mllint",
                        "informationUri": "https://pypi.org/project/mllint-torch/",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(os.path.abspath(report.root)).as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


GITLAB_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def gitlab(report: Report) -> str:
    issues = [
        {
            "description": f"{finding.code} {finding.message}",
            "check_name": finding.code,
            "fingerprint": fingerprint,
            "severity": GITLAB_SEVERITY[finding.severity.label],
            "location": {
                "path": _relative_uri(finding.path, report.root),
                "lines": {"begin": finding.start.line, "end": finding.end.line},
            },
        }
        for finding, fingerprint in _fingerprints(report)
    ]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def junit(report: Report) -> str:
    failures = len(report.findings)
    root = ElementTree.Element("testsuites", name="mllint", tests=str(max(failures, 1)), failures=str(failures))
    by_path: dict[str, list[Finding]] = collections.defaultdict(list)
    for finding in report.findings:
        by_path[finding.path].append(finding)
    if not by_path:
        suite = ElementTree.SubElement(root, "testsuite", name="mllint", tests="1", failures="0")
        ElementTree.SubElement(suite, "testcase", name="mllint", classname="mllint")
    for path, findings in by_path.items():
        suite = ElementTree.SubElement(root, "testsuite", name=path, tests=str(len(findings)), failures=str(len(findings)))
        for finding in findings:
            case = ElementTree.SubElement(
                suite, "testcase", name=f"org.mllint.{finding.code}", classname=os.path.splitext(path)[0]
            )
            failure = ElementTree.SubElement(case, "failure", message=finding.message)
            failure.text = f"line {finding.start.line}, col {finding.start.column}, {finding.message}"
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
