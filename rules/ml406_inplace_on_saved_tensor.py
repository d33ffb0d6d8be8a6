import ast
from bisect import bisect_right

from mllint.analysis.objects.call_sites import built
from mllint.analysis.objects.constants import bound_on_taken_arms, construction_constants, reachable_returns, taken_writes
from mllint.analysis.objects.points_to import Obj, Objects
from mllint.analysis.program.classes import training_forward
from mllint.analysis.facets.saved_outputs import SAVING_FUNCTIONS, SAVING_METHODS, SAVING_MODULES, maybe_in_place, saves_output, saving_layer
from mllint.analysis.facets.gradients import GradientFlow, State, backward_loss, under_no_grad, updated_in_place
from mllint.analysis.syntax.names import call_argument, is_self_attribute
from mllint.analysis.syntax.tree import own_method
from mllint.analysis.values.values import SEQUENTIAL, ValueKinds, canonical_class
from mllint.findings import Severity
from mllint.rule import Rule

FORWARD_MESSAGE = (
    "`{change}` changes `{name}` in place inside `{method}`, but `{op}` (line {line}) saved it to compute its "
    "gradient: the first `backward()` through this model raises RuntimeError; use an out-of-place operation"
)


class InplaceOnSavedTensor(Rule):
    """
    ## What it does
    Reports an in-place change (`y += 1`, `y.mul_(2)`, `y[mask] = 0`, `y[..., :2] += grid`) of the output of `sigmoid`,
    `tanh`, `exp`, `softmax`, `log_softmax` or `relu` computed from a model, followed by a `backward()`
    on a loss computed from it, all in one function and on one path. Inside a module's `forward` (or a
    method it calls, such as torchvision's `_forward_impl`), no `backward()` is needed: an output of a layer with parameters passed through such an op and changed in
    place before it is read again (`out = F.relu(self.bn(self.conv(x)))` then `out += identity`, also
    `out = self.block(x)` where the project block's `forward` returns `F.relu(...)` on the branch its
    construction's constants take: `activation="relu"`, or returns a name bound only to such an op's output:
    `x = self.act(x)`, `return x`, also under `if self.act is not None:` where `__init__` builds `nn.ReLU()` on
    the arm the constants take; and a `nn.Sequential` whose last layer is `nn.ReLU()`, `nn.Sigmoid()`, ...; also an item of
    a list of such outputs, `outs = [blk(f) for blk, f in zip(self.blocks, feats)]` then `outs[i - 1] += up` in a loop) breaks
    the first backward of any training; branches taken only in evaluation (`if not self.training:`) are
    left out. Changes under `torch.no_grad()`, changes of a copy (`y = y.clone()`), changes of the output of
    a layer that does not save it (`out = self.bn2(...)` then `out += identity`, as in torchvision's
    ResNet), and `nn.ReLU(inplace=True)` layers in conv stacks (their input is not a saved output) are fine
    and not reported. The `inplace` keyword's value decides: `F.relu(x, inplace=False)` saves its output.

    ## Why is this bad?
    These operations save their own output to compute their gradient. Changing it in place invalidates
    what autograd saved: `backward()` raises `RuntimeError: one of the variables needed for gradient
    computation has been modified by an inplace operation`, after the data loading and the first forward
    pass have run.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 1)
    inputs, targets = torch.randn(8, 4), torch.rand(8, 1)
    probs = torch.sigmoid(model(inputs))
    probs.clamp_(1e-6, 1 - 1e-6)
    loss = torch.nn.functional.binary_cross_entropy(probs, targets)
    loss.backward()
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(4, 1)
    inputs, targets = torch.randn(8, 4), torch.rand(8, 1)
    probs = torch.sigmoid(model(inputs))
    probs = probs.clamp(1e-6, 1 - 1e-6)
    loss = torch.nn.functional.binary_cross_entropy(probs, targets)
    loss.backward()
    ```

    ## Fix safety
    There is no fix: whether to write the change out of place (`probs = probs.clamp(...)`) or to apply it
    to a detached copy used only outside the loss is for the author to decide.
    """

    code = "ML406"
    name = "inplace-on-saved-tensor"
    message = (
        "`{change}` changes `{name}` in place, but `{op}` (line {line}) saved it to compute its gradient: "
        "`{backward}` (line {backward_line}) raises RuntimeError; use an out-of-place operation"
    )
    severity = Severity.ERROR
    requires_any_text = ("backward(", "def forward")

    _changed: set[tuple[ast.AST | None, str]] | None = None

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return
        items = node.value.elt if isinstance(node.value, ast.ListComp) else None  # `outs = [blk(f) for ...]`
        if not isinstance(items or node.value, ast.Call):
            return
        if (self.ctx.scopes.enclosing_function(node), node.targets[0].id) not in self._changed_names():
            return
        source = self._saving_input(items or node.value)
        if source is None or under_no_grad(self.ctx, node):
            return
        flows = self.ctx.analysis(GradientFlow)
        if flows.flow(source).state is not State.GRAPH:
            return
        target = node.targets[0]
        change = self._changed_in_place(target, node, items is not None)
        if change is None:
            return
        func = (items or node.value).func
        method = isinstance(func, ast.Attribute) and self.ctx.qualified_name(func) is None
        op = f".{func.attr}()" if method and func.attr in SAVING_METHODS else self.ctx.text(func)
        described = {"change": self.ctx.text(change), "name": target.id, "op": op, "line": node.lineno}
        if training_forward(self.ctx, node):
            if self._read_after(change, target):
                method = self.ctx.scopes.enclosing_function(node).name
                self.report(change, FORWARD_MESSAGE.format(**described, method=method))
            return
        backward = self._backward_after(change, {target}, node)
        if backward is not None:
            self.report(
                change,
                self.message.format(**described, backward=self.ctx.text(backward), backward_line=backward.lineno),
            )

    def _read_after(self, change: ast.AST, target: ast.Name) -> bool:
        """Is the changed value read after the change (so that backward runs through the op that saved it)?"""
        values = self.ctx.analysis(ValueKinds)
        changed = {target, _changed_in_place(change)} if isinstance(change, ast.AugAssign) else {target}
        for statement in self._statements_after(change):
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and node.id == target.id and isinstance(node.ctx, ast.Load):
                    if any(d.node in changed for d in values.reaching_definitions(node)):
                        return True
        return False

    def _changed_names(self) -> set[tuple[ast.AST | None, str]]:
        """(function, name) of every name changed in place in the file: a cheap first filter."""
        if self._changed is None:
            self._changed = set()
            for statement in self.ctx.index.of_type(ast.AugAssign, ast.Expr, ast.Assign):
                changed = _changed_in_place(statement)
                if isinstance(changed, ast.Name):
                    self._changed.add((self.ctx.scopes.enclosing_function(statement), changed.id))
        return self._changed

    def _saving_input(self, call: ast.Call) -> ast.AST | None:
        """The input of an operation that saves its output (`torch.sigmoid(x)`: `x`)."""
        func = call.func
        name = self.ctx.qualified_name(func)
        if name in SAVING_FUNCTIONS:
            return None if maybe_in_place(call) else call_argument(call, 0, "input")
        constructor = self.ctx.analysis(ValueKinds).constructor(func)
        if name is None and constructor is None and isinstance(func, ast.Attribute) and func.attr in SAVING_METHODS:
            return func.value
        if constructor is None and isinstance(func, ast.Name):  # `blk(f)` of `for blk in self.blocks`
            made = built(self.ctx, func)
            return call if made and all(self._returns_saved(m, home) for home, m in made) else None
        if constructor is not None and canonical_class(self.ctx.qualified_name(constructor.func)) in SAVING_MODULES:
            if not maybe_in_place(constructor) and len(call.args) == 1:
                return call.args[0]
        if constructor is not None and canonical_class(self.ctx.qualified_name(constructor.func)) == SEQUENTIAL:
            return call if saving_layer(self.ctx, constructor) else None  # `nn.Sequential(conv, nn.ReLU())`
        if constructor is not None and self._returns_saved(constructor):
            return call  # a block of the project whose forward ends in `F.relu(x)` as it was built
        return None

    def _returns_saved(self, constructor: ast.Call, made_in=None) -> bool:
        """Does every value the `forward` of the project module `constructor` builds returns, on the branches
        the construction's constants leave open (`activation="relu"`), come from an op that saves it (also
        through the name it returns: `x = self.act(x)`, `return x`)? `made_in`: the module of the construction."""
        found = self.ctx.analysis(Objects).class_of(Obj("made", constructor, ctx=made_in or self.ctx))
        if found is None:
            return False
        home, cls = found
        forward, init = own_method(cls, "forward"), own_method(cls, "__init__")
        if forward is None or init is None:
            return False
        constants = construction_constants(constructor, init)
        returned = reachable_returns(forward, constants)
        values, layers = home.analysis(ValueKinds), taken_writes(init, constants)

        def saving(call: ast.Call) -> bool:  # `self.act(x)` of `self.act = nn.ReLU()` on the arms taken too
            written = layers.get(call.func.attr, ()) if is_self_attribute(call.func) else ()
            return saves_output(home, call) or bool(written) and all(isinstance(w, ast.Call) and saving_layer(home, w) for w in written)

        def saved(value: ast.AST) -> bool:  # a call that saves its output, or a name bound only to such calls
            bound = [value]
            if isinstance(value, ast.Name):  # on the arms the construction takes, else on any
                bound = bound_on_taken_arms(forward, home.scopes.statement(value), constants) or values.reaching_values(value)
            return bool(bound) and all(isinstance(v, ast.Call) and saving(v) for v in bound)

        return bool(returned) and all(saved(r) for r in returned)

    def _statements_after(self, node: ast.AST):
        """The statements of `node`'s function (or module) after it, nested functions excluded."""
        statements = self.ctx.scopes.statements(self.ctx.scopes.enclosing_function(node))
        start = (node.lineno, node.col_offset)
        first = bisect_right(statements, start, key=lambda statement: (statement.lineno, statement.col_offset))
        yield from statements[first:]

    def _changed_in_place(self, target: ast.Name, assignment: ast.Assign, items: bool = False) -> ast.AST | None:
        """The first statement after `assignment` that surely changes the value bound to `target` in place;
        `items`: the value is a list, and an item of it is changed (`outs[i - 1] += up`, also in a `for`
        loop over its indices; `outs[i] = x` replaces the item)."""
        values = self.ctx.analysis(ValueKinds)
        for statement in self._statements_after(assignment):
            changed = _changed_in_place(statement)
            if not (isinstance(changed, ast.Name) and changed.id == target.id):
                continue
            if items and isinstance(statement, ast.Assign):
                continue
            if [d.node for d in values.reaching_definitions(changed)] != [target]:
                return None
            runs = _outermost_loop(self.ctx, statement) if items else statement
            certain = runs is not None and values.same_path(runs, assignment) and not under_no_grad(self.ctx, statement)
            return statement if certain else None
        return None

    def _backward_after(self, change: ast.AST, targets: set[ast.AST], assignment: ast.Assign) -> ast.Call | None:
        values, flows = self.ctx.analysis(ValueKinds), self.ctx.analysis(GradientFlow)
        for statement in self._statements_after(change):
            call = statement.value if isinstance(statement, ast.Expr) else None
            loss = backward_loss(self.ctx, call) if isinstance(call, ast.Call) else None
            if loss is None:
                continue
            if values.same_path(statement, assignment) and not under_no_grad(self.ctx, statement):
                if flows.depends_on(loss, targets):
                    return call
        return None


def _outermost_loop(ctx, statement: ast.AST) -> ast.AST | None:
    """The outermost `for` loop around `statement` in its function (the statement itself outside any), None
    when a branch, `while` or `try` is around it too."""
    outermost = statement
    for ancestor in ctx.scopes.ancestors(statement):
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            return outermost
        if not isinstance(ancestor, ast.For):
            return None
        outermost = ancestor
    return outermost


def _changed_in_place(statement: ast.AST) -> ast.AST | None:
    """The tensor a statement changes in place: `y += 1`, `y.mul_(2)`, `y[mask] = 0`, `y[mask] += 1`."""
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    if len(targets) == 1 and isinstance(targets[0], ast.Subscript):
        return targets[0].value
    changed = updated_in_place(statement)
    return changed.value if isinstance(changed, ast.Subscript) else changed  # `y[..., :2] += grid`
