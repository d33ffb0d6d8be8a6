"""Is mllint linear in the size of a file? Lint ever longer files made by concatenating training scripts.

    python benchmarks/series.py                      # 1, 2, 4, 8, 16, 32 and 55 copies
    python benchmarks/series.py --copies 1 8 --mllint /tmp/base/.venv/bin/mllint
    python benchmarks/series.py --copies 1 8 --select ALL   # every rule, as #28's guard asks

Two units: `corpus`, eight training scripts of the training corpus (torchrl's sota-implementations,
each a script with a long `main`), and `fixtures`, the fixtures' programs that call `backward` (training
code written at module level and in small functions, dense with findings). Copies repeat the same
top-level names, as a notebook exported to a script or a script re-creating `model` and `optimizer` per
experiment does. Each file is linted alone, in one process, with default rules or `--select`'s:
`mllint --isolated --no-cache -j 1 [--select ...]`. Printed: lines, CPU seconds (user and system: steadier than wall
time on a shared machine) and wall seconds, lines per CPU second, CPU milliseconds per thousand lines
after start-up (the lint of an empty file) and its ratio to the smallest file's, and peak memory.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mllint.source import MAX_FILE_BYTES

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [
    "torchrl-0.14.1/sota-implementations/iql/iql_offline.py",
    "torchrl-0.14.1/sota-implementations/td3_bc/td3_bc.py",
    "torchrl-0.14.1/sota-implementations/tqc/tqc.py",
    "torchrl-0.14.1/sota-implementations/cql/cql_offline.py",
    "torchrl-0.14.1/sota-implementations/sac/sac.py",
    "torchrl-0.14.1/sota-implementations/dqn/dqn_atari.py",
    "torchrl-0.14.1/sota-implementations/ppo/ppo_mujoco.py",
    "torchrl-0.14.1/sota-implementations/dqn/dqn_cartpole.py",
]


def unit(name: str) -> str:
    if name == "corpus":
        paths = [ROOT / "benchmarks" / ".corpus" / script for script in SCRIPTS]
        if not all(path.exists() for path in paths):
            raise SystemExit("the training corpus is not in benchmarks/.corpus: use --unit fixtures")
    else:
        paths = sorted(p for p in (ROOT / "fixtures").rglob("*.py") if "backward(" in p.read_text(encoding="utf-8"))
    return "".join(path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" for path in paths)


def lint(mllint: str, path: Path, select: str | None = None) -> tuple[float, float, float]:
    """CPU seconds, wall seconds and peak MB of one mllint process on one file (`select`: its rules)."""
    chosen = [] if select is None else ["--select", select]
    command = [mllint, "check", "--isolated", "--no-cache", "-j", "1", *chosen, "--exit-zero", "-q", "-o", os.devnull, str(path)]
    start = time.perf_counter()
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}")
    return usage.ru_utime + usage.ru_stime, seconds, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 55])
    parser.add_argument("--mllint", default=shutil.which("mllint") or str(Path(sys.executable).parent / "mllint"))
    parser.add_argument("--runs", type=int, default=1, help="runs per file; the fastest counts")
    parser.add_argument("--select", help="the rules, as mllint's --select (default: the default rules)")
    parser.add_argument("--unit", nargs="+", choices=["corpus", "fixtures"], default=["corpus", "fixtures"])
    args = parser.parse_args()
    for name in args.unit:
        series(args, name)


def series(args: argparse.Namespace, name: str) -> None:
    text = unit(name)
    with tempfile.TemporaryDirectory() as directory:
        empty = Path(directory, "empty.py")
        empty.write_text("", encoding="utf-8")
        start_up = min(lint(args.mllint, empty, args.select)[0] for _ in range(3))
        rules = f"--select {args.select}" if args.select else "default rules"
        print(f"unit {name}: {text.count(chr(10))} lines, {rules}; start-up (empty file): {start_up:.2f} CPU s")
        print(f"{'copies':>6}{'lines':>9}{'cpu s':>8}{'wall s':>8}{'lines/s':>9}{'ms/kline':>10}{'x first':>8}{'peak MB':>9}")
        first = None
        for copies in args.copies:
            if len((text * copies).encode("utf-8")) > MAX_FILE_BYTES:
                print(f"{copies:>6}  over the {MAX_FILE_BYTES >> 20} MB mllint reads: not linted")
                continue
            path = Path(directory, str(copies), f"series_{copies}.py")  # alone: no sibling module to read
            path.parent.mkdir()
            path.write_text(text * copies, encoding="utf-8")
            lines = (text * copies).count("\n")
            cpu, wall, peak = min(lint(args.mllint, path, args.select) for _ in range(args.runs))
            per_kline = max(cpu - start_up, 1e-6) / lines * 1000
            first = first or per_kline
            print(f"{copies:>6}{lines:>9}{cpu:>8.2f}{wall:>8.2f}{lines / cpu:>9.0f}{per_kline:>10.3f}"
                  f"{per_kline / first:>8.2f}{peak:>9.0f}", flush=True)  # fmt: skip

if __name__ == "__main__":
    main()
