"""Property-based hardening: no input makes mllint raise, and fixes keep files parseable and idempotent.

Programs come from hypothesmith (valid Python from the grammar) and from random mutations of the
fixtures (deleted lines, swapped lines, truncation, inserted junk); notebooks from the notebook fixtures
with damaged JSON or IPython lines added to their cells."""
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
SELECTION = Selection.of(all_rules())
# A quick pass in the suite; MLLINT_FUZZ_EXAMPLES=5000 for a long run.
FUZZ = settings(
    max_examples=int(os.environ.get("MLLINT_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def lint(text: str):
    return lint_text(text, "fuzzed.py", SELECTION)


def assert_sound(text: str) -> None:
    findings = lint(text)
    assert not [f for f in findings if f.code == INTERNAL_ERROR], findings
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
