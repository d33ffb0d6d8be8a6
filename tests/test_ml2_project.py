"""The loop model follows calls into the functions of the project's other modules: one iteration spans
the loop in the linted file and the helpers it calls; findings stay in the linted file and name the other
file's line; a change in a helper module invalidates the cached findings of the loops that call it."""
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import mllint.runner
from mllint.cli import main

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "ml2_project"

STEPS = '''\
import torch.nn.functional as F


def train_step(model, batch, optimizer):
    inputs, targets = batch
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
'''
TRAIN = '''\
import torch

from steps import train_step


def fit(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for batch in loader:
        train_step(model, batch, optimizer)
'''
ML201_TRAIN = (
    "`optimizer` steps in `train_step` (steps.py:8) without its gradients being cleared in the iteration of "
    "the loop on line 8: gradients accumulate across steps"
)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def run(*args):
    result = CliRunner().invoke(main, ["--isolated", "--output-format", "json", "-q", "--select", "ML2,ML5", *args])
    return [(f["filename"], f["location"]["row"], f["location"]["column"], f["code"], f["message"]) for f in json.loads(result.stdout)]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"steps.py": STEPS, "train.py": TRAIN})
    return tmp_path


def test_the_fixture_findings_name_the_helpers_file_and_line(monkeypatch):
    monkeypatch.chdir(FIXTURE)
    assert run("--no-cache", ".") == [
        ("pkg/fit.py", 10, 9, "ML201", "`optimizer` steps in `run_batch` (engine.py:8) without its gradients being "
         "cleared in the iteration of the loop on line 9: gradients accumulate across steps"),
        ("train.py", 12, 13, "ML201", "`optimizer` steps in `train_step` (steps.py:9) without its gradients being "
         "cleared in the iteration of the loop on line 11: gradients accumulate across steps"),
        ("train.py", 19, 9, "ML202", "`optimizer.zero_grad()` in `clear_and_step` (steps.py:30) clears the gradients "
         "between `backward()` and `optimizer` stepping: the step applies zero gradients"),
        ("train.py", 26, 9, "ML202", "`opt.zero_grad()` clears the gradients between `backward()` and `opt` stepping: "
         "the step applies zero gradients"),
    ]  # fmt: skip


def test_a_change_in_the_helper_module_invalidates_the_cached_findings(project, monkeypatch):
    linted: list[str] = []
    real = mllint.runner.lint_text

    def counting(text, path, *args):
        linted.append(path)
        return real(text, path, *args)

    monkeypatch.setattr(mllint.runner, "lint_text", counting)
    expected = [("train.py", 9, 9, "ML201", ML201_TRAIN)]
    assert run("-j", "1", "train.py") == expected
    assert run("-j", "1", "train.py") == expected
    assert linted == ["train.py"]  # neither file changed: a cache hit
    (project / "steps.py").write_text(STEPS.replace("    inputs, targets = batch\n", "    optimizer.zero_grad()\n    inputs, targets = batch\n"))
    assert run("-j", "1", "train.py") == []  # train.py did not change; its findings did
    assert linted == ["train.py", "train.py"]


def test_a_helper_module_that_starts_to_backpropagate_invalidates_the_cached_findings(project):
    write(project, {"steps.py": STEPS.replace("loss.backward()", "pass")})
    assert run("-j", "1", "train.py") == []
    write(project, {"steps.py": STEPS})
    assert run("-j", "1", "train.py") == [("train.py", 9, 9, "ML201", ML201_TRAIN)]


def test_names_in_the_helper_resolve_in_its_module(project):
    write(project, {"steps.py": STEPS.replace("loss.backward()", "autograd.backward(loss)").replace(
        "import torch.nn.functional as F\n", "import torch.nn.functional as F\nfrom torch import autograd\n")})
    assert [f[3] for f in run("--no-cache", "train.py")] == ["ML201"]
    write(project, {"steps.py": STEPS.replace("loss.backward()", "autograd.backward(loss)")})  # unknown there
    assert run("--no-cache", "train.py") == []


def test_calls_out_of_the_project_are_not_followed(project):
    write(project, {"train.py": TRAIN.replace("from steps import", "from transformers import")})
    assert run("--no-cache", "train.py") == []


def test_helpers_calling_each_other_across_modules_do_not_loop(project):
    write(project, {
        "steps.py": "from more import again\n\ndef train_step(model, batch, optimizer):\n"
                    "    model(batch).sum().backward()\n    again(model, batch, optimizer)\n",
        "more.py": "from steps import train_step\n\ndef again(model, batch, optimizer):\n"
                   "    optimizer.step()\n    train_step(model, batch, optimizer)\n",
    })  # fmt: skip
    # The cycle is not followed again: the recursive call is opaque as what it receives, the optimizer
    # included (it may clear it), so the loop is not judged; the point is that the lint ends.
    assert run("--no-cache", "train.py") == []


def test_a_helper_receiving_the_optimizer_that_is_not_followed_keeps_it_silent(project):
    write(project, {"train.py": TRAIN.replace("train_step(model, batch, optimizer)",
                                              "model(batch).sum().backward()\n        Stepper(optimizer)\n        optimizer.step()")
                    .replace("from steps import train_step", "from steps import Stepper"),
                    "steps.py": "class Stepper:\n    def __init__(self, optimizer):\n        optimizer.zero_grad()\n"})  # fmt: skip
    assert run("--no-cache", "train.py") == []


def test_a_step_in_the_helper_before_the_loops_backward_names_the_helpers_line(project):
    write(project, {
        "steps.py": "def clear_and_step(optimizer):\n    optimizer.zero_grad()\n    optimizer.step()\n",
        "train.py": TRAIN.replace("from steps import train_step", "from steps import clear_and_step")
        .replace("train_step(model, batch, optimizer)", "clear_and_step(optimizer)\n        model(batch).sum().backward()"),
    })  # fmt: skip
    assert run("--no-cache", "train.py") == [(
        "train.py", 9, 9, "ML203", "`optimizer` steps in `clear_and_step` (steps.py:3) before the iteration's "
        "`backward()` (line 10): the step applies stale or no gradients",
    )]  # fmt: skip
