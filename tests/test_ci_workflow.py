"""The project's CI workflow: valid for GitHub Actions (checked offline against the workflow schema that
check-jsonschema ships), running the README's commands on every supported Python, and linting the fixtures
with the very snippet the README recommends to users."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
README = (ROOT / "README.md").read_text(encoding="utf-8")
yaml = pytest.importorskip("yaml")  # PyYAML comes with pre-commit, in the test extras


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def validate(path: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_the_workflows_are_valid(name):
    result = validate(WORKFLOWS / name)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_validator_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text((WORKFLOWS / "ci.yml").read_text(encoding="utf-8").replace("    steps:", "    step:", 1))
    result = validate(broken)
    assert result.returncode == 1 and "'step' was unexpected" in result.stdout


def test_ci_runs_on_pushes_and_pull_requests_the_readmes_commands_on_every_supported_python():
    workflow = load(WORKFLOWS / "ci.yml")
    assert workflow[True] == {"push": {"branches": ["main"]}, "pull_request": None}  # YAML 1.1 reads `on` as true
    test = workflow["jobs"]["test"]
    assert test["strategy"]["matrix"]["python-version"] == ["3.10", "3.11", "3.12", "3.13"]
    assert [step.get("run") for step in test["steps"]][-1] == "bash .ci/run"
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "readme_command 2" in ci_run and "download.pytorch.org/whl/cpu" in README.split("## Installing")[0]
    requires = re.search(r'requires-python = ">=3\.(\d+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert requires == "10"


def test_ci_lints_the_fixtures_with_the_readmes_snippet():
    """The README's GitHub Actions job, with this checkout installed instead of a release, the fixtures
    as the code, and `--exit-zero` on the annotations step (the fixtures' bugs are on purpose)."""
    snippet = yaml.safe_load(README.split("### In CI\n")[1].split("```yaml\n")[1].split("```")[0])["jobs"]["mllint"]
    job = load(WORKFLOWS / "ci.yml")["jobs"]["mllint"]
    for step in snippet["steps"]:
        if "run" in step:
            step["run"] = re.sub(r'pip install "git\+\S+"', "pip install .", step["run"]).replace("src/", "fixtures/")
            step["run"] = step["run"].replace("mllint --output-format github", "mllint --exit-zero --output-format github")
    assert job == snippet
