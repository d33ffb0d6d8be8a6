"""The rule API.

A rule is a subclass of `Rule` in its own module under `rules/`. It declares its code, name, message and
severity as class attributes and documents itself in its docstring (What it does / Why is this bad? /
Example / Use instead / Fix safety). It checks a file by defining `visit_<NodeClass>(self, node)` methods,
which the engine calls during its single traversal of the file's `ast` tree, and optionally `end_file(self)`.
It reports through `self.report(...)`, and queries shared analyses through `self.ctx`.

Meta rules (ML0xx) set `event` instead: the engine reports them when that event happens (a file that
cannot be parsed, an unused `# noqa`, ...), so that the engine itself knows no rule by name.
"""
from __future__ import annotations

import ast
import inspect
import re
from typing import TYPE_CHECKING, ClassVar

from mllint.findings import Applicability, Fix, Related, Severity

if TYPE_CHECKING:
    from mllint.context import FileContext

CODE_PATTERN = re.compile(r"^ML\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety")
# The end of a sentence: a full stop before a capital letter or the end of the text.
SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z`]|\s*$)")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    # The most a fix of this rule may be (None: the rule never fixes).
    fix_applicability: ClassVar[Applicability | None] = None
    # Meta rules: the engine event this rule reports (see mllint.engine.Event).
    event: ClassVar[str | None] = None
    # Too imprecise on real code to be on by default: enabled only by its exact code or `ALL`.
    opt_in: ClassVar[bool] = False
    # Why an opt-in rule is not on by default (the README's rule table says it).
    opt_in_reason: ClassVar[str] = ""
    # A sound pre-filter: the rule is skipped for a file whose text contains none of these strings
    # (a rule that only reports torch APIs resolved through imports can name "torch").
    requires_any_text: ClassVar[tuple[str, ...]] = ()
    # Reported whatever the selection says (files that cannot be linted, mllint's own errors).
    mandatory: ClassVar[bool] = False
    # Reports that mllint could not check a file (not a problem of the code): SARIF says so in the run's
    # tool execution notifications instead of its results.
    tool_failure: ClassVar[bool] = False

    def __init__(self, ctx: "FileContext") -> None:
        self.ctx = ctx

    def end_file(self) -> None:
        """Called once after the traversal; rules that collect facts report here."""

    def report(self, node: ast.AST, message: str | None = None, fix: Fix | None = None, related: tuple[Related, ...] = ()) -> None:
        """`related`: for a finding made through a parameter, the call sites that make it."""
        self.ctx.add_finding(type(self), node, message or self.message, fix, related)

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_section(cls, title: str) -> str:
        """The text of one `## title` section of the rule's documentation."""
        match = re.search(
            rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", cls.documentation(), re.MULTILINE | re.DOTALL
        )
        return match.group(1).strip() if match else ""

    @classmethod
    def doc_code(cls, title: str) -> str:
        """The first ```python block of a documentation section."""
        match = re.search(r"```python\n(.*?)```", cls.doc_section(title), re.DOTALL)
        return match.group(1) if match else ""

    @classmethod
    def summary(cls) -> str:
        return cls.doc_section("What it does").split("\n\n")[0].replace("\n", " ")

    @classmethod
    def description(cls, limit: int) -> str:
        """The "What it does" section on one line, cut after the last sentence that fits in `limit`."""
        text = " ".join(cls.doc_section("What it does").split())
        return text if len(text) <= limit else text[: max(sentence_ends(text[:limit]), default=limit)]

    @classmethod
    def first_sentence(cls) -> str:
        """What the rule reports, in one sentence (past an opt-in rule's note that it is one)."""
        text = cls.summary()
        ends = sentence_ends(text)
        if cls.opt_in and text.startswith("Opt-in") and len(ends) > 1:
            return text[ends[0] : ends[1]].strip()
        return text[: min(ends, default=len(text))]


def sentence_ends(text: str) -> list[int]:
    """The positions just after each sentence of a text (full stops in `code` end none)."""
    return [m.end() for m in SENTENCE_END.finditer(text) if text.count("`", 0, m.start()) % 2 == 0]
