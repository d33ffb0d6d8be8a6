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
        parts = [p for p in (annotation.left, annotation.right) if not _is_none(p)]
        return _named_class(parts[0]) if len(parts) == 1 else None
    if isinstance(annotation, ast.Subscript):
        wrapper = (_dotted(annotation.value) or "").rpartition(".")[2]
        if wrapper == "Optional":
            return _named_class(annotation.slice)
        if wrapper == "Union" and isinstance(annotation.slice, ast.Tuple):
            parts = [p for p in annotation.slice.elts if not _is_none(p)]
            return _named_class(parts[0]) if len(parts) == 1 else None
        return None
    return annotation if _dotted(annotation) is not None else None


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
