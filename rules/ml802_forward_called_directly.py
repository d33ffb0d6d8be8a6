import ast
from functools import cached_property

from mllint.analysis.program.callers import Callers
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.values.values import ValueKinds, canonical_class
from mllint.findings import Applicability
from mllint.rule import Rule

PLAIN_BASES = {"abc.ABC", "typing.Generic"}


class ForwardCalledDirectly(Rule):
    """
    ## What it does
    Opt-in (enable it by its code). Reports `model.forward(x)` called on a module object from outside that module's own methods.
    `super().forward(x)`, `self.forward(x)` and explicit base calls (`Base.forward(self, x)`: a capitalised
    name, unless it is bound only to calls, as `self.D = D.to(device)` or `G = Generator()` are, or is a parameter
    every call site fills with a module it made, `def critic_scores(D, x)`) are fine,
    and so is `forward` called on an object of a project class that is not a module (a plain class
    with a `forward` method, a `torch.autograd.Function`): there it is the only way to call it. When the
    object's class is unknown and the file defines a plain class with a `forward` (bases none, `object`
    or `ABC`), nothing is reported either: the object may be one of those.

    ## Why is this bad?
    Calling a module (`model(x)`) runs its forward and pre-forward hooks around `forward`; calling
    `forward` directly skips them. Hooks are how feature extractors, pruning, quantization observers,
    `torch.utils.checkpoint` wrappers, FSDP and many profilers work, so they silently stop working.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 2)
    outputs = model.forward(torch.randn(3, 4))
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(4, 2)
    outputs = model(torch.randn(3, 4))
    ```

    ## Fix safety
    The fix calls the module itself (`model(x)`). It is safe for modules; for an object whose class
    defines `forward` but is not a module, calling it may not be defined, which is why only names and
    attributes of objects, never classes or `self`, are reported.
    """

    code = "ML802"
    name = "forward-called-directly"
    message = "`{call}` skips the module's hooks: call `{receiver}(...)`"
    fix_applicability = Applicability.SAFE
    requires_any_text = ("torch",)
    # Framework code calls `forward` on purpose (graph modules, RPC and C++ modules, DDP internals): on the
    # torch sources most findings were deliberate. For training scripts, enable it with its code.
    opt_in = True
    opt_in_reason = "framework code calls `forward` on purpose (graph modules, DDP internals, autograd Functions)"

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "forward"):
            return
        receiver = func.value
        if not isinstance(receiver, (ast.Name, ast.Attribute)) or _is_self(receiver) or self._is_class_like(node, receiver):
            return
        if self.ctx.qualified_name(receiver) is not None:
            return  # an imported class or module: `nn.Linear.forward(self, x)`
        if self._may_be_plain_object(receiver):
            return
        text = self.ctx.text(receiver)
        fix = self.ctx.fix(f"Call `{text}(...)`", Applicability.SAFE, self.ctx.replace(func, text))
        self.report(node, self.message.format(call=f"{text}.forward(...)", receiver=text), fix)

    def _is_class_like(self, call: ast.Call, receiver: ast.AST) -> bool:
        """`Base.forward(self, x)` names a class: by convention, a capitalised name, unless every value it
        is bound to is made by a call or holds such a module, and the call passes no `self` (`self.D = D.to(device)`,
        `G = Generator()`, `def critic_scores(D, real):`)."""
        name = receiver.id if isinstance(receiver, ast.Name) else receiver.attr
        if not name[:1].isupper():
            return False
        if any(_is_self(argument) for argument in call.args[:1]):
            return True
        if isinstance(receiver, ast.Name) and self._is_parameter(receiver):
            return False
        assigned = self.ctx.analysis(ValueKinds).assigned_values(receiver)
        return not (assigned and all(isinstance(v, ast.Call) or self._holds_made_module(v) for v in assigned))

    def _holds_made_module(self, value: ast.AST) -> bool:
        """A name bound to another that holds a made module: a filled parameter, or a name bound only to calls
        (`D = disc` after `disc = spectral_norm(nn.Linear(8, 1))`)."""
        return isinstance(value, ast.Name) and (self._is_parameter(value) or _made(self.ctx, value))

    def _is_parameter(self, name: ast.Name) -> bool:
        """A parameter every call site fills with an object it made (`critic_scores(D, ...)` with `D =
        Discriminator()`; `self.D = D` of `GAN(Discriminator(), G)`), not a class."""
        function = self.ctx.scopes.enclosing_function(name)
        if function is None or name.id not in {a.arg for a in parameters(function)}:
            return False
        passed = [b.argument(name.id) for b in self.ctx.analysis(Callers).bindings(function) if b.site is not None]
        return bool(passed) and all(p is not None and _made(p[0], p[1]) for p in passed)

    def _may_be_plain_object(self, receiver: ast.AST) -> bool:
        """Is `receiver` an object of a project class that is not a module, or of an unknown class while
        the file defines such a class with a `forward`?"""
        assigned = self.ctx.analysis(ValueKinds).assigned_values(receiver)
        classes = [self._class_of(value) for value in assigned or ()]
        if assigned and all(found is not None for found in classes):
            return not all(is_module for is_module in classes)
        return self._defines_plain_forward

    @cached_property
    def _defines_plain_forward(self) -> bool:
        """Does the file define a plain class (see `_is_plain`) with a `forward`?"""
        return any(
            self._is_plain(cls) and own_method(cls, "forward", ast.FunctionDef) is not None
            for cls in self.ctx.index.of_type(ast.ClassDef)
        )

    def _is_plain(self, cls: ast.ClassDef, depth: int = 0) -> bool:
        """Is the class a plain object: its bases are none, `object`, `ABC` or plain classes of the file?
        (A `torch.autograd.Function` is called through `apply`: its `forward` says nothing of others.)"""
        if depth > 8:
            return False
        local = self.ctx.analysis(ModuleClasses).by_name
        for base in cls.bases:
            if isinstance(base, ast.Subscript):
                base = base.value  # `Generic[T]`
            if canonical_class(self.ctx.qualified_name(base)) in PLAIN_BASES or (isinstance(base, ast.Name) and base.id == "object"):
                continue
            if not (isinstance(base, ast.Name) and base.id in local and self._is_plain(local[base.id], depth + 1)):
                return False
        return True

    def _class_of(self, value: ast.AST) -> bool | None:
        """For `Class(...)`: whether the class is a module; None when it is no project or torch class."""
        if not isinstance(value, ast.Call):
            return None
        name = canonical_class(self.ctx.qualified_name(value.func))
        if name is None:
            local = isinstance(value.func, ast.Name) and next(
                (c for c in self.ctx.index.of_type(ast.ClassDef) if c.name == value.func.id), None
            )
            return (local in self.ctx.analysis(ModuleClasses).modules) if local else None
        if name.startswith("torch.nn."):
            return True
        view = self.ctx.analysis(ProjectView)
        return view.is_module_class(name) if view.class_summary(name) is not None else None


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _made(ctx, argument: ast.AST) -> bool:
    """A call (`Discriminator()`), or a name every assignment binds to one (`D = Disc().to(device)`)."""
    if isinstance(argument, ast.Name):
        values = ctx.analysis(ValueKinds).assigned_values(argument)
        return bool(values) and all(isinstance(v, ast.Call) for v in values)
    return isinstance(argument, ast.Call)
