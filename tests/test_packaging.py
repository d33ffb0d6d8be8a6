"""The rules directory is installed as the package `mllint.rules`, in a regular (wheel) install too."""
import ast
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_installs_rules_as_mllint_rules(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )
    wheel = next(tmp_path.glob("mllint_torch-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    rule_modules = {p.name for p in (ROOT / "rules").glob("*.py")}
    assert rule_modules == {Path(n).name for n in names if n.startswith("mllint/rules/")}
    assert not any(n.startswith("rules/") for n in names)
    assert "mllint/cli.py" in names and "mllint/analysis/syntax/names.py" in names


def test_every_runtime_dependency_is_imported_by_mllint():
    """No dead weight: what `pip install mllint-torch` (and every pre-commit hook) installs is used."""
    from mllint.config import tomllib

    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    distributions = {re.match(r"[\w-]+", d).group().lower() for d in dependencies}
    imported = set()
    for path in [*(ROOT / "mllint").rglob("*.py"), *(ROOT / "rules").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add(node.module.split(".")[0])
    assert distributions == {"click", "tomli", "pygls", "lsprotocol"}
    assert distributions <= imported
