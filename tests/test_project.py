"""The project index and module summaries: module names, relative imports, what `forward` returns in
training mode, layers, and the cross-file findings through the CLI (workers, cache, standard input) and the
language server."""
import json
import pickle
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import mllint.analysis.program.project as project
import mllint.runner
from mllint.analysis.program.project import ProjectIndex, module_name_of
from mllint.analysis.facets.layers import NO_LAYER, ClassLayers, Layer, class_layers
from mllint.analysis.facets.modes import mode_layers
from mllint.analysis.program.summaries import ModuleSummary
from mllint.cli import main
from mllint.context import FileContext
from mllint.engine import Selection, lint_text
from mllint.server import Snapshot, diagnose
from mllint.source import SourceText, parse_python

MODELS = '''\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1)
'''
LOGITS_MODELS = MODELS.replace("torch.softmax(self.fc(x), dim=1)", "self.fc(x)")
TRAIN = '''\
import torch.nn.functional as F

from .models import Net


def step(x, y):
    model = Net()
    return F.cross_entropy(model(x), y)
'''
ML101_MESSAGE = (
    "`model(x)` is softmax output: `Net.forward` returns softmax output (models.py:11), but `F.cross_entropy` "
    "applies log_softmax itself: pass the raw logits"
)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": MODELS, "pkg/train.py": TRAIN})
    return tmp_path


def run(*args, input=None):
    result = CliRunner().invoke(main, ["--isolated", "--output-format", "json", "-q", "--select", "ML1", *args], input=input)
    return [(f["filename"], f["location"]["row"], f["code"], f["message"]) for f in json.loads(result.stdout)]


def summary_of(text: str, name: str = "pkg.models") -> ModuleSummary:
    from mllint.analysis.program.project import ModuleName

    ctx = FileContext("models.py", SourceText(text), parse_python(text), ModuleName(name, False), "models.py")
    return ctx.analysis(ModuleSummary)


# Module names and roots.


def test_module_names_follow_the_packages_up_to_their_root(package):
    assert module_name_of(str(package / "pkg" / "train.py")) == (str(package), project.ModuleName("pkg.train", False, frozenset({"train", "models"})))
    assert module_name_of(str(package / "pkg" / "__init__.py"))[1].name == "pkg"


def test_relative_absolute_and_aliased_imports_resolve_to_the_same_class(package):
    write(package, {"pkg/sub/__init__.py": "", "pkg/sub/train.py": TRAIN.replace("from .models", "from ..models")})
    write(package, {"pkg/alias.py": TRAIN.replace("from .models import Net", "import pkg.models as m").replace("Net()", "m.Net()")})
    assert [(row, code) for _, row, code, _ in run("pkg")] == [(8, "ML101"), (8, "ML101"), (8, "ML101")]


def test_a_package_root_in_site_packages_admits_only_the_linted_package(tmp_path):
    write(tmp_path, {"site/pkg/__init__.py": "", "site/pkg/models.py": MODELS, "site/numpy/__init__.py": "", "site/lone.py": ""})
    index = ProjectIndex.for_paths([str(tmp_path / "site" / "pkg" / "models.py")])
    assert index.locate("pkg.models") == str(tmp_path / "site" / "pkg" / "models.py")
    assert index.locate("numpy") is None and index.locate("lone") is None


# Summaries.


def test_forward_in_training_mode_skips_eval_only_returns():
    summary = summary_of(MODELS + textwrap.dedent('''
        class Calibrated(Net):
            def forward(self, x):
                if not self.training:
                    return torch.softmax(self.fc(x), dim=1)
                return self.fc(x)


        class Switch(Net):
            def forward(self, x):
                if self.training:
                    return self.fc(x)
                return self.fc(x).softmax(1)
    '''))
    ctx_text = "import torch.nn.functional as F\nfrom pkg.models import Net, Calibrated, Switch\n"
    assert summary.classes["Calibrated"].has_forward and summary.classes["Calibrated"].bases == ("pkg.models.Net",)
    assert summary.classes["Net"].fact(class_layers) == ClassLayers("", 0, ())
    source = ctx_text + "a = F.cross_entropy(Net()(x), y)\nb = F.cross_entropy(Calibrated()(x), y)\nc = F.cross_entropy(Switch()(x), y)\n"
    assert [f.start.line for f in lint_with_models(source, summary)] == [3]


def lint_with_models(source: str, summary: ModuleSummary):
    """Lint `source` as `pkg.train` with `summary` standing for `pkg.models`."""

    class Index(ProjectIndex):
        def summary(self, module, summarize):
            return summary if module == "pkg.models" else None

    return lint_text(source, "train.py", Selection.of(["ML101"]), Index({}))


def test_which_module_classes_hold_train_eval_dependent_layers(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": '''\
        import torch.nn.functional as F
        from torch import nn
        from other import Block


        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())


        class WithDropout(Plain):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout(0.1)


        class Wrapper(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = WithDropout()


        class Functional(nn.Module):
            def forward(self, x):
                return F.dropout(x, 0.5, training=self.training)


        class Unknown(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()


        class NotAModule:
            pass
        '''})
    names = ("Plain", "WithDropout", "Wrapper", "Functional", "Unknown", "NotAModule")
    text = f"from .models import {', '.join(names)}\n" + "".join(f"{name}()\n" for name in names)
    path = tmp_path / "pkg" / "train.py"
    path.write_text(text)
    tree = parse_python(text)
    ctx = FileContext(str(path), SourceText(text), tree, module_name_of(str(path))[1], str(path), ProjectIndex.for_paths([str(path)]))
    layers = ctx.analysis(mode_layers)
    calls = [statement.value for statement in tree.body[1:]]
    dropout = Layer(None, "Dropout", "WithDropout", "models.py:15")
    wrapped = Layer(None, "Dropout", "Wrapper", "models.py:15")  # the class that holds it, and where it is
    assert [layers.of_constructor(call) for call in calls] == [
        NO_LAYER, dropout, wrapped, Layer(None, "F.dropout", "Functional", "models.py:26"), None, None
    ]
    assert [layers.builds_module(call) for call in calls] == [True] * 5 + [False]


# The CLI: messages, workers, the cache, standard input.


def test_the_finding_names_where_the_softmax_is(package):
    assert run("pkg") == [("pkg/train.py", 8, "ML101", ML101_MESSAGE)]


def test_workers_find_the_same(package):
    write(package, {f"pkg/copy{i}.py": TRAIN for i in range(4)})
    assert len(run("-j", "2", "pkg")) == 5


def test_workers_use_the_word_index_their_run_built(tmp_path, monkeypatch):
    """The run reads every module for its word index once; a worker given it reads none again."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/engine.py": "def train(m):\n    pass\n",
                     "pkg/main.py": "from pkg.engine import train\ntrain(1)\n"})  # fmt: skip
    monkeypatch.setattr(project, "_CALLS", {})
    index = ProjectIndex.for_paths([str(tmp_path / "pkg")])
    shared = index.shared_calls()
    monkeypatch.setattr(project, "_CALLS", {})
    unshared = pickle.loads(pickle.dumps(index))  # a worker with no index of its run builds its own
    assert unshared.modules_calling("train") == ["pkg.engine", "pkg.main"]  # `def train(` too
    project.install_calls(shared)
    read: list[str] = []
    monkeypatch.setattr(project, "_content", read.append)
    worker = pickle.loads(pickle.dumps(index))
    assert worker.modules_calling("train") == ["pkg.engine", "pkg.main"] and read == []


SIBLING_MODEL = """\
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(8, 4), {last})

    def forward(self, x):
        return self.head(x)

    def set_loss(self, loss):
        self.loss = loss

    def step(self, x, y):
        return self.loss(self(x), y)
"""
SIBLING_TRAIN = """\
from torch import nn
from model import *

model = Net()
model.set_loss(nn.{loss}())
"""


def sibling_folders(root: Path) -> None:
    """Two folders of scripts, each with its own `model.py` and `train.py` (`python a/train.py` imports
    `a/model.py`): only `a`'s model ends in a softmax, only `b` trains with NLL."""
    write(root, {
        "a/model.py": SIBLING_MODEL.format(last="nn.Softmax(dim=1)"), "a/train.py": SIBLING_TRAIN.format(loss="CrossEntropyLoss"),
        "b/model.py": SIBLING_MODEL.format(last="nn.ReLU()"), "b/train.py": SIBLING_TRAIN.format(loss="NLLLoss"),
    })  # fmt: skip


def test_a_script_imports_the_module_of_its_own_folder(tmp_path, monkeypatch):
    """`from model import *` in `a/train.py` is `a/model.py`, as `sys.path[0]` has it, whichever folder
    comes first; the message names the softmax in the `nn.Sequential`, and the call site of `a`."""
    monkeypatch.chdir(tmp_path)
    sibling_folders(tmp_path)
    message = (
        "`self(x)` is softmax output: `Net.forward` returns softmax output (line 7), but `self.loss` "
        "(passed at train.py:5) applies log_softmax itself: pass the raw logits"
    )
    assert run("--no-cache", ".") == [("a/model.py", 16, "ML101", message)]
    assert run(".") == run(".") == [("a/model.py", 16, "ML101", message)]  # the cache checks the same modules
    (tmp_path / "a" / "model.py").write_text(SIBLING_MODEL.format(last="nn.Dropout(0.1)"))
    assert run(".") == []


def test_a_change_in_an_imported_module_invalidates_the_cached_findings(package, monkeypatch):
    linted: list[str] = []
    real = mllint.runner.lint_text

    def counting(text, path, *args):
        linted.append(path)
        return real(text, path, *args)

    monkeypatch.setattr(mllint.runner, "lint_text", counting)
    assert len(run("-j", "1", "pkg/train.py")) == 1
    assert len(run("-j", "1", "pkg/train.py")) == 1
    assert linted == ["pkg/train.py"]  # unchanged, models.py too: a cache hit
    (package / "pkg" / "models.py").write_text(LOGITS_MODELS)
    assert run("-j", "1", "pkg/train.py") == []  # train.py did not change; its findings did
    assert linted == ["pkg/train.py", "pkg/train.py"]
    (package / "pkg" / "models.py").unlink()
    write(package, {"pkg/models/__init__.py": MODELS})  # the module moves: the cached entry is stale
    assert len(run("-j", "1", "pkg/train.py")) == 1


def test_standard_input_is_its_module_and_the_siblings_come_from_disk(package):
    edited = TRAIN.replace("(model(x), y)", "(model(x), y, label_smoothing=0.1)")  # unsaved: not on disk
    [(path, row, code, message)] = run("-", "--stdin-filename", "pkg/train.py", input=edited)
    assert (path, row, code) == ("pkg/train.py", 8, "ML101")


# The language server.


def test_the_server_lints_the_buffer_against_the_files_on_disk(package, monkeypatch):
    import mllint.engine

    path, last, linted = str(package / "pkg" / "train.py"), {}, []
    lint_text = mllint.engine.lint_text
    monkeypatch.setattr(mllint.engine, "lint_text", lambda *a: linted.append(a[1]) or lint_text(*a))
    [diagnostic] = diagnose(Snapshot("file://" + path, path, TRAIN, 1), None, last)
    assert diagnostic.code == "ML101" and "models.py:11" in diagnostic.message
    [again] = diagnose(Snapshot("file://" + path, path, TRAIN, 2), None, last)
    assert (again.message, again.range, again.data["version"], len(linted)) == (diagnostic.message, diagnostic.range, 2, 1)  # it stands
    project.use_buffers({path: TRAIN, str(package / "pkg" / "models.py"): LOGITS_MODELS})  # an unsaved edit of models.py
    try:
        assert diagnose(Snapshot("file://" + path, path, TRAIN, 3), None, last) == []
    finally:
        project.use_buffers({})
    assert len(diagnose(Snapshot("file://" + path, path, TRAIN, 4), None, last)) == 1
    (package / "pkg" / "models.py").write_text(LOGITS_MODELS)
    assert diagnose(Snapshot("file://" + path, path, TRAIN, 5), None, last) == []
    assert len(linted) == 4


def test_summaries_outlive_the_parsed_modules_they_were_read_from(tmp_path, monkeypatch):
    """Only a few parsed modules are kept; a summary asked about later reads its module again."""
    import mllint.analysis.program.project as project

    write(tmp_path, {"pkg/__init__.py": "", **{f"pkg/m{i}.py": MODELS for i in range(6)}})
    monkeypatch.setattr(project, "KEPT_SOURCE_BYTES", 2 * len(MODELS))
    monkeypatch.setattr(project, "_CONTEXTS", {})
    monkeypatch.setattr(project, "_kept_bytes", 0)
    index = ProjectIndex.for_paths([str(tmp_path / "pkg")])
    summaries = [index.summary(f"pkg.m{i}", ModuleSummary.of_context) for i in range(6)]
    assert len(project._CONTEXTS) == 2
    assert summaries[0].classes["Net"].bases == ("torch.nn.Module",)
    assert summaries[0].classes["Net"].forward is not None  # worked out after its module was let go
    assert summaries[0].classes["Net"].fact(class_layers).what == ""
