"""Which scopes of a file the mode flows must run (`CallGraph`), worked out before any flow: who calls
which function of the file, where modes are set and models built, and which names are read in ways that
may run a model. `Modes` builds it once (`build_call_graph`) for its cheap tests.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from mllint.analysis.facets.mode_facts import BUILTIN_NAMES, FUNCTIONS, SAME_MODULE, strip_same_module
from mllint.analysis.syntax.tree import assignment_targets

ITEM_READS = ("items", "values", "get")  # methods of a container of models that hand its models out

@dataclass
class CallGraph:
    """What `Modes` needs of the file before any flow: who calls which function of the file, where modes
    are set and models built, and which names are read in ways that may run a model."""

    callers: dict[ast.AST, set[ast.AST]] = field(default_factory=dict)  # function -> the scopes calling it
    setting: set[ast.AST] = field(default_factory=set)  # scopes calling `.train(...)`/`.eval()`
    handing_out: set[ast.AST] = field(default_factory=set)  # scopes whose values their callers may see
    built: list[tuple[ast.AST, ast.AST, ast.Call]] = field(default_factory=list)  # (statement, scope, call)
    candidates: set[str] = field(default_factory=set)  # the names `built` assigns
    read_as_model: set[str] = field(default_factory=set)  # those of them `Modes._read_as_model` keeps
    model_calls_of: dict[ast.AST, list[ast.Call]] = field(default_factory=dict)  # scope -> its calls that may run a model
    calling_model_helpers: set[ast.AST] = field(default_factory=set)  # scopes calling functions that make some
    calls_of: dict[ast.AST, list[ast.Call]] = field(default_factory=dict)  # scope -> the calls it makes
    bindings_of: dict[ast.AST, list[ast.AST]] = field(default_factory=dict)  # scope -> its assignments and for loops


def closure(start: set[ast.AST], callers: dict[ast.AST, set[ast.AST]]) -> set[ast.AST]:
    """`start` and every scope that calls one of them, directly or not."""
    found, stack = set(start), list(start)
    while stack:
        for caller in callers.get(stack.pop(), ()):
            if caller not in found:
                found.add(caller)
                stack.append(caller)
    return found


def build_call_graph(modes) -> CallGraph:
    """What `Modes` needs of the file before any flow (see `CallGraph`)."""
    graph = CallGraph()
    methods: dict[str, list[ast.AST]] = {}
    for cls in modes.classes.values():
        for node in cls.body:
            if isinstance(node, FUNCTIONS):
                methods.setdefault(node.name, []).append(node)
    for call in modes.ctx.index.of_type(ast.Call):
        func = call.func
        scope = modes.scopes.enclosing_function(call) or modes.ctx.tree
        graph.calls_of.setdefault(scope, []).append(call)
        if isinstance(func, ast.Attribute) and func.attr in ("train", "eval"):
            graph.setting.add(scope)  # and a class's own `eval(loader)` may be the one called (below)
        if isinstance(func, ast.Name) and func.id in modes.functions:
            graph.callers.setdefault(modes.functions[func.id], set()).add(scope)
        elif isinstance(func, ast.Attribute):
            for method in methods.get(func.attr, ()):
                graph.callers.setdefault(method, set()).add(scope)
        if may_call_a_model(modes, call, scope):
            graph.model_calls_of.setdefault(scope, []).append(call)
        if isinstance(func, ast.Attribute) and modes.wrapper_methods.get(func.attr, (modes.ctx,))[0] is not modes.ctx:
            graph.setting.add(scope)  # `model.val_start()` of a wrapper class of another module: it may switch
            graph.model_calls_of.setdefault(scope, []).append(call)  # its models' modes, and run them
    # `model = Net().to(device)`, `return nn.Sequential(...)`; not `self.fc = nn.Linear(...)`
    for node in modes.ctx.index.of_type(ast.For, ast.AsyncFor):
        graph.bindings_of.setdefault(modes.scopes.enclosing_function(node) or modes.ctx.tree, []).append(node)
    for node in modes.ctx.index.of_type(ast.Assign, ast.AnnAssign, ast.Return):
        scope = modes.scopes.enclosing_function(node) or modes.ctx.tree
        if not isinstance(node, ast.Return):
            graph.bindings_of.setdefault(scope, []).append(node)
        returns = isinstance(node, ast.Return) and node.value is not None
        if returns and modes.is_module_function(scope):
            graph.handing_out.add(scope)  # what callers read back (see `Flow._read_by_callers`)
        elif not isinstance(node, ast.Return) and any(isinstance(t, ast.Attribute) for t in assignment_targets(node)):
            graph.handing_out.add(scope)  # `modes.model = model`: what the class's other methods see
        named = isinstance(node, ast.Return) or all(isinstance(t, ast.Name) or _names_only(t) for t in assignment_targets(node))
        value = node.value if named else None
        held = value.values if isinstance(value, ast.Dict) else value.elts if isinstance(value, ast.List) else [value]
        for call in filter(None, map(strip_same_module, held)):  # `models = {"a": Net(), "b": Net()}`: each
            graph.built.append((node, scope, call))
    with_model_calls = closure(set(graph.model_calls_of), graph.callers)
    graph.calling_model_helpers = {caller for helper in with_model_calls for caller in graph.callers.get(helper, ())}
    graph.candidates = {t.id for node, _, _ in graph.built if not isinstance(node, ast.Return) for t in named_targets(node)}
    graph.read_as_model = read_as_model(modes, graph.candidates)
    return graph



def named_targets(node: ast.Assign | ast.AnnAssign) -> list[ast.Name]:
    """The names an assignment binds, those a tuple target unpacks too (`model, opt = build(cfg)`)."""
    return [n for t in assignment_targets(node) for n in (t.elts if _names_only(t) else [t]) if isinstance(n, ast.Name)]


def _names_only(target: ast.AST) -> bool:
    return isinstance(target, ast.Tuple | ast.List) and all(isinstance(e, ast.Name) for e in target.elts)


def may_call_a_model(modes, call: ast.Call, scope: ast.AST) -> bool:
    """Can a flow note `call` as a model call (see `Flow._call`): a local name (`net(x)`), a
    `.forward(...)`, or, in a method, an attribute of an object (`modes.net(x)`)?"""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in modes.functions and not (isinstance(scope, FUNCTIONS) and func.id in modes.scopes.local_bindings(scope)):
            return False  # a call of a function of the file: followed
        return func.id not in modes.classes and func.id not in BUILTIN_NAMES and modes.qualified_name(func) is None
    if not isinstance(func, ast.Attribute):
        return False
    method = isinstance(scope, FUNCTIONS) and isinstance(modes.scopes.parent(scope), ast.ClassDef)
    return func.attr == "forward" or (method and isinstance(func.value, ast.Name) and modes.qualified_name(func.value) is None)



def read_as_model(modes, names: set[str]) -> set[str]:
    """Those of `names` that some read anywhere in the file may run as a model with the mode it was
    built in. Only two reads surely do not: a method call `name.method(...)` (other than `forward`,
    `train`/`eval` or a device move), and an attribute read `name.attribute` that is not assigned."""
    found: set[str] = set()
    for name in modes.ctx.index.by_type.get(ast.Name, ()):
        if name.id in names and name.id not in found and isinstance(name.ctx, ast.Load) and not surely_not_run(modes, name):
            found.add(name.id)
    return found



def surely_not_run(modes, name: ast.Name) -> bool:
    parent = modes.scopes.parent(name)
    if not isinstance(parent, ast.Attribute) or parent.attr in ("forward", "module", "train", "eval", *SAME_MODULE, *ITEM_READS):
        return False
    holder = modes.scopes.parent(parent)
    method_call = isinstance(holder, ast.Call) and holder.func is parent
    return method_call or not isinstance(holder, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Call, ast.keyword, ast.Return))
