"""Formats for programs: json, json-lines (Ruff's fields), sarif, gitlab, junit, rdjson (reviewdog).

Their output is ASCII only (JSON `\\u` escapes, XML character references), so it survives any stream
encoding and any file name.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import urllib.parse
from pathlib import Path
from xml.etree import ElementTree

import mllint
from mllint import __version__
from mllint.findings import Applicability, Finding, Fix, Position, Related, Severity
from mllint.reporters import Report, cell_position, rule_url
from mllint.rule import Rule
from mllint.source import SourceText

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_DESCRIPTION_LIMIT = 1024  # GitHub code scanning's limit on a rule's fullDescription
SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
GITLAB_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}
# What XML 1.0 cannot carry, even escaped: control characters, lone surrogates, U+FFFE and U+FFFF.
XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _dumps(value: object, indent: int | None = 2) -> str:
    return json.dumps(value, indent=indent) + "\n"


# json, json-lines


def _location(position: Position) -> dict:
    return {"row": position.line, "column": position.column}


def _fix_json(fix: Fix) -> dict:
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [
            {"content": edit.content, "location": _location(edit.start), "end_location": _location(edit.end)}
            for edit in fix.edits
        ],
    }


def _finding_json(finding: Finding) -> dict:
    return {
        "cell": finding.cell,
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "severity": finding.severity.label,
        "filename": finding.path,
        "location": _location(finding.start),
        "end_location": _location(finding.end),
        "fix": None if finding.fix is None else _fix_json(finding.fix),
        "url": rule_url(finding.code),
        "noqa_row": finding.noqa_line,
    }


def json_array(report: Report) -> str:
    return _dumps([_finding_json(f) for f in report.findings])


def json_lines(report: Report) -> str:
    return "".join(_dumps(_finding_json(f), indent=None) for f in report.findings)


# Paths and fingerprints shared by sarif and gitlab


def _relative_path(path: str, root: str) -> Path | None:
    """`path` relative to `root`, or None when it lies outside."""
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        return None


def _report_path(path: str, root: str) -> str:
    """`path` relative to `root` with forward slashes; absolute when it lies outside."""
    relative = _relative_path(path, root)
    return (relative or Path(os.path.abspath(path))).as_posix()


def _fingerprints(report: Report) -> list[str]:
    """A stable hash per finding of its code, file and the text of its line (not the line number, so that
    it survives lines added above), made unique by counting findings with identical keys."""
    locations = {f.location for f in report.findings}
    sources = {key: SourceText(text) for key, text in report.sources.items() if key in locations}
    occurrences: collections.Counter = collections.Counter()
    fingerprints = []
    for finding in report.findings:
        source = sources.get(finding.location)
        line_text = source.line(finding.start.line).strip() if source else ""
        key = (finding.code, _report_path(finding.path, report.root), line_text or finding.message)
        occurrences[key] += 1
        identity = "\0".join([*key, str(occurrences[key])])
        fingerprints.append(hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest())
    return fingerprints


# sarif


def sarif(report: Report) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it. mllint's own failures on a file (a crash, a file it
    cannot read) are notifications of the invocation, which then did not succeed, and not results."""
    rules = [rule for rule in report.rules if not rule.tool_failure]
    failures = [rule for rule in report.rules if rule.tool_failure]
    rule_index = {rule.code: index for index, rule in enumerate(rules)}
    failure_index = {rule.code: index for index, rule in enumerate(failures)}
    pairs = list(zip(report.findings, _fingerprints(report), strict=True))
    results = [
        _sarif_result(finding, fingerprint, report, rule_index)
        for finding, fingerprint in pairs
        if finding.code not in failure_index
    ]
    notifications = [
        _sarif_notification(finding, report, failure_index) for finding in report.findings if finding.code in failure_index
    ]
    driver = {
        "name": "mllint",
        "version": __version__,
        "rules": [_sarif_rule(rule) for rule in rules],
        "notifications": [_sarif_rule(rule) for rule in failures],
    }
    if mllint.DOCS_URL:
        driver["informationUri"] = mllint.DOCS_URL
    invocation = {"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}
    run = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "originalUriBaseIds": {"%SRCROOT%": {"uri": _directory_uri(report.root)}},
        "columnKind": "unicodeCodePoints",  # Position columns count characters (SARIF's default is UTF-16)
        "results": results,
    }
    return _dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


def _sarif_rule(rule: type[Rule]) -> dict:
    """A rule's reporting descriptor, within GitHub's limits: the first sentence as the short description,
    "What it does" up to 1,024 characters as the full one, the whole documentation as help."""
    documentation = rule.documentation() or rule.message
    descriptor = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.first_sentence() or rule.message},
        "fullDescription": {"text": rule.description(SARIF_DESCRIPTION_LIMIT) or rule.message},
        "help": {"text": documentation, "markdown": documentation},
        "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
    }
    url = rule_url(rule.code)
    return {**descriptor, "helpUri": url} if url else descriptor


def _sarif_notification(finding: Finding, report: Report, failure_index: dict[str, int]) -> dict:
    location = _sarif_result(finding, "", report, {})["locations"][0]
    return {
        "descriptor": {"id": finding.code, "index": failure_index[finding.code]},
        "level": SARIF_LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [location],
    }


def _sarif_result(finding: Finding, fingerprint: str, report: Report, rule_index: dict[str, int]) -> dict:
    region = {
        "startLine": finding.start.line,
        "startColumn": finding.start.column,
        "endLine": finding.end.line,
        "endColumn": finding.end.column,
    }
    properties = {}
    if finding.cell is not None:  # the region is the notebook file's lines; the cell's positions follow
        properties = {"cell": finding.cell, "cellRegion": region}
        start_line, end_line = report.file_lines(finding)
        region = {"startLine": start_line, "endLine": end_line}
    root = report.root
    result = {
        "ruleId": finding.code,
        "level": SARIF_LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [
            {"physicalLocation": {"artifactLocation": _artifact_location(finding.path, root), "region": region}}
        ],
        "partialFingerprints": {"mllint/v1": fingerprint},
    }
    if finding.related:
        result["relatedLocations"] = [_sarif_related(index, related, report) for index, related in enumerate(finding.related)]
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    if properties:
        result["properties"] = properties
    return result


def _sarif_related(index: int, related: Related, report: Report) -> dict:
    """A call site a finding depends on (for a notebook's cell, its lines in the file, as for results)."""
    start, end = related.start, related.end
    region = {"startLine": start.line, "startColumn": start.column, "endLine": end.line, "endColumn": end.column}
    location = {"artifactLocation": _artifact_location(related.path, report.root), "region": region}
    sarif_location = {"id": index, "physicalLocation": location, "message": {"text": related.message}}
    if related.cell is not None:
        start_line, end_line = report.lines_in_file(related.path, related.cell, start.line, end.line)
        location["region"] = {"startLine": start_line, "endLine": end_line}
        sarif_location["properties"] = {"cell": related.cell, "cellRegion": region}
    return sarif_location


def _artifact_location(path: str, root: str) -> dict:
    """A URI relative to %SRCROOT%, or an absolute file URI for a file outside the root."""
    relative = _relative_path(path, root)
    if relative is None:
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": urllib.parse.quote(relative.as_posix(), errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}


def _directory_uri(directory: str) -> str:
    uri = Path(os.path.abspath(directory)).as_uri()
    return uri if uri.endswith("/") else uri + "/"


# gitlab


def gitlab(report: Report) -> str:
    """A GitLab Code Quality report."""
    return _dumps(
        [
            {
                "description": f"{finding.code} {finding.message}" + _cell_suffix(finding),
                "check_name": finding.code,
                "fingerprint": fingerprint,
                "severity": GITLAB_SEVERITY[finding.severity],
                "location": {
                    "path": _report_path(finding.path, report.root),
                    "lines": dict(zip(("begin", "end"), report.file_lines(finding), strict=True)),
                },
            }
            for finding, fingerprint in zip(report.findings, _fingerprints(report), strict=True)
        ]
    )


def _cell_suffix(finding: Finding) -> str:
    return "" if finding.cell is None else f" ({cell_position(finding)})"


# rdjson


RDJSON_SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}


def rdjson(report: Report) -> str:
    """reviewdog's Diagnostic Format: columns are 1-based UTF-8 byte offsets; a fix is a suggestion. A
    notebook's finding is at the notebook file's lines, its cell said in the message."""
    sources = {key: SourceText(text) for key, text in report.sources.items()}
    source = {"name": "mllint", **({"url": mllint.DOCS_URL} if mllint.DOCS_URL else {})}
    return _dumps({"source": source, "diagnostics": [_rdjson_diagnostic(f, report, sources) for f in report.findings]})


def _rdjson_diagnostic(finding: Finding, report: Report, sources: dict[str, SourceText]) -> dict:
    text = sources.get(finding.location)

    def position(where: Position) -> dict:
        if text is None or not 0 < where.line <= len(text.lines):
            return {"line": where.line, "column": where.column}
        before = text.line(where.line)[: where.column - 1]
        return {"line": where.line, "column": len(before.encode("utf-8", "surrogatepass")) + 1}

    code = {"value": finding.code, **({"url": url} if (url := rule_url(finding.code)) else {})}
    diagnostic = {
        "message": finding.message + _cell_suffix(finding),
        "location": {"path": finding.path, "range": {"start": position(finding.start), "end": position(finding.end)}},
        "severity": RDJSON_SEVERITY[finding.severity],
        "code": code,
    }
    if finding.cell is not None:
        start, end = report.file_lines(finding)
        diagnostic["location"]["range"] = {"start": {"line": start}, "end": {"line": end}}
    elif finding.fix is not None and finding.fix.applicability is not Applicability.DISPLAY_ONLY:
        diagnostic["suggestions"] = [
            {"range": {"start": position(edit.start), "end": position(edit.end)}, "text": edit.content}
            for edit in finding.fix.edits
        ]
    return diagnostic


# junit


def junit(report: Report) -> str:
    """JUnit XML laid out as Ruff's: a test suite per file, a failing test case per finding."""
    failures = len(report.findings)
    root = ElementTree.Element("testsuites", name="mllint", tests=str(max(failures, 1)), failures=str(failures))
    by_path: dict[str, list[Finding]] = collections.defaultdict(list)
    for finding in report.findings:
        by_path[finding.path].append(finding)
    for path, findings in by_path.items():
        _junit_suite(root, path, findings)
    if not by_path:  # one passing test, so that CI shows a pass
        suite = ElementTree.SubElement(root, "testsuite", name="mllint", tests="1", failures="0")
        ElementTree.SubElement(suite, "testcase", name="mllint", classname="mllint")
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="us-ascii", xml_declaration=True).decode("ascii") + "\n"


def _junit_suite(root: ElementTree.Element, path: str, findings: list[Finding]) -> None:
    count = str(len(findings))
    suite = ElementTree.SubElement(root, "testsuite", name=_xml_text(path), tests=count, failures=count)
    classname = _xml_text(os.path.splitext(path)[0])
    for finding in findings:
        case = ElementTree.SubElement(suite, "testcase", name=f"org.mllint.{finding.code}", classname=classname)
        failure = ElementTree.SubElement(case, "failure", message=_xml_text(finding.message))
        where = f"line {finding.start.line}, col {finding.start.column}"
        where = where if finding.cell is None else f"cell {finding.cell}, {where}"
        failure.text = _xml_text(f"{where}, {finding.message}")


def _xml_text(text: str) -> str:
    return XML_INVALID.sub("\ufffd", text)
