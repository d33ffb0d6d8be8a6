"""Hardening run over real code: lint every file with all rules (no internal error may occur), then fix a
copy with `--fix --unsafe-fixes` and check that every fixed file parses, that a second fix run changes
nothing, and that files without a fix are byte-identical.

    python benchmarks/corpus_check.py torch library training   # sets of corpus.py, packages or directories
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import corpus_directory  # noqa: E402
from corpus import expand  # noqa: E402

MLLINT = [sys.executable, "-m", "mllint", "--isolated", "--no-cache", "--select", "ALL", "--exit-zero"]


def digests(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.rglob("*.py")}


def findings(directory: Path) -> list[dict]:
    output = subprocess.run([*MLLINT, "--output-format", "json", str(directory)], check=True, capture_output=True)
    return json.loads(output.stdout)


def parses(path: Path) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return False
    return True


def check(name: str) -> bool:
    source = corpus_directory(name)
    found = findings(source)
    internal = [f for f in found if f["code"] == "ML009"]
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "copy"
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        before = digests(copy)
        unparsable_before = {p for p in before if not parses(copy / p)}
        subprocess.run([*MLLINT, "-q", "--fix", "--unsafe-fixes", str(copy)], check=True, capture_output=True)
        after = digests(copy)
        changed = [p for p in after if after[p] != before[p]]
        broken = [p for p in changed if not parses(copy / p)]
        fixable = {str(Path(f["filename"]).relative_to(source)) for f in found if f["fix"] and f["fix"]["applicability"] != "display-only"}
        changed_without_fix = [p for p in changed if p not in fixable]
        subprocess.run([*MLLINT, "-q", "--fix", "--unsafe-fixes", str(copy)], check=True, capture_output=True)
        unstable = [p for p, digest in digests(copy).items() if digest != after[p]]
    print(
        f"{name}: {len(before)} files, {len(found)} findings, {len(internal)} internal errors, "
        f"{len(unparsable_before)} unparsable before; fixed {len(changed)} files: {len(broken)} do not parse, "
        f"{len(unstable)} change again on a second run, {len(changed_without_fix)} changed without a fix"
    )
    for problem in (*internal, *broken, *unstable, *changed_without_fix):
        print("  ", problem)
    return not (internal or broken or unstable or changed_without_fix)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+")
    ok = all([check(name) for name in expand(parser.parse_args().corpora)])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
