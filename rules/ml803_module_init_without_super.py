import ast

from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.values.library_models import is_module_base
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.tree import own_method
from mllint.findings import Severity
from mllint.rule import Rule


class ModuleInitWithoutSuper(Rule):
    """
    ## What it does
    Reports an `nn.Module` subclass whose `__init__` never calls `super().__init__()` (or a base class's
    `__init__`), itself or in a method of the class it calls (`self.make_weight(...)`). Left alone: an
    `__init__` that always raises (a deprecated class pointing to its replacement: no object is made),
    one that creates the registries itself (`self._modules = {}`, as some caches do), and one that calls
    a method inherited from a project base class (`self.setup(...)`, `super()._init(...)`), which may
    call `__init__` for it.

    ## Why is this bad?
    `Module.__init__` creates the registries for parameters, buffers and submodules. Without it, the
    first `self.layer = nn.Linear(...)` raises `AttributeError: cannot assign module before
    Module.__init__() call`, and a module that only stores plain attributes fails later in `.to()`,
    `state_dict()` or `parameters()`, far from the cause.

    ## Example
    ```python
    from torch import nn


    class Head(nn.Module):
        def __init__(self, features):
            self.features = features
    ```

    ## Use instead
    ```python
    from torch import nn


    class Head(nn.Module):
        def __init__(self, features):
            super().__init__()
            self.features = features
    ```

    ## Fix safety
    There is no fix: where the call belongs, and with which arguments, is for the author to decide.
    """

    code = "ML803"
    name = "module-init-without-super"
    message = "`{cls}.__init__` never calls `super().__init__()`: the module's registries are never created"
    severity = Severity.ERROR
    requires_any_text = ("__init__",)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node not in self.ctx.analysis(ModuleClasses).modules:
            return
        init = own_method(node, "__init__", ast.FunctionDef)
        if init is None or _is_stub(init) or _always_raises(init):
            return
        methods = {s.name: s for s in node.body if isinstance(s, ast.FunctionDef)}
        calls = self._calls(init)
        called = _self_calls(calls)
        inherited = any(name not in methods for name in called) or any(_calls_a_super_method(c) for c in calls)
        if inherited and not self._only_library_bases(node):
            return  # a method of a project base class may call `__init__` (`super()._init(...)`)
        functions = [init, *(methods[name] for name in called if name in methods and name != "__init__")]
        if not any(self._initialises(function) for function in functions):
            self.report(init, self.message.format(cls=node.name))

    def _calls(self, function: ast.FunctionDef) -> list[ast.Call]:
        return self.ctx.index.within(function, ast.Call)

    def _initialises(self, function: ast.FunctionDef) -> bool:
        """Does it call an `__init__`, or create the registries itself?"""
        return any(_calls_an_init(call) for call in self._calls(function)) or any(
            _creates_registries(assignment) for assignment in self.ctx.index.within(function, ast.Assign)
        )

    def _only_library_bases(self, node: ast.ClassDef) -> bool:
        """Are all the class's bases torch's or Lightning's, whose methods never call `__init__`?"""
        return all(is_module_base(self.ctx.qualified_name(base)) for base in node.bases)


def _is_stub(function: ast.FunctionDef) -> bool:
    """A body of only a docstring, `...` or `pass`, as in `.pyi` stubs and abstract declarations."""
    return all(
        isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in function.body
    )


def _always_raises(function: ast.FunctionDef) -> bool:
    """`raise RuntimeError("deprecated, use ...")` in the body itself: no object is ever made."""
    return any(isinstance(s, ast.Raise) for s in function.body)


def _self_calls(calls: list[ast.Call]) -> set[str]:
    """The methods called on `self` (`self.make_weight(...)`)."""
    return {call.func.attr for call in calls if is_self_attribute(call.func)}


def _calls_a_super_method(call: ast.Call) -> bool:
    """`super()._init(...)`: a base class's method other than `__init__`."""
    func = call.func
    return (
        isinstance(func, ast.Attribute) and func.attr != "__init__" and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"
    )  # fmt: skip


def _creates_registries(assignment: ast.Assign) -> bool:
    """`self._modules = {}` (or `_parameters`): the class makes `Module`'s registries itself."""
    return any(is_self_attribute(t) and t.attr in ("_modules", "_parameters") for t in assignment.targets)


def _calls_an_init(call: ast.Call) -> bool:
    """`super().__init__(...)`, `Base.__init__(self, ...)`, or `super(Cls, self).__init__(...)`."""
    return isinstance(call.func, ast.Attribute) and call.func.attr == "__init__"
