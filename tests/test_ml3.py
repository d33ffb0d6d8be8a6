"""Exact findings of the train/eval mode rules (ML302, ML303, ML304) and ML304's fix."""
from pathlib import Path

import pytest

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path

HEADER = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
NET = HEADER + (
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.body = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))\n"
    "    def forward(self, x):\n"
    "        return self.body(x)\n"
)  # 9 lines
TRAIN_EPOCH = (
    "        for x, y in loader:\n"
    "            opt.zero_grad()\n"
    "            F.mse_loss(model(x), y).backward()\n"
    "            opt.step()\n"
)


def positions(findings):
    return [(f.code, f.start.line, f.start.column) for f in findings]


def test_evaluation_after_training_without_eval(lint):
    source = NET + (
        "def fit(loader, opt):\n"
        "    model = Net()\n"
        "    for epoch in range(3):\n"
        "        model.train()\n" + TRAIN_EPOCH + "        with torch.no_grad():\n"
        "            for x, y in loader:\n"
        "                model(x)\n"
    )
    findings = lint(source, "ML302")
    assert positions(findings) == [("ML302", 20, 17)]
    assert findings[0].message == (
        "`fit` evaluates `model` in training mode, set by `model.train()` (line 13); it has Dropout, "
        "`nn.Dropout(0.5)` (line 7): call `model.eval()` first"
    )


@pytest.mark.parametrize(
    "switch",
    ["model.eval()", "model.train(False)", "model.train(mode=False)", "set_eval(model)", "model = set_eval(model)"],
)
def test_any_switch_to_eval_mode_counts(lint, switch):
    source = NET + (
        "def set_eval(m):\n    m.eval()\n    return m\n"
        "def fit(loader, opt):\n"
        "    model = Net()\n"
        "    for epoch in range(3):\n"
        "        model.train()\n" + TRAIN_EPOCH + f"        {switch}\n"
        "        with torch.no_grad():\n"
        "            for x, y in loader:\n"
        "                model(x)\n"
    )
    assert lint(source, "ML302") == []


def test_requires_grad_off_is_not_eval_mode(lint):
    source = NET + (
        "def fit(loader, opt):\n"
        "    model = Net()\n"
        "    for epoch in range(3):\n"
        "        model.train()\n" + TRAIN_EPOCH + "        model.requires_grad_(False)\n"
        "        with torch.no_grad():\n"
        "            for x, y in loader:\n"
        "                model(x)\n"
    )
    assert positions(lint(source, "ML302")) == [("ML302", 21, 17)]


def test_a_model_whose_mode_is_unknown_is_not_reported(lint):
    source = NET + (
        "def validate(model, loader):\n"
        "    with torch.no_grad():\n"
        "        for x, y in loader:\n"
        "            model(x)\n"
        "def fit(model, loader, opt, prepare):\n"
        "    model.train()\n"
        "    prepare(model)\n"
        "    with torch.no_grad():\n"
        "        model(loader)\n"
    )
    assert lint(source, "ML302") == []


def test_an_evaluation_function_is_reported_when_its_callers_train(lint):
    source = NET + (
        "class Trainer:\n"
        "    def __init__(self):\n"
        "        self.model = Net()\n"
        "    def fit(self, loader, opt):\n"
        "        model = self.model\n"
        "        for epoch in range(3):\n"
        "            model.train()\n"
        "            for x, y in loader:\n"
        "                F.mse_loss(self.model(x), y).backward()\n"
        "            self.evaluate(loader)\n"
        "    def evaluate(self, loader):\n"
        "        return [self.model(x) for x, y in loader]\n"
    )
    findings = lint(source, "ML302")
    assert positions(findings) == [("ML302", 21, 17)]
    assert "`Trainer.evaluate` evaluates `self.model` in training mode, `Trainer.fit` calls it at line 19" in findings[0].message


def test_known_class_without_dropout_or_batch_norm_is_silent(lint):
    source = HEADER + (
        "class Probe(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 2)\n"
        "def score(x):\n"
        "    probe, seq = Probe(), None\n"
        "    probe = Probe()\n"
        "    seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU())\n"
        "    with torch.no_grad():\n"
        "        return probe(x) + seq(x) + nn.LSTM(4, 4)(x)[0]\n"
    )
    assert lint(source, "ML302") == []


def test_training_resumed_after_evaluation(lint):
    source = NET + (
        "def fit(loader, opt):\n"
        "    model = Net()\n"
        "    for epoch in range(3):\n" + TRAIN_EPOCH + "        model.eval()\n"
        "        with torch.no_grad():\n"
        "            for x, y in loader:\n"
        "                model(x)\n"
    )
    findings = lint(source, "ML303")
    assert positions(findings) == [("ML303", 15, 24)]
    assert findings[0].message.startswith("`model` may train in eval mode: `model.eval()` (line 17) puts it")
    resumed = source.replace("    for epoch in range(3):\n", "    for epoch in range(3):\n        model.train()\n")
    assert lint(resumed, "ML303") == []


def test_eval_before_the_training_loop_on_purpose_is_not_reported(lint):
    source = NET + "def fit(loader, opt):\n    model = Net()\n    model.eval()\n    for epoch in range(3):\n" + TRAIN_EPOCH
    assert lint(source, "ML303") == []


def test_training_resumed_after_an_evaluation_method(lint):
    source = NET + (
        "class Trainer:\n"
        "    def __init__(self):\n"
        "        self.model = Net()\n"
        "    def fit(self, loader):\n"
        "        for epoch in range(3):\n"
        "            self.train_epoch(loader)\n"
        "            self.validate(loader)\n"
        "    def train_epoch(self, loader):\n"
        "        for x, y in loader:\n"
        "            self.model(x).sum().backward()\n"
        "    def validate(self, loader):\n"
        "        self.model.eval()\n"
    )
    findings = lint(source, "ML303")
    assert positions(findings) == [("ML303", 19, 13)]
    assert "`self.model.eval()` (line 21), through `self.validate(loader)` (line 16)" in findings[0].message


@pytest.mark.parametrize(
    ("call", "fixed"),
    [
        ("F.dropout(x, 0.5)", "F.dropout(x, 0.5, training=self.training)"),
        ("F.dropout(x, p=0.2,)", "F.dropout(x, p=0.2, training=self.training,)"),
        ("F.dropout2d(x)", "F.dropout2d(x, training=self.training)"),
        ("nn.functional.feature_alpha_dropout(x, 0.1, inplace=False)",
         "nn.functional.feature_alpha_dropout(x, 0.1, inplace=False, training=self.training)"),
    ],
)  # fmt: skip
def test_functional_dropout_in_forward_gets_the_modules_mode(lint, fix, call, fixed):
    source = HEADER + f"class Net(nn.Module):\n    def forward(self, x):\n        return {call}\n"
    assert positions(lint(source, "ML304")) == [("ML304", 6, 16)]
    repaired = fix(source, "ML304")
    assert repaired == source.replace(call, fixed)
    assert fix(repaired, "ML304") == repaired


def test_functional_dropout_that_knows_the_mode_or_is_outside_forward_is_not_reported(lint):
    source = HEADER + (
        "class Net(nn.Module):\n"
        "    def forward(self, x, p=0.1, **kwargs):\n"
        "        a = F.dropout(x, p, self.training) + F.dropout(x, 0.5, False) + F.dropout(x, **kwargs)\n"
        "        b = F.dropout(x, p=0.0) + torch.dropout(x, 0.5, True)\n"
        "        return a + b\n"
        "    def helper(self, x):\n"
        "        return F.dropout(x, 0.5)\n"
        "class Gated(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return F.dropout(x, 0.5 if self.training else 0.0)\n"
        "def forward(x):\n"
        "    return F.dropout(x, 0.5)\n"
    )
    assert lint(source, "ML304") == []


@pytest.mark.parametrize(
    "snippet",
    [
        "for model in models:\n    model.train()\nwith torch.no_grad():\n    model(x)\n",
        "model = nn.Dropout()\nwhile True:\n    model.train(flag)\n    break\nwith torch.no_grad():\n    model(x)\n",
        "def f(*a, **k):\n    f(*a, **k)\n    (m := nn.Dropout()).eval()\n    match m:\n        case _:\n            m()\n",
        "try:\n    m = nn.Dropout()\nexcept:\n    raise\nfinally:\n    m.train()\nwith torch.no_grad():\n    m.a.b(x)\n",
    ],
)
def test_odd_syntax_is_handled(lint, snippet):
    assert lint(HEADER + snippet, "ML302", "ML303", "ML304") == []


def test_a_helper_that_changes_a_module_level_model_counts(lint):
    source = HEADER + (
        "model = nn.Sequential(nn.Linear(2, 2), nn.Dropout())\n"
        "def evaluate(x):\n"
        "    model.eval()\n"
        "    with torch.no_grad():\n"
        "        return model(x)\n"
        "model.train()\n"
        "for epoch in range(3):\n"
        "    model(x).sum().backward()\n"
        "    evaluate(x)\n"
        "with torch.no_grad():\n"
        "    model(x)\n"
    )
    assert positions(lint(source, "ML302", "ML303")) == [("ML303", 9, 1)]  # the `model.train()` before the loop


def test_a_function_named_like_validation_counts_for_its_loops_only(lint):
    source = NET + (
        "def validate_shapes():\n"
        "    model = Net()\n"
        "    assert model(torch.zeros(2, 4)).shape == (2, 4)\n"
        "def validate(loader):\n"
        "    model = Net()\n"
        "    return [model(x) for x, y in loader]\n"
    )
    assert positions(lint(source, "ML302")) == [("ML302", 15, 13)]


# Across files: a model class of another module of the linted project.
PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "ml3_project"


def lint_in_project(relative: str, *codes: str, directory: Path = PROJECT):
    return lint_path(str(directory / relative), Selection.of(codes), display_path=relative, project=ProjectIndex.for_paths([str(directory)]))


def test_a_model_class_of_another_module_names_its_layer_and_where_it_is():
    [finding] = lint_in_project("pkg/trainer.py", "ML302")
    assert (finding.start.line, finding.start.column) == (28, 25)
    assert finding.message == (
        "`Trainer.validate` evaluates `self.model` in training mode, `Trainer.fit` calls it at line 22 after "
        "`self.model.train()` (line 17); `Net` has Dropout (models.py:12): call `self.model.eval()` first"
    )
    [finding] = lint_in_project("train_script.py", "ML302")  # `import pkg.models as m; m.WideNet()`
    assert (finding.start.line, finding.start.column) == (22, 23)
    assert finding.message == (
        "`main` evaluates `model` in training mode, set by `model.train()` (line 14); `Net` has Dropout "
        "(pkg/models.py:12): call `model.eval()` first"
    )


def test_a_factory_of_another_module_builds_its_model_in_training_mode():
    [finding] = lint_in_project("factory.py", "ML302")  # `build_eval_model()` returns it in eval mode
    assert (finding.start.line, finding.start.column) == (10, 17)
    assert finding.message == (
        "`evaluate` evaluates `model` in training mode, built in training mode by `build_model()` (line 8); "
        "`Net` has Dropout (pkg/models.py:12): call `model.eval()` first"
    )


def test_a_model_of_another_module_without_such_layers_or_unknown_is_silent(tmp_path):
    (tmp_path / "models.py").write_text(
        "from torch import nn\nfrom elsewhere import Block\n"
        "class Probe(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n"
        "class Blocky(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.block = Block()\n"
    )
    script = HEADER + (
        "from models import {cls}\ndef main(loader):\n    model = {cls}()\n    model.train()\n"
        "    for x in loader:\n        model(x).sum().backward()\n    with torch.no_grad():\n        model(x)\n"
    )
    for cls, expected in (("Probe", []), ("Blocky", [("ML302", 11, 9)])):
        (tmp_path / "train.py").write_text(script.format(cls=cls))
        findings = lint_in_project("train.py", "ML302", directory=tmp_path)
        assert positions(findings) == expected  # Blocky's layers are unknown: reported, naming none
        assert all(f.message.endswith("set by `model.train()` (line 7): call `model.eval()` first") for f in findings)


def test_functional_dropout_in_a_module_whose_base_is_in_another_module():
    [finding] = lint_in_project("pkg/models.py", "ML304")
    assert (finding.code, finding.start.line, finding.start.column) == ("ML304", 41, 24)


def test_a_model_unpacked_from_a_helper_returning_a_tuple(lint):
    source = NET + (
        "def fit(make_data, opt):\n"
        "    def parts():\n"
        "        return make_data(), Net()\n"
        "    loader, model = parts()\n"
        "    model.train()\n"
        "    for epoch in range(3):\n" + TRAIN_EPOCH + "        model.eval()\n"
    )
    assert positions(lint(source, "ML303")) == [("ML303", 14, 5)]  # the `model.train()` before the loop
    plain = source.replace("nn.Dropout(0.5)", "nn.ReLU()")  # the helper builds a model whose mode changes nothing
    assert lint(plain, "ML303") == []


def test_an_abstract_base_adds_no_layer(lint):
    source = NET.replace("class Net(nn.Module):", "from abc import ABC\nclass Net(nn.Module, ABC):") + (
        "def fit(loader, opt):\n"
        "    model = Net()\n"
        "    for epoch in range(3):\n" + TRAIN_EPOCH + "        model.eval()\n"
    )
    assert positions(lint(source, "ML303")) == [("ML303", 16, 24)]
    assert lint(source.replace("nn.Dropout(0.5)", "nn.ReLU()"), "ML303") == []
