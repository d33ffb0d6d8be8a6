"""The slowest files of the training corpus, in lines per second: lint every file alone, in this process.

    python benchmarks/slowest.py                        # every package of benchmarks/.corpus/ but the libraries
    python benchmarks/slowest.py monai-1.6.1 skorch-1.4.0 --top 30

Each file is linted with default rules in its own project (its package root), as `mllint FILE` does,
timed in CPU seconds of this process (start-up excluded: mllint is imported once). The summaries of
the modules a file consults are kept across files, as in a run over the whole package. Files under
`--min-lines` lines are left out of the ranking (their rate is the fixed cost of a lint, not a rate).
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
            start = time.process_time()
            lint_path(str(path), selection)
            seconds = time.process_time() - start
            total_lines, total_seconds = total_lines + lines, total_seconds + seconds
            if lines >= args.min_lines:
                rows.append((lines / max(seconds, 1e-9), lines, seconds, str(path.relative_to(CORPUS))))
    print(f"{len(names)} packages, {total_lines} lines in {total_seconds:.1f} CPU s: {total_lines / total_seconds:.0f} lines/s")
    print(f"{'lines/s':>9}{'lines':>8}{'ms':>8}  file (the {args.top} slowest of {len(rows)} with {args.min_lines}+ lines)")
    for rate, lines, seconds, path in sorted(rows)[: args.top]:
        print(f"{rate:>9.0f}{lines:>8}{seconds * 1000:>8.0f}  {path}")


if __name__ == "__main__":
    main()
