"""Model selection on the test set (ML806): a best epoch, checkpoint, early stop or reported maximum chosen
by a score measured on data named test.

A choice is a comparison with a best score (`if acc > best_acc:`, `is_best = loss < best_loss`, `best =
max(best, acc)`) whose branch keeps something: a new best, a checkpoint (`save`, `state_dict`,
`deepcopy`), an early stop (`break`). The score is a test score when its name says so (`test_acc`),
when it comes from an evaluation of test data (`acc = evaluate(model, test_loader)`, `test_evaluator.
evaluate()`, `_, acc = test(epoch)`), or from an evaluator or loader that a call site passes test data
for (`Trainer(..., val_evaluator=test_evaluator)`, read through `self.val_evaluator`; or one built from
`splits["test"]`, whatever its name), when the comparison also asks for the test phase (`phase == "test"
and acc > best_acc`), or when it is computed in a test pass (`def test(epoch):` or a loop over
`test_loader`). An evaluation that names validation data (`evaluate(model, val_loader)`) is not one.
A reported maximum is also `max(test_accs)` / `np.argmax(history["test_f1"])` of a collection of test
scores (by its name, or by the test evaluations appended to it); an argmax with an axis is a prediction.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mllint.analysis.facets.loops import TrainingLoops
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.objects.steps import StepKind, step_of
from mllint.analysis.program.callers import Callers, call_sites
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.syntax.scopes import SCOPE_NODES
from mllint.analysis.values.values import ValueKinds, is_parameter
from mllint.findings import Related

TEST = re.compile(r"(?<![a-z])test", re.IGNORECASE)
VALIDATION = re.compile(r"(?<![a-z])(val|valid|validation|dev|eval)(?![a-z])|(?<![a-z])valid", re.IGNORECASE)
BEST = re.compile(r"best|(^|_)(max|min|top|highest|lowest)(_|$)", re.IGNORECASE)
EVALUATION = re.compile(r"(?<![a-z])eval(?![a-z])", re.IGNORECASE)  # beside a test word: what is done with the test set
TRAIN = re.compile(r"(?<![a-z])train", re.IGNORECASE)
EPOCH = re.compile(r"epoch|^ep$|^e$|iter|step|round", re.IGNORECASE)
TEST_PASS = re.compile(r"^(test|testing|run_test|test_epoch|test_model|test_one_epoch|eval_test|evaluate_test)$")
KEEPING_CALL = re.compile(r"save|deepcopy|state_dict", re.IGNORECASE)
EARLY_STOPPER = re.compile(r"early_?stop|stopper", re.IGNORECASE)  # `early_stopping(test_loss, model)`
CALLBACK = re.compile(r"Checkpoint|EarlyStopping")  # `ModelCheckpoint(monitor="test_acc")`
ORDERING = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)
MAX_DISPATCHING = 8  # modules read for a loop that runs a callback's hook
EXTREMA = frozenset({"max", "min", "amax", "amin", "argmax", "argmin", "nanmax", "nanmin", "nanargmax", "nanargmin"})
# What a per-epoch score is called (`test_accs`, `history["test_f1"]`), as opposed to a prediction.
SCORE = re.compile(r"acc|f1|auc|loss|score|metric|result|perf|top\d|map|iou|dice|err|prec|recall|bleu|rouge|ppl|perplex|r2|mse|mae", re.IGNORECASE)


@dataclass(frozen=True)
class TestSelection:
    score: ast.AST  # the test score compared with the best one
    best: ast.AST  # the best score
    evidence: str  # why the score is a test score
    related: tuple[Related, ...] = ()  # the call site that passes test data, when that is why


class Selections:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.values = ctx.analysis(ValueKinds)
        self._passes: dict[ast.AST, bool] = {}
        self._hooks: dict[ast.AST, bool] = {}  # method -> `_hook_run_per_epoch`'s answer
        self._dispatching: dict[str, bool] = {}  # name -> `_dispatches_per_epoch`'s answer
        self._calling: dict[str, bool] = {}  # name -> `_called_per_epoch`'s answer
        self._calls_by_name: dict[str, list[ast.Call]] | None = None  # the file's calls by `_last` of their function

    def on_test(self) -> list[TestSelection]:
        found, extrema = [], set()
        for call in self.ctx.index.of_type(ast.Call):
            selection = self._by_call(call)
            if selection is not None and selection.best is call:  # `max(test_accs)`: once per collection and scope
                key = (self.ctx.scopes.enclosing_function(call), self.ctx.text(selection.score))
                selection = None if key in extrema else selection
                extrema.add(key)
            found += [selection] if selection is not None else []
        for node in self.ctx.index.of_type(ast.If, ast.Assign):
            if isinstance(node, ast.If):  # a comparison with a best score first: `_keeps` reads the arms
                compares = [c for c in _compares(node.test) if _score_and_best(c) is not None]
                if compares and self._keeps(node):
                    found += [s for c in compares if (s := self._selection(c, node.test)) is not None]
            elif isinstance(node, ast.Assign) and any(BEST.search(_last(t)) for t in _targets(node)):
                found += [s for c in _compares(node.value) if (s := self._selection(c, node.value)) is not None]
                found += self._running_best(node)
        return found

    def _selection(self, compare: ast.Compare, test: ast.AST) -> TestSelection | None:
        """`score > best` (either way round) where the score is a test score."""
        pair = _score_and_best(compare)
        if pair is None:
            return None
        score, best = pair
        phase = _asks_test_phase(test) and "the branch asks for the test phase"
        evidence, related = (phase, ()) if phase else self._test_score(score)
        return TestSelection(score, best, evidence, related) if evidence and self._chooses(compare) else None

    def _chooses(self, node: ast.AST) -> bool:
        """Is the comparison made once per epoch of a training run: in a test pass, or in a loop over
        epochs or one that trains (not a search over a classifier's settings)?"""
        function = self.ctx.scopes.enclosing_function(node)
        if function is not None and self._is_test_pass(function):
            return True
        for loop in self.ctx.scopes.ancestors(node):
            if loop is function:
                return self._hook_run_per_epoch(function)
            if isinstance(loop, ast.For) and EPOCH.search(self.ctx.text(loop.target)):
                return True
            if isinstance(loop, (ast.For, ast.While)) and self._trains(loop):
                return True
        return False

    def _hook_run_per_epoch(self, method: ast.AST) -> bool:
        """Is `method` a hook of a callback class that a training run calls once per epoch: a module of the
        project dispatches it to each item of a collection (`for cb in self.callbacks: cb.on_epoch_end(self)`)
        in an epoch loop or one that trains, and some module makes an instance of the class?"""
        if method not in self._hooks:
            self._hooks[method] = self._hook_run_per_epoch_now(method)
        return self._hooks[method]

    def _hook_run_per_epoch_now(self, method: ast.AST) -> bool:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name.startswith("_") and method.name != "__call__":
            return False
        cls = self.ctx.scopes.enclosing_class(method)
        if cls is None or self.ctx.scopes.enclosing_scope(method) is not cls:
            return False
        index = self.ctx.project
        if not (index.modules_calling(cls.name) if index is not None else self._calls_named(cls.name)):
            return False
        return any(c.analysis(Selections)._dispatches_per_epoch(method.name) for c in self._calling_in(index, method.name))

    def _dispatches_per_epoch(self, name: str) -> bool:
        """Does this file call `item.name(...)` for each item of a loop inside an epoch loop or one that
        trains, or in a function (`CallbackList.on_epoch_end`) that such a loop calls?"""
        if name not in self._dispatching:
            self._dispatching[name] = self._dispatches_per_epoch_now(name)
        return self._dispatching[name]

    def _dispatches_per_epoch_now(self, name: str) -> bool:
        return any(True for _ in self._epoch_dispatches(name))

    def _epoch_dispatches(self, name: str):
        """This file's calls `item.name(...)` (`item(...)` for `__call__`) of a loop's item, made once per
        epoch: in an epoch loop or one that trains, or in a function such a loop calls."""
        for call in self._item_calls(name):
            loops = [a for a in self.ctx.scopes.ancestors(call) if isinstance(a, (ast.For, ast.While, *SCOPE_NODES))]
            if self._per_epoch(loops[1:]):
                yield call
                continue
            around = loops[1] if len(loops) > 1 else None
            index = self.ctx.project or self.ctx.read_for
            if isinstance(around, (ast.FunctionDef, ast.AsyncFunctionDef)) and index is not None and any(
                c.analysis(Selections)._called_per_epoch(around.name) for c in self._calling_in(index, around.name)
            ):
                yield call

    def _item_calls(self, name: str):
        """The calls `item.name(...)` (`item(...)` for `__call__`) of the item of the loop right around them."""
        calls = [c for n, cs in self._calls_by_name_now().items() if n != name for c in cs] if name == "__call__" else self._calls_named(name)
        for call in calls:
            func = call.func
            item = func if name == "__call__" else func.value if isinstance(func, ast.Attribute) else None
            if not isinstance(item, ast.Name) or (name == "__call__" and not isinstance(func, ast.Name)):
                continue
            loop = next((a for a in self.ctx.scopes.ancestors(call) if isinstance(a, (ast.For, ast.While, *SCOPE_NODES))), None)
            if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id == item.id:
                yield call

    def _calling_in(self, index, name: str):
        """The contexts of the first modules of the project that call `name` (this file's own too; this file
        alone without a project)."""
        if index is None:
            yield self.ctx
            return
        own = self.ctx.module.name if self.ctx.module else None
        for module in index.modules_calling(name)[:MAX_DISPATCHING]:
            found = self.ctx if module == own else index.context(module)
            if found is not None:
                yield found

    def _called_per_epoch(self, name: str) -> bool:
        """Does this file call `name(...)` (`self.callbacks.on_epoch_end(...)`) in an epoch loop or one that trains?"""
        if name not in self._calling:
            calls = self._calls_named(name)
            self._calling[name] = any(self._per_epoch([a for a in self.ctx.scopes.ancestors(c) if isinstance(a, (ast.For, ast.While, *SCOPE_NODES))]) for c in calls)
        return self._calling[name]

    def _calls_named(self, name: str) -> list[ast.Call]:
        """The file's calls whose function reads as `name` (`_last`), in source order: indexed in one pass."""
        return self._calls_by_name_now().get(name, [])

    def _calls_by_name_now(self) -> dict[str, list[ast.Call]]:
        if self._calls_by_name is None:
            self._calls_by_name = {}
            for call in self.ctx.index.of_type(ast.Call):
                self._calls_by_name.setdefault(_last(call.func), []).append(call)
        return self._calls_by_name

    def _per_epoch(self, loops: list[ast.AST]) -> bool:
        """Is one of these loops (innermost first, up to the function) over epochs, or one that trains?"""
        for loop in loops:
            if isinstance(loop, SCOPE_NODES):
                return False
            if isinstance(loop, ast.For) and EPOCH.search(self.ctx.text(loop.target)) or self._trains(loop):
                return True
        return False

    def _trains(self, loop: ast.AST) -> bool:
        """Does the loop's body train (`TrainingLoops.trains`): backpropagate, itself or in the functions
        of the project it calls (`fit_one(model, loader, opt)`)?"""
        return self.ctx.analysis(TrainingLoops).trains(loop)

    def _by_call(self, call: ast.Call) -> TestSelection | None:
        """A callback that monitors a test metric (`ModelCheckpoint(monitor="test_acc")`), an early stopper
        called with a test score (`early_stopping(test_loss, model)`), a trainer that keeps its best model
        by a test set (`Trainer(..., eval_dataset=test_set)` with `load_best_model_at_end=True`)."""
        func = _last(call.func)
        if CALLBACK.search(func):
            monitor = next((k.value for k in call.keywords if k.arg == "monitor"), None)
            if isinstance(monitor, ast.Constant) and isinstance(monitor.value, str) and TEST.search(monitor.value):
                return TestSelection(monitor, call.func, f"the callback monitors `{monitor.value}`")
        # Where a call can choose (an epoch loop, a test pass) first: an early stopper's objects cost more.
        score = call.args[0] if call.args else call.keywords[0].value if call.keywords and call.keywords[0].arg else None
        if score is not None and self._chooses(call) and (self._early_stopper(call) or self._plateau_step(call)):
            evidence, related = self._test_score(score)
            if evidence:
                return TestSelection(score, call.func, evidence, related)
        if self._extremum(call):
            evidence = self._test_scores(call.args[0])
            if evidence:
                return TestSelection(call.args[0], call, evidence)
        field = self._record_field(call)
        if field is not None:
            return TestSelection(field, call, "the records are ranked by it")
        evaluated = next((k.value for k in call.keywords if k.arg == "eval_dataset"), None)
        if evaluated is not None and _names_test(self.ctx.text(evaluated)):
            if "load_best_model_at_end=True" in self.ctx.source.text.replace(" ", ""):
                return TestSelection(evaluated, call.func, "the trainer evaluates it and loads its best model at the end")
        return None

    def _record_field(self, call: ast.Call) -> ast.AST | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("idxmin", "idxmax") and not call.args:  # `df["test_loss"].idxmin()`
            name = _last(func.value, whole=True)
            return func.value if _names_test(name) and SCORE.search(name) else None
        return _record_field(call, _first_or_last(self.ctx, call), self._extremum(call))

    def _extremum(self, call: ast.Call) -> bool:
        """`max(scores)`, `min(losses)`, `np.argmax(scores)`, `torch.tensor(scores).argmin()`-free forms: one
        collection, no axis (an argmax over a prediction's classes is no choice)."""
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
            return False
        func = call.func
        if isinstance(func, ast.Name) and func.id in ("max", "min") and self.ctx.qualified_name(func) is None:
            return True
        name = self.ctx.qualified_name(func) or ""
        return name.startswith(("numpy.", "torch.")) and name.rsplit(".", 1)[-1] in EXTREMA

    def _test_scores(self, collection: ast.AST) -> str | None:
        """Why a collection holds per-epoch test scores: its name (`test_f1s`, `history["test_acc"]`), or
        what is appended to it (`accs.append(evaluate(model, test_loader))`)."""
        key = _last(collection, whole=True)
        if _names_test(key) and SCORE.search(key):
            return f"its name, `{key}`"
        if not isinstance(collection, ast.Name):
            return None
        function = self.ctx.scopes.enclosing_function(collection)
        for read in self.ctx.scopes.reads(function, collection.id):
            parent, call = self.ctx.scopes.parent(read), self.ctx.scopes.parent(self.ctx.scopes.parent(read))
            if isinstance(parent, ast.Attribute) and parent.attr == "append" and isinstance(call, ast.Call) and len(call.args) == 1:
                added = call.args[0]
                if isinstance(added, ast.Call) and self._evaluates_test(added):
                    return f"`{_short(self.ctx.text(added))}` appended at line {added.lineno}"
                evidence, _ = self._test_score(added) if isinstance(added, ast.Name) else (None, ())
                if evidence:
                    return f"`{added.id}` appended at line {added.lineno}: {evidence}"
        return None

    def _early_stopper(self, call: ast.Call) -> bool:
        """`early_stopping(...)`, `stopper.step(...)`, or a method of an object an `EarlyStopping(...)` made."""
        if EARLY_STOPPER.search(_last(call.func, whole=True)):
            return True
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else call.func
        return any(EARLY_STOPPER.search(_last(made.func)) for _, made in self.ctx.analysis(Objects).made(receiver) or [])

    def _plateau_step(self, call: ast.Call) -> bool:
        """`scheduler.step(score)` of a `ReduceLROnPlateau`: the score decides the learning rate of the run."""
        step = step_of(self.ctx, call)
        return step is not None and step.kind is StepKind.PLATEAU

    def _running_best(self, assign: ast.Assign) -> list[TestSelection]:
        """`best_acc = max(best_acc, test_acc)`: a reported maximum."""
        call = assign.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in ("max", "min")):
            return []
        best = [a for a in call.args if BEST.search(_last(a))]
        scores = [(a, e) for a in call.args if not BEST.search(_last(a)) and (e := self._test_score(a))[0]]
        return [TestSelection(scores[0][0], best[0], *scores[0][1])] if best and scores and self._chooses(assign) else []

    def _keeps(self, branch: ast.If) -> bool:
        """Does the branch keep a best score, a checkpoint or stop early?"""
        for node in (n for s in [*branch.body, *branch.orelse] for n in ast.walk(s)):
            if isinstance(node, ast.Break):
                return True
            if isinstance(node, (ast.Assign, ast.AugAssign)) and any(BEST.search(_last(t)) for t in _targets(node)):
                return True
            if isinstance(node, ast.Call) and KEEPING_CALL.search(_last(node.func)):
                return True
        return False

    def _test_score(self, score: ast.AST, callers: Callers | None = None) -> tuple[str | None, tuple[Related, ...]]:
        """Why `score` is measured on test data, and the call site that says so; None when nothing does.
        `callers`: the linted file's, when this file is a module read for its project."""
        key = _last(score, whole=True)
        if _names_test(key):
            return f"its name, `{key}`", ()
        if isinstance(score, ast.Subscript):  # `test_metrics["acc"]`, `results["acc"]` of an evaluation
            if _names_validation(score.slice):
                return None, ()  # `accs["val"]` of an evaluation of every split
            score = score.value
            key = _last(score, whole=True)
            if _names_test(key):
                return f"its name, `{key}`", ()
        if isinstance(score, ast.Name):
            definitions = self.values.reaching_definitions(score)  # `va` of `va, te = acc(val), acc(test)`: its own item
            made = [d.value if d.value is not None else getattr(self._statement(d.node), "value", None) for d in definitions]
        else:  # the evaluation itself: `stopper(evaluate(model, loaders["test"]), model)`, `-evaluate(...)[1]`
            made = [score]
        for value in made:
            for call in [n for n in ast.walk(value) if isinstance(n, ast.Call)] if value is not None else []:
                if self._evaluates_test(call) and value is score:
                    data = next((t for a in call.args if TEST.search(t := self.ctx.text(a))), None)
                    return (f"it evaluates `{_short(data)}`" if data else f"`{_short(self.ctx.text(call))}` at line {call.lineno}"), ()
                if self._evaluates_test(call):
                    return f"`{_short(self.ctx.text(call))}` at line {call.lineno}", ()
                passed = self._passed_test(call, callers or self.ctx.analysis(Callers))
                if passed is not None:
                    return passed
        function = self.ctx.scopes.enclosing_function(score)
        if function is not None and self._is_test_pass(function):
            return f"it is computed in the test pass `{function.name}`", ()
        return self._dispatched_test(score, function) or (None, ())

    def _dispatched_test(self, score: ast.AST, hook: ast.AST | None) -> tuple[str, tuple[Related, ...]] | None:
        """A test score a training loop hands to a callback's hook as the parameter `score` is (`for cb in
        callbacks: cb(model, test_acc)` running `BestCheckpoint.__call__(self, model, score)`): the loop's
        items are instances of the hook's class, as the objects layer tells (or, for a named hook, unknown)."""
        definitions = self.values.reaching_definitions(score) if isinstance(score, ast.Name) else []
        if not definitions or not all(is_parameter(d) for d in definitions) or not self._hook_run_per_epoch(hook):
            return None
        index, path = self.ctx.project, self.ctx.absolute_path
        for caller in self._calling_in(index, hook.name):
            for call in caller.analysis(Selections)._epoch_dispatches(hook.name):
                runs = [(c.ctx.absolute_path, c.function.lineno) for c in caller.analysis(TrainingLoops).item_methods(call, self.ctx)]
                if (path, hook.lineno) not in runs and (runs or hook.name == "__call__"):
                    continue
                argument = bind_arguments(call, hook, True).get(score.id)
                evidence, related = caller.analysis(Selections)._test_score(argument, self.ctx.analysis(Callers)) if argument is not None else (None, ())
                if evidence:
                    where, line, site = self.ctx.analysis(Callers).place(caller, call)
                    return f"`{_short(caller.text(argument))}` passed as `{score.id}` at {where}:{line}; {evidence} there", (site, *related)
        return None

    def _passed_test(self, call: ast.Call, callers: Callers) -> tuple[str, tuple[Related, ...]] | None:
        """Test data that a call site passes for the evaluator or loader an evaluation reads: a parameter
        of the function around it, or `self.x` that `__init__` sets from its parameter."""
        function = self.ctx.scopes.enclosing_function(call)
        func = call.func
        receivers = [func, func.value] if isinstance(func, ast.Attribute) else [func]  # `self.evaluator(model)` too
        for read in [*call.args, *(k.value for k in call.keywords), *receivers]:
            found = self._parameter_of(read, function)
            if found is None:
                continue
            holder, name = found
            for binding in callers.bindings_in(self.ctx, holder):
                passed = binding.argument(name)
                text = passed[0].text(passed[1]) if passed is not None else ""
                named = _names_test(text)
                built = _built_on_test(passed[0], passed[1]) if text and not named else None
                if named or built:
                    built = f", built on `{_short(built)}`" if built else ""
                    return f"`{_short(text)}` passed as `{name}` at {binding.place}{built}", call_sites(binding)
        return None

    def _parameter_of(self, read: ast.AST, function: ast.AST | None) -> tuple[ast.AST, str] | None:
        """(the function, the parameter) whose argument `read` holds, as the objects layer tells: a
        parameter of `function` or an alias of one (`loader = eval_loader`), or `self.x` that a method of
        its class sets from its parameter (`__init__`, a setter)."""
        if function is None or not isinstance(read, (ast.Name, ast.Attribute)):
            return None
        found = self.ctx.analysis(Objects).points_to(read)
        held = {(obj.node, obj.name) for obj in found or () if obj.kind == "parameter"}
        return held.pop() if len(held) == 1 and len(found) == 1 else None

    def _evaluates_test(self, call: ast.Call) -> bool:
        arguments = [*call.args, *(k.value for k in call.keywords)]
        texts = [self.ctx.text(a) for a in arguments]
        if any(VALIDATION.search(t) for t in texts):
            return False
        if any(TEST.search(t) for t in texts) or TEST.search(self.ctx.text(call.func)):
            return True
        return any(isinstance(a, ast.Name) and _built_on_test(self.ctx, a) for a in arguments)  # `held = DataLoader(splits["test"])`

    def _is_test_pass(self, function: ast.AST) -> bool:
        """`def test(epoch):`, or a function that loops over test data, over no training or validation
        data, and calls no `backward`."""
        if function not in self._passes:
            texts = [self.ctx.text(n.iter) for n in self.ctx.index.within(function, ast.For)]
            named = isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and TEST_PASS.match(function.name)
            over_test = any(TEST.search(t) for t in texts) and not any(VALIDATION.search(t) or TRAIN.search(t) for t in texts)
            over_test &= not any(_last(c.func) == "backward" for c in self.ctx.index.within(function, ast.Call))
            self._passes[function] = bool(named or over_test)
        return self._passes[function]

    def _statement(self, node: ast.AST) -> ast.AST:
        while not isinstance(node, ast.stmt):
            node = self.ctx.scopes.parent(node)
        return node


def _built_on_test(ctx, argument: ast.AST, depth: int = 0) -> str | None:
    """What says an argument holds test data, whatever its own name: a split read by its key or name in
    what it is built from (`Evaluator(DataLoader(splits["test"]))`, `DataLoader(test_set)`), or named by a
    string it is given (`Evaluator(loader, "test")`, `MNIST(root, split="test")`), through the names
    assigned it (evaluator, loader, dataset: three steps); None when nothing does, or training or
    validation data is named there too. A name a builder of another module binds (`opt, held = build(data)`)
    holds what the builder made there, as the objects layer follows it: test data when every one is."""
    made = ctx.analysis(Objects).made(argument) if isinstance(argument, ast.Name) and depth < 2 else None
    if made and all(home is not ctx for home, _ in made):
        found = [_built_on_test(home, call, depth + 1) for home, call in made]
        return found[0] if all(found) else None
    values = (ctx.analysis(ValueKinds).reaching_values(argument) or []) if isinstance(argument, ast.Name) else [argument]
    found = None
    for node in (n for value in values for n in ast.walk(value) if n is not value or not isinstance(n, ast.Name)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            text = node.slice.value  # `splits["test"]`
        elif isinstance(node, (ast.Name, ast.Attribute)):
            text = _last(node, whole=True)
        elif isinstance(node, ast.Call):  # `Evaluator(loader, "test")`, `load_dataset(name, split="test")`
            text = " ".join(a.value for a in (*node.args, *(k.value for k in node.keywords)) if isinstance(a, ast.Constant) and isinstance(a.value, str))
        else:
            continue
        if TRAIN.search(text) or (VALIDATION.search(text) and not _names_test(text)):
            return None
        if TEST.search(text):
            found = found or (ctx.text(node) if not isinstance(node, ast.Call) else f'"{text}"')
        elif isinstance(node, ast.Name) and depth < 2:
            found = found or _built_on_test(ctx, node, depth + 1)
    return found


def _names_test(text: str) -> bool:
    """Does a name or key say test data (`test_acc`, `test_eval`: an evaluation of the test set), and no
    validation data (`val_test`, `eval_loader`)?"""
    return bool(TEST.search(text)) and not VALIDATION.search(EVALUATION.sub("", text))


def _names_validation(key: ast.AST) -> bool:
    """Is `key` a constant naming validation data, not test data (`"val"`, `"idx_valid"`)?"""
    return isinstance(key, ast.Constant) and isinstance(key.value, str) and bool(VALIDATION.search(key.value)) and not TEST.search(key.value)


def _score_and_best(compare: ast.Compare) -> tuple[ast.AST, ast.AST] | None:
    """(score, best) of `score > best`, either way round: one side named as a best score, the other not."""
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], ORDERING):
        return None
    left, right = compare.left, compare.comparators[0]
    for score, best in ((left, right), (right, left)):
        if BEST.search(_last(best)) and not BEST.search(_last(score)):
            return score, best
    return None


def _compares(expr: ast.AST) -> list[ast.Compare]:
    """The comparisons a test makes, through `and` / `or`."""
    if isinstance(expr, ast.BoolOp):
        return [c for value in expr.values for c in _compares(value)]
    return [expr] if isinstance(expr, ast.Compare) else []


def _asks_test_phase(test: ast.AST) -> bool:
    """`phase == "test"` among the conditions."""
    return any(
        isinstance(c.ops[0], ast.Eq) and any(isinstance(v, ast.Constant) and v.value == "test" for v in (c.left, *c.comparators))
        for c in _compares(test)
    )


def _targets(node: ast.Assign | ast.AugAssign) -> list[ast.AST]:
    """The targets an assignment binds, in tuples too (`best_lr, best_acc = lr, acc`)."""
    return [t for target in (node.targets if isinstance(node, ast.Assign) else [node.target]) for t in _unpacked(target)]


def _unpacked(target: ast.AST) -> list[ast.AST]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for element in target.elts for t in _unpacked(element)]
    return [target.value] if isinstance(target, ast.Starred) else [target]


def _last(node: ast.AST, whole: bool = False) -> str:
    """The name an expression reads as: `best_acc` for `self.best_acc` (the whole key with `whole`),
    `test_acc` for `metrics["test_acc"]`."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    if not parts:
        return ""
    return ".".join(reversed(parts)) if whole else parts[0]


def _record_field(call: ast.Call, first_or_last: bool, extremum: bool) -> ast.AST | None:
    """The test score that `min(results, key=lambda r: r["test_loss"])`, `max(runs, key=itemgetter(
    "test_acc"))`, `min(r["test_loss"] for r in results)`, `np.argmin([r["test_loss"] for r in runs])` or
    `sorted(runs, key=...)[0]` (`first_or_last`) ranks records by: a `min`/`max` (`extremum`: of numpy or
    torch too) over one collection, whose key or generated element reads a field named for a test score."""
    builtin = isinstance(call.func, ast.Name) and call.func.id in ("max", "min", *(("sorted",) if first_or_last else ()))
    if not ((builtin or extremum) and len(call.args) == 1):
        return None
    key = next((k.value for k in call.keywords if k.arg == "key"), None)
    field = None
    if isinstance(key, ast.Lambda):
        field = key.body
    elif isinstance(key, ast.Call) and _last(key.func) in ("itemgetter", "attrgetter") and len(key.args) == 1:
        field = key.args[0]
        if not (isinstance(field, ast.Constant) and isinstance(field.value, str)):
            return None
    elif key is None and isinstance(call.args[0], (ast.GeneratorExp, ast.ListComp)):
        field = call.args[0].elt
    if isinstance(field, ast.Subscript) and not isinstance(field.slice, ast.Constant):
        field = field.value  # `lambda i: test_accs[i]`
    name = field.value if isinstance(field, ast.Constant) and isinstance(field.value, str) else _last(field, whole=True) if field else ""
    return field if name and _names_test(name) and SCORE.search(name) else None


def _first_or_last(ctx, call: ast.Call) -> bool:
    """Is `call` indexed by its first or last item (`sorted(...)[0]`, `[-1]`)?"""
    parent = ctx.scopes.parent(call)
    index = parent.slice if isinstance(parent, ast.Subscript) and parent.value is call else None
    last = isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) and isinstance(index.operand, ast.Constant)
    value = index.operand.value if last else index.value if isinstance(index, ast.Constant) else None
    return type(value) is int and value == (1 if last else 0)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 50 else text[:47] + "..."
