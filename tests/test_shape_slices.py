"""The shape analysis interprets a scope only as far as the expressions asked about need
(`shape_slices`), and the answers do not depend on which expressions were asked before."""
import ast

from mllint.analysis.shapes import Shapes
from mllint.context import FileContext
from mllint.source import SourceText

SOURCE = """\
import torch


def train(loader, steps, heads):
    unrelated = helper(loader)
    batch, length, width = torch.randn(8, 16, 32).shape
    x = torch.randn(batch, length, width)
    column = torch.randn(batch, 1)
    for step in range(steps):
        if step % 2:
            x = x.transpose(1, 2)
        column = column.float()
        rows = x.view(batch, heads, length, width // heads)
    total = (column - torch.randn(batch)).mean()
    return rows, total, unrelated
"""


TREE = ast.parse(SOURCE)
EXPRESSIONS = [n for n in ast.walk(TREE) if isinstance(n, ast.expr)]


def fresh_shapes() -> Shapes:
    return FileContext("train.py", SourceText(SOURCE), TREE).analysis(Shapes)


def test_a_question_interprets_only_the_statements_it_depends_on():
    shapes = fresh_shapes()
    column = next(n for n in EXPRESSIONS if isinstance(n, ast.Name) and n.id == "column" and n.lineno == 14)
    assert shapes.shape(column) == (8, 1)
    recorded_lines = {node.lineno for node in shapes.recorded}
    assert 5 not in recorded_lines  # `unrelated = helper(loader)`: nothing asked needs it
    assert 13 not in recorded_lines  # the view: neither


def test_answers_do_not_depend_on_what_was_asked_before():
    alone = [fresh_shapes().value(node) for node in EXPRESSIONS]
    in_order, backwards = fresh_shapes(), fresh_shapes()
    assert [in_order.value(node) for node in EXPRESSIONS] == alone
    assert [backwards.value(node) for node in reversed(EXPRESSIONS)] == alone[::-1]
