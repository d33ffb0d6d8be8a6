"""Callers into parameters (mllint/analysis/callers.py): a parameter holds what one call site passes,
arguments bind as Python binds them, and a finding through a parameter names the call site."""
import textwrap

import mllint.analysis.project as project
from mllint.analysis.project import ProjectIndex
from mllint.engine import Selection, lint_path, lint_text
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


def findings(directory, name):
    project = ProjectIndex.for_paths([str(directory)])
    return [(f.code, f.start.line, f.message) for f in lint_path(str(directory / name), EVERY_RULE, name, project)]


def test_the_flagship_message_names_the_call_site_and_the_origin(tmp_path):
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": """\
            def train(model, loader, optimizer, criterion):
                for x, y in loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
            """,
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


def test_starred_arguments_leave_the_parameters_unknown(tmp_path):
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": """\
            from torch import nn


            def step(model, x, y):
                return nn.CrossEntropyLoss()(model(x), y)
            """,
        "main.py": """\
            from engine import step
            from models import Classifier

            arguments = (Classifier(), None, None)
            step(*arguments)
            step(**{"model": Classifier(), "x": None, "y": None})
            """,
    })  # fmt: skip
    assert findings(tmp_path, "engine.py") == []


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
    assert "`scores` is `F.softmax(logits, dim=1)` passed at train.py:10" in finding.message


def test_a_module_calling_only_its_own_function_of_that_name_is_not_parsed(tmp_path, monkeypatch):
    """Call sites of `engine.train` are looked for where `train(` is written; a module whose only `train`
    is its own function's calls (no import, no `x.train(`) cannot call it, and is not parsed."""
    write(tmp_path, {
        "models.py": MODELS,
        "engine.py": """\
            def train(model, loader, optimizer, criterion):
                for x, y in loader:
                    optimizer.zero_grad()
                    criterion(model(x), y).backward()
                    optimizer.step()
            """,
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
    assert [(code, line) for code, line, _ in findings(tmp_path, "engine.py")] == [("ML101", 4)]
    assert "main" in parsed and "other" not in parsed
