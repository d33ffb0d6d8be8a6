"""Callers into parameters (mllint/analysis/program/callers.py): a parameter holds what one call site passes,
arguments bind as Python binds them, and a finding through a parameter names the call site."""
import json
import textwrap
from pathlib import Path

import mllint.analysis.program.project as project
from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path, lint_text
from mllint.findings import Position, Related
from mllint.registry import all_rules

EVERY_RULE = Selection.of(all_rules())
MODELS = '''\
import torch.nn.functional as F
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)
'''


def write(directory, files: dict[str, str]):
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


ENGINE = """\
    def train(model, loader, optimizer, criterion):
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
    """


def findings(directory, name):
    project = ProjectIndex.for_paths([str(directory)])
    return [(f.code, f.start.line, f.message) for f in lint_path(str(directory / name), EVERY_RULE, name, project)]


def test_the_flagship_message_names_the_call_site_and_the_origin(tmp_path):
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": ENGINE,
        "main.py": """\
            import torch
            from torch import nn

            from engine import train
            from models import Classifier

            model = Classifier()
            train(Classifier(), [], torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss())
            """,
    })  # fmt: skip
    assert findings(tmp_path, "engine.py") == [(
        "ML101", 4,
        "`model(x)` is softmax output: `model` is `Classifier()` passed at main.py:8, and `Classifier.forward` "
        "returns softmax output (models.py:11), but `criterion` (`nn.CrossEntropyLoss()` passed at main.py:8) "
        "applies log_softmax itself: pass the raw logits",
    )]  # fmt: skip
    project = ProjectIndex.for_paths([str(tmp_path)])
    [finding] = lint_path(str(tmp_path / "engine.py"), EVERY_RULE, "src/engine.py", project)
    assert finding.related == (Related("src/main.py", Position(8, 1), Position(8, 92), "call site: `train(...)`"),)


def test_keywords_and_defaults_bind_as_python_binds_them(tmp_path):
    write(tmp_path, {
        "models.py": MODELS,
        "pkg/__init__.py": "",
        "pkg/engine.py": """\
            from torch import nn


            def step(x, y, model=None, criterion=nn.CrossEntropyLoss()):
                return criterion(model(x), y)
            """,
        "pkg/main.py": """\
            from models import Classifier
            from . import engine

            engine.step(None, None, model=Classifier())
            """,
    })  # fmt: skip
    [(code, line, message)] = findings(tmp_path, "pkg/engine.py")
    assert (code, line) == ("ML101", 5)
    assert "`model` is `Classifier()` passed at main.py:4" in message
    assert "`criterion` (its default `nn.CrossEntropyLoss()`)" in message


STEP_ENGINE = """\
    from torch import nn


    def step(model, x, y):
        return nn.CrossEntropyLoss()(model(x), y)
    """


def test_starred_arguments_bind_their_elements(tmp_path):
    """`step(*arguments)` binds each parameter to the element at its position, as Python does."""
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": STEP_ENGINE,
        "main.py": """\
            from engine import step
            from models import Classifier

            arguments = (Classifier(), None, None)
            step(*arguments)
            """,
    })  # fmt: skip
    [(code, line, message)] = findings(tmp_path, "engine.py")
    assert (code, line) == ("ML101", 5) and "`model` is `*arguments` passed at main.py:5" in message


def test_a_dict_splatted_into_a_call_binds_its_items(tmp_path):
    """`step(**{"model": Classifier(), ...})` binds `model` as Python does, and shows it: the item at its name."""
    main = 'from engine import step\nfrom models import Classifier\n\nstep(**{"model": Classifier(), "x": None, "y": None})\n'
    write(tmp_path, {"models.py": MODELS, "engine.py": STEP_ENGINE, "main.py": main})
    [(code, line, message)] = findings(tmp_path, "engine.py")
    assert (code, line) == ("ML101", 5)
    assert "`model` is `Classifier()` passed at main.py:4" in message


def test_a_text_alone_knows_its_own_call_sites():
    text = textwrap.dedent("""\
        import torch.nn.functional as F
        from torch import nn


        def loss_of(scores, y):
            return F.cross_entropy(scores, y)


        def main(logits, y):
            return loss_of(F.softmax(logits, dim=1), y)
        """)
    [finding] = lint_text(text, "train.py", EVERY_RULE)
    assert (finding.code, finding.start.line) == ("ML101", 6)
    assert "`scores` is `F.softmax(logits, dim=1)` passed at line 10" in finding.message


def test_calls_spelled_with_a_space_or_across_lines_are_call_sites(tmp_path):
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": """\
            from torch import nn


            def step(model, x, y):
                return nn.CrossEntropyLoss()(model(x), y)


            def other(model, x, y):
                return nn.CrossEntropyLoss()(model(x), y)
            """,
        "spaced.py": """\
            from engine import step
            from models import Classifier

            step (Classifier(), None, None)
            """,
        "split.py": """\
            import engine
            from models import Classifier

            loss = engine.other \\
                (Classifier(), None, None)
            """,
    })  # fmt: skip
    found = findings(tmp_path, "engine.py")
    assert [(code, line) for code, line, _ in found] == [("ML101", 5), ("ML101", 9)]
    assert "passed at spaced.py:4" in found[0][2] and "passed at split.py:4" in found[1][2]


def test_every_loss_rule_names_the_loss_object_a_call_site_passes(tmp_path):
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": """\
            def step(model, criterion, x, y):
                return criterion(model(x), y)
            """,
        "scorer.py": """\
            import torch.nn.functional as F
            from torch import nn


            class LogScorer(nn.Module):
                def forward(self, x):
                    return F.log_softmax(x, dim=1)
            """,
        "main.py": """\
            from torch import nn

            from engine import step
            from models import Classifier
            from scorer import LogScorer

            step(Classifier(), nn.BCEWithLogitsLoss(), None, None)
            step(Classifier(), nn.KLDivLoss(), None, None)
            step(LogScorer(), nn.BCELoss(), None, None)
            """,
    })  # fmt: skip
    notes = {code: message for code, _, message in findings(tmp_path, "engine.py")}
    assert "`criterion` (`nn.BCEWithLogitsLoss()` passed at main.py:7) applies the sigmoid itself" in notes["ML105"]
    assert "`criterion` (`nn.KLDivLoss()` passed at main.py:8) expects log-probabilities" in notes["ML106"]
    assert "`criterion` (`nn.BCELoss()` passed at main.py:9) expects probabilities" in notes["ML107"]


def test_an_annotation_tells_what_no_call_site_does(tmp_path):
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": """\
            from typing import Optional

            from torch import nn

            from models import Classifier


            def step(model: Optional["Classifier"], criterion: nn.CrossEntropyLoss, x, y):
                return criterion(model(x), y)
            """,
    })  # fmt: skip
    [(code, line, message)] = findings(tmp_path, "engine.py")
    assert (code, line) == ("ML101", 9)
    assert "`model` is annotated `Classifier` (line 8), and `Classifier.forward` returns softmax" in message
    assert "`criterion` (annotated `nn.CrossEntropyLoss`) applies log_softmax itself" in message


def notebook(cells: list[str]) -> str:
    code = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells]
    return json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Notes"}, *code],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})  # fmt: skip


STEP = """\
    from torch import nn


    def step(model, x, y):
        return nn.CrossEntropyLoss()(model(x), y)
    """


def test_a_notebook_cell_is_a_call_site_named_by_its_cell(tmp_path):
    write(tmp_path, {"models.py": MODELS, "engine.py": STEP})
    (tmp_path / "explore.ipynb").write_text(notebook(["from engine import step\nfrom models import Classifier", "x = 1\nstep(\n    Classifier(), x, x)"]))
    project = ProjectIndex.for_paths([str(tmp_path)])
    [finding] = lint_path(str(tmp_path / "engine.py"), EVERY_RULE, "engine.py", project)
    assert "`model` is `Classifier()` passed at explore.ipynb:cell 3:2" in finding.message
    assert finding.related == (Related("explore.ipynb", Position(2, 1), Position(3, 24), "call site: `step(...)`", cell=3),)


def test_a_notebook_importing_the_function_on_a_continued_line_is_a_call_site(tmp_path):
    """In the notebook's JSON the line break is `\\n`: `import (\\nstep)` still names `step`."""
    write(tmp_path, {"models.py": MODELS, "engine.py": STEP})
    (tmp_path / "explore.ipynb").write_text(notebook(["from engine import (\nstep)\nfrom models import Classifier\nstep(Classifier(), 1, 1)"]))
    project = ProjectIndex.for_paths([str(tmp_path)])
    [finding] = lint_path(str(tmp_path / "engine.py"), EVERY_RULE, "engine.py", project)
    assert "passed at explore.ipynb:cell 2:4" in finding.message


def test_a_notebooks_own_call_site_is_named_by_its_cell(tmp_path):
    cells = [
        "import torch.nn.functional as F",
        "def loss_of(scores, y):\n    return F.cross_entropy(scores, y)",
        "logits = y = None\nloss_of(F.softmax(logits, dim=1), y)",
    ]
    (tmp_path / "train.ipynb").write_text(notebook(cells))
    [finding] = lint_path(str(tmp_path / "train.ipynb"), EVERY_RULE, "train.ipynb")
    assert (finding.code, finding.cell, finding.start.line) == ("ML101", 3, 2)
    assert "`scores` is `F.softmax(logits, dim=1)` passed at cell 4, line 2" in finding.message
    assert finding.related == (Related("train.ipynb", Position(2, 1), Position(2, 37), "call site: `loss_of(...)`", cell=4),)


def test_findings_of_every_family_through_a_parameter_carry_the_call_site():
    directory = Path(__file__).resolve().parent.parent / "fixtures" / "callers_negatives"
    project = ProjectIndex.for_paths([str(directory)])
    found = lint_path(str(directory / "engine.py"), EVERY_RULE, "engine.py", project)
    sites = [(f.code, f.start.line, [(r.path, r.start.line) for r in f.related]) for f in found]
    assert sites == [
        ("ML101", 9, [("main.py", 13)]),
        ("ML205", 30, [("main.py", 15)]),
        ("ML601", 46, [("main.py", 17)]),
        ("ML204", 69, [("main.py", 22)]),
        ("ML205", 69, [("main.py", 22)]),
    ]


def test_a_model_defined_in_a_notebook_is_placed_in_its_cell(tmp_path):
    write(tmp_path, {"engine.py": "from torch import nn\n\n\ndef step(model, x, y):\n    return nn.CrossEntropyLoss()(model(x), y)\n"})
    cells = [
        "import torch.nn.functional as F\nfrom torch import nn\nfrom engine import step",
        "class Net(nn.Module):\n    def forward(self, x):\n        return F.softmax(x, dim=1)",
        "step(Net(), None, None)",
    ]
    (tmp_path / "explore.ipynb").write_text(notebook(cells))
    [(code, line, message)] = findings(tmp_path, "engine.py")
    assert "`Net()` passed at explore.ipynb:cell 4:1, and `Net.forward` returns softmax output (explore.ipynb:cell 3:3)" in message


def test_every_family_says_a_value_came_from_an_annotation():
    directory = Path(__file__).resolve().parent.parent / "fixtures" / "callers_annotations"
    project = ProjectIndex.for_paths([str(directory)])
    messages = {f.code: f.message for f in lint_path(str(directory / "engine.py"), EVERY_RULE, "engine.py", project)}
    assert "(`model` is annotated `Regressor` (line 26))" in messages["ML601"]
    assert "`scheduler` (OneCycleLR, annotated at line 34)" in messages["ML205"]


def test_a_module_calling_only_its_own_function_of_that_name_is_not_parsed(tmp_path, monkeypatch):
    """Call sites of `engine.train` are looked for where `train(` is written; a module whose only `train`
    is its own function's calls (no import, no `x.train(`) cannot call it, and is not parsed."""
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": ENGINE,
        "other.py": """\
            def train(steps):
                return steps

            train(3)
            """,
        "main.py": """\
            import torch
            from torch import nn

            import engine
            from models import Classifier

            model = Classifier()
            engine.train(model, [], torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss())
            """,
    })  # fmt: skip
    parsed: list[str] = []
    real = project._parse
    monkeypatch.setattr(project, "_parse", lambda path, module: parsed.append(module) or real(path, module))
    monkeypatch.setattr(project, "_CONTEXTS", {})
    monkeypatch.setattr(project, "_kept_bytes", 0)
    assert [(code, line) for code, line, _ in findings(tmp_path, "engine.py")] == [("ML101", 4)]
    assert "main" in parsed and "other" not in parsed


def test_a_step_run_from_another_module_through_a_method_of_a_third_is_read_without_crashing(tmp_path):
    """A module read for another file's sake has no project view of its own: the loop model still reads the
    methods it calls in a third module (a script's loop calling `trainer.compute_loss(...)`)."""
    write(tmp_path, {
        "trainer_ext.py": """\
            import torch.nn.functional as F


            class DistillTrainer:
                def __init__(self, model):
                    self.model = model

                def compute_loss(self, model, inputs):
                    labels = inputs.pop("labels")
                    try:
                        loss = F.cross_entropy(model(**inputs), labels)
                    except RuntimeError:
                        loss = model(**inputs).sum() * 0.0
                    return loss
            """,
        "run.py": """\
            import torch

            from trainer_ext import DistillTrainer

            model = torch.nn.Linear(4, 2)
            trainer = DistillTrainer(model)
            opt = torch.optim.AdamW(model.parameters())
            for _ in range(10):
                opt.zero_grad()
                loss = trainer.compute_loss(model, {"input": torch.randn(8, 4), "labels": torch.randint(0, 2, (8,))}); loss.backward()
                opt.step()
            """,
    })  # fmt: skip
    # read without crashing: the one finding is the handler putting a zero loss in place of the failed one
    assert [code for code, *_ in findings(tmp_path, "trainer_ext.py")] == ["ML501"]


def test_a_modules_forward_takes_what_its_instances_are_called_with_whatever_else_the_caller_does(tmp_path):
    """`model.parameters()`, `model.train()`, `model.to(device)` as a statement, a construction moved
    (`Net().to(device)`) or passed to a project function that does the same: none hands the module to
    anyone, so its calls still bind `forward`'s parameters (here: a view naming swapped sizes, ML603)."""
    net = """\
        from torch import nn


        class Net(nn.Module):
            def __init__(self, steps=20, width=3):
                super().__init__()
                self.steps, self.width = steps, width
                self.fc = nn.Linear(steps * width, 1)

            def forward(self, x):
                return self.fc(x.view(x.size(0), self.width, self.steps).flatten(1))
        """
    uses = {
        "model = Net()\nmodel.train()\nmodel.to('cpu')\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel(x)\n": True,
        "model = Net().to('cpu')\nprint(model.fc)\nmodel.forward(x)\n": True,
        "def run(m, x):\n    m.eval()\n    return m(x)\nrun(Net().cuda(), x)\n": True,
        "model = Net()\nmodel = model.to('cpu').train()\nmodel(x)\n": True,
        "model = Net()\nmodel = model.to('cpu')\nmodel = torch.compile(model)\nmodel(x)\n": False,  # another object
        "model = Net()\nmodels = [model]\nmodel(x)\n": False,  # the module goes into a list: its other calls are unknown
        "model = Net(steps=3, width=20)\nmodel(x)\n": False,  # the sizes as the input has them: no reorder
    }
    for index, (script, found) in enumerate(uses.items()):
        directory = tmp_path / str(index)
        write(directory, {"net.py": net, "main.py": "import torch\nfrom net import Net\nx = torch.randn(16, 20, 3)\n" + script})
        assert [(code, line) for code, line, _ in findings(directory, "net.py")] == ([("ML603", 11)] if found else []), script


def test_a_callable_objects_call_takes_what_its_instances_are_called_with(tmp_path):
    """A plain class's `__call__` is bound, as a module's `forward`, at the calls of its instances: made and
    called in place, or handed to a function that calls its parameter (here: a log of sigmoid output, ML701)."""
    losses = """\
        import torch


        class Weighted:
            def __call__(self, p, y):
                return -(y * torch.log(p)).mean()
        """
    uses = {
        "loss_fn = Weighted()\nloss_fn(torch.sigmoid(z), y)\n": True,
        "def fit(objective, z, y):\n    return objective(torch.sigmoid(z), y)\nfit(Weighted(), z, y)\n": True,
        "loss_fn = Weighted()\nloss_fn(torch.sigmoid(z).clamp(1e-6, 1.0), y)\n": False,  # clamped: never 0
    }
    for index, (script, found) in enumerate(uses.items()):
        directory = tmp_path / str(index)
        write(directory, {"losses.py": losses, "main.py": "import torch\nfrom losses import Weighted\nz, y = torch.randn(8), torch.ones(8)\n" + script})
        assert [(code, line) for code, line, _ in findings(directory, "losses.py")] == ([("ML701", 6)] if found else []), script
