import ast

from mllint.rule import Rule

NO_GRAD = {"torch.no_grad", "torch.inference_mode"}
# In-place methods that change a tensor's values (flag changes such as `requires_grad_`, `detach_`
# are allowed on parameters).
VALUE_CHANGING = frozenset({
    "add_", "sub_", "mul_", "div_", "pow_", "sqrt_", "exp_", "neg_", "abs_", "clamp_", "clamp_min_",
    "clamp_max_", "copy_", "zero_", "fill_", "normal_", "uniform_", "addcmul_", "addcdiv_", "lerp_",
    "masked_fill_", "index_add_", "scatter_", "fmod_", "remainder_", "round_", "sign_",
})  # fmt: skip
PARAMETER_ITERATORS = {"parameters", "named_parameters"}


class ParameterUpdateOutsideNoGrad(Rule):
    """
    ## What it does
    Reports in-place updates of parameters in a loop over `model.parameters()` (or
    `named_parameters()`) that is not under `torch.no_grad()`: `p -= lr * p.grad`, `p.add_(...)`,
    `p.zero_()`. Updates through `p.data`, flag changes (`p.requires_grad_(False)`, `p.detach_()`), and
    updates under `torch.no_grad()` or in a function decorated with it are fine and not reported.

    ## Why is this bad?
    A parameter is a leaf that requires grad: changing it in place while autograd records raises
    `RuntimeError: a leaf Variable that requires grad is being used in an in-place operation` at the
    first update, after the data loading and the first forward pass have already run.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    model(torch.randn(4, 3)).sum().backward()
    for p in model.parameters():
        p -= 0.1 * p.grad
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    model(torch.randn(4, 3)).sum().backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
    ```

    ## Fix safety
    There is no fix: which statements belong under `torch.no_grad()` is for the author to decide.
    """

    code = "ML403"
    name = "parameter-update-outside-no-grad"
    message = "in-place update of parameter `{name}` outside `torch.no_grad()`: raises at the first step"
    requires_any_text = ("parameters",)

    def visit_For(self, node: ast.For) -> None:
        if not (isinstance(node.target, (ast.Name, ast.Tuple)) and self._iterates_parameters(node.iter)):
            return
        parameter = node.target if isinstance(node.target, ast.Name) else node.target.elts[-1]
        if not isinstance(parameter, ast.Name):
            return
        for statement in ast.walk(node):
            target = _updated_in_place(statement)
            if isinstance(target, ast.Name) and target.id == parameter.id and not self._under_no_grad(statement):
                self.report(statement, self.message.format(name=parameter.id))

    def _iterates_parameters(self, iterator: ast.AST) -> bool:
        return (
            isinstance(iterator, ast.Call)
            and isinstance(iterator.func, ast.Attribute)
            and iterator.func.attr in PARAMETER_ITERATORS
        )

    def _under_no_grad(self, node: ast.AST) -> bool:
        for ancestor in self.ctx.scopes.ancestors(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                if any(self._is_no_grad(item.context_expr) for item in ancestor.items):
                    return True
            elif isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return any(self._is_no_grad(decorator) for decorator in ancestor.decorator_list)
        return False

    def _is_no_grad(self, expr: ast.AST) -> bool:
        return self.ctx.qualified_name(expr.func if isinstance(expr, ast.Call) else expr) in NO_GRAD


def _updated_in_place(statement: ast.AST) -> ast.AST | None:
    """The tensor a statement changes in place: `p -= ...` or `p.add_(...)`."""
    if isinstance(statement, ast.AugAssign):
        return statement.target
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr in VALUE_CHANGING:
            return func.value
    return None
