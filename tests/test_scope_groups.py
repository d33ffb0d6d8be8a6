"""`ScopeGroups`: a scope's nodes grouped by key once, then ranges of them by position."""
import ast

from mllint.analysis.syntax.scope_groups import ScopeGroups, dotted_prefixes, end, start
from mllint.context import FileContext
from mllint.source import SourceText

SOURCE = """\
optimizer = make(model)
optimizer.step()
def train():
    optimizer.step()
optimizer = make(model)
print(optimizer)
"""


def _loaded(ctx, name: ast.Name) -> list[str]:
    return [name.id] if isinstance(name.ctx, ast.Load) else []


def test_groups_give_the_nodes_of_a_key_between_two_positions():
    ctx = FileContext("example.py", SourceText(SOURCE), ast.parse(SOURCE))
    loads = ctx.analysis(ScopeGroups).of(ctx.tree, (ast.Name,), _loaded)
    first, second = (s for s in ctx.tree.body if isinstance(s, ast.Assign))
    assert [n.lineno for n in loads.between("optimizer")] == [2, 4, 6]
    assert [n.lineno for n in loads.between("optimizer", after=end(first), before=start(second))] == [2, 4]
    assert [n.lineno for n in loads.between("optimizer", before=start(second), reverse=True)] == [4, 2]
    assert list(loads.between("missing")) == []
    assert ctx.analysis(ScopeGroups).of(ctx.tree, (ast.Name,), _loaded) is loads  # built once


def test_dotted_prefixes_are_what_a_text_starts_with_before_a_dot():
    assert dotted_prefixes("self.model.head") == ["self", "self.model"]
    assert dotted_prefixes('heads["a.b"].fc') == ['heads["a', 'heads["a.b"]']
    assert dotted_prefixes("model") == []
