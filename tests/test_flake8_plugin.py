"""`flake8 --select ML` reports mllint's findings through the plugin entry point."""
import subprocess
import sys


def test_flake8_reports_mllint_findings(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\nx = 1; model.eval\nmodel.train  # noqa: ML301\n")
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "ML", str(path)], capture_output=True, text=True
    )
    assert result.stdout == f"{path}:3:8: ML301 `model.eval` is not called: the statement does nothing\n"
    assert result.returncode == 1
