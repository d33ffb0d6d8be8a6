"""The tree index's shortcuts give what walking the tree gives, on every fixture program."""
import ast
from pathlib import Path

import pytest

from mllint import source
from mllint.analysis.syntax.scopes import FUNCTION_NODES, SCOPE_NODES
from mllint.analysis.syntax.tree import child_nodes
from mllint.context import FileContext
from mllint.source import SourceText

FIXTURES = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.py"))
TYPES = (ast.Call, ast.Name, ast.Assign, ast.Attribute)


def context_of(path: Path) -> FileContext:
    text = path.read_text()
    return FileContext(str(path), SourceText(text), ast.parse(text))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.parent.name + "/" + p.name)
def test_within_is_a_filtered_walk_in_source_order(path):
    ctx = context_of(path)
    for node in ctx.index.of_type(ast.ClassDef, ast.FunctionDef, ast.For, ast.Module):
        walked = [n for n in ast.walk(node) if isinstance(n, TYPES)]
        found = ctx.index.within(node, *TYPES)
        assert sorted(map(id, found)) == sorted(map(id, walked))
        order = {n: i for i, n in enumerate(ctx.index.nodes)}
        assert [order[n] for n in found] == sorted(order[n] for n in found)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.parent.name + "/" + p.name)
def test_local_bindings_are_the_names_a_function_body_binds(path):
    ctx = context_of(path)
    for function in ctx.index.of_type(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
        body = function.body if isinstance(function.body, list) else [function.body]
        expected = {arg.arg for arg in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
        expected |= {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
        for statement in body:
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    expected.add(node.id)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    expected.add(node.name)
        assert ctx.scopes.local_bindings(function) == expected


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.parent.name + "/" + p.name)
def test_scope_indexes_match_a_walk(path):
    ctx = context_of(path)
    walked = {}
    for node in ctx.index.nodes:
        function = next((a for a in ctx.scopes.ancestors(node) if isinstance(a, FUNCTION_NODES)), None)
        assert ctx.scopes.enclosing_function(node) is function
        scope = next((a for a in ctx.scopes.ancestors(node) if isinstance(a, SCOPE_NODES)), None)
        assert ctx.scopes.enclosing_scope(node) is scope
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            walked.setdefault((function, node.id), []).append(node)
    for (function, name), reads in walked.items():
        assert ctx.scopes.reads(function, name) == reads
    for function in [None, *ctx.index.of_type(*FUNCTION_NODES)]:
        statements = ctx.scopes.statements(function)
        assert [(s.lineno, s.col_offset) for s in statements] == sorted((s.lineno, s.col_offset) for s in statements)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.parent.name + "/" + p.name)
def test_child_nodes_are_the_iterated_children_without_singletons(path):
    for node in context_of(path).index.nodes:
        expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, (ast.expr_context, ast.operator, ast.boolop, ast.unaryop))]
        assert child_nodes(node) == expected


LONG_MODULE_PIECE = '''
def step(x):
    return x + 1
if step(1):
    y = 1
else:
    y = 2
try:
    z = 3
except ValueError:
    z = 4
text = """
def not_code():
    pass
"""
values = [
1,
]
'''


def test_a_long_module_parsed_in_pieces_is_the_module_parsed_whole(monkeypatch):
    monkeypatch.setattr(source, "PIECE_LINES", 5)
    text = LONG_MODULE_PIECE * 20
    assert ast.dump(source.parse_python(text), include_attributes=True) == ast.dump(ast.parse(text), include_attributes=True)
    assert source._parse_in_pieces(text, "m.py") is not None  # it was parsed in pieces


def test_a_long_module_that_does_not_parse_reports_the_error_of_the_whole(monkeypatch):
    monkeypatch.setattr(source, "PIECE_LINES", 5)
    text = LONG_MODULE_PIECE * 10 + "def broken(:\n" + LONG_MODULE_PIECE * 10
    with pytest.raises(SyntaxError) as raised:
        source.parse_python(text)
    with pytest.raises(SyntaxError) as expected:
        ast.parse(text)
    assert (raised.value.lineno, raised.value.msg) == (expected.value.lineno, expected.value.msg)
