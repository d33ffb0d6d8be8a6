"""Property-based hardening: no input makes mllint raise, and fixes keep files parseable and idempotent.

Programs come from hypothesmith (valid Python from the grammar), from random mutations of the fixtures
(deleted lines, swapped lines, truncation, inserted junk) and from a generator of training code (loops
carrying values, optional loss terms under flags, long elif chains, decorated definitions), also with
CRLF and CR line breaks and cut into notebook cells; notebooks also from the notebook fixtures with
damaged JSON or IPython lines added to their cells. No program may crash a rule or outlast the analysis
budget."""
import ast
import json
import os
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mllint.engine import Event, Selection, lint_text
from mllint.fixer import fix_text
from mllint.registry import all_rules, rule_by_event
from mllint.runner import Job, Mode, check_source
from mllint.source import SourceFile

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.py"))
FIXTURE_TEXTS = [p.read_text(encoding="utf-8") for p in FIXTURES]
INTERNAL_ERROR = rule_by_event(Event.INTERNAL_ERROR).code
CUT_SHORT = rule_by_event(Event.CUT_SHORT).code  # no program may outlast the analysis budget
SELECTION = Selection.of(all_rules())
# A quick pass in the suite; MLLINT_FUZZ_EXAMPLES=5000 for a long run (benchmarks/README.md).
FUZZ = settings(
    max_examples=int(os.environ.get("MLLINT_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def lint(text: str):
    return lint_text(text, "fuzzed.py", SELECTION)


def assert_sound(text: str) -> None:
    findings = lint(text)
    assert not [f for f in findings if f.code in (INTERNAL_ERROR, CUT_SHORT)], findings
    outcome = fix_text(text, lint, unsafe=True)
    assert outcome.error is None
    if outcome.fixed:
        ast.parse(outcome.text)
        assert fix_text(outcome.text, lint, unsafe=True).text == outcome.text


@st.composite
def mutated_fixture(draw) -> str:
    lines = draw(st.sampled_from(FIXTURE_TEXTS)).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        operation = draw(st.sampled_from(["delete", "swap", "truncate", "duplicate", "junk"]))
        if operation == "delete":
            del lines[i]
        elif operation == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif operation == "truncate":
            lines = lines[:i] + [lines[i][: draw(st.integers(0, len(lines[i])))]]
        elif operation == "duplicate":
            lines.insert(i, lines[i])
        else:
            lines.insert(i, draw(st.text(max_size=20)) + "\n")
    return "".join(lines)


@FUZZ
@given(hypothesmith.from_grammar())
def test_generated_programs_never_crash(text):
    assert_sound(text)


@FUZZ
@given(mutated_fixture())
def test_mutated_fixtures_never_crash(text):
    assert_sound(text)


NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.ipynb"))
NOTEBOOK_TEXTS = [p.read_text(encoding="utf-8") for p in NOTEBOOKS]
IPYTHON_LINES = ["%time ", "!ls \\\n", "    -la\n", "model?\n", "%%bash\n", "x = !pwd\n", "    %matplotlib inline\n"]


@st.composite
def mutated_notebook(draw) -> str:
    """A fixture notebook with its JSON text damaged, or its cells' sources mutated (IPython lines added)."""
    text = draw(st.sampled_from(NOTEBOOK_TEXTS))
    if draw(st.booleans()):
        i = draw(st.integers(0, len(text)))
        return text[:i] + draw(st.text(max_size=5)) + text[i + draw(st.integers(0, 20)) :]
    data = json.loads(text)
    for cell in data["cells"]:
        lines = cell["source"]
        for _ in range(draw(st.integers(0, 2))):
            i = draw(st.integers(0, len(lines)))
            lines.insert(i, draw(st.sampled_from(IPYTHON_LINES + [draw(st.text(max_size=10)) + "\n"])))
        if draw(st.booleans()):
            cell["source"] = "".join(lines)
    return json.dumps(data, indent=draw(st.sampled_from([None, 1, 2])))


@FUZZ
@given(mutated_notebook())
def test_mutated_notebooks_never_crash_and_fixes_are_written_back(text):
    source = SourceFile(text, "utf-8", text.encode())
    for mode in (Mode.CHECK, Mode.FIX):
        result = check_source(source, "fuzzed.ipynb", SELECTION, Job(mode, unsafe=True))
        assert not [f for f in result.findings if f.code == INTERNAL_ERROR], result.findings
    if result.fixed:
        json.loads(result.text)
        again = check_source(SourceFile(result.text, "utf-8", b""), "fuzzed.ipynb", SELECTION, Job(Mode.FIX, unsafe=True))
        assert again.text == result.text


# Generated training code: loops that carry values from one iteration to the next (`loss += ...` twice,
# running totals), nested loops, branches, helpers, `no_grad`, AMP. Names come from a small pool so that
# statements read and rebind each other's values, as in real training loops.
TENSORS = ["loss", "total", "out", "x", "y", "term", "logits"]
HEADER = """import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


def penalty(model, x, y):
    out = model(x)
    return F.cross_entropy(out, y)


def train(model, loader, opt, scaler, scheduler, criterion, steps, cfg):
    loss = 0
    total = 0.0
    x, y = next(iter(loader))
    out = term = logits = model(x)
"""
SIMPLE_STATEMENTS = [
    "{a} = model({b})", "{a} = criterion({b}, {c})", "{a} = F.mse_loss({b}, {c})", "{a} = {b}.detach()",
    "{a} += {b}", "{a} += 0.5 * criterion({b}, {c})", "{a} -= 0.1 * {b}", "{a} *= 0.5", "{a} /= steps",
    "{a} = {a} + penalty(model, {b}, {c})", "{a} = {b}.softmax(dim=-1)", "{a} = torch.log({b})",
    "{a} = {b}.view(-1)", "{a} = {b}.squeeze()", "{a} = {b} / {c}.std()", "{a} += {b}.item()",
    "{a}[0] = 0", "{a}.add_(1)", "{a} = {b}.mean()", "{a} = torch.sigmoid({b})", "{a}, {b} = {b}, {a}",
    "{a}.backward()", "scaler.scale({a}).backward()", "opt.zero_grad()", "opt.step()", "scaler.step(opt)",
    "scaler.update()", "scheduler.step()", "model.train()", "model.eval()", "{a} = {a}.to('cpu')",
    "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", "{a}.clamp_(0, 1)", "{a}[:, 0] = 0",
    "{a}[i] = self.fc({a}[i])", "{a} = torch.cat({a}, 1)", "{a} = {a}.clone()", "self.{a} = {b}",
    "{a} = self.{b}",
]
LOOP_HEADERS = [
    "for x, y in loader:", "for step in range(steps):", "for i, (x, y) in enumerate(loader):",
    "while total < steps:", "for {a} in [{b}, {c}]:",
]
BLOCK_HEADERS = [
    "if {a} > 0:", "with torch.no_grad():", "with autocast():", "try:", "if not self.training:", "if self.training:",
]
DECORATORS = ["@torch.no_grad()", "@staticmethod", "@functools.cache", "@torch.jit.ignore", "@property"]


@st.composite
def training_block(draw, depth: int, in_loop: bool = False) -> list[str]:
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        a, b, c = (draw(st.sampled_from(TENSORS)) for _ in range(3))
        kinds = ["simple"] * 4 + ["loop", "block", "jump", "flags", "elif", "decorated"]
        kind = draw(st.sampled_from(kinds if depth < 3 else ["simple", "flags"]))
        if kind == "jump" and not in_loop:
            kind = "simple"
        if kind == "flags":  # optional loss terms, each under its own flag (multi-loss configs)
            for n in range(draw(st.integers(1, 12))):
                lines += [f"if cfg.use_{n}:", "    " + draw(st.sampled_from(SIMPLE_STATEMENTS[4:11])).format(a=a, b=b, c=c)]
        elif kind == "elif":  # a long elif chain, each arm assigning
            for n in range(draw(st.integers(1, 10))):
                lines += [f"{'if' if n == 0 else 'elif'} cfg.mode == {n}:", f"    {a} = {draw(st.sampled_from(TENSORS))} * {n}"]
            if draw(st.booleans()):
                lines += ["else:", f"    {a} = {b}"]
        elif kind == "decorated":  # a definition with decorators, where a fix may want to insert a line
            lines += [*draw(st.lists(st.sampled_from(DECORATORS), min_size=1, max_size=2)), f"def helper_{a}({b}):"]
            lines += ["    " + line for line in draw(training_block(depth + 1))]
        elif kind == "simple":
            lines.append(draw(st.sampled_from(SIMPLE_STATEMENTS)).format(a=a, b=b, c=c))
        elif kind == "jump":
            lines.append(draw(st.sampled_from(["break", "continue", "pass", "return " + a])))
        else:
            header = draw(st.sampled_from(LOOP_HEADERS if kind == "loop" else BLOCK_HEADERS))
            lines.append(header.format(a=a, b=b, c=c))
            inner = in_loop or kind == "loop"
            lines += ["    " + line for line in draw(training_block(depth + 1, inner))]
            if header == "try:":
                lines += ["except RuntimeError:", "    pass"]
            elif header.startswith("if") and draw(st.booleans()):
                lines += ["else:", *("    " + line for line in draw(training_block(depth + 1, inner)))]
    return lines


@st.composite
def training_program(draw) -> str:
    """A training function and a module whose `forward` changes its input, both generated."""
    train = draw(training_block(0))
    forward = draw(training_block(0))
    return (
        HEADER
        + "".join(f"    {line}\n" for line in train)
        + "    return loss\n\n\nclass Head(nn.Module):\n    def forward(self, x, y):\n"
        + "".join(f"        {line}\n" for line in forward)
        + "        return x\n"
    )


@FUZZ
@given(training_program())
def test_generated_training_loops_never_crash(text):
    assert_sound(text)


@FUZZ
@given(training_program(), st.sampled_from(["\r\n", "\r"]))
def test_fixes_of_generated_programs_keep_the_files_line_breaks(text, line_break):
    """A CRLF or CR file stays one: every line a fix inserts ends as the file's lines do."""
    text = text.replace("\n", line_break)
    outcome = fix_text(text, lint, unsafe=True)
    assert outcome.error is None
    assert outcome.text.replace(line_break, "").count("\n") + outcome.text.replace(line_break, "").count("\r") == 0


@FUZZ
@given(training_program(), st.integers(1, 4))
def test_generated_programs_as_notebooks_never_crash_and_fixes_are_written_back(text, cells):
    """The generated program cut into code cells at its top-level statements."""
    lines = text.splitlines(keepends=True)
    cuts = sorted({0, len(lines)} | {i for i in range(1, len(lines)) if lines[i][:1].isalpha() and i % cells == 0})
    sources = ["".join(lines[start:end]) for start, end in zip(cuts, cuts[1:])]
    data = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
                      for source in sources], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    notebook = json.dumps(data, indent=1)
    result = check_source(SourceFile(notebook, "utf-8", notebook.encode()), "fuzzed.ipynb", SELECTION, Job(Mode.FIX, unsafe=True))
    assert not [f for f in result.findings if f.code in (INTERNAL_ERROR, CUT_SHORT)], result.findings
    if result.fixed:
        json.loads(result.text)
        again = check_source(SourceFile(result.text, "utf-8", b""), "fuzzed.ipynb", SELECTION, Job(Mode.FIX, unsafe=True))
        assert again.text == result.text


def test_a_name_assigned_its_own_value_and_bound_nowhere_else_does_not_crash():
    """Found by the fuzzer: `loss = loss.clone()` where nothing else binds `loss` (ML703 followed the
    assignment into itself)."""
    assert_sound(
        "import torch.nn as nn\n\n\nclass Head(nn.Module):\n    def forward(self, x):\n"
        "        loss = loss.clone()\n        loss = loss / loss.std()\n        return x\n"
    )
