"""The cheap tests that spare the mode flow of a scope (`Modes.evaluation_uses`, `Modes.training_uses`) drop
no use that could change what a rule reports: ML303's training steps that may be in eval mode, and every
use of an evaluation pass that ML302 weighs (only a pass whose every use is as the caller left it, or
unknown, may go)."""
import ast
from pathlib import Path

import pytest

from mllint.analysis.facets.mode_facts import Mode
from mllint.analysis.facets.modes import Modes
from mllint.context import FileContext
from mllint.source import SourceText

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.py"))
NET = (
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.body = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))\n"
    "    def forward(self, x):\n"
    "        return self.body(x)\n"
)
TRAIN = "        for x, y in loader:\n            opt.zero_grad()\n            F.mse_loss(model(x), y).backward()\n            opt.step()\n"
# Ways a training step's model may be in eval mode that the scope's text shows only indirectly.
SNIPPETS = {
    "alias": "def fit(loader, opt):\n    model = Net()\n    net = model\n    for epoch in range(2):\n" + TRAIN + "        net.eval()\n",
    "copy": (
        "def fit(loader, opt):\n    model = Net()\n    other = Net()\n    other.eval()\n    model = other\n"
        "    for epoch in range(2):\n" + TRAIN
    ),
    "unpacked from a function": (
        "def make():\n    return Net().eval(), 1\n"
        "def fit(loader, opt):\n    model, _ = make()\n    for epoch in range(2):\n" + TRAIN
    ),
    "module model through a helper": (
        "model = Net()\ndef evaluate():\n    model.eval()\n"
        "def fit(loader, opt):\n    for epoch in range(2):\n" + TRAIN + "        evaluate()\n"
    ),
    "passed to a helper": (
        "def evaluate(m):\n    m.eval()\n"
        "def fit(loader, opt):\n    model = Net()\n    for epoch in range(2):\n" + TRAIN + "        evaluate(model)\n"
    ),
    "listed": (
        "def fit(loader, opt):\n    model, head = Net(), Net()\n    for epoch in range(2):\n" + TRAIN
        + "        for net in (model, head):\n            net.eval()\n"
    ),
    "evaluated under no_grad": (
        "def fit(loader, opt):\n    model = Net()\n    for epoch in range(2):\n" + TRAIN
        + "        with torch.no_grad():\n            model(x)\n"
    ),
}


def modes_of(text: str, path: str = "example.py") -> Modes:
    return FileContext(path, SourceText(text), ast.parse(text)).analysis(Modes)


def every_use(modes: Modes, wanted) -> list:
    return [use for scope in modes._scopes_that_set_modes(wanted) for use in modes.flow(scope).uses]


def assert_nothing_read_is_dropped(modes: Modes) -> None:
    training = {id(use) for use in modes.training_uses()}
    for use in every_use(modes, None):
        constants = dict(use.constants)  # a round of an unrolled phase loop, or a call site's flags
        steps = modes.training_step(use.call, constants) or (use.site is not use.call and modes.training_step(use.site, constants))
        if steps and any(f.mode is Mode.EVAL for f in use.facts):
            assert id(use) in training, use
    kept = modes.evaluation_uses()
    evaluation, passes = {id(use) for use in kept}, {use.call for use in kept}
    for use in every_use(modes, modes._evaluating_scopes()):
        if modes.evaluation_pass(use.call, dict(use.constants)) and id(use) not in evaluation:
            assert use.call not in passes and all(f.mode in (Mode.ENTRY, Mode.UNKNOWN) for f in use.facts), use


def test_an_evaluation_of_a_model_of_no_known_mode_is_spared():
    modes = modes_of(
        NET + "from helpers import load_head\n"
        "def run(loader, x):\n    net = Net()\n    net.train()\n    head = load_head()\n"
        "    with torch.no_grad():\n        head(x)\n"
    )
    assert_nothing_read_is_dropped(modes)
    assert every_use(modes, modes._evaluating_scopes()) and not modes.evaluation_uses()


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_indirect_eval_modes_are_kept(name):
    modes = modes_of(NET + SNIPPETS[name])
    assert_nothing_read_is_dropped(modes)
    if "no_grad" in name:
        assert any(all(f.mode is Mode.TRAIN for f in use.facts) for use in modes.evaluation_uses())
    else:
        assert any(any(f.mode is Mode.EVAL for f in use.facts) for use in modes.training_uses())


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_fixtures_keep_every_use_read(path):
    text = path.read_text(encoding="utf-8")
    try:
        ast.parse(text)
    except SyntaxError:
        pytest.skip("does not parse")
    assert_nothing_read_is_dropped(modes_of(text, str(path)))
