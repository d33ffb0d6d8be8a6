"""Everything a rule may ask about the file being linted.

Shared analyses are classes taking the context; `ctx.analysis(Cls)` builds each at most once per file and
only when a rule first asks for it.
"""
from __future__ import annotations

import ast
import os
from functools import cached_property
from typing import TypeVar

from mllint.analysis.syntax.names import Names
from mllint.analysis.syntax.scopes import Scopes
from mllint.analysis.syntax.tree import TreeIndex
from mllint.budget import check as check_budget
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Related
from mllint.source import SourceText

T = TypeVar("T")


class FileContext:
    def __init__(
        self,
        path: str,
        source: SourceText,
        tree: ast.Module,
        module=None,
        real_path: str | None = None,
        project=None,
        notebook=None,
    ) -> None:
        self.path = path  # as findings show it
        self.source = source
        self.tree = tree
        self.module = module  # the `ModuleName` of the file in its project (None: not known)
        self.real_path = real_path  # the file on disk, when there is one
        self.project = project  # the `ProjectIndex` of the run (None: this file alone)
        self.read_for = project  # the `ProjectIndex` a module read for the project was read by (its star imports)
        self.notebook = notebook  # a notebook of the project read as a caller: the `Notebook` whose program this is
        self.findings: list[Finding] = []
        self._analyses: dict[type, object] = {}

    @cached_property
    def absolute_path(self) -> str:
        """The file on disk (else as findings show it) as an absolute path: asked per call site searched."""
        return os.path.abspath(self.real_path or self.path)

    @cached_property
    def real_file(self) -> str:
        """The file on disk with its links resolved: one module read under two names is one file."""
        return os.path.realpath(self.real_path or self.path)

    def analysis(self, cls: type[T]) -> T:
        check_budget()
        found = self._analyses.get(cls)
        if found is None:
            found = self._analyses[cls] = cls(self)
        return found  # type: ignore[return-value]

    def release(self) -> None:
        """Let the analyses go: they refer back to the context, a cycle only the garbage collector frees."""
        self._analyses.clear()

    # Shortcuts to the analyses every rule needs.
    def qualified_name(self, expr: ast.AST) -> str | None:
        return self.analysis(Names).qualified_name(expr)

    @property
    def index(self) -> TreeIndex:
        """Every node in source order, parents, nodes by type: built once, shared by all."""
        return self.analysis(TreeIndex)

    @property
    def scopes(self) -> Scopes:
        return self.analysis(Scopes)

    # Positions and text.
    def start(self, node: ast.AST) -> Position:
        return self.source.position(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> Position:
        return self.source.position(node.end_lineno, node.end_col_offset)

    def text(self, node: ast.AST) -> str:
        return self.source.slice(self.start(node), self.end(node))

    def place(self, node: ast.AST) -> str:
        """`train.py:31`: a line named in a message about another line, by the file's name so that it can be
        found from anywhere (`line 31` in a notebook, whose lines are its cells')."""
        if self.notebook is not None or self.path.endswith(".ipynb"):
            return f"line {node.lineno}"
        return f"{os.path.basename(self.path)}:{node.lineno}"

    def replace(self, node: ast.AST, content: str) -> Edit:
        return Edit(self.start(node), self.end(node), content)

    def insert_before(self, node: ast.AST, content: str) -> Edit:
        start = self.start(node)
        return Edit(start, start, content)

    def insert_after(self, node: ast.AST, content: str) -> Edit:
        end = self.end(node)
        return Edit(end, end, content)

    @staticmethod
    def fix(message: str, applicability: Applicability, *edits: Edit) -> Fix:
        return Fix(message, tuple(edits), applicability)

    def add_finding(self, rule, node: ast.AST, message: str, fix: Fix | None, related: tuple[Related, ...] = ()) -> None:
        self.findings.append(
            Finding(
                path=self.path,
                start=self.start(node),
                end=self.end(node),
                code=rule.code,
                name=rule.name,
                message=message,
                severity=rule.severity,
                fix=fix,
                noqa_line=node.lineno,
                related=related,
            )
        )
