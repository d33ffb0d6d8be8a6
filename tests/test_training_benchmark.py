"""The training-corpus command's report and comparison of two runs (no network: runs written here)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from corpus import CORPORA, PINNED, expand  # noqa: E402
from training import compare, report  # noqa: E402


def finding(path, line, code, message="msg"):
    return {"path": path, "line": line, "column": 5, "code": code, "message": message}


def package(findings, files=3, lines=100, seconds=0.5):
    counts = {}
    for f in findings:
        counts[f["code"]] = counts.get(f["code"], 0) + 1
    return {"files": files, "lines": lines, "seconds": seconds, "counts": counts, "findings": findings}


PREVIOUS = {
    "select": "default",
    "packages": {
        "skorch-1.4.0": package([finding("skorch/net.py", 10, "ML401"), finding("skorch/net.py", 20, "ML401")]),
        "monai-1.6.1": package([finding("monai/a.py", 1, "ML703")]),
        "flair-0.15.1": package([]),
    },
}
CURRENT = {
    "select": "default",
    "packages": {
        "skorch-1.4.0": package([finding("skorch/net.py", 20, "ML401"), finding("skorch/fit.py", 7, "ML009", "crashed")]),
        "monai-1.6.1": package([finding("monai/a.py", 1, "ML703")]),
        "tianshou-2.0.1": package([]),
    },
}


def test_comparison_lists_count_changes_and_the_findings_added_and_lost():
    assert compare(PREVIOUS, CURRENT) == [
        "skorch-1.4.0: ML009 0 -> 1, ML401 2 -> 1",
        "  + skorch-1.4.0/skorch/fit.py:7:5: ML009 crashed",
        "  - skorch-1.4.0/skorch/net.py:10:5: ML401 msg",
        "flair-0.15.1: only in the previous run",
        "tianshou-2.0.1: only in the current run",
        "total: ML009 0 -> 1, ML401 2 -> 1",
    ]


def test_a_changed_message_is_a_finding_added_and_one_lost_with_the_same_counts():
    changed = {"select": "default", "packages": {"monai-1.6.1": package([finding("monai/a.py", 1, "ML703", "new")])}}
    assert compare({"select": "default", "packages": {"monai-1.6.1": PREVIOUS["packages"]["monai-1.6.1"]}}, changed) == [
        "monai-1.6.1: same counts",
        "  + monai-1.6.1/monai/a.py:1:5: ML703 new",
        "  - monai-1.6.1/monai/a.py:1:5: ML703 msg",
        "total: no change",
    ]


def test_identical_runs_compare_to_no_change():
    assert compare(CURRENT, CURRENT) == ["total: no change"]


def test_report_has_a_line_per_package_a_total_and_the_rules():
    lines = report(CURRENT)
    assert lines[1].split() == ["skorch-1.4.0", "3", "100", "0.50", "2", "1", "ML009", "1,", "ML401", "1"]
    assert lines[-2].split() == ["total", "9", "300", "1.50", "3", "1"]
    assert lines[-1] == "per rule: ML009 1, ML401 1, ML703 1"


def test_sets_expand_to_their_packages_and_every_package_is_pinned_once():
    assert expand(["library", "timm", "torch"]) == ["transformers", "timm", "lightning", "torch"]
    assert len(expand(["training"])) == 23
    assert sum(len(packages) for packages in CORPORA.values()) == len(PINNED)
