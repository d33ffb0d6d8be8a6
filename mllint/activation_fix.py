"""A fix in the file that applies an activation, for a finding made where its output reaches a loss: the
softmax that a model's `forward` (or a helper) in `models.py` returns, fed to cross-entropy in `engine.py`.
The fix edits `models.py` (its `Fix.path`); `mllint.cross_file` applies it."""
from __future__ import annotations

import ast
import os

from mllint.analysis.losses import activation_input
from mllint.analysis.project import open_buffer
from mllint.analysis.values import Origin
from mllint.context import FileContext
from mllint.findings import Applicability, Fix
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
    returned = [
        node.value for node in ast.walk(other.tree)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and node.value.lineno == line
    ]  # fmt: skip
    for activation in returned:
        inner = activation_input(other, activation, origin.kind)
        if inner is not None:
            content = other.text(inner) if replace is None else replace(other, activation, inner)
            if content is None:
                return None
            edit = other.replace(activation, content)
            return Fix(f"{message} (in {origin.source.path})", (edit,), applicability, path=other.path)
    return None


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
    if name != "softmax":
        return None  # a sigmoid, an `nn.Softmax` module, an alias: no matching log form
    call, callee = other.text(activation), other.text(func)
    return callee[: -len("softmax")] + "log_softmax" + call[len(callee) :]
