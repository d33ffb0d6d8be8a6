import ast
from functools import cached_property

from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.facets.gradients import PARAMETRISED
from mllint.analysis.syntax.names import called_name
from mllint.analysis.syntax.scopes import FUNCTION_NODES, SCOPE_NODES
from mllint.analysis.values.values import canonical_class
from mllint.rule import Rule
from mllint.analysis.syntax.tree import module_statements

MAX_CALL_DEPTH = 3  # how many calls deep from `forward` helpers are followed


class LayerBuiltInForward(Rule):
    """
    ## What it does
    Reports a layer with parameters (`nn.Linear`, `nn.Conv2d`, `nn.Embedding`, `nn.LayerNorm`, ...)
    constructed inside a module's `forward`, or in a method or function of the file that `forward`
    calls. Modules without parameters (`nn.ReLU()`, `nn.Dropout(p)`, `nn.Identity()`) and a lazy
    initialisation that stores the layer once, under a check (`if self.head is None:`), on `self` or
    through a registering call (`setattr(module, name, layer)`, `add_module`), directly or through a
    local name, are not reported.

    ## Why is this bad?
    Every call draws fresh random parameters. They are not among the parameters the optimizer was
    given, so they never train; the model's output goes through a new random layer at every step and
    is noise, and the layers before it learn nothing useful. Nothing raises: the loss just does not go
    down (or goes down only as far as the trained part can go around the random layer).

    ## Example
    ```python
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 8)

        def forward(self, x):
            head = nn.Linear(8, 1)
            return head(torch.relu(self.body(x)))
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 8)
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            return self.head(torch.relu(self.body(x)))
    ```

    ## Fix safety
    There is no fix: the layer has to move to `__init__`, with its sizes, and be held by the module.
    """

    code = "ML407"
    name = "layer-built-in-forward"
    message = (
        "`{layer}` is built {where} on every call: its fresh random parameters never train; "
        "build it once in `__init__`"
    )
    requires_any_text = ("forward",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._calls: dict[ast.AST, list[ast.Call]] = {}  # each function's own calls, walked once per file

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node not in self.ctx.analysis(ModuleClasses).modules:
            return
        methods = {f.name: f for f in node.body if isinstance(f, FUNCTION_NODES)}
        forward = methods.get("forward")
        if forward is None:
            return
        for function, guarded in self._reached(forward, methods, self._module_functions):
            where = "in `forward`" if function is forward else f"in `{function.name}`, called from `forward`,"
            for call in self._constructions(function, guarded):
                layer = canonical_class(self.ctx.qualified_name(call.func)).rsplit(".", 1)[-1]
                self.report(call, self.message.format(layer=f"nn.{layer}", where=where))

    @cached_property
    def _module_functions(self) -> dict[str, ast.AST]:
        return {f.name: f for f in module_statements(self.ctx.tree) if isinstance(f, FUNCTION_NODES)}

    def _reached(self, forward: ast.AST, methods: dict, module_functions: dict) -> list[tuple[ast.AST, bool]]:
        """`forward` and the methods (`self.block(x)`) and module functions it calls, a few calls deep,
        each with whether some check on the way may keep it from running every call (`if not self.built:
        self._build(x)`, a helper that returns early)."""
        seen, pending = {forward: False}, [(forward, 0)]
        while pending:
            function, depth = pending.pop()
            if depth >= MAX_CALL_DEPTH:
                continue
            for call in self._calls_of(function):
                func = call.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                    callee = methods.get(func.attr)
                else:
                    callee = module_functions.get(func.id) if isinstance(func, ast.Name) else None
                if callee is None or callee in seen:
                    continue
                if self._lazily_stored(call, seen[function]):
                    continue  # `self.head = self._build_head()` under a check: built once
                seen[callee] = seen[function] or _under_if(self.ctx, call) or _returns_early(callee)
                pending.append((callee, depth + 1))
        return list(seen.items())

    def _calls_of(self, function: ast.AST) -> list[ast.Call]:
        if function not in self._calls:
            self._calls[function] = _own_calls(self.ctx, function)
        return self._calls[function]

    def _constructions(self, function: ast.AST, guarded: bool):
        for call in self._calls_of(function):
            built = canonical_class(self.ctx.qualified_name(call.func))
            if built in PARAMETRISED and not self._lazily_stored(call, guarded):
                yield call

    def _lazily_stored(self, call: ast.Call, guarded: bool) -> bool:
        """Is the layer stored on `self` (`self.head = nn.Linear(...)`, `self.add_module("head", ...)`)
        under a check, so that it is built once?"""
        stored = False
        for ancestor in self.ctx.scopes.ancestors(call):
            if isinstance(ancestor, FUNCTION_NODES):
                break
            if isinstance(ancestor, ast.Assign):
                stored |= any(_on_self(t) or self._kept_on_self(t, ancestor) for t in ancestor.targets)
            elif isinstance(ancestor, ast.AnnAssign):
                stored |= _on_self(ancestor.target)
            elif isinstance(ancestor, ast.Call):
                stored |= _registers(ancestor) or _on_self(ancestor.func) or any(_on_self(a) for a in ancestor.args)
        return stored and (guarded or _under_if(self.ctx, call))

    def _kept_on_self(self, target: ast.AST, assignment: ast.Assign) -> bool:
        """`new = nn.Embedding(...)` then `self.bias = new` or `setattr(module, name, new)` in the same function."""
        function = self.ctx.scopes.enclosing_function(assignment)
        if not isinstance(target, ast.Name) or function is None:
            return False
        stored = any(
            isinstance(node.value, ast.Name) and node.value.id == target.id and any(_on_self(t) for t in node.targets)
            for node in self.ctx.index.within(function, ast.Assign)
        )  # fmt: skip
        return stored or any(
            _registers(call) and any(isinstance(a, ast.Name) and a.id == target.id for a in call.args)
            for call in self.ctx.index.within(function, ast.Call)
        )  # fmt: skip


def _under_if(ctx, node: ast.AST) -> bool:
    for ancestor in ctx.scopes.ancestors(node):
        if isinstance(ancestor, FUNCTION_NODES):
            return False
        if isinstance(ancestor, ast.If):
            return True
    return False


def _returns_early(function: ast.AST) -> bool:
    """Does the function start with `if ...: return`?"""
    first = next((s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))), None)
    return isinstance(first, ast.If) and isinstance(first.body[-1], ast.Return)


def _registers(call: ast.Call) -> bool:
    """`setattr(...)`, a `deep_setattr(...)` helper, `module.add_module(...)`, `module.register_module(...)`."""
    name = called_name(call.func) or ""
    return name.endswith("setattr") or name in ("add_module", "register_module")


def _on_self(node: ast.AST) -> bool:
    """`self.head`, `self.heads[k]`, `self.add_module`, `setattr(self, ...)`'s `self`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _own_calls(ctx, function: ast.AST) -> list[ast.Call]:
    """The calls in a function's body, not in nested functions, lambdas or classes, in the order `_reached`
    has always met them (which call of a helper reaches it first decides how it is reached): the last
    statement first, a call before the calls it holds, its arguments last first. Read through the tree
    index: a call's chain of parents says whether it is the function's own, and which calls hold it."""
    parents = ctx.index.parents
    held_by: dict[ast.AST, list[ast.AST]] = {}  # the own calls in source order -> the calls around each
    for call in ctx.index.within(function, ast.Call):
        around, child, node = [], call, parents[call]
        while node is not function and not isinstance(node, SCOPE_NODES):
            if isinstance(node, ast.Call):
                around.append(node)
            child, node = node, parents[node]
        if node is function and isinstance(child, ast.stmt):  # in the body, not a decorator or a default
            held_by[call] = around
    calls, pending = [], []  # the calls in evaluation order (each after those it holds), then reversed
    for call, around in held_by.items():
        while pending and pending[-1] not in around:
            calls.append(pending.pop())
        pending.append(call)
    return (calls + pending[::-1])[::-1]
