"""Lint research repositories at HEAD, each tree whole, and count what mllint finds there (precision on real code).

    python benchmarks/repos.py --mirror MIRROR --real-code DIR                      # default rules
    python benchmarks/repos.py --mirror MIRROR --real-code DIR --select ALL --json run.json
    python benchmarks/repos.py --mirror MIRROR --real-code DIR --compare run.json --verdicts DIR/heads-findings.tsv
    python benchmarks/repos.py ... --mllint OTHER/.venv/bin/mllint                   # lint with another build
    python benchmarks/repos.py ... owner/name owner/other                          # some repositories only

DIR (the real-code folder) holds `repos.txt` (one `owner/name` a line) and `extract_head.py`. MIRROR holds a
git snapshot of each as `MIRROR/owner+name/repo` (a bare git dir or a checkout with `.git`); repositories
without one are named and skipped. Each snapshot's HEAD is extracted once, with `extract_head.py`, into
`--cache` (`owner+name@<HEAD's first 8 hex digits>/`). The report and `--json`/`--compare` are
training.py's, one line per repository; `--verdicts TSV` (columns code, repo, site = path:line, verdict)
adds the verdicts per rule (findings, TP, FP, unsure, UNREAD), marks every finding the comparison lists
with its verdict, and lists the findings nobody has read yet.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training import compare, report, tree_run  # noqa: E402

CACHE = Path(__file__).resolve().parent / ".corpus" / "heads"
VERDICTS = ("TP", "FP", "unsure", "UNREAD")


def snapshot(mirror: Path, repo: str) -> Path | None:
    """The git dir of the repository's snapshot, if there is one."""
    folder = mirror / repo.replace("/", "+") / "repo"
    return next((git for git in (folder / ".git", folder) if (git / "HEAD").is_file()), None)


def head_tree(git: Path, repo: str, cache: Path, extract: Path) -> Path:
    """The snapshot's HEAD extracted into the cache (once; a tree being written is never seen half-done)."""
    head = subprocess.run(["git", "--git-dir", str(git), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()  # fmt: skip
    tree = cache / f"{repo.replace('/', '+')}@{head[:8]}"
    if not tree.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(dir=cache, prefix=".partial-"))
        subprocess.run([sys.executable, str(extract), str(git), str(partial)], check=True, stdout=subprocess.DEVNULL)
        try:
            partial.rename(tree)
        except OSError:  # another run extracted it meanwhile
            shutil.rmtree(partial)
    return tree


def read_verdicts(path: Path) -> dict[tuple[str, str, str, int], str]:
    """(code, repository as owner+name, path, line) -> verdict, from a table such as heads-findings.tsv."""
    verdicts = {}
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:] if line.strip()]
    for code, repo, site, verdict, *_ in rows:
        file, _, line = site.rpartition(":")
        verdicts[(code, repo, file, int(line))] = verdict
    return verdicts


def verdict_of(verdicts: dict, name: str, finding: dict) -> str:
    return verdicts.get((finding["code"], name, finding["path"], finding["line"]), "UNREAD")


def verdict_note(verdicts: dict):
    """For training.compare: each listed finding followed by its verdict."""
    return lambda name, finding: f"  [{verdict_of(verdicts, name, finding)}]"


def verdict_report(run: dict, verdicts: dict) -> list[str]:
    """Per rule: findings and their verdicts; then every finding nobody has read yet."""
    table: dict[str, Counter] = {}
    unread = []
    for name, repository in run["packages"].items():
        for finding in repository["findings"]:
            verdict = verdict_of(verdicts, name, finding)
            table.setdefault(finding["code"], Counter())[verdict] += 1
            if verdict == "UNREAD":
                unread.append(f"  {name}/{finding['path']}:{finding['line']}:{finding['column']}: "
                              f"{finding['code']} {finding['message']}")  # fmt: skip
    lines = [f"{'rule':<8}{'findings':>9}" + "".join(f"{verdict:>8}" for verdict in VERDICTS)]
    for code, counts in sorted(table.items()):
        lines.append(f"{code:<8}{sum(counts.values()):>9}" + "".join(f"{counts[v]:>8}" for v in VERDICTS))
    return lines + [f"unread: {len(unread)}", *unread]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="*", help="owner/name of the repositories to lint (default: the whole list)")
    parser.add_argument("--mirror", type=Path, required=True, help="the folder of snapshots, MIRROR/owner+name/repo")
    parser.add_argument("--real-code", type=Path, required=True, help="the folder of repos.txt and extract_head.py")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"where HEAD trees are extracted (default {CACHE})")
    parser.add_argument("--select", help="rules, as mllint's --select (default: the default rules)")
    parser.add_argument("--mllint", help="the mllint executable to run (default: this environment's)")
    parser.add_argument("--json", type=Path, help="write the run to this file")
    parser.add_argument("--compare", type=Path, help="a previous run's JSON to compare with")
    parser.add_argument("--verdicts", type=Path, help="known verdicts (code, repo, site, verdict, ... TSV)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="mllint's worker processes (default 1)")
    args = parser.parse_args()
    listed = [line.strip() for line in (args.real_code / "repos.txt").read_text().splitlines() if line.strip()]
    run = {"select": args.select or "default", "packages": {}}
    missing = []
    for repo in args.repos or listed:
        git = snapshot(args.mirror, repo)
        if git is None:
            missing.append(repo)
            continue
        tree = head_tree(git, repo, args.cache, args.real_code / "extract_head.py")
        name = repo.replace("/", "+")
        run["packages"][name] = tree_run(tree, args.select, args.jobs, args.mllint, ("*.py", "*.ipynb"))
    print("\n".join(report(run, "repository")))
    if missing:
        print("no snapshot: " + ", ".join(missing))
    verdicts = read_verdicts(args.verdicts) if args.verdicts else None
    if verdicts is not None:
        print()
        print("\n".join(verdict_report(run, verdicts)))
    if args.json:
        args.json.write_text(json.dumps(run, indent=1) + "\n")
    if args.compare:
        note = verdict_note(verdicts) if verdicts is not None else None
        print()
        print("\n".join(compare(json.loads(args.compare.read_text()), run, note)))


if __name__ == "__main__":
    main()
