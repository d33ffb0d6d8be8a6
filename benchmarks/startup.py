"""Start-up: the commands whose whole cost is mllint's start, with and without bytecode written.

    python benchmarks/startup.py                     # this environment's mllint, 10 runs each
    python benchmarks/startup.py --mllint OTHER/.venv/bin/mllint --runs 20
    python benchmarks/startup.py --baseline /work/final/.venv/bin/mllint   # both builds, interleaved, ratios

Timed, as a user or a hook runs them: `python -c pass` (the interpreter's floor), `mllint --version`,
`mllint check` of an empty file and of a one-line training step (`--isolated --no-cache`). Each with
bytecode (compiled once into a private `PYTHONPYCACHEPREFIX`, as a `pip install` leaves it) and without
(`PYTHONDONTWRITEBYTECODE=1` and an empty prefix: every process compiles every module it imports, the
standard library's too: an upper bound of an environment where bytecode cannot be written). Printed: the fastest and the median wall and CPU
milliseconds (user and system, steadier than wall time on a shared machine), runs interleaved.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEP = "import torch\nloss = criterion(model(x), y)\nloss.backward()\noptimizer.step()\n"


def timed(command: list[str], environment: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mllint", default=shutil.which("mllint") or str(Path(sys.executable).parent / "mllint"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", help="another build's `mllint`, timed interleaved with this one (ratios: this / baseline)")
    args = parser.parse_args()
    builds = {"this": args.mllint, **({"baseline": args.baseline} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as directory:
        empty, step = Path(directory, "empty.py"), Path(directory, "step.py")
        empty.write_text("")
        step.write_text(STEP)
        commands = {}
        for build, mllint in builds.items():
            commands[("python -c pass", build)] = [str(Path(mllint).parent / "python"), "-c", "pass"]
            commands[("mllint --version", build)] = [mllint, "--version"]
            commands[("check empty file", build)] = [mllint, "check", "--isolated", "--no-cache", str(empty)]
            commands[("check 4-line step", build)] = [mllint, "check", "--isolated", "--no-cache", str(step)]
        base = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        settings = {
            "bytecode": {**base, "PYTHONPYCACHEPREFIX": str(Path(directory, "pyc"))},
            "no bytecode": {**base, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(Path(directory, "none"))},
        }
        for command in commands.values():  # fill the bytecode prefix
            timed(command, settings["bytecode"])
        samples: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
        for _ in range(args.runs):
            for setting, environment in settings.items():
                for (name, build), command in commands.items():
                    samples.setdefault((name, setting, build), []).append(timed(command, environment))
    print(f"{'command':<20}{'bytecode':<13}{'build':<10}{'wall min':>9}{'median':>8}{'cpu min':>9}{'median':>8}{'x wall':>8}{'x cpu':>7}"
          f"   ms, {args.runs} runs")  # fmt: skip
    for (name, setting, build), runs in samples.items():
        walls, cpus = [w * 1000 for w, _ in runs], [c * 1000 for _, c in runs]
        ratios = ""
        if args.baseline:
            other = samples[(name, setting, "baseline")]
            ratios = (f"{statistics.median(walls) / statistics.median(w * 1000 for w, _ in other):>8.2f}"
                      f"{statistics.median(cpus) / statistics.median(c * 1000 for _, c in other):>7.2f}")  # fmt: skip
        print(f"{name:<20}{setting:<13}{build:<10}{min(walls):>9.0f}{statistics.median(walls):>8.0f}"
              f"{min(cpus):>9.0f}{statistics.median(cpus):>8.0f}{ratios}")  # fmt: skip


if __name__ == "__main__":
    main()
