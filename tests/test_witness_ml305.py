"""Witness for ML305: a dropout module built inside `forward` keeps dropping in eval mode, under torch;
the documented alternative, registered in `__init__`, follows `eval()`."""
import torch

from witness import codes, example, instead, run
from mllint.engine import Selection, lint_text

EVALUATE_TWICE = "model = Net().eval()\nfirst = model(torch.ones(8, 4))\nsecond = model(torch.ones(8, 4))\n"
ML3 = Selection.of(["ML301", "ML302", "ML303", "ML304", "ML305"])


def test_the_example_is_reported_and_its_alternative_is_not():
    assert codes(lint_text(example("ML305"), "witness.py", ML3)) == ["ML305"]
    assert codes(lint_text(instead("ML305"), "witness.py", ML3)) == []


def test_dropout_built_in_forward_drops_after_eval():
    flagged = run("import torch\n" + example("ML305") + EVALUATE_TWICE)
    assert not flagged["model"].training
    assert not torch.equal(flagged["first"], flagged["second"])  # a new dropout mask at each call


def test_the_registered_dropout_follows_eval():
    repaired = run("import torch\n" + instead("ML305") + EVALUATE_TWICE)
    assert torch.equal(repaired["first"], repaired["second"])
