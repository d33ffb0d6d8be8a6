"""The layering of `mllint/analysis`: each module imports only from its own layer or the layers below it,
no import hides inside a function, and the imports form no cycle.

Bottom to top (see `/work/shared/style-examples.md`):
- base: positions, findings, source text and notebooks, the analysis budget, which know no analysis;
- syntax: the tree index, scopes, qualified names;
- file: the `FileContext` every analysis is given (its shortcuts read the syntax layer);
- values: what an expression holds from its own module's code (type annotations too), which classes are
  nn.Modules, the torch tables of optimizers and library models;
- program: module summaries (program facts only), the project index and view, callees and call sites;
- facets: mode-dependent layers, modes, gradients, parameters, losses, the training loop, objectives,
  shapes. A facet keeps what it works out about another module's definitions with that module's summary
  (`summaries.ClassSummary.fact`), so the program layer never imports a facet.

A module may import a module of its own layer (the cycle check keeps those in one order): modes build on
layers, callers on the project, shapes on the shape tables. The rules sit above every layer; nothing here
imports them.
"""
from __future__ import annotations

import ast
from pathlib import Path

from mllint.analysis.project import ModuleName
from mllint.analysis.summaries import ModuleSummary
from mllint.context import FileContext
from mllint.source import SourceText, parse_python

ROOT = Path(__file__).resolve().parent.parent
ANALYSIS = "mllint.analysis"
LAYERS: list[tuple[str, list[str]]] = [
    ("base", ["mllint.findings", "mllint.source", "mllint.notebook", "mllint.budget"]),
    ("syntax", ["tree", "scopes", "scope_groups", "names"]),
    ("file", ["mllint.context"]),
    ("values", ["values", "annotations", "optimizers", "library_models"]),
    ("program", ["summaries", "project", "classes", "calls", "callers"]),
    ("facets", [
        "layers", "modes", "gradients", "detached", "parameters", "meters", "losses", "loops", "objectives",
        "dims", "tensor_values", "layer_shapes", "data_shapes", "shapes", "leakage", "selection", "loss_terms",
    ]),
]  # fmt: skip


def qualified(module: str) -> str:
    return module if module.startswith("mllint.") else f"{ANALYSIS}.{module}"


LAYER_OF = {qualified(module): (level, name) for level, (name, modules) in enumerate(LAYERS) for module in modules}


def source_of(module: str) -> str:
    parts = module.split(".")
    path = ROOT.joinpath(*parts).with_suffix(".py")
    return path.read_text(encoding="utf-8")


def analysis_modules() -> list[str]:
    return sorted(f"{ANALYSIS}.{p.stem}" for p in (ROOT / "mllint" / "analysis").glob("*.py") if p.stem != "__init__")


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
    return f"{base}.{name}" if base in ("mllint", ANALYSIS, "mllint.rules") else base


def violations(sources: dict[str, str]) -> list[str]:
    """What breaks the layering among `sources` (module -> its text), one readable line each."""
    problems: list[str] = []
    graph: dict[str, list[str]] = {}
    for module, source in sources.items():
        if module not in LAYER_OF:
            problems.append(f"{module} is in no layer: add it to LAYERS in tests/test_layering.py")
            continue
        level, layer = LAYER_OF[module]
        graph[module] = []
        for line, imported, enclosing in imports(module, source):
            where = f"{module}:{line} imports {imported}"
            if enclosing is not None:
                problems.append(f"{where} inside `{getattr(enclosing, 'name', 'lambda')}`: import at the top of the module")
            if imported == "mllint.rules" or imported.startswith(("mllint.rules.", "rules")):
                problems.append(f"{where}: the analyses never import the rules")
            elif imported not in LAYER_OF:
                problems.append(f"{where}, which is in no layer of the analyses")
            else:
                graph[module].append(imported)
                if LAYER_OF[imported][0] > level:
                    problems.append(f"{where} ({LAYER_OF[imported][1]}), a layer above its own ({layer})")
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


def test_every_analysis_module_has_a_layer():
    assert [m for m in analysis_modules() if m not in LAYER_OF] == []
    assert [m for m in LAYER_OF if m.startswith(ANALYSIS) and m not in analysis_modules()] == []


def test_the_analyses_are_layered():
    modules = [*analysis_modules(), *(m for m in LAYER_OF if not m.startswith(ANALYSIS))]
    assert violations({module: source_of(module) for module in modules}) == []


def test_the_rules_read_the_analyses_from_above():
    read = {
        name
        for rule in (ROOT / "rules").glob("ml*.py")
        for _, name, _ in imports(f"mllint.rules.{rule.stem}", rule.read_text(encoding="utf-8"))
        if name.startswith(ANALYSIS)
    }
    assert read and sorted(read - set(LAYER_OF)) == []


def test_a_broken_layering_is_named_import_by_import():
    sources = {
        f"{ANALYSIS}.values": "from mllint.analysis.project import ProjectView\n",
        f"{ANALYSIS}.summaries": "def mode_layers(ctx):\n    from mllint.analysis.layers import ModeLayers\n",
        f"{ANALYSIS}.layers": "from mllint.analysis.modes import Modes\nfrom mllint.rules import ml301\n",
        f"{ANALYSIS}.modes": "from . import layers\nimport mllint.engine\n",
        f"{ANALYSIS}.newcomer": "",
    }
    assert violations(sources) == [
        f"{ANALYSIS}.values:1 imports {ANALYSIS}.project (program), a layer above its own (values)",
        f"{ANALYSIS}.summaries:2 imports {ANALYSIS}.layers inside `mode_layers`: import at the top of the module",
        f"{ANALYSIS}.summaries:2 imports {ANALYSIS}.layers (facets), a layer above its own (program)",
        f"{ANALYSIS}.layers:2 imports mllint.rules.ml301: the analyses never import the rules",
        f"{ANALYSIS}.modes:2 imports mllint.engine, which is in no layer of the analyses",
        f"{ANALYSIS}.newcomer is in no layer: add it to LAYERS in tests/test_layering.py",
        f"import cycle: {ANALYSIS}.layers -> {ANALYSIS}.modes -> {ANALYSIS}.layers",
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
