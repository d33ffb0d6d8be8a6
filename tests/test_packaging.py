"""The rules directory is installed as the package `mllint.rules`, in a regular (wheel) install too."""
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
