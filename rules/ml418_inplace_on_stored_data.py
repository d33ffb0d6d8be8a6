import ast

from mllint.analysis.facets.gradients import under_no_grad
from mllint.analysis.facets.loops import LOOP_NODES, loop_or_function
from mllint.analysis.facets.views import (
    changed_by_callee, changed_in_place, compounds, held_after, kept_view, kept_view_changes, passed_through, read_after_change,
    reused_over_loop, storage_root, stored_back, stored_item,
)
from mllint.analysis.program.callers import Callers, per_call_site
from mllint.analysis.program.project_view import place_in
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.scopes import parameters
from mllint.findings import Severity
from mllint.rule import Rule


COPY_MESSAGE = (
    "in-place change of `{name}`, the argument `{parameter}` that the function returns, changes `{passed}` that "
    "{site} passes and reads again at line {line} as if unchanged; copy it first (`.clone()`) or compute out of place"
)


class InplaceOnStoredData(Rule):
    """
    ## What it does
    Reports an in-place change of data an object keeps, made where a fresh copy was meant: in a dataset's
    `__getitem__`, of the sample it indexes out of what it stores (`sample = self.points[idx]` then
    `sample.narrow(-1, 0, 3).mul_(scale)`, `sample[:, :3] += noise`), and in a function or method, of a
    tensor argument (or a view of it: `flat = xb.view(n, -1)` then `flat.sub_(mean).div_(std)`) when a call
    site of the project passes an attribute the object keeps (`self._standardize(self.val_x)`), or a slice
    of one, also through callers passing it on (`agent.loss(obs)` -> `self.logits(obs)` -> `scale_obs(obs)`); and in a helper that returns the argument it changed (`x = x.mul_(scale)`, `return x`) when a
    caller binds the result to another name and reads what it passed again (`x_aug = jitter(x)` then
    `model(x)`), expecting it unchanged. A sample `__getitem__` passes to a function or a callable object of
    the project that changes it in place counts too (`x = self.transform(x)` with a transform the dataset's
    construction passes, also through a `Compose`-like object running the transforms it holds), reported at
    that call. In a loop of a script or of a function, a change of a view of data an object keeps counts
    too: a slice or `narrow` of `data.X`, an item of `data.X.split(256)` (also through `zip`), or a batch a
    generator method of the project yields of what its object keeps (`for xb, yb in data.batches(256)`
    yielding `self.X[i:i + bs], ...`, then `xb.chunk(2, 1)[1].log1p_()`), or the stored items of a dataset
    iterated without a copy (`for x, y in DataLoader(ds, batch_size=None)`, which does not collate, or `for x,
    y in ds`, with `__getitem__` returning `self.X[i], self.y[i]`; an item `batch["y"]` of such a batch too); and so does a view of one (`xb =
    self.X.narrow(0, i, n)`) passed to a function that changes its argument, a function named for
    working in place (`jitter_`) included. Data need not be an attribute when a loop changes it again at
    every iteration: a tensor made before an epoch loop (at module level, or earlier in the function) whose
    views a loop inside it changes (`for xb in images.split(128): xb.div_(255)`, `images[i:i + bs]`), or
    that the epoch loop passes to a function or generator of the project changing views of its argument
    (`for xb, yb in iterate_batches(images, labels, 128)` with `xb.div_(255.0)` on the items of
    `images.split(batch_size)`, also picked from `list(images.split(n))` by index); only changes that compound when made again count there (`div_`, `-=`, not
    `clamp_` or a store). Views are followed through `unbind`/`split`/`chunk`, slices, and a loop over a literal tuple
    (`for v, s in ((x1, self.w), (y1, self.h)): v.div_(s)` of `x1, y1, x2, y2 = box.unbind(-1)`). Changes of
    a copy (`sample = self.points[idx].clone()`), writes into a buffer (`copy_`,
    `zero_`, `fill_`), direct stores into an attribute's items (`self.cache[idx] = x`: a cache),
    functions named for working in place (`normalize_`) called on a fresh tensor, a call made once in `__init__`, changes under `torch.no_grad()` (parameters
    updated on purpose) and a module's `forward` (ML401's) are not reported.

    ## Why is this bad?
    Indexing a stored tensor (or a list of them) with an integer, and most reshaping, give a view of the
    same memory: the change reaches the stored data. A random augmentation then compounds epoch after
    epoch (the scale of each point cloud drifts), and a standardization applied at each evaluation
    standardizes the validation set again and again. Nothing raises: the numbers drift.

    ## Example
    ```python
    import random

    import torch
    from torch.utils.data import Dataset


    class Points(Dataset):
        def __init__(self, points):
            self.points = points

        def __len__(self):
            return len(self.points)

        def __getitem__(self, idx):
            sample = self.points[idx]
            sample.mul_(random.uniform(0.8, 1.25))
            return sample
    ```

    ## Use instead
    ```python
    import random

    import torch
    from torch.utils.data import Dataset


    class Points(Dataset):
        def __init__(self, points):
            self.points = points

        def __len__(self):
            return len(self.points)

        def __getitem__(self, idx):
            sample = self.points[idx].clone()
            sample.mul_(random.uniform(0.8, 1.25))
            return sample
    ```

    ## Fix safety
    There is no fix: whether to copy (`.clone()`) or to compute out of place is the author's call.
    """

    code = "ML418"
    name = "inplace-on-stored-data"
    message = (
        "in-place change of `{name}`, which is `{root}` (line {line}), changes the data `{owner}` stores: "
        "it compounds at every access; copy it first (`.clone()`) or compute out of place"
    )
    argument_message = (
        "in-place change of `{name}`, {which}the argument `{parameter}`, changes `{passed}` that {site} "
        "passes: the stored data changes at every call; copy it first (`.clone()`) or compute out of place"
    )
    reused_message = (
        "in-place change of `{name}`, a view of `{root}` (line {line}), changes `{root}`, which the loop at line "
        "{loop} reads again at every iteration: it compounds; copy it first (`.clone()`) or compute out of place"
    )
    reused_argument_message = (
        "in-place change of `{name}`, a view of the argument `{parameter}`, changes `{passed}` that {site} passes "
        "again at every iteration of the loop at line {loop}: it compounds; copy it first (`.clone()`) or compute out of place"
    )
    passed_message = (
        "`{call}` changes `{name}`, which is `{root}` (line {line}), in place (`{callee}`, {place}): the data "
        "`{owner}` stores changes at every access; copy it first (`.clone()`) or compute out of place"
    )
    severity = Severity.WARNING
    requires_any_text = ("_(", "=")

    def end_file(self) -> None:
        """Changes at module level: of the batches a script's loop takes from what an object keeps."""
        self._kept_views(self.ctx.tree)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name == "forward":
            return
        in_place = node.name.endswith("_") and not node.name.endswith("__")  # `jitter_`: meant to change its argument
        changes = changed_in_place(self.ctx, node)
        indices = {p.arg for p in parameters(node, variadic=False)[1:2]} if node.name == "__getitem__" else set()
        if not changes and not indices:
            return
        statements = set()
        for change, name in changes:
            statement = self.ctx.scopes.statement(change)
            if statement in statements:
                continue  # `flat.sub_(m).div_(s)`: one change of one tensor
            statements.add(statement)
            found = storage_root(self.ctx, name)
            root, last = found if found is not None else (None, None)
            if root is node and not under_no_grad(self.ctx, change):  # a parameter updated on purpose runs under no_grad
                self._argument(change, name, node, last.id, in_place)
            elif indices and stored_item(root, indices):
                line = root.lineno
                self.report(change, self.message.format(name=name.id, root=self.ctx.text(root), line=line, owner=self.ctx.text(root.value)))
        if node.name != "__init__" and not in_place:
            self._kept_views(node)
        if indices:
            self._passed_on(node, indices, statements)

    def _kept_views(self, scope: ast.AST) -> None:
        """Changes, in a loop, of a view of data an object keeps (`for xb in data.X.split(256): xb.log1p_()`)."""
        statements = set()
        for change, changed, kept in kept_view_changes(self.ctx, scope):
            statement = self.ctx.scopes.statement(change)
            around = loop_or_function(self.ctx, change)
            if statement in statements or not isinstance(around, LOOP_NODES) or under_no_grad(self.ctx, change):
                continue
            statements.add(statement)
            if isinstance(kept, ast.Name):
                loop = reused_over_loop(self.ctx, kept, nested=True)
                if not (isinstance(changed, ast.Name) and read_after_change(self.ctx, changed, change)):
                    continue  # a buffer the loop accumulates into, not a batch it goes on with
                self.report(change, self.reused_message.format(name=self.ctx.text(changed), root=kept.id, line=kept.lineno, loop=loop.lineno))
                continue
            owner = kept.value if not isinstance(kept, ast.Call) else kept.func.value if isinstance(kept.func, ast.Attribute) else kept
            self.report(change, self.message.format(name=self.ctx.text(changed), root=self.ctx.text(kept), line=kept.lineno, owner=self.ctx.text(owner)))

    def _passed_on(self, function: ast.AST, indices: set[str], reported: set[ast.AST]) -> None:
        """A stored sample `__getitem__` passes to a function or callable object of the project that changes
        it in place (`x = self.transform(x)` with a transform a call site of the dataset passes)."""
        for call in self.ctx.index.within(function, ast.Call):
            if self.ctx.scopes.statement(call) in reported:
                continue
            for argument in (a for a in call.args if isinstance(a, ast.Name)):
                found = storage_root(self.ctx, argument)
                if found is None or not stored_item(found[0], indices):
                    continue
                ask = lambda binding, call=call, argument=argument: changed_by_callee(self.ctx, call, argument, binding)  # noqa: E731
                changed = next((answer for answer, _ in per_call_site(self.ctx, call, ask)), None)
                if changed is not None:
                    home, change, callee = changed
                    root = found[0]
                    self.report(call, self.passed_message.format(
                        name=argument.id, root=self.ctx.text(root), line=root.lineno, owner=self.ctx.text(root.value),
                        call=self.ctx.text(call.func), callee=callee, place=place_in(self.ctx, home, change),
                    ))  # fmt: skip
                    break

    visit_AsyncFunctionDef = visit_FunctionDef

    @staticmethod
    def _read_as_original(caller, argument: ast.AST):
        """Where a caller that binds the result to another name (`x_aug = jitter(x)`) reads the tensor it passed
        again, expecting it unchanged; None when it rebinds the name or does not read it."""
        site = caller.scopes.parent(argument)
        site = caller.scopes.parent(site) if isinstance(site, ast.keyword) else site
        statement = caller.scopes.statement(site)
        targets = statement.targets if isinstance(statement, ast.Assign) and statement.value is site else []
        if not (isinstance(argument, ast.Name) and targets and all(isinstance(t, ast.Name) and t.id != argument.id for t in targets)):
            return None
        return held_after(caller, argument, site)

    def _argument(self, change: ast.AST, name: ast.Name, function: ast.AST, parameter: str, in_place: bool = False) -> None:
        """A change of a parameter's tensor, reported when a call site passes what an object keeps (a
        function named for working in place only then: `jitter_(self.X.narrow(0, i, n))`)."""
        returned = _returns_name(function, parameter) and not in_place
        for binding in self.ctx.analysis(Callers).bindings(function):
            passed = binding.argument(parameter) if binding.site is not None else None
            if passed is None or stored_back(passed[0], passed[1]):
                continue  # `self.pred[..., i] = f(self.pred[..., i])`: changed on purpose, the result stored back
            reused = name.id != parameter and compounds(change) and not in_place and read_after_change(self.ctx, name, change)
            loop = reused_over_loop(passed[0], passed[1]) if reused else None
            if loop is not None:
                self.report(change, self.reused_argument_message.format(
                    name=name.id, parameter=parameter, passed=passed[0].text(passed[1]), site=binding.place, loop=loop.lineno,
                ))  # fmt: skip
                return
            stored = _kept(passed[1]) or kept_view(passed[0], passed[1]) is not None
            if not stored and (forwarded := passed_through(binding, parameter)) is not None and forwarded[2] is not binding:
                stored = _kept(forwarded[1]) or kept_view(forwarded[0], forwarded[1]) is not None
                passed, binding = (forwarded[:2], forwarded[2]) if stored else (passed, binding)  # `dist(obs)` -> `self.preprocess(obs)`
            if not stored:
                read = self._read_as_original(passed[0], passed[1]) if returned else None
                if read is not None:
                    self.report(change, COPY_MESSAGE.format(
                        name=name.id, parameter=parameter, passed=passed[0].text(passed[1]), site=binding.place, line=read.lineno,
                    ))  # fmt: skip
                    return
                continue
            around = passed[0].scopes.enclosing_function(passed[1])
            if around is not None and around.name == "__init__":
                continue  # a call of the constructor runs once: nothing compounds
            which = "" if name.id == parameter else "a view of "
            self.report(change, self.argument_message.format(
                name=name.id, which=which, parameter=parameter, passed=passed[0].text(passed[1]), site=binding.place,
            ))  # fmt: skip
            return


def _returns_name(function: ast.AST, name: str) -> bool:
    """Does the function return its parameter `name` (changed in place: `x = x.mul_(s)` then `return x`)?"""
    return any(isinstance(r, ast.Name) and r.id == name for r in function_returns(function) or ())


def _kept(argument: ast.AST) -> bool:
    """`self.val_x`, `self.val_x[:n]`: what an object keeps, or a slice of it."""
    while isinstance(argument, ast.Subscript):
        argument = argument.value
    return is_self_attribute(argument)
