"""The messages of the training-loop findings of fixtures/ml2_gaps: stale gradients across phases, a clear of
another model or of part of what an optimizer built elsewhere updates (naming the call site), optimizers
recognised by what built them, `map` over the loader, ReduceLROnPlateau fed the batch's loss."""
import json
from pathlib import Path

from click.testing import CliRunner

from mllint.cli import main

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "ml2_gaps"


def messages(monkeypatch) -> dict[tuple[str, int], str]:
    monkeypatch.chdir(FIXTURE)
    result = CliRunner().invoke(main, ["--isolated", "--no-cache", "--output-format", "json", "-q", "--select", "ML2", "."])
    return {(f["filename"], f["location"]["row"]): f["message"] for f in json.loads(result.stdout)}


def test_the_messages_say_what_accumulates_and_where_the_optimizer_comes_from(monkeypatch):
    found = messages(monkeypatch)
    assert found[("engine.py", 17)] == (
        "`optimizer` steps the micro-batches of the loop on line 14 on top of the gradients the loop on line 10 "
        "left (it clears before its backward, not after): the step applies both phases' gradients"
    )
    assert found[("engine.py", 32)] == (
        "`self.optimizer` steps (through `self.train_step()`, line 38) without its gradients being cleared in the "
        "iteration of the loop on line 38: "
        "gradients accumulate across steps"
    )  # the loop is `map(self.train_step, self.loader)`
    assert found[("engine.py", 51)] == (
        "`plateau` (ReduceLROnPlateau, passed at main.py:29) steps every batch with the batch's loss `loss.item()`: "
        "its patience counts batches, and one noisy stretch of batches cuts the learning rate"
    )
    assert found[("engine.py", 73)] == (
        "`optimizer` (as passed at main.py:32) also updates the parameters of `head`, which the iteration of the "
        "loop on line 70 never clears (only `encoder` at line 71): their gradients accumulate across steps"
    )
    assert found[("main.py", 42)] == (
        "`joint` also updates the parameters of `model.head`, which the iteration of the loop on line 39 never "
        "clears (only `model.encoder` at line 40): their gradients accumulate across steps"
    )
    assert found[("main.py", 50)] == (
        "`policy_optimizer` updates the parameters of `actor`, but the iteration of the loop on line 46 clears "
        "only `critic` at line 47, another model: their gradients accumulate across steps"
    )
    assert found[("engine.py", 102)] == (
        "`critic_optimizer` steps the micro-batches of the loop on line 100 on top of the gradients the loop on "
        "line 96 left (it clears before its backward, not after): the step applies both phases' gradients"
    )  # another optimizer over the same model cleared them before its backward only
    assert found[("engine.py", 115)] == (
        "`plateau` (ReduceLROnPlateau) steps with `loss`, the loss of the epoch's last batch: one batch's noise, "
        "not the epoch's progress, decides when the learning rate is cut"
    )
    assert found[("main.py", 53)] == (
        "`optimizer` steps in `sgd_step` (engine.py:122) without its gradients being cleared in the iteration of "
        "the loop on line 53: gradients accumulate across steps"
    )  # `map(partial(sgd_step, model, optimizer), loader)`: reported at the `map` call
    assert found[("engine.py", 88)].startswith("`learner` steps before the iteration's `backward()` (line 89)")

