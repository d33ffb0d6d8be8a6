"""Type annotations as values: `def train(model: Classifier)` holds an instance of `Classifier`.

`Annotations(ctx).instance(parameter)` is the class a parameter's annotation names, written as the call
that would build it (`Classifier()`, positioned on the annotation): `callers` passes it where no call site
tells what the parameter holds, and the value analyses read it as they read any constructor call.
`Optional[X]`, `Union[X, None]`, `X | None` and a string `"X"` name `X`; anything else (a union of
classes, `Any`, a generic) names nothing. Whether the name is a class worth reading (of the project, or
of torch) is for the caller to ask.
"""
from __future__ import annotations

import ast

from mllint.analysis.syntax.names import reference_key


class Annotations:
    """The annotated parameters of a file's functions (an analysis: `ctx.analysis(Annotations)`)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._instances: dict[ast.arg, ast.Call | None] = {}

    def instance(self, parameter: ast.arg) -> ast.Call | None:
        """`Classifier()` for `model: Classifier`, made once per parameter; None: no single class named."""
        if parameter not in self._instances:
            named = _named_class(parameter.annotation) if parameter.annotation is not None else None
            self._instances[parameter] = None if named is None else ast.copy_location(ast.Call(named, [], []), named)
        return self._instances[parameter]


def _named_class(annotation: ast.AST) -> ast.AST | None:
    """The one class expression an annotation names, if any."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            parsed = ast.parse(annotation.value.strip(), mode="eval").body
        except SyntaxError:
            return None
        for node in ast.walk(parsed):  # the string's place stands for its parts
            ast.copy_location(node, annotation)
        return _named_class(parsed)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        parts = [p for p in (annotation.left, annotation.right) if not is_none(p)]
        return _named_class(parts[0]) if len(parts) == 1 else None
    if isinstance(annotation, ast.Subscript):
        wrapper = (reference_key(annotation.value) or "").rpartition(".")[2]
        if wrapper == "Optional":
            return _named_class(annotation.slice)
        if wrapper == "Union" and isinstance(annotation.slice, ast.Tuple):
            parts = [p for p in annotation.slice.elts if not is_none(p)]
            return _named_class(parts[0]) if len(parts) == 1 else None
        return None
    return annotation if reference_key(annotation) is not None else None


def is_none(node: ast.AST) -> bool:
    """`None` written as a constant (in `Optional` unions and defaults)."""
    return isinstance(node, ast.Constant) and node.value is None
