"""ML501 on handlers around part of a training step (the forward pass) that skip the batch, and on
out-of-memory handlers that re-raise other errors on one path only."""
import pytest

LOOP = """import torch

def train(model, loader, criterion, optimizer, distributed):
    for x, y in loader:
        optimizer.zero_grad()
        try:
{body}
        except {caught}:
{handler}
        criterion(out, y).backward()
        optimizer.step()
"""


def lint_loop(lint, body, caught, handler):
    indent = lambda text: "\n".join("            " + line for line in text.splitlines())  # noqa: E731
    return lint(LOOP.format(body=indent(body), caught=caught, handler=indent(handler)), "ML501")


def test_a_forward_pass_whose_errors_skip_the_batch(lint):
    [finding] = lint_loop(lint, "out = model(x)", "Exception as error", "print(error)\ncontinue")
    assert (finding.start.line, finding.start.column) == (8, 9)
    assert finding.message == (
        "`except Exception` skips the batch on every error of the training step and does not re-raise: "
        "a broken model trains on nothing, and the run reports success"
    )


@pytest.mark.parametrize(
    "body, caught, handler",
    [
        ("out = model(x)", "ValueError", "continue"),  # a narrow error, expected from odd inputs
        ("batch = next(iterator)\nout = model(x)", "Exception", "raise"),  # re-raised
        ("logger.info(x)", "Exception", "continue"),  # no model in the block
        ("out = model(x)", "Exception", "out = None"),  # does not skip the batch
        ('out = model(x)', 'RuntimeError as e', 'if "out of memory" not in str(e):\n    raise\ncontinue'),
        ('out = model(x)', 'RuntimeError as e', 'if "out of memory" in str(e):\n    continue\nelse:\n    raise'),
        ('out = model(x)', 'RuntimeError as e', 'if "out of memory" in str(e):\n    continue\nif distributed:\n    raise\nelse:\n    raise'),
    ],
)
def test_handlers_that_hide_no_model_error(lint, body, caught, handler):
    assert lint_loop(lint, body, caught, handler) == []


@pytest.mark.parametrize(
    "handler, line",
    [
        ('if "out of memory" in str(e):\n    continue\nelse:\n    if not distributed:\n        raise', 12),  # the other errors' arm
        ('if "CUDA out of memory" in str(e):\n    continue', 8),  # no statement for the others: the handler
        ('if "out of memory" not in str(e):\n    print(e)\ncontinue', 10),
    ],
)
def test_out_of_memory_handlers_that_let_other_errors_pass_on_a_path(lint, handler, line):
    [finding] = lint_loop(lint, "out = model(x)", "RuntimeError as e", handler)
    assert finding.start.line == line


def test_an_oom_handler_around_the_whole_step_says_which_path(lint):
    source = (
        "def step(model, batch, optimizer, distributed):\n"
        "    try:\n"
        "        model(batch).sum().backward()\n"
        "        optimizer.step()\n"
        "    except RuntimeError as e:\n"
        '        if "out of memory" in str(e):\n'
        "            optimizer.zero_grad()\n"
        "        elif not distributed:\n"
        "            raise\n"
    )
    [finding] = lint(source, "ML501")
    assert finding.start.line == 8  # `elif not distributed:`, the arm every other error runs
    assert finding.message == (
        "every error other than out-of-memory that `except RuntimeError` (example.py:5) catches runs this arm, "
        "which does not re-raise: a crash of the training step becomes a finished run"
    )


def test_a_join_handler_says_what_else_it_hides(lint):
    """DDP's `join(throw_on_early_termination=True)` raises a RuntimeError on purpose; the handler for it
    also swallows out-of-memory and shape errors."""
    source = (
        "def train(ddp, batches, optimizer):\n"
        "    try:\n"
        "        with ddp.join(throw_on_early_termination=True):\n"
        "            for batch in batches:\n"
        "                ddp(batch).backward()\n"
        "                optimizer.step()\n"
        "                optimizer.zero_grad()\n"
        "    except RuntimeError as e:\n"
        "        print(e)\n"
    )
    [finding] = lint(source, "ML501")
    assert finding.message == (
        "`except RuntimeError` is meant for the early termination `join(throw_on_early_termination=True)` "
        "raises, but it also catches every other RuntimeError of the training loop (out of memory, shapes, "
        "CUDA) and does not re-raise: a crash ends the epoch early, silently"
    )
