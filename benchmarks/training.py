"""Lint the training corpus (or any corpus set, package or directory) and count what mllint finds there.

    python benchmarks/training.py                                  # the training set, default rules
    python benchmarks/training.py --select ALL --json run.json     # every rule; keep the run
    python benchmarks/training.py --compare run.json               # what changed since that run
    python benchmarks/training.py monai skorch --select ML4        # some packages, some rules

Missing packages are downloaded and unpacked first (see corpus.py). For each package: files, lines,
seconds, findings, internal and input errors (ML0xx), and findings per rule; then the totals. `--json`
writes the run (counts and every finding, paths relative to the package). `--compare` prints, against a
previous run's JSON, the per-package and per-rule count differences and the findings added and lost
(`package/path:line:col: CODE message`), so that a change in what mllint finds on real code is a diff.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import corpus_directory  # noqa: E402
from corpus import PINNED, expand  # noqa: E402


def lint(directory: Path, select: str | None, jobs: int, mllint: str | None = None) -> tuple[list[dict], float]:
    mllint = mllint or shutil.which("mllint") or str(Path(sys.executable).parent / "mllint")
    selection = ["--select", select] if select else []
    command = [mllint, "--isolated", "--no-cache", "--exit-zero", "-q", "-j", str(jobs), *selection,
               "--output-format", "json", str(directory)]  # fmt: skip
    start = time.perf_counter()
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output), time.perf_counter() - start


def tree_run(directory: Path, select: str | None, jobs: int, mllint: str | None = None,
             patterns: tuple[str, ...] = ("*.py",)) -> dict:  # fmt: skip
    """Files, lines, seconds and findings of linting one tree (files and lines of those matching `patterns`)."""
    files = sorted(path for pattern in patterns for path in directory.rglob(pattern) if path.is_file())
    found, seconds = lint(directory, select, jobs, mllint)
    findings = sorted(
        ({"path": Path(os.path.relpath(os.path.abspath(f["filename"]), os.path.abspath(directory))).as_posix(),
          "line": f["location"]["row"], "column": f["location"]["column"], "code": f["code"], "message": f["message"]}
         for f in found),
        key=lambda f: (f["path"], f["line"], f["column"], f["code"]),
    )  # fmt: skip
    return {
        "files": len(files),
        "lines": sum(len(p.read_bytes().splitlines()) for p in files),
        "seconds": round(seconds, 2),
        "counts": dict(sorted(Counter(f["code"] for f in findings).items())),
        "findings": findings,
    }


def label(name: str) -> str:
    return f"{name}-{PINNED[name]}" if name in PINNED else name


def report(run: dict, title: str = "package") -> list[str]:
    """The run as a table: one line per package (or other tree), a total, then the total per rule."""
    width = max([32, *(len(name) + 1 for name in run["packages"])])
    lines = [f"{title:<{width}}{'files':>6}{'lines':>9}{'seconds':>9}{'findings':>9}{'ML0xx':>6}  per rule"]
    totals: Counter = Counter()
    for name, package in run["packages"].items():
        counts = package["counts"]
        totals.update(counts)
        meta = sum(n for code, n in counts.items() if code.startswith("ML0"))
        per_rule = ", ".join(f"{code} {n}" for code, n in sorted(counts.items()))
        lines.append(
            f"{name:<{width}}{package['files']:>6}{package['lines']:>9}{package['seconds']:>9.2f}"
            f"{sum(counts.values()):>9}{meta:>6}  {per_rule}"
        )
    packages = run["packages"].values()
    meta = sum(n for code, n in totals.items() if code.startswith("ML0"))
    lines.append(
        f"{'total':<{width}}{sum(p['files'] for p in packages):>6}{sum(p['lines'] for p in packages):>9}"
        f"{sum(p['seconds'] for p in packages):>9.2f}{sum(totals.values()):>9}{meta:>6}"
    )
    lines.append("per rule: " + ", ".join(f"{code} {n}" for code, n in sorted(totals.items())))
    return lines


def _finding_text(name: str, finding: dict) -> str:
    return f"{name}/{finding['path']}:{finding['line']}:{finding['column']}: {finding['code']} {finding['message']}"


def compare(previous: dict, current: dict, note: Callable[[str, dict], str] | None = None) -> list[str]:
    """Per package, the rules whose counts changed and the findings added (+) and lost (-), each followed by
    `note(package, finding)` if given (a known verdict, say)."""
    lines = []
    names = list(dict.fromkeys([*previous["packages"], *current["packages"]]))
    totals_before: Counter = Counter()
    totals_after: Counter = Counter()
    for name in names:
        before = previous["packages"].get(name)
        after = current["packages"].get(name)
        if before is None or after is None:
            lines.append(f"{name}: only in the {'current' if before is None else 'previous'} run")
            continue
        totals_before.update(before["counts"])
        totals_after.update(after["counts"])
        changes = _count_changes(Counter(before["counts"]), Counter(after["counts"]))
        old = Counter(_finding_text(name, f) + (note(name, f) if note else "") for f in before["findings"])
        new = Counter(_finding_text(name, f) + (note(name, f) if note else "") for f in after["findings"])
        if not changes and old == new:
            continue
        lines.append(f"{name}: {changes or 'same counts'}")
        lines += [f"  + {text}" for text in sorted((new - old).elements())]
        lines += [f"  - {text}" for text in sorted((old - new).elements())]
    lines.append(f"total: {_count_changes(totals_before, totals_after) or 'no change'}")
    return lines


def _count_changes(before: Counter, after: Counter) -> str:
    codes = sorted(set(before) | set(after))
    return ", ".join(f"{code} {before[code]} -> {after[code]}" for code in codes if before[code] != after[code])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="corpus sets, pinned packages or directories (default: training)")
    parser.add_argument("--select", help="rules, as mllint's --select (default: the default rules)")
    parser.add_argument("--json", type=Path, help="write the run to this file")
    parser.add_argument("--compare", type=Path, help="a previous run's JSON to compare with")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="mllint's worker processes (default 1)")
    parser.add_argument("--mllint", help="the mllint executable to run (default: this environment's)")
    args = parser.parse_args()
    run = {"select": args.select or "default", "packages": {}}
    for name in expand(args.names or ["training"]):
        run["packages"][label(name)] = tree_run(corpus_directory(name), args.select, args.jobs, args.mllint)
    print("\n".join(report(run)))
    if args.json:
        args.json.write_text(json.dumps(run, indent=1) + "\n")
    if args.compare:
        print()
        print("\n".join(compare(json.loads(args.compare.read_text()), run)))


if __name__ == "__main__":
    main()
