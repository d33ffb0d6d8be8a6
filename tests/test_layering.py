"""The layering of `mllint/analysis`: each module sits in the folder of its layer, imports only from its
own layer or the layers below it, no import hides inside a function, and the imports form no cycle.

Bottom to top (see `/work/shared/style-examples.md`):
- base: positions, findings, source text and notebooks, the analysis budget, which know no analysis;
- syntax (`analysis/syntax/`): the tree index, scopes, qualified names;
- file: the `FileContext` every analysis is given (its shortcuts read the syntax layer);
- values (`analysis/values/`): what an expression holds from its own module's code (type annotations
  too), the torch tables of optimizers and library models;
- program (`analysis/program/`): module summaries (program facts only), the project index and view,
  which classes are nn.Modules, callees and call sites;
- objects (`analysis/objects/`): abstract objects named by where they are made, and which of them an
  expression may be (points-to);
- facets (`analysis/facets/`): mode-dependent layers, modes, gradients, parameters, losses, the training
  loop, objectives, shapes. A facet keeps what it works out about another module's definitions with that
  module's summary (`summaries.ClassSummary.fact`), so the program layer never imports a facet.

A module may import a module of its own layer (the cycle check keeps those in one order): modes build on
layers, callers on the project, shapes on the shape tables. The rules sit above every layer; nothing here
imports them.
"""
from __future__ import annotations

import ast
from pathlib import Path

from mllint.analysis.program.project import ModuleName
from mllint.analysis.program.summaries import ModuleSummary
from mllint.context import FileContext
from mllint.source import SourceText, parse_python

ROOT = Path(__file__).resolve().parent.parent
ANALYSIS = "mllint.analysis"
# Bottom to top: a layer of the analyses is a folder of `mllint/analysis`; the others are modules of mllint.
LAYERS: list[tuple[str, list[str]]] = [
    ("base", ["mllint.findings", "mllint.source", "mllint.notebook", "mllint.budget"]),
    ("syntax", []),
    ("file", ["mllint.context"]),
    ("values", []),
    ("program", []),
    ("objects", []),
    ("facets", []),
]
FOLDERS = {name for name, modules in LAYERS if not modules}
LEVEL = {name: level for level, (name, _) in enumerate(LAYERS)}
EXPLICIT = {module: (LEVEL[name], name) for name, modules in LAYERS for module in modules}


def layer_of(module: str) -> tuple[int, str] | None:
    """(level, layer) of a module: its folder's, for a module of the analyses."""
    if module in EXPLICIT:
        return EXPLICIT[module]
    parts = module.split(".")
    if len(parts) == 4 and module.startswith(ANALYSIS + ".") and parts[2] in FOLDERS:
        return LEVEL[parts[2]], parts[2]
    return None


def source_of(module: str) -> str:
    parts = module.split(".")
    path = ROOT.joinpath(*parts).with_suffix(".py")
    return path.read_text(encoding="utf-8")


def analysis_modules() -> list[str]:
    root = ROOT / "mllint" / "analysis"
    return sorted(
        ".".join((ANALYSIS, *p.relative_to(root).with_suffix("").parts)) for p in root.rglob("*.py") if p.stem != "__init__"
    )


def imports(module: str, source: str) -> list[tuple[int, str, ast.AST | None]]:
    """(line, imported mllint module, the function or class around the import or None) of each import."""
    found: list[tuple[int, str, ast.AST | None]] = []

    def visit(node: ast.AST, enclosing: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) else enclosing
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name, enclosing) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(module, child)
                # `from mllint.analysis import values` imports a module, `from mllint.source import x` a name
                targets = dict.fromkeys(_submodule(base, alias.name) for alias in child.names)
                found.extend((child.lineno, target, enclosing) for target in targets)
            visit(child, inner)

    visit(ast.parse(source), None)
    return [(line, name, enclosing) for line, name, enclosing in found if name.split(".")[0] in ("mllint", "rules")]


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")[: -node.level]
    return ".".join(package + ([node.module] if node.module else []))


def _submodule(base: str, name: str) -> str:
    packages = ("mllint", ANALYSIS, "mllint.rules", *(f"{ANALYSIS}.{folder}" for folder in FOLDERS))
    return f"{base}.{name}" if base in packages else base


def violations(sources: dict[str, str]) -> list[str]:
    """What breaks the layering among `sources` (module -> its text), one readable line each."""
    problems: list[str] = []
    graph: dict[str, list[str]] = {}
    for module, source in sources.items():
        if layer_of(module) is None:
            problems.append(f"{module} is in no layer: move it to the folder of its layer (mllint/analysis/LAYER/)")
            continue
        level, layer = layer_of(module)
        graph[module] = []
        for line, imported, enclosing in imports(module, source):
            where = f"{module}:{line} imports {imported}"
            if enclosing is not None:
                problems.append(f"{where} inside `{getattr(enclosing, 'name', 'lambda')}`: import at the top of the module")
            if imported == "mllint.rules" or imported.startswith(("mllint.rules.", "rules")):
                problems.append(f"{where}: the analyses never import the rules")
            elif layer_of(imported) is None:
                problems.append(f"{where}, which is in no layer of the analyses")
            else:
                graph[module].append(imported)
                if layer_of(imported)[0] > level:
                    problems.append(f"{where} ({layer_of(imported)[1]}), a layer above its own ({layer})")
    return problems + [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(graph)]


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Cycles of imports, each as a path back to its start: at least one while any cycle remains."""
    found: list[list[str]] = []
    state: dict[str, str] = {}  # module -> "open" while on the path, "done" after

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in graph.get(module, ()):
            if state.get(imported) == "open":
                found.append(path[path.index(imported) :] + [module, imported])
            elif imported not in state:
                visit(imported, path + [module])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    return found


def test_every_analysis_module_is_in_the_folder_of_a_layer():
    assert [m for m in analysis_modules() if layer_of(m) is None] == []
    assert all(analysis_modules() and any(m.split(".")[2] == folder for m in analysis_modules()) for folder in FOLDERS)


def test_the_analyses_are_layered():
    modules = [*analysis_modules(), *EXPLICIT]
    assert violations({module: source_of(module) for module in modules}) == []


def test_the_rules_read_the_analyses_from_above():
    read = {
        name
        for rule in (ROOT / "rules").glob("ml*.py")
        for _, name, _ in imports(f"mllint.rules.{rule.stem}", rule.read_text(encoding="utf-8"))
        if name.startswith(ANALYSIS)
    }
    assert read and sorted(m for m in read if layer_of(m) is None) == []


def test_a_broken_layering_is_named_import_by_import():
    values, summaries, layers, modes = (f"{ANALYSIS}.{m}" for m in ("values.values", "program.summaries", "facets.layers", "facets.modes"))
    sources = {
        values: "from mllint.analysis.program.project_view import ProjectView\n",
        summaries: "def mode_layers(ctx):\n    from mllint.analysis.facets.layers import ModeLayers\n",
        layers: "from mllint.analysis.facets.modes import Modes\nfrom mllint.rules import ml301\n",
        modes: "from . import layers\nimport mllint.engine\n",
        f"{ANALYSIS}.newcomer": "",
    }
    assert violations(sources) == [
        f"{values}:1 imports {ANALYSIS}.program.project_view (program), a layer above its own (values)",
        f"{summaries}:2 imports {layers} inside `mode_layers`: import at the top of the module",
        f"{summaries}:2 imports {layers} (facets), a layer above its own (program)",
        f"{layers}:2 imports mllint.rules.ml301: the analyses never import the rules",
        f"{modes}:2 imports mllint.engine, which is in no layer of the analyses",
        f"{ANALYSIS}.newcomer is in no layer: move it to the folder of its layer (mllint/analysis/LAYER/)",
        f"import cycle: {layers} -> {modes} -> {layers}",
    ]


def test_a_facet_keeps_what_it_works_out_with_the_summary_it_asks():
    text = "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n\n\ndef build():\n    return Net()\n"
    ctx = FileContext("models.py", SourceText(text), parse_python(text), ModuleName("pkg.models", False), "models.py")
    summary = ctx.analysis(ModuleSummary)
    asked: list[str] = []

    def named(ctx, node: ast.AST) -> str:
        asked.append(node.name)
        return node.name.upper()

    def too_deep(ctx, node: ast.AST) -> str:
        raise RecursionError

    assert [summary.classes["Net"].fact(named), summary.functions["build"].fact(named)] == ["NET", "BUILD"]
    assert summary.classes["Net"].fact(named) == "NET" and asked == ["Net", "build"]  # worked out once
    assert summary.functions["build"].fact(too_deep) is None
