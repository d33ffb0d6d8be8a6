"""Download pinned wheels of real ML code nobody here wrote and unpack their Python sources.

    python benchmarks/corpus.py            # into benchmarks/.corpus/<name>-<version>/
    python benchmarks/corpus.py --print    # just print the source directories (download if missing)

The corpus is for benchmarks and for reading mllint's findings on real code; the tests never need it.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PINNED = {"transformers": "4.46.3", "timm": "1.0.11", "lightning": "2.4.0"}
CORPUS = Path(__file__).resolve().parent / ".corpus"


def source_dir(name: str, version: str) -> Path:
    target = CORPUS / f"{name}-{version}"
    if (target / ".complete").exists():
        return target
    with tempfile.TemporaryDirectory() as download:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "-d", download, f"{name}=={version}"],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wheel = next(Path(download).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".py") and ".dist-info/" not in member:
                    archive.extract(member, target)
    (target / ".complete").touch()
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--print", action="store_true", help="print the source directories")
    args = parser.parse_args()
    for name, version in PINNED.items():
        directory = source_dir(name, version)
        if args.print:
            print(directory)
        else:
            files = list(directory.rglob("*.py"))
            lines = sum(len(p.read_bytes().splitlines()) for p in files)
            print(f"{name}=={version}: {len(files)} files, {lines} lines in {directory}")


if __name__ == "__main__":
    main()
