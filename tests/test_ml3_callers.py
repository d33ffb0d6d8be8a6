"""The mode rules across modules: a model passed to a function of another module takes its mode and its
class from each call site (fixtures/ml3_callers: positives; ml3_callers_negatives: negatives), and a call of
another module's function leaves the modes that function leaves. Witnesses run the fixture's own modules."""
import json
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from mllint.analysis.program.project import ProjectIndex
from mllint.cli import main as cli
from mllint.engine import Selection, lint_path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PROJECT = FIXTURES / "ml3_callers"


def lint_in_project(relative: str, *codes: str, directory: Path = PROJECT):
    project = ProjectIndex.for_paths([str(directory)])
    return lint_path(str(directory / relative), Selection.of(codes), display_path=relative, project=project)


def test_an_evaluation_of_another_module_called_after_train_names_the_call_site_and_the_class():
    first, second = lint_in_project("evaluate.py", "ML302")
    assert (first.start.line, first.start.column) == (11, 25)
    assert first.message == (
        "`evaluate` evaluates `model` in training mode, `train` calls it at engine.py:15 (`model` is `Net()` "
        "(main.py:12), passed at main.py:13) after `model.train()` (engine.py:10); `Net` has Dropout (models.py:8): "
        "call `model.eval()` first"
    )
    assert (second.start.line, second.start.column) == (17, 36)
    assert second.message == (  # the model is passed down two calls: main.py -> engine.py -> evaluate.py
        "`evaluate_loss` evaluates `model` in training mode, `pretrain` calls it at main.py:27, through `report` "
        "(engine.py:37) after `Net()` (main.py:21); `Net` has Dropout (models.py:8): call `model.eval()` first"
    )


def test_training_resumed_after_an_evaluation_of_another_module_or_a_pretrained_model_passed_in():
    resumed, pretrained = lint_in_project("engine.py", "ML303")
    assert (resumed.start.line, resumed.start.column) == (20, 5)  # the `model.train()` made once, before the loop
    assert resumed.message == (
        "`model.train()` runs once, before the loop on line 21: `model.eval()` (evaluate.py:21), through "
        "`evaluate_safely(model, val_loader)` (line 26) puts `model` in eval mode later in the loop, so from the second "
        "iteration on the training step at engine.py:24 runs in eval mode; call `.train()` at the top of each iteration"
    )
    assert (pretrained.start.line, pretrained.start.column) == (32, 25)
    assert pretrained.message.endswith(
        "and nothing calls `model.train()` before this training step runs; `main` passes it at main.py:17"
    )


def test_a_parameter_model_takes_its_class_from_the_call_sites():
    [finding] = lint_in_project("engine.py", "ML302")  # `fit_and_score(Net(), ...)` at main.py
    assert (finding.start.line, finding.start.column) == (47, 17)
    assert finding.message.endswith("`Net` has Dropout (models.py:8): call `model.eval()` first")
    negatives = FIXTURES / "ml3_callers_negatives"  # there `main` passes a model without dropout
    assert lint_in_project("engine.py", "ML302", directory=negatives) == []


def test_a_model_passed_down_and_back_through_another_module_keeps_its_mode():
    # `train_epoch` (engine.py) hands the model to `step` and back, and neither changes its mode; the
    # callers' file reports its own model call only, not those in the callees' file.
    [finding] = lint_in_project("main.py", "ML302", "ML303")
    assert (finding.code, finding.start.line, finding.start.column) == ("ML302", 50, 23)
    assert "set by `model.train()` (line 45); `Net` has Dropout (models.py:8)" in finding.message


@pytest.mark.parametrize("relative", ["engine.py", "evaluate.py", "main.py", "lit.py", "tests/test_engine.py"])
def test_call_sites_right_alone_mixed_rebound_forwarded_mocked_or_lightning_are_silent(relative):
    assert lint_in_project(relative, "ML302", "ML303", directory=FIXTURES / "ml3_callers_negatives") == []


@pytest.fixture
def fixture_modules(monkeypatch):
    monkeypatch.syspath_prepend(str(PROJECT))
    yield
    for name in ("models", "evaluate", "engine"):
        sys.modules.pop(name, None)


def data(batches: int) -> list:
    return [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(batches)]


def test_witness_evaluate_called_by_train_scores_with_dropout_active(fixture_modules):
    from engine import train
    from evaluate import evaluate
    from models import Net

    torch.manual_seed(0)
    model, val = Net(), [(torch.randn(64, 16), torch.randint(0, 4, (64,)))]
    train(model, data(2), val, torch.optim.SGD(model.parameters(), lr=0.1), epochs=1)
    assert model.training  # as `train` leaves it for `evaluate`
    assert len({evaluate(model, val) for _ in range(5)}) > 1  # dropout masks: the score is noise
    model.eval()
    assert len({evaluate(model, val) for _ in range(5)}) == 1


def test_witness_train_resumed_trains_its_second_epoch_in_eval_mode(fixture_modules):
    from engine import train_resumed
    from models import Net

    modes: list = []
    model = Net()
    model.register_forward_pre_hook(lambda module, inputs: modes.append(module.training) if torch.is_grad_enabled() else None)
    train_resumed(model, data(1), data(1), torch.optim.SGD(model.parameters(), lr=0.1), epochs=2)
    assert modes == [True, False]  # after `evaluate_safely`, dropout is off for the rest of training


def test_a_changed_caller_in_another_module_invalidates_the_cached_findings(tmp_path, monkeypatch):
    """`evaluate.py`'s ML302 depends on the mode `main.py` leaves its model in before the call."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models.py").write_text((PROJECT / "models.py").read_text())
    (tmp_path / "evaluate.py").write_text((PROJECT / "evaluate.py").read_text())
    main = (
        "from evaluate import evaluate\nfrom models import Net\n\n\n"
        "def main(loader, opt):\n    model = Net()\n    for x, y in loader:\n        model(x).sum().backward()\n"
        "    model.{mode}()\n    return evaluate(model, loader)\n"
    )

    def lint_evaluate() -> list[tuple[str, int]]:
        result = CliRunner().invoke(cli, ["--isolated", "--output-format", "json", "-q", "--select", "ML302", "evaluate.py"])
        return [(f["code"], f["location"]["row"]) for f in json.loads(result.stdout)]

    (tmp_path / "main.py").write_text(main.format(mode="eval"))
    assert lint_evaluate() == []
    (tmp_path / "main.py").write_text(main.format(mode="train"))
    assert lint_evaluate() == [("ML302", 11)]


def test_a_caller_modules_class_takes_its_layer_from_a_mixin_of_the_project(tmp_path):
    """`Net(DropoutMixin, nn.Module)` built in the caller's module: the mixin of a third module, no nn.Module
    itself, holds the Dropout (as a base of the class it counts with what its body builds)."""
    (tmp_path / "mixins.py").write_text(
        "from torch import nn\n\nclass DropoutMixin:\n    def build_head(self):\n        self.drop = nn.Dropout(0.5)\n"
    )
    (tmp_path / "evaluation.py").write_text(
        "import torch\n\ndef evaluate(model, loader):\n    with torch.no_grad():\n        for x in loader:\n"
        "            model(x)\n"
    )
    (tmp_path / "train.py").write_text(
        "from torch import nn\nfrom evaluation import evaluate\nfrom mixins import DropoutMixin\n\n"
        "class Net(DropoutMixin, nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n\ndef main(loader, optimizer):\n    model = Net()\n    model.train()\n"
        "    for x in loader:\n        model(x).sum().backward()\n        optimizer.step()\n    evaluate(model, loader)\n"
    )
    [finding] = lint_in_project("evaluation.py", "ML302", directory=tmp_path)
    assert finding.message.endswith("`DropoutMixin` has Dropout (mixins.py:5): call `model.eval()` first")


def test_a_script_passing_its_model_is_named_the_module():
    [finding] = lint_in_project("steps.py", "ML303", directory=FIXTURES / "ml3_script_callers")
    assert (finding.start.line, finding.start.column) == (7, 24)
    assert finding.message.endswith(
        "through `score(net, batches)` (run.py:18) puts it in eval mode later in the loop and nothing calls "
        "`net.train()` before this training step runs; the module passes it at run.py:17"
    )


def test_a_train_before_the_loop_names_the_step_that_trains_the_model_not_its_use_under_no_grad():
    # `self.g` makes the discriminator's inputs under `no_grad()` first (line 25); it trains at line 32.
    [finding] = lint_in_project("gan/translator.py", "ML303", directory=FIXTURES / "modes_preview_helpers")
    assert (finding.start.line, finding.start.column) == (39, 9)
    assert "so from the second iteration on the training step at translator.py:32 runs in eval mode" in finding.message
