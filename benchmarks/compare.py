"""Time this mllint against another build of it on the same corpora, runs interleaved (the only fair
comparison on a noisy machine), and print medians and ratios.

    python benchmarks/compare.py --baseline /tmp/core/.venv/bin/mllint torch transformers --rounds 3
    python benchmarks/compare.py --baseline OTHER torch --variant "#3 set=--ignore ML2,ML5,ML6"

Each run is `mllint check --no-cache --isolated --exit-zero -q -o /dev/null <dir>` with default rules and
the default workers (`--jobs N`: N workers); CPU time is the run's children's user and system time. Each
round also times single-process `ast.parse` of the same files (a subprocess: the floor of any linter), and
each build is given as a ratio to it. Build the baseline from an older commit in its own venv
(`git worktree add /tmp/core <commit>`, `pip install -e .` there).
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import corpus_directory  # noqa: E402
from corpus import expand  # noqa: E402


def timed_run(command: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if subprocess.run(command).returncode not in (0, 2):  # 2: the run reported mllint's own errors (ML009), a baseline's too
        raise SystemExit(f"{' '.join(command)} failed")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


PARSE = """import ast, sys, warnings
from pathlib import Path
warnings.simplefilter("ignore")
for path in sorted(Path(sys.argv[1]).rglob("*.py")):
    try:
        ast.parse(path.read_bytes())
    except Exception:
        pass
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--baseline", required=True, help="the other build's `mllint` executable")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", help="mllint's -j (default: its own)")
    parser.add_argument("--variant", action="append", default=[], help='"NAME=extra options" for this build')
    args = parser.parse_args()
    corpora = expand(args.corpora)
    this = shutil.which("mllint") or str(Path(sys.executable).parent / "mllint")
    jobs = ["-j", args.jobs] if args.jobs else []
    builds = {"baseline": (args.baseline, jobs), "this": (this, jobs)}
    for variant in args.variant:
        name, _, options = variant.partition("=")
        builds[name] = (this, jobs + options.split())
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_number in range(args.rounds):
        order = list(builds.items())
        if round_number % 2:  # alternate who runs first: a load rising during a round counts against no build
            order.reverse()
        for corpus in corpora:
            directory = str(corpus_directory(corpus))
            samples.setdefault((corpus, "ast.parse"), []).append(timed_run([sys.executable, "-c", PARSE, directory]))
            for name, (executable, options) in order:
                command = [executable, "check", *options, "--no-cache", "--isolated", "--exit-zero", "-q", "-o", "/dev/null", directory]
                samples.setdefault((corpus, name), []).append(timed_run(command))
    print(f"{'corpus':<16}{'build':<16}{'wall s':>8}{'cpu s':>8}{'x wall':>8}{'x cpu':>8}{'cpu/parse':>10}{'wall/parse':>11}"
          f"   (medians of {args.rounds}; parse: single-process ast.parse)")  # fmt: skip
    for corpus in corpora:
        base_wall = statistics.median(w for w, _ in samples[(corpus, "baseline")])
        base_cpu = statistics.median(c for _, c in samples[(corpus, "baseline")])
        parse_cpu = statistics.median(c for _, c in samples[(corpus, "ast.parse")])
        for name in ["ast.parse", *builds]:
            wall = statistics.median(w for w, _ in samples[(corpus, name)])
            cpu = statistics.median(c for _, c in samples[(corpus, name)])
            print(f"{corpus:<16}{name:<16}{wall:>8.2f}{cpu:>8.2f}{wall / base_wall:>8.2f}{cpu / base_cpu:>8.2f}"
                  f"{cpu / parse_cpu:>10.2f}{wall / parse_cpu:>11.2f}")


if __name__ == "__main__":
    main()
