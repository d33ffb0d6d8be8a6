"""Time this mllint against another build of it on the same corpora, runs interleaved (the only fair
comparison on a noisy machine), and print medians and ratios.

    python benchmarks/compare.py --baseline /tmp/core/.venv/bin/mllint torch transformers --rounds 3
    python benchmarks/compare.py --baseline OTHER torch --variant "#3 set=--ignore ML2,ML5,ML6"

Each run is `mllint check --no-cache --isolated --exit-zero -q -o /dev/null <dir>` with default rules and
the default workers; CPU time is the run's children's user and system time. Build the baseline from
an older commit in its own venv (`git worktree add /tmp/core <commit>`, `pip install -e .` there).
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--baseline", required=True, help="the other build's `mllint` executable")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", action="append", default=[], help='"NAME=extra options" for this build')
    args = parser.parse_args()
    corpora = expand(args.corpora)
    this = shutil.which("mllint") or str(Path(sys.executable).parent / "mllint")
    builds = {"baseline": (args.baseline, []), "this": (this, [])}
    for variant in args.variant:
        name, _, options = variant.partition("=")
        builds[name] = (this, options.split())
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        for corpus in corpora:
            directory = str(corpus_directory(corpus))
            for name, (executable, options) in builds.items():
                command = [executable, "check", *options, "--no-cache", "--isolated", "--exit-zero", "-q", "-o", "/dev/null", directory]
                samples.setdefault((corpus, name), []).append(timed_run(command))
    print(f"{'corpus':<16}{'build':<16}{'wall s':>8}{'cpu s':>8}{'x wall':>8}{'x cpu':>8}   (medians of {args.rounds})")
    for corpus in corpora:
        base_wall = statistics.median(w for w, _ in samples[(corpus, "baseline")])
        base_cpu = statistics.median(c for _, c in samples[(corpus, "baseline")])
        for name in builds:
            wall = statistics.median(w for w, _ in samples[(corpus, name)])
            cpu = statistics.median(c for _, c in samples[(corpus, name)])
            print(f"{corpus:<16}{name:<16}{wall:>8.2f}{cpu:>8.2f}{wall / base_wall:>8.2f}{cpu / base_cpu:>8.2f}")


if __name__ == "__main__":
    main()
