import ast

from mllint.analysis.classes import ModuleClasses
from mllint.analysis.values import ValueKinds
from mllint.findings import Applicability
from mllint.rule import Rule

OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
}  # fmt: skip
ATOMIC = (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript)
TENSOR_TYPES = {"torch.Tensor", "torch.FloatTensor", "torch.LongTensor"}


class InplaceOnForwardArgument(Rule):
    """
    ## What it does
    Reports in-place changes of a tensor argument inside a module's `forward`: augmented assignment
    (`x /= 255`), in-place methods (`x.mul_(2)`, `x.clamp_(0, 1)`) and item assignment (`x[mask] = 0`),
    while the name still holds the caller's tensor. Only tensor arguments count: those annotated as
    `torch.Tensor`, and an unannotated first argument.

    ## Why is this bad?
    The caller's tensor changes behind its back: the batch a training loop logs, reuses for a second
    model or feeds to the loss is no longer the data it loaded, and a tensor that requires grad raises
    at `backward()` hours into a run. Nothing raises at the call.

    ## Example
    ```python
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            x /= 255
            return x.flatten(1)
    ```

    ## Use instead
    ```python
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            x = x / 255
            return x.flatten(1)
    ```

    ## Fix safety
    For augmented assignment the fix rebinds the name to a new tensor (`x = x / 255`); it is safe: the
    module computes the same result, and only the unintended change of the caller's tensor goes away.
    In-place methods and item assignment are reported without a fix.
    """

    code = "ML401"
    name = "inplace-on-forward-argument"
    message = "in-place change of the forward argument `{name}` changes the caller's tensor"
    fix_applicability = Applicability.SAFE

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name != "forward" or self.ctx.analysis(ModuleClasses).method_of_module(node, self.ctx) is None:
            return
        tensors = self._tensor_parameters(node)
        if not tensors:
            return
        for statement in _statements(node):
            if isinstance(statement, ast.AugAssign) and self._is_argument(statement.target, tensors):
                self._report_augmented(statement)
            elif isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if _indexes_a_tensor(target) and self._is_argument(target.value, tensors):
                        self.report(target, self.message.format(name=target.value.id))
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
                func = statement.value.func
                inplace = isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_")
                if inplace and self._is_argument(func.value, tensors):
                    self.report(statement.value, self.message.format(name=func.value.id))

    def _tensor_parameters(self, function: ast.FunctionDef) -> set[str]:
        positional = [*function.args.posonlyargs, *function.args.args][1:]
        names = set()
        for index, arg in enumerate([*positional, *function.args.kwonlyargs]):
            annotation = self.ctx.qualified_name(arg.annotation) if arg.annotation is not None else None
            if annotation in TENSOR_TYPES or (arg.annotation is None and index == 0 and positional):
                names.add(arg.arg)
        return names

    def _is_argument(self, node: ast.AST, tensors: set[str]) -> bool:
        """Can `node` name a tensor argument that still holds the caller's tensor, on some path? An
        augmented assignment (`x /= 255`) changes the tensor in place: the name still holds it after."""
        if not isinstance(node, ast.Name) or node.id not in tensors:
            return False
        definitions = self.ctx.analysis(ValueKinds).reaching_definitions(node)
        return any(
            isinstance(d.node, ast.FunctionDef)
            or (isinstance(self.ctx.scopes.parent(d.node), ast.AugAssign) and self._is_argument(d.node, tensors))
            for d in definitions
        )

    def _report_augmented(self, statement: ast.AugAssign) -> None:
        name, value = statement.target.id, statement.value
        value_text = self.ctx.text(value)
        if not isinstance(value, ATOMIC):
            value_text = f"({value_text})"
        replacement = f"{name} = {name} {OPERATORS[type(statement.op)]} {value_text}"
        fix = self.ctx.fix(f"Rebind: `{replacement}`", Applicability.SAFE, self.ctx.replace(statement, replacement))
        self.report(statement.target, self.message.format(name=name), fix)


def _indexes_a_tensor(target: ast.AST) -> bool:
    """`x[mask] = 0`, not `batch["pixels"] = ...` (a string key means a dict)."""
    if not isinstance(target, ast.Subscript):
        return False
    key = target.slice
    return not (isinstance(key, ast.Constant) and isinstance(key.value, str))


def _statements(function: ast.FunctionDef):
    """The statements of a function, nested blocks included, nested functions and classes excluded."""
    stack = list(reversed(function.body))
    while stack:
        statement = stack.pop()
        yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack += reversed([s for s in getattr(statement, field, []) if isinstance(s, ast.AST)])
