"""Download pinned wheels of real ML code nobody here wrote and unpack their Python sources.

    python benchmarks/corpus.py                   # every set, into benchmarks/.corpus/<name>-<version>/
    python benchmarks/corpus.py training          # one set (or packages by name)
    python benchmarks/corpus.py library --print   # just print the source directories (download if missing)

Two sets: `library` (big library code, for speed and hardening) and `training` (training loops, trainers,
recipes: the measure of each rule's precision and recall, see training.py). The corpus is for benchmarks
and for reading mllint's findings on real code; the tests never need it.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

CORPORA = {
    "library": {"transformers": "4.46.3", "timm": "1.0.11", "lightning": "2.4.0"},
    "training": {
        "stable-baselines3": "2.9.2", "sb3-contrib": "2.9.2", "tianshou": "2.0.1", "d3rlpy": "2.8.1",
        "torchrl": "0.14.1", "allennlp": "2.10.1", "avalanche-lib": "0.6.0", "flair": "0.15.1",
        "mmengine": "0.10.7", "monai": "1.6.1", "pykeen": "1.11.1", "pyro-ppl": "1.9.2",
        "pytorch-ignite": "0.5.5", "pytorch-metric-learning": "2.9.0", "pytorch-tabnet": "4.1.0",
        "sentence-transformers": "6.2.0", "skorch": "1.4.0", "speechbrain": "1.1.2", "torchtune": "0.6.1",
        "ultralytics": "8.4.190", "darts": "0.48.1", "neuralforecast": "3.3.0", "pytorch-forecasting": "1.8.0",
    },
}  # fmt: skip
PINNED = {name: version for packages in CORPORA.values() for name, version in packages.items()}
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


def expand(names: list[str]) -> list[str]:
    """Set names replaced by their packages' names, in order, once each."""
    return list(dict.fromkeys(package for name in names for package in CORPORA.get(name, {name: None})))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help=f"sets ({', '.join(CORPORA)}) or pinned packages; default: all")
    parser.add_argument("--print", action="store_true", help="print the source directories")
    args = parser.parse_args()
    for name in expand(args.names or list(CORPORA)):
        if name not in PINNED:
            raise SystemExit(f"no corpus set or pinned package named {name}")
        version = PINNED[name]
        directory = source_dir(name, version)
        if args.print:
            print(directory)
        else:
            files = list(directory.rglob("*.py"))
            lines = sum(len(p.read_bytes().splitlines()) for p in files)
            print(f"{name}=={version}: {len(files)} files, {lines} lines in {directory}")


if __name__ == "__main__":
    main()
