"""The tree index's shortcuts give what walking the tree gives, on every fixture program."""
import ast
from pathlib import Path

import pytest

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
