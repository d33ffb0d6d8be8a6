import pytest

from mllint.engine import Selection, lint_text
from mllint.fixer import fix_text
from mllint.registry import all_rules


@pytest.fixture
def lint():
    """Lint a source text with the given codes (default: every rule)."""

    def run(text: str, *codes: str, path: str = "example.py"):
        return lint_text(text, path, Selection.of(codes or all_rules()))

    return run


@pytest.fixture
def fix():
    """The text after applying the fixes of the given codes (default: every rule)."""

    def run(text: str, *codes: str, unsafe: bool = False):
        selection = Selection.of(codes or all_rules())
        return fix_text(text, lambda t: lint_text(t, "example.py", selection), unsafe).text

    return run
