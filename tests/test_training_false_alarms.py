"""Messages and notebook syntax behind the `training_false_alarms` fixture: patterns of real training
code that were reported wrongly (issue 14)."""
from pathlib import Path

from mllint.engine import Selection, lint_path, lint_text
from mllint.notebook import _python_of
from mllint.registry import all_rules

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "training_false_alarms"


def test_torch_load_of_a_pickled_module_the_file_saves_says_the_fix_breaks_it():
    [finding] = lint_path(str(FIXTURE / "checkpoints.py"), Selection.of({"ML801": all_rules()["ML801"]}))
    assert finding.message.endswith(
        "; this file saves a whole module (`model`, line 6), which `weights_only=True` (the fix) refuses to"
        " load: save its `state_dict()` instead"
    )


def test_a_state_dict_saved_under_a_model_name_is_no_module():
    source = "import torch\nmodel = net.state_dict()\ntorch.save(model, 'm.pt')\nstate = torch.load('m.pt')\n"
    [finding] = lint_text(source, "state.py", Selection.of({"ML801": all_rules()["ML801"]}))
    assert "whole module" not in finding.message


def test_automagics_without_percent_are_ipython_lines_and_python_lines_stay():
    cell = "cd ..\npip install timm==1.0.11\nrun train.py --epochs 3\nls\ncd = 3\nenv = make_env(\n    'cartpole')\n"
    python, magics = _python_of(cell)
    assert magics == ("cd ..", "pip install timm==1.0.11", "run train.py --epochs 3")
    assert python.splitlines()[3:] == ["ls", "cd = 3", "env = make_env(", "    'cartpole')"]
