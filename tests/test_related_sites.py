"""Findings made through a call site carry it (and the call sites of its callers the chain went through) as
SARIF related locations, for every rule family that reads parameters under a call site's binding."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mllint.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

CASES = [
    # (fixture, the finding's file, line, code), [(the call site's file, line, column), ...]
    (("ml2_gaps", "engine.py", 73, "ML201"), [("main.py", 32, 5)]),
    (("ml3_callers", "evaluate.py", 11, "ML302"), [("engine.py", 15, 22), ("main.py", 13, 5)]),
    (("ml3_callers", "engine.py", 32, "ML303"), [("main.py", 17, 5)]),
    (("ml4_call_sites", "steps.py", 7, "ML404"), [("main.py", 27, 9)]),
    (("ml4_callers", "engine.py", 9, "ML405"), [("main.py", 16, 5)]),
    (("ml4_call_sites", "steps.py", 13, "ML413"), [("main.py", 30, 9)]),
]


def sarif_results(directory: Path, path: str, code: str, monkeypatch) -> list[dict]:
    monkeypatch.chdir(directory)
    arguments = ["--isolated", "--no-cache", "--output-format", "sarif", "-j", "1", "--exit-zero", "--select", code, path]
    return json.loads(CliRunner().invoke(main, arguments).stdout)["runs"][0]["results"]


@pytest.mark.parametrize(("finding", "sites"), CASES, ids=[case[0][3] for case in CASES])
def test_a_finding_through_a_call_site_has_it_as_a_related_location(finding, sites, monkeypatch):
    directory, path, line, code = finding
    results = sarif_results(FIXTURES / directory, path, code, monkeypatch)
    [result] = [r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == line]
    related = [
        (
            site["physicalLocation"]["artifactLocation"]["uri"],
            site["physicalLocation"]["region"]["startLine"],
            site["physicalLocation"]["region"]["startColumn"],
        )
        for site in result["relatedLocations"]
    ]
    assert related == sites
    assert all(site["message"]["text"].startswith("call site: `") for site in result["relatedLocations"])
