"""A fix in the file that applies an activation, for a finding made where its output reaches a loss: the
softmax that a model's `forward` (or a helper) in `models.py` returns, fed to cross-entropy in `engine.py`.
The fix edits `models.py` (its `Fix.path`); `mllint.cross_file` applies it."""
from __future__ import annotations

import ast
import os

from mllint.analysis.facets.losses import activation_input
from mllint.analysis.program.project import open_buffer
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.values.values import Origin
from mllint.context import FileContext
from mllint.findings import Applicability, Edit, Fix, Position
from mllint.source import SourceError, SourceText, is_notebook, parse_python, read_source


def activation_fix_in_source(ctx, origin: Origin, message: str, applicability: Applicability, replace=None) -> Fix | None:
    """Replace the activation that makes the value at its source, in another file of the project, by its
    input (or by `replace(source_ctx, activation, input)`): only an activation the function returns
    directly (`return F.softmax(x, dim=1)`), whose output is what every caller of the function gets, and
    not in a notebook (on either side)."""
    source = origin.source
    if source is None or not source.path.endswith(".py") or origin.mixture or is_notebook(ctx.path):
        return None
    path = _file_of(ctx, source.path)
    try:
        text = open_buffer(path) or read_source(path).text
        tree = parse_python(text)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    other = FileContext(path, SourceText(text), tree, project=ctx.project, real_path=path)
    try:
        return _fix_returned(other, source.line, origin, message, applicability, replace)
    finally:
        other.release()  # its analyses refer back to it: a cycle to break


def _fix_returned(other: FileContext, line: int, origin: Origin, message, applicability, replace) -> Fix | None:
    for activation, target in _returned_activations(other.tree, line):
        inner = activation_input(other, activation, origin.kind)
        if inner is None:
            continue
        content = other.text(inner) if replace is None else replace(other, activation, inner)
        if content is None:
            return None
        if target is not None and content == target.id:  # `out = F.softmax(out, dim=1)`: the line goes
            start, end = other.start(target), other.end(activation)
            if other.source.line(start.line)[: start.column - 1].strip() or other.source.line(end.line)[end.column - 1 :].strip():
                return None  # another statement or a comment shares the line
            edit = Edit(Position(start.line, 1), Position(end.line + 1, 1), "")
        else:
            edit = other.replace(activation, content)
        return Fix(f"{message} (in {origin.source.path})", (edit,), applicability, path=other.path)
    return None


def _returned_activations(tree: ast.Module, line: int) -> list[tuple[ast.Call, ast.Name | None]]:
    """The calls on `line` whose value the function returns as it is: `return F.softmax(h, dim=1)`, or
    `out = F.softmax(out, dim=1)` right before `return out` (with the name they are assigned to)."""
    found: list[tuple[ast.Call, ast.Name | None]] = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement, following in zip(body, [*body[1:], None]):
            if isinstance(statement, ast.Return) and isinstance(statement.value, ast.Call) and statement.value.lineno == line:
                found.append((statement.value, None))
            elif (
                isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.Call) and statement.value.lineno == line
                and isinstance(following, ast.Return) and isinstance(following.value, ast.Name)
                and following.value.id == statement.targets[0].id
            ):  # fmt: skip
                found.append((statement.value, statement.targets[0]))
    return found


def _file_of(ctx, shown: str) -> str:
    """The file a message names (`models.py`): relative to the linted file's directory when it is there,
    else to the working directory (`ProjectView.display_path`); as a path relative to the working
    directory when below it, else absolute."""
    here = os.path.join(os.path.dirname(os.path.abspath(ctx.real_path or ctx.path)), shown)
    absolute = here if os.path.isfile(here) else os.path.abspath(shown)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith("..") else relative


def log_softmax_in_source(ctx, origin: Origin, message: str) -> Fix | None:
    """`return F.softmax(h, dim=1)` -> `return F.log_softmax(h, dim=1)` in the other file (unsafe)."""
    return activation_fix_in_source(ctx, origin, message, Applicability.UNSAFE, _as_log_softmax)


def _as_log_softmax(other: FileContext, activation: ast.Call, inner: ast.AST) -> str | None:
    func = activation.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "softmax" or is_self_attribute(func):
        return None  # a sigmoid, an `nn.Softmax` module (`self.softmax`), an alias: no matching log form
    call, callee = other.text(activation), other.text(func)
    return callee[: -len("softmax")] + "log_softmax" + call[len(callee) :]
