"""The real-repositories command: a snapshot's HEAD extracted once, linted whole, findings marked with their
known verdicts (a tiny git repository made here; no snapshot of the real ones is needed)."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from repos import head_tree, read_verdicts, snapshot, verdict_note, verdict_report  # noqa: E402
from training import compare  # noqa: E402

EXTRACT = """import subprocess, sys
archive = subprocess.run(["git", "--git-dir", sys.argv[1], "archive", "HEAD"], check=True, capture_output=True).stdout
subprocess.run(["tar", "-x", "-C", sys.argv[2]], input=archive, check=True)
"""
BROKEN = "print 'python 2'\n"


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)  # fmt: skip


def real_code(tmp_path):
    """A mirror holding one checkout (owner+name/repo/.git) with an unparsable file, and the real-code folder."""
    checkout = tmp_path / "mirror" / "someone+tiny" / "repo"
    checkout.mkdir(parents=True)
    (checkout / "train.py").write_text(BROKEN)
    git("init", "-q", cwd=checkout)
    git("add", ".", cwd=checkout)
    git("commit", "-q", "-m", "one", cwd=checkout)
    folder = tmp_path / "real-code"
    folder.mkdir()
    (folder / "repos.txt").write_text("someone/tiny\nsomeone/absent\n")
    (folder / "extract_head.py").write_text(EXTRACT)
    (folder / "verdicts.tsv").write_text("code\trepo\tsite\tverdict\treason\nML002\tsomeone+tiny\ttrain.py:1\tTP\tpy2\n")
    return tmp_path / "mirror", folder


def test_a_snapshot_is_extracted_once_into_a_folder_named_by_its_head(tmp_path):
    mirror, folder = real_code(tmp_path)
    git_dir = snapshot(mirror, "someone/tiny")
    assert git_dir == mirror / "someone+tiny" / "repo" / ".git"
    assert snapshot(mirror, "someone/absent") is None
    tree = head_tree(git_dir, "someone/tiny", tmp_path / "cache", folder / "extract_head.py")
    assert tree.name.startswith("someone+tiny@") and (tree / "train.py").read_text() == BROKEN
    (tree / "train.py").write_text("kept\n")
    assert head_tree(git_dir, "someone/tiny", tmp_path / "cache", folder / "extract_head.py") == tree
    assert (tree / "train.py").read_text() == "kept\n"
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [tree.name]


def test_the_command_lints_each_tree_and_marks_findings_with_their_verdicts(tmp_path):
    mirror, folder = real_code(tmp_path)
    command = [sys.executable, str(ROOT / "benchmarks" / "repos.py"), "--mirror", str(mirror),
               "--real-code", str(folder), "--cache", str(tmp_path / "cache"), "--json", str(tmp_path / "run.json"),
               "--verdicts", str(folder / "verdicts.tsv"), "--mllint", str(Path(sys.executable).parent / "mllint")]  # fmt: skip
    lines = subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()
    assert lines[1].split()[:2] == ["someone+tiny", "1"] and lines[1].endswith("ML002 1")
    at = lines.index("no snapshot: someone/absent")
    assert lines[at + 3 :] == [f"{'ML002':<8}{1:>9}{1:>8}{0:>8}{0:>8}{0:>8}", "unread: 0"]
    run = json.loads((tmp_path / "run.json").read_text())
    assert [(f["path"], f["line"], f["code"]) for f in run["packages"]["someone+tiny"]["findings"]] == [
        ("train.py", 1, "ML002")
    ]


def test_a_comparison_shows_each_added_or_lost_finding_with_its_verdict(tmp_path):
    _, folder = real_code(tmp_path)
    verdicts = read_verdicts(folder / "verdicts.tsv")
    known = {"path": "train.py", "line": 1, "column": 1, "code": "ML002", "message": "syntax"}
    new = {"path": "model.py", "line": 4, "column": 9, "code": "ML303", "message": "eval"}
    before = {"packages": {"someone+tiny": {"counts": {"ML002": 1}, "findings": [known]}}}
    after = {"packages": {"someone+tiny": {"counts": {"ML303": 1}, "findings": [new]}}}
    assert compare(before, after, verdict_note(verdicts)) == [
        "someone+tiny: ML002 1 -> 0, ML303 0 -> 1",
        "  + someone+tiny/model.py:4:9: ML303 eval  [UNREAD]",
        "  - someone+tiny/train.py:1:1: ML002 syntax  [TP]",
        "total: ML002 1 -> 0, ML303 0 -> 1",
    ]
    assert verdict_report(after, verdicts) == [
        f"{'rule':<8}{'findings':>9}{'TP':>8}{'FP':>8}{'unsure':>8}{'UNREAD':>8}",
        f"{'ML303':<8}{1:>9}{0:>8}{0:>8}{0:>8}{1:>8}",
        "unread: 1",
        "  someone+tiny/model.py:4:9: ML303 eval",
    ]
