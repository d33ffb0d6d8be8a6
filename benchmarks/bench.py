"""Time mllint against the floor of any Python linter on the same files, in the same run.

    python benchmarks/bench.py torch                # the installed torch package's sources
    python benchmarks/bench.py transformers timm    # pinned wheels (see corpus.py)
    python benchmarks/bench.py path/to/dir --runs 5

For each corpus: files, lines, then median seconds, lines per second and the ratio to bare `ast.parse`
and to `libcst.parse_module` of the same files (both single process), for `mllint` run as a user runs it
(a subprocess over the directory, all rules, no configuration): cold (no cache), warm (cache filled
by a previous run), and on the corpus' largest file alone, with the peak memory of one mllint process.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import PINNED, expand, source_dir  # noqa: E402


def corpus_directory(name: str) -> Path:
    if name in PINNED:
        return source_dir(name, PINNED[name])
    if Path(name).is_dir():
        return Path(name)
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"no corpus, directory or installed package named {name}")
    return Path(next(iter(spec.submodule_search_locations)))


def sources(directory: Path) -> list[str]:
    texts = []
    for path in sorted(directory.rglob("*.py")):
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            pass
    return texts


def timed(function, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def parse_all(parse, texts: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for text in texts:
            try:
                parse(text)
            except Exception:
                pass


def run_mllint(target: Path, cache: Path | None) -> None:
    mllint = shutil.which("mllint") or str(Path(sys.executable).parent / "mllint")
    caching = ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    command = [mllint, "--isolated", "--select", "ALL", "--exit-zero", "-q", "--output-format", "json-lines",
               "-o", "/dev/null", *caching, str(target)]  # fmt: skip
    subprocess.run(command, check=True)


def editor_latency(directory: Path, runs: int) -> tuple[Path, float]:
    """Seconds to lint, in process and with every rule, the file nearest 2,000 lines: what the LSP
    server does after an edit."""
    from mllint.engine import Selection, lint_text
    from mllint.registry import all_rules

    files = sorted(directory.rglob("*.py"))
    path = min(files, key=lambda p: abs(p.read_bytes().count(b"\n") - 2000))
    text, selection = path.read_text(encoding="utf-8"), Selection.of(all_rules())
    return path, timed(lambda: lint_text(text, str(path), selection), runs)


def run_ruff(directory: Path) -> None:
    command = ["ruff", "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", "--isolated", str(directory)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--libcst-runs", type=int, default=1, help="libcst is slow: fewer runs")
    args = parser.parse_args()
    import libcst

    print(f"{'corpus':<22}{'files':>7}{'lines':>10}  {'what':<22}{'median s':>9}{'lines/s':>10}{'x ast':>8}{'x libcst':>9}")
    for name in expand(args.corpora):
        directory = corpus_directory(name)
        texts = sources(directory)
        lines = sum(text.count("\n") + 1 for text in texts)
        ast_seconds = timed(lambda: parse_all(ast.parse, texts), args.runs)
        cst_seconds = timed(lambda: parse_all(libcst.parse_module, texts), args.libcst_runs)
        cold_seconds = timed(lambda: run_mllint(directory, None), args.runs)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        with tempfile.TemporaryDirectory() as cache:
            run_mllint(directory, Path(cache))
            warm_seconds = timed(lambda: run_mllint(directory, Path(cache)), args.runs)
        largest = max(directory.rglob("*.py"), key=lambda p: p.stat().st_size)
        single_seconds = timed(lambda: run_mllint(largest, None), args.runs)
        rows = [("ast.parse", ast_seconds), ("libcst.parse_module", cst_seconds),
                ("mllint cold", cold_seconds), ("mllint warm (cache)", warm_seconds)]  # fmt: skip
        if shutil.which("ruff"):
            rows.append(("ruff --select ALL", timed(lambda: run_ruff(directory), args.runs)))
        for what, seconds in rows:
            print(f"{name:<22}{len(texts):>7}{lines:>10}  {what:<22}{seconds:>9.2f}{lines / seconds:>10.0f}"
                  f"{seconds / ast_seconds:>8.2f}{seconds / cst_seconds:>9.2f}")
        print(f"{name:<22}{'':>17}  largest file {largest.name} ({largest.stat().st_size >> 10} KB), alone: {single_seconds:.2f} s")
        print(f"{name:<22}{'':>17}  peak memory of one mllint process: {peak_mb:.0f} MB")
        path, seconds = editor_latency(directory, args.runs)
        lines_in_file = path.read_bytes().count(b"\n")
        print(f"{name:<22}{'':>17}  editor latency, {path.name} ({lines_in_file} lines) in process: {seconds * 1000:.0f} ms")


if __name__ == "__main__":
    main()
