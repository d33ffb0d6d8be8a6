"""The release machinery: the tag-triggered workflow, the changelog, and the README's install paths, which
must work from this repository today (a checkout, or its git URL at the tag a release creates)."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mllint

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
TAG = f"v{mllint.__version__}"
GIT_INSTALL = re.compile(r'pip install "git\+(https://\S+?)@(v[\w.]+)"')


def workflow() -> dict:
    yaml = pytest.importorskip("yaml")  # PyYAML comes with pre-commit, in the test extras
    return yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))


def steps(job: dict) -> list[str]:
    return [step.get("uses") or step["run"] for step in job["steps"]]


def test_the_release_workflow_runs_on_a_version_tag():
    triggers = workflow()[True]  # YAML 1.1 reads the key `on` as true
    assert triggers == {"push": {"tags": ["v*"]}}


def test_the_release_workflow_tests_builds_then_publishes_with_trusted_publishing():
    jobs = workflow()["jobs"]
    assert (jobs["build"]["needs"], jobs["publish"]["needs"]) == ("test", "build")
    assert "bash .ci/run" in steps(jobs["test"])
    build = steps(jobs["build"])
    assert any('test "$GITHUB_REF_NAME" = "v$version"' in step for step in build)
    assert "python -m pip install build && python -m build" in build  # the sdist and the wheel
    assert "actions/upload-artifact@v4" in build
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    assert steps(publish) == ["actions/download-artifact@v4", "pypa/gh-action-pypi-publish@release/v1"]
    assert "with" not in publish["steps"][-1]  # no password or token: PyPI trusts the workflow


def test_the_changelog_has_a_section_for_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heading = re.escape(f"## [{mllint.__version__}] - ")
    assert re.search(rf"^{heading}(Unreleased|\d{{4}}-\d{{2}}-\d{{2}})$", changelog, re.MULTILINE)


def test_the_readme_names_the_tag_the_release_process_creates():
    revs = re.findall(r"^\s+rev: (\S+)", README, re.MULTILINE)
    installs = GIT_INSTALL.findall(README)
    assert revs == [TAG] and len(installs) >= 3
    assert {url for url, _ in installs} == {mllint.REPOSITORY_URL} and {tag for _, tag in installs} == {TAG}
    assert re.findall(r"repo: (\S+)", README) == [mllint.REPOSITORY_URL]
    assert "pip install mllint-torch\n" not in README  # not on PyPI until the first release


def git(*args: str, cwd: Path) -> None:
    command = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", *args]
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)


def test_the_git_install_path_builds_this_version_at_its_tag(tmp_path):
    """The README's `pip install "git+URL@TAG"`, with a local copy of this repository
    tagged as a release would tag it in place of the URL."""
    repository = tmp_path / "mllint"
    shutil.copytree(ROOT, repository, ignore=shutil.ignore_patterns(".venv", ".git", "benchmarks", "build", "*.egg-info"))
    git("init", "-q", cwd=repository)
    git("add", "-A", cwd=repository)
    git("commit", "-q", "-m", "release", cwd=repository)
    git("tag", TAG, cwd=repository)
    [(url, tag)] = set(GIT_INSTALL.findall(README))
    requirement = f"git+{repository.as_uri()}@{tag}"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist"), requirement],
        check=True, capture_output=True,
    )
    assert [p.name for p in (tmp_path / "dist").iterdir()] == [f"mllint_torch-{mllint.__version__}-py3-none-any.whl"]
