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
# Functions that take a sequence of tensors: an argument passed to them whole is a list of tensors.
SEQUENCE_FUNCTIONS = {
    "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
    "torch.dstack", "torch.column_stack",
}
LIST_METHODS = {"append", "extend", "insert", "pop"}


class InplaceOnForwardArgument(Rule):
    """
    ## What it does
    Reports in-place changes of a tensor argument inside a module's `forward`: augmented assignment
    (`x /= 255`), in-place methods (`x.mul_(2)`, `x.clamp_(0, 1)`) and item assignment (`x[mask] = 0`),
    while the name still holds the caller's tensor. Only tensor arguments count: those annotated as
    `torch.Tensor`, and an unannotated first argument, unless the function treats it as a list of
    tensors (feature maps passed whole to `torch.cat`/`torch.stack`, given to `append`, or whose items
    `x[i]` are fed to the module's layers: `x[i] = self.convs[i](x[i])` replaces a list item, no tensor
    changes). Changes made only when `self.training` is false (`if not self.training:`, the `else` of
    `if self.training:`) are left alone: inference-only code, such as a detection head decoding its
    feature maps, works on intermediate activations and runs no backward.

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
        tensors = self._tensor_parameters(node) - self._sequence_parameters(node)
        if not tensors:
            return
        for statement in _statements(node):
            if self._inference_only(statement, node):
                continue
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

    def _sequence_parameters(self, function: ast.FunctionDef) -> set[str]:
        """Parameters the function uses as a list of tensors."""
        names = set()
        for call in self.ctx.index.within(function, ast.Call):
            func = call.func
            if self.ctx.qualified_name(func) in SEQUENCE_FUNCTIONS and call.args and isinstance(call.args[0], ast.Name):
                names.add(call.args[0].id)
            elif isinstance(func, ast.Attribute) and func.attr in LIST_METHODS and isinstance(func.value, ast.Name):
                names.add(func.value.id)
            elif _calls_own_layer(func):
                names.update(a.value.id for a in call.args if _item_of_name(a))
        return names

    def _inference_only(self, statement: ast.stmt, function: ast.FunctionDef) -> bool:
        """Does `statement` run only when `self.training` is false: inside `if not self.training:` (or
        the `else` of `if self.training:`), or after an `if self.training:` that returns?"""
        child = statement
        for ancestor in self.ctx.scopes.ancestors(statement):
            block = next((b for b in _blocks(ancestor) if any(s is child for s in b)), [])
            earlier = block[: next(i for i, s in enumerate(block) if s is child)] if block else []
            if any(_training_test(s) is True and isinstance(s.body[-1], (ast.Return, ast.Raise)) for s in earlier):
                return True
            if isinstance(ancestor, ast.If) and _training_test(ancestor) is not None:
                if _training_test(ancestor) is (block is ancestor.orelse):
                    return True
            if ancestor is function:
                return False
            child = ancestor
        return False

    def _is_argument(self, node: ast.AST, tensors: set[str], seen: set[ast.AST] | None = None) -> bool:
        """Can `node` name a tensor argument that still holds the caller's tensor, on some path? An
        augmented assignment (`x /= 255`) changes the tensor in place: the name still holds it after.
        `seen`: the augmented assignments already followed (around a loop they reach each other)."""
        if not isinstance(node, ast.Name) or node.id not in tensors:
            return False
        seen = set() if seen is None else seen
        for definition in self.ctx.analysis(ValueKinds).reaching_definitions(node):
            if isinstance(definition.node, ast.FunctionDef):
                return True
            augmented = isinstance(self.ctx.scopes.parent(definition.node), ast.AugAssign)
            if augmented and definition.node not in seen:
                seen.add(definition.node)
                if self._is_argument(definition.node, tensors, seen):
                    return True
        return False

    def _report_augmented(self, statement: ast.AugAssign) -> None:
        name, value = statement.target.id, statement.value
        value_text = self.ctx.text(value)
        if not isinstance(value, ATOMIC):
            value_text = f"({value_text})"
        replacement = f"{name} = {name} {OPERATORS[type(statement.op)]} {value_text}"
        fix = self.ctx.fix(f"Rebind: `{replacement}`", Applicability.SAFE, self.ctx.replace(statement, replacement))
        self.report(statement.target, self.message.format(name=name), fix)


def _calls_own_layer(func: ast.AST) -> bool:
    """`self.head(...)`, `self.convs[i](...)`: a call of one of the module's layers."""
    while isinstance(func, (ast.Attribute, ast.Subscript)):
        func = func.value
    return isinstance(func, ast.Name) and func.id == "self"


def _item_of_name(node: ast.AST) -> bool:
    """`x[i]` or `x[0]`: one item of a name, by a plain index."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, (ast.Name, ast.Constant))
    )


def _training_test(statement: ast.stmt) -> bool | None:
    """For `if self.training:` True, for `if not self.training:` False; None for other statements."""
    if not isinstance(statement, ast.If):
        return None
    test, negated = statement.test, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, True
    is_training = isinstance(test, ast.Attribute) and test.attr == "training" and _is_self(test.value)
    return (not negated) if is_training else None


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _blocks(node: ast.AST) -> list[list]:
    """The statement lists of a compound statement (or function)."""
    return [getattr(node, field) for field in ("body", "orelse", "finalbody") if isinstance(getattr(node, field, None), list)]


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
