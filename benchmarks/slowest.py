"""The slowest files of the training corpus, in lines per second: lint every file alone, in this process.

    python benchmarks/slowest.py                        # every package of benchmarks/.corpus/ but the libraries
    python benchmarks/slowest.py monai-1.6.1 skorch-1.4.0 --top 30

Each file is linted with default rules in its own project (its package root), as `mllint FILE` does,
timed in CPU seconds of this process (start-up excluded: mllint is imported once). It is linted three
times: the first lint also reads the project modules it consults that no earlier file read (their
summaries are kept, as in a run over the whole package); the ranking is by the faster of the other two,
the file's own cost (a garbage collection of the process' heap may fall in either).
Files under `--min-lines` lines are left out of the ranking (their rate is a lint's fixed cost).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from mllint.engine import Selection, lint_path
from mllint.registry import all_rules

CORPUS = Path(__file__).resolve().parent / ".corpus"
LIBRARIES = ("transformers-", "timm-", "lightning-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packages", nargs="*", help="directories of benchmarks/.corpus/ (default: the training corpus)")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--min-lines", type=int, default=100)
    args = parser.parse_args()
    names = args.packages or sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith(LIBRARIES))
    selection = Selection.of(code for code, rule in all_rules().items() if not rule.opt_in)
    rows, total_lines, total_seconds = [], 0, 0.0
    for name in names:
        for path in sorted((CORPUS / name).rglob("*.py")):
            lines = path.read_bytes().count(b"\n")
            first, second = timed_lint(path, selection), min(timed_lint(path, selection) for _ in range(2))
            total_lines, total_seconds = total_lines + lines, total_seconds + first
            if lines >= args.min_lines:
                rows.append((lines / max(second, 1e-9), lines, second, first, str(path.relative_to(CORPUS))))
    print(f"{len(names)} packages, {total_lines} lines, first lints {total_seconds:.1f} CPU s: {total_lines / total_seconds:.0f} lines/s")
    print(f"{'lines/s':>9}{'lines':>8}{'ms':>8}{'first ms':>9}  file (the {args.top} slowest of {len(rows)} with {args.min_lines}+ lines)")
    for rate, lines, seconds, first, path in sorted(rows)[: args.top]:
        print(f"{rate:>9.0f}{lines:>8}{seconds * 1000:>8.1f}{first * 1000:>9.1f}  {path}")


def timed_lint(path: Path, selection: Selection) -> float:
    start = time.process_time()
    lint_path(str(path), selection)
    return time.process_time() - start


if __name__ == "__main__":
    main()
