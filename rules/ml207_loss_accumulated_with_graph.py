import ast

from mllint.analysis.facets.gradients import ANY_MODULE, GradientFlow, State
from mllint.analysis.facets.loop_events import Event, EventKind
from mllint.analysis.facets.loops import LOOP_NODES, TRAINING_WORDS, TrainingLoops
from mllint.analysis.facets.loss_terms import signed_terms
from mllint.analysis.facets.meters import APPENDS, cut_on_a_path, dict_of, kept_argument, receiver, returned_loss, same_tensor
from mllint.analysis.program.project import ProjectView
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.scopes import FUNCTION_NODES, own_nodes
from mllint.analysis.syntax.tree import same_expression
from mllint.analysis.values.values import ValueKinds
from mllint.findings import Applicability, Fix
from mllint.rule import Rule
from mllint.source import one_line

COLLECTING = (ast.ListComp, ast.SetComp, ast.GeneratorExp)
KEEPING_BUILTINS = frozenset({"sum", "list", "tuple"})  # consume a generator into one value that keeps each item
KEEPING_FUNCTIONS = frozenset({"torch.stack", "torch.cat", "torch.sum"})
MAX_AUGMENTED = 4  # how many `loss += term` statements back a loss is followed
# Calls that only display or record a value.
LOGGING_CALLS = frozenset({
    "print", "info", "debug", "warning", "log", "add_scalar", "add_scalars", "write", "set_postfix",
    "set_description", "log_metrics", "log_dict", "format",
})  # fmt: skip
METER_MESSAGE = (
    "`{loss}` is kept with its autograd graph by `{call}`: `{cls}` adds it into `self.{attribute}` ({place}), "
    "so every iteration's graph stays in memory; pass {instead}"
)


OUTPUT_MESSAGE = (
    "`{loss}` carries the autograd graph of this iteration{made} and `{call}` keeps it: `{cls}` adds a value computed "
    "from it into `self.{attribute}` ({place}), so every iteration's graph stays in memory; pass {instead}"
)
CONTAINER_MESSAGE = (
    "`{loss}` holds `{held}`, the loss backpropagated at line {line}, and is kept in `{total}` with its autograd "
    "graph: every iteration's graph stays in memory; keep `{held}.item()` (or detached values)"
)


STEP_MESSAGE = (
    "{values} {verb} the graph of the loss `{function}` returns, and `{call}` keeps it: `{cls}` adds it into "
    "`self.{attribute}` ({place}), so every step's graph stays in memory; pass detached values (`.detach()`, `.item()`)"
)
OBJECT_MESSAGE = (
    "`{value}` carries this step's autograd graph and is appended to `{total}`, which the object keeps across "
    "the calls of `{function}`: every step's graph stays in memory; append a detached value (`.item()`, `.detach()`)"
)
# Hooks a framework runs under `torch.no_grad()`: what they log keeps no graph.
NO_GRAD_HOOKS = frozenset({"validation_step", "test_step", "predict_step", "evaluate", "validate", "test"})


LIVE_MESSAGE = (
    "`{value}` carries this iteration's autograd graph ({made}) and is kept in "
    "`{total}` across iterations: every iteration's graph stays in memory; keep `.item()` (or a detached value)"
)
RETURNED_MESSAGE = (
    "`{loss}` is {what} `{function}` backpropagates ({place}) and returns with its autograd graph; "
    "accumulated into `{total}`, every iteration's graph stays in memory: return `loss.item()` (or a detached loss)"
)


class LossAccumulatedWithGraph(Rule):
    """
    ## What it does
    Reports a loop that adds the loss it backpropagates (whatever its optimizer) to a running total (`total += loss`,
    `total = total + loss`, `total += loss * x.size(0)`, `stats["loss"] += loss`), keeps it in a record it
    appends (`logs.append({"step": i, "loss": loss})`), adds the terms it was summed from
    (`running[k] += v` over `loss_dict.items()`) or appends it to a list (`losses.append(loss)`, a dict's list:
    `history["loss"].append(loss)`) kept across iterations, without `.item()` or `.detach()`; a total or list an object keeps (`self.running +=
    loss`, `self.outputs.append(out)`) counts unless the loop rebinds or clears it; a step function (a backward, then a step) that appends a
    live value to a list its object keeps and does not renew in it (`self.scores.append(dice(probs, y))`,
    cleared at the epoch's end) keeps every step's graph, since its callers run it per batch. It also reports the loss handed to a meter, an
    object of a project class (possibly in another module, or passed in by a caller) whose method adds
    what it is given into an attribute kept across calls (`losses.update(loss, n)` where `update` does
    `self.sum += val * n` or `self.values.append(val)`), also a meter held by another project object
    (`metrics.losses_track.update(loss)`). A loss held in a dict or an output object
    (`output["loss"].backward()`) is followed through its holder: the holder appended to a list
    (`outputs.append(output)`), its values summed (`running[k] += v` over `output.items()`) or handed to a
    meter that sums them (`self.sums[key] += losses[key]`). A loss a step function of the project
    backpropagates and returns as it is (alone, in a tuple, as a dict's value) is followed into the loop
    that calls it, in any module: `total_loss += trainer.train_step(batch)`, `loss, acc = step(...)` then
    `losses.append(loss)`, `meter.update(train_step(batch))`, and each value of a dict it returns (`for k,
    v in out.items(): logs[k] += v`), and the whole dict or tuple it returns when it holds the loss
    (`history.append(step(batch))` summed later), and the terms a loss function returns beside the loss they sum (`loss,
    parts = self.loss_fn(...)`, `return parts` after `loss.backward()`), also when a comprehension collects them (`sum(train_step(b) for b in
    loader)`) or the step is a method of an object a caller passes. A value other than the loss that carries
    the iteration's graph (a metric of the model's output: `history.append(psnr(sr, hr))`, each value of a
    metric's returned dict `for k, v in metric.process(logits, y).items(): totals[k] += v`, the output
    itself, a term the backpropagated loss sums: `sum_reg += reg_loss` of `loss = task + beta * reg_loss`,
    also in a running average `avg = 0.9 * avg + 0.1 * psnr(sr, hr)`, `ema = v if ema is None else 0.98 * ema + 0.02 * v`,
    `torch.lerp(avg, v, 0.1)`, `avg.mul_(0.9).add_(v)`, or first bound to a
    name: `f1 = soft_f1(logits, y)`) appended to a list or added into a
    total kept across the iterations of a loop that backpropagates is reported too (not a factor that
    only weights the loss, such as a return); not when it is cut (`.item()`, `.detach()`, `float()`), compared
    (`(pred.argmax(1) == y).float().mean()`) or computed under `torch.no_grad()`. A model's output, or any value the backpropagated loss is computed
    from, handed to a metric of the project that keeps a value computed from it with its graph
    (`metric.process(pred, y)` appending `F.mse_loss(pred, y)`, a running dice `self.total = self.total +
    dice(logits, mask)`, `self.scores = torch.cat([self.scores, scores])`, metrics held in a dict, a project
    helper of the output such as `meter.add(psnr(pred, y))`, a step's returned `(y_pred, y)`) is reported too, as is `meter.update([loss])` and a logger
    of the project that sums what it logs; so is a step function whose returned loss carries a graph (its
    caller backpropagates it) and that hands that loss, or what it is computed from, to such a meter
    (`self.history.log_dict({"mse": mse, "loss": loss})` in `training_step`, once per call; not in
    `validation_step`, which frameworks run without gradients); so is a live value a step function (a
    backward, then an optimizer step, once per call) hands to a meter its object or its caller keeps
    (`self.meters["psnr"].update(psnr(sr, hr))`), not one built in the step. The gradient flow of what the
    method keeps decides, so a metric that detaches or compares (`(pred.argmax(1) == y).sum()`), or
    computes under `@torch.no_grad()` / `with torch.no_grad():`, is not. An element of a tuple is followed apart from the
    others where the tuple's elements are known (`loss, top1 = self.compute_loss(x, y)` returning `loss,
    float(acc)`; `_, pred = out.max(1)`): only the elements that carry the graph count. A total that is reset every iteration, or that
    is itself backpropagated (`loss += reg` before one `backward()`), is not reported; nor is a meter that
    converts the value itself (`float(val)`, `val.item()`), one built or reset on every path of the iteration (a reset
    under `if it % 500 == 0:` still keeps 500 graphs), or one
    from a library (its code is not read).

    ## Why is this bad?
    The loss is a tensor that holds its autograd graph. The running total keeps every iteration's graph
    alive (each `+=` adds a node referencing the previous total), so memory grows every step until the
    run dies of out-of-memory, hours later, for a value that was only meant to be printed.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    total_loss = 0.0
    for x, y in data:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    print(f"loss {total_loss / len(data):.3f}")
    ```

    ## Use instead
    ```python
    import torch

    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    total_loss = 0.0
    for x, y in data:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    print(f"loss {total_loss / len(data):.3f}")
    ```

    ## Fix safety
    The fix adds `.item()` to the loss. It is safe when the total is only printed or logged; when the
    total is used otherwise (returned, fed to tensor operations) it is unsafe, as the total becomes a
    Python float.
    """

    code = "ML207"
    name = "loss-accumulated-with-graph"
    message = (
        "`{loss}` is accumulated into `{total}` with its autograd graph: every iteration's graph stays in memory; "
        "use `{loss}.item()`"
    )
    fix_applicability = Applicability.SAFE
    requires_any_text = TRAINING_WORDS  # the backward may be in a step function of another module

    def end_file(self) -> None:
        values = self.ctx.analysis(ValueKinds)
        reported: set[ast.AST] = set()
        self._collected(reported)
        self._stepped(reported)
        loops = self.ctx.analysis(TrainingLoops)
        # Every loop: one that backpropagates (its optimizer may be unknown), one whose step function of
        # another module runs the backward (`total += trainer.step(b)`). A comprehension assigns nothing
        # across its iterations.
        for loop in self.ctx.index.of_type(*LOOP_NODES):
            function = self.ctx.scopes.enclosing_function(loop)
            losses = self._backpropagated(loops.events_of_loop(loop), function) if loop in loops.may_train else {}
            for loss, total, fixable in self._accumulations(loop):
                if loss in reported:
                    continue
                returned = returned_loss(self.ctx, loss) if _base(total) is not None else None
                if returned is not None and self._kept_across_iterations(total, loop, function):
                    reported.add(loss)
                    message = RETURNED_MESSAGE.format(loss=self.ctx.text(loss), what=returned.what, total=ast.unparse(total), function=returned.function, place=returned.places(self.ctx))
                    self.report(loss, message)
                    continue
                used = None
                if isinstance(loss, ast.Name):
                    used = next((u for u in losses if same_tensor(values, loss, u) or self._part_of(loss, u, values, losses[u] is not None)), None)
                if used is None:
                    self._kept_live(loss, total, loop, function, loops, reported)
                    continue
                if not self._kept_across_iterations(total, loop, function):
                    continue
                reported.add(loss)
                held = losses[used]
                if held is not None and loss.id == used.id:  # the holder itself: `outputs.append(output)`
                    self.report(loss, CONTAINER_MESSAGE.format(loss=loss.id, total=ast.unparse(total), held=ast.unparse(held), line=held.lineno))
                    continue
                message = self.message.format(loss=loss.id, total=ast.unparse(total))
                plain = fixable and held is None and isinstance(_base(total), ast.Name)  # a holder's values may be no tensors
                fix = self._fix(loss, _base(total), function) if plain else None
                self.report(loss, message, fix)
            self._metered(loop, self._training_loop(loop, loops), losses, reported)
        # A step function (a backward, then an optimizer step, outside any loop of its own) runs once per
        # batch: what it hands to a meter its object or its caller keeps is kept across the steps.
        for function in self.ctx.index.of_type(ast.FunctionDef, ast.AsyncFunctionDef):
            if function.name not in NO_GRAD_HOOKS and loops.is_a_step(function):
                events = [e for e in loops.events_of_statements(function.body) if not e.loops]
                losses = self._backpropagated(events, function)
                self._metered(function, function, losses, reported)
                self._kept_by_object(function, losses, reported)

    def _kept_live(self, value: ast.AST, total: ast.AST, loop: ast.AST, function, loops: TrainingLoops, reported: set[ast.AST]) -> None:
        """A value other than the loss that carries the graph of the training iteration around `loop` (a
        metric of the model's output: `psnr(sr, hr)`, a soft dice of the logits), added to a total or
        appended to a list kept across its iterations."""
        training = self._training_loop(loop, loops)
        if value in reported or training not in loops.may_train or not self._kept_across_iterations(total, training, function):
            return
        if isinstance(value, ast.Name) and cut_on_a_path(self.ctx.analysis(ValueKinds), value):
            return  # `df_loss = df_loss.detach().item()` after its backward
        losses = self._backpropagated(loops.events_of_loop(training), function)
        if losses and self._live(value, losses, training, terms_only=True):
            reported.add(value)
            term = self._summed_into(value, losses) if isinstance(value, ast.Name) and self.ctx.analysis(GradientFlow).flow(value).state is not State.GRAPH else None
            made = f"it is a term of the loss backpropagated at line {term.lineno}" if term is not None else f"it is computed from the model's output{self._made_by(value)}"
            message = LIVE_MESSAGE.format(value=one_line(self.ctx.text(value), 50), made=made, total=ast.unparse(_base(total)))
            self.report(value, message)

    def _made_by(self, value: ast.AST) -> str:
        """` by `psnr`, utils.py:7` (where it returns the value) for a value a function of the project returns (or a value of the
        dict it returns: `v` of `for k, v in metric.process(p, y).items()`); empty for any other."""
        definitions = self.ctx.analysis(ValueKinds).reaching_definitions(value) if isinstance(value, ast.Name) else []
        call = value if isinstance(value, ast.Call) else dict_of(self.ctx, definitions[0].node) if len(definitions) == 1 else None
        call = call if call is not None or len(definitions) != 1 else definitions[0].value  # `f1 = soft_f1(logits, y)`
        found = self.ctx.analysis(GradientFlow).callee(call, followed=ANY_MODULE) if isinstance(call, ast.Call) else None
        returned = function_returns(found[0].function) if found is not None else None
        if not returned:
            return ""
        callee = found[0]
        path = "" if callee.ctx is self.ctx else self.ctx.analysis(ProjectView).display_path(callee.ctx.real_path or callee.ctx.path)
        cls = callee.ctx.scopes.enclosing_class(callee.function)
        name = f"{cls.name}.{callee.function.name}" if cls is not None else callee.function.name
        return f" by `{name}`, {f'{path}:{returned[-1].lineno}' if path else callee.ctx.place(returned[-1])}"

    def _kept_by_object(self, step: ast.AST, losses: dict, reported: set[ast.AST]) -> None:
        """A step function (run once per batch by its callers) that appends a live value to a list its object
        keeps and does not renew there: `self.train_scores.append(dice(torch.sigmoid(logits), mask))`."""
        values = self.ctx.analysis(ValueKinds)
        for node in own_nodes(step.body):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" and len(node.args) == 1):
                continue
            total, value = node.func.value, node.args[0]
            if not is_self_attribute(total) or value in reported or not self._attribute_kept(total, step, self.ctx.scopes.enclosing_class(step) or step):
                continue
            loss = isinstance(value, ast.Name) and any(same_tensor(values, value, u) for u in losses)
            if loss or self._live(value, losses, step):
                reported.add(value)
                self.report(value, OBJECT_MESSAGE.format(value=one_line(self.ctx.text(value), 50), total=self.ctx.text(total), function=step.name))

    def _metered(self, block: ast.AST, training: ast.AST, losses: dict, reported: set[ast.AST]) -> None:
        """The losses, or live values of the iteration `training`, that a method call in `block` hands to a
        meter of the project that keeps them (`losses.update(loss, n)`, `meters["psnr"].update(psnr(sr, hr))`)."""
        values = self.ctx.analysis(ValueKinds)
        for call, loss in self._method_arguments(block):
            used = next((u for u in losses if same_tensor(values, loss, u)), None) if isinstance(loss, ast.Name) else None
            lost = used is None and returned_loss(self.ctx, loss) is None
            if loss in reported or (lost and not (self._backpropagates(training) and self._live(loss, losses, training))):
                continue
            if self._renewed_per_iteration(call) or (block is training and isinstance(block, FUNCTION_NODES) and self._made_here(call, block)):
                continue
            kept = kept_argument(self.ctx, call, loss)
            if kept is not None:
                reported.add(loss)
                place = f"{kept.path}:{kept.line}" if kept.path else f"line {kept.line}"
                call_text = f"{self.ctx.text(call.func)}(...)"
                instead = f"`{self.ctx.text(loss)}.item()`" if used is None or losses[used] is None else "detached values"
                message = METER_MESSAGE if not lost else OUTPUT_MESSAGE
                made = ""
                if lost:  # a value made there; a list of them (`list(step(batch))`) detached item by item
                    instead = "detached values" if _holds_items(loss) else f"`{self.ctx.text(loss)}.detach()`"
                    made = f" (returned{by})" if (by := self._made_by(loss)) else ""
                self.report(loss, message.format(loss=self.ctx.text(loss), made=made, call=call_text, cls=kept.cls, attribute=kept.attribute, place=place, instead=instead))

    def _backpropagates(self, block: ast.AST) -> bool:
        """Does an iteration of `block` run a backward (a step function does; a loop, in its own code or a
        callee's)? Only then does it make a graph that a kept value holds on to (not a builder's loop over
        transforms)."""
        loops = self.ctx.analysis(TrainingLoops)
        return isinstance(block, FUNCTION_NODES) or any(e.kind is EventKind.BACKWARD for e in loops.events_of_loop(block))

    def _made_here(self, call: ast.Call, function: ast.AST) -> bool:
        """Is the meter `call` runs a method of a local name of `function` (built there: renewed per call)?"""
        meter = receiver(call)
        while isinstance(meter, ast.Subscript | ast.Attribute) and not is_self_attribute(meter):
            meter = meter.value
        definitions = self.ctx.analysis(ValueKinds).reaching_definitions(meter) if isinstance(meter, ast.Name) else []
        return any(not isinstance(d.node, FUNCTION_NODES) and self.ctx.scopes.enclosing_function(d.node) is function for d in definitions)

    def _stepped(self, reported: set[ast.AST]) -> None:
        """A step function (its returns carry a graph: the loss its caller backpropagates, once per batch)
        that hands that loss, or a value it is computed from, to a meter of its object kept across calls:
        `self.history.log_dict({"mse": mse, "loss": loss})` in `training_step`, which returns `loss`."""
        flows = self.ctx.analysis(GradientFlow)
        for function in self.ctx.index.of_type(ast.FunctionDef, ast.AsyncFunctionDef):
            if function.name in NO_GRAD_HOOKS:
                continue
            candidates = [
                (call, value) for call, value in self._method_arguments(function)
                if isinstance(value, ast.Name) and value not in reported
                and not any(isinstance(a, LOOP_NODES) for a in self.ctx.scopes.ancestors(call))
            ]  # fmt: skip
            if not candidates or not self._returns_graph(function):
                continue
            returned = [r for r in function_returns(function) or () if isinstance(r, ast.Name)]
            kept_by: dict[ast.Call, list] = {}  # one finding per call, naming every value it keeps
            for call, value in candidates:
                if flows.flow(value).state is not State.GRAPH:
                    continue
                made = {d.node for d in self.ctx.analysis(ValueKinds).reaching_definitions(value)}
                if not any(same_tensor(self.ctx.analysis(ValueKinds), value, r) or flows.depends_on(r, made) for r in returned):
                    continue
                kept = kept_argument(self.ctx, call, value)
                if kept is not None:
                    reported.add(value)
                    kept_by.setdefault(call, []).append((value, kept))
            for call, found in kept_by.items():
                (value, kept), names = found[0], ", ".join(f"`{v.id}`" for v, _ in found)
                place = f"{kept.path}:{kept.line}" if kept.path else f"line {kept.line}"
                message = STEP_MESSAGE.format(
                    values=names, verb="carries" if len(found) == 1 else "carry", call=f"{self.ctx.text(call.func)}(...)",
                    cls=kept.cls, attribute=kept.attribute, place=place, function=function.name,
                )  # fmt: skip
                self.report(value, message)

    def _returns_graph(self, function: ast.AST) -> bool:
        flows = self.ctx.analysis(GradientFlow)
        returned = function_returns(function)
        return bool(returned) and any(isinstance(r, ast.Name) and flows.flow(r).state is State.GRAPH for r in returned)

    def _collected(self, reported: set[ast.AST]) -> None:
        """A comprehension of the live losses a step function returns, kept whole: `sum(train_step(b) for b in
        loader)` chains every step's graph into one total, `[train_step(b) for b in loader]` keeps them all."""
        for comprehension in self.ctx.index.of_type(*COLLECTING):
            consumer = self.ctx.scopes.parent(comprehension)
            if isinstance(comprehension, ast.GeneratorExp):
                name = self.ctx.qualified_name(consumer.func) if isinstance(consumer, ast.Call) else None
                builtin = isinstance(consumer, ast.Call) and isinstance(consumer.func, ast.Name) and consumer.func.id in KEEPING_BUILTINS
                if not (builtin or name in KEEPING_FUNCTIONS):
                    continue
                total = consumer
            else:
                total = comprehension
            returned = returned_loss(self.ctx, comprehension.elt) if comprehension.elt not in reported else None
            if returned is not None:
                reported.add(comprehension.elt)
                text = one_line(self.ctx.text(total), 60)
                self.report(comprehension.elt, RETURNED_MESSAGE.format(loss=self.ctx.text(comprehension.elt), what=returned.what, total=text, function=returned.function, place=returned.places(self.ctx)))

    def _backpropagated(self, events: list[Event], function) -> dict[ast.Name, ast.AST | None]:
        """The names an iteration calls `backward` on, in the loop's own function; for a loss held in a
        dict or an output object (`output["loss"].backward()`), the name of the holder, with what it holds."""
        names = {}
        for event in (e for e in events if e.kind is EventKind.BACKWARD):
            call = event.node
            if event.path is not None:  # in another file
                continue
            if self.ctx.scopes.enclosing_function(call) is not function or not isinstance(call.func, ast.Attribute):
                continue
            receiver = call.func.value
            if isinstance(receiver, ast.Call) and receiver.args:  # scaler.scale(loss).backward()
                receiver = receiver.args[0]
            elif call.args:  # accelerator.backward(loss)
                receiver = call.args[0]
            held = _held(receiver)
            if held is not None:
                names[held.value] = held
            elif isinstance(receiver, ast.Name):
                names[receiver] = None
        return names

    def _accumulations(self, loop: ast.AST):
        """(loss name, total, whether `.item()` after the loss fixes it) for `total += loss`, `total += loss * n`,
        `stats["loss"] += loss`, `total.append(loss)`, and the forms of a running average: `avg = 0.9 * avg +
        0.1 * loss`, `ema = loss if ema is None else ...`, `avg = torch.lerp(avg, loss, w)`, `avg.mul_(m).add_(loss)`."""
        for node in own_nodes(loop.body):
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and _base(node.target) is not None:
                yield from ((factor, node.target, True) for factor in _added_factors(node.value))
            elif _self_sum(node) is not None:  # `total = total + loss`, `avg = 0.9 * avg + 0.1 * loss`
                plain = isinstance(node.value, ast.BinOp)
                yield from ((factor, node.targets[0], plain) for added in _self_sum(node) for factor in _added_factors(added))
            elif (total := _added_in_place(node)) is not None:
                yield from ((factor, total, False) for factor in _added_factors(node.args[0]))
            elif (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                and _base(node.func.value) is not None and len(node.args) == 1 and not node.keywords
                and (_base(node.func.value) is node.func.value or isinstance(_base(node.func.value), ast.Name))
            ):  # fmt: skip  # `history[name].append(v)`: a list of a dict of lists
                added = node.args[0]  # `logs.append({"step": i, "loss": loss})`: each value of the record
                items = added.values if isinstance(added, ast.Dict) else added.elts if isinstance(added, ast.Tuple | ast.List) else [added]
                yield from ((item, node.func.value, True) for item in items)

    def _method_arguments(self, block: ast.AST):
        """(call, argument) for each name or call passed to a method of an object in a loop's or a function's
        body: `meter.update(loss, n)`."""
        for node in own_nodes(block.body):
            if isinstance(node, ast.Call) and (isinstance(node.func, ast.Attribute) or self._called_object(node.func)):
                if isinstance(node.func, ast.Attribute) and node.func.attr in APPENDS:  # a logger of the project that sums what it logs is a meter too
                    continue
                for argument in [*node.args, *(k.value for k in node.keywords)]:
                    if isinstance(argument, (ast.Name, ast.Call)) or _constant_item(argument):  # `meter.update(trainer.train_step(batch))`, `res[0]`
                        yield node, argument
                    elif isinstance(argument, (ast.List, ast.Tuple)):  # `meter.update([loss])`
                        yield from ((node, e) for e in argument.elts if isinstance(e, ast.Name))
                    elif isinstance(argument, ast.Dict):  # `history.log_dict({"mse": mse, "loss": loss})`
                        yield from ((node, e) for e in argument.values if isinstance(e, ast.Name))

    def _called_object(self, func: ast.AST) -> bool:
        """A local name called as an object (`m(pred, y)` of `for m in self.metrics`), no function it imports or defines."""
        return isinstance(func, ast.Name) and self.ctx.qualified_name(func) is None and bool(self.ctx.analysis(ValueKinds).reaching_definitions(func))

    def _live(self, value: ast.AST, losses: dict, loop: ast.AST, terms_only: bool = False) -> bool:
        """Does `value` carry the graph of the iteration: a model's output (`pred = model(x)`), or a value
        the backpropagated loss is computed from (`logits` of `loss = criterion(logits, y)`)? Not a name
        bound only before the loop (the model itself, handed to an evaluator: no iteration's graph).
        `terms_only`: of the values the loss is computed from, only a term it sums (`reg_loss` of `loss =
        task + beta * reg_loss`), not a factor such as a return weighting a log-likelihood."""
        if _constant_item(value) and isinstance(value.slice, ast.Name):  # `terms[name]` of a dict of the loss's terms
            return self._live(value.value, losses, loop, terms_only)
        definitions = self.ctx.analysis(ValueKinds).reaching_definitions(value) if isinstance(value, ast.Name) else None
        if definitions is not None and not any(self._in_loop(d.node, loop) for d in definitions):
            return False
        flows = self.ctx.analysis(GradientFlow)
        if flows.parameter(value):
            return False  # a parameter (`p` of `model.named_parameters()`): a leaf, no iteration's graph
        if returned_loss(self.ctx, value, feeding=True) is not None:  # `output = engine.process(batch)`: `(y_pred, y)`
            return True
        state = flows.flow(value).state
        if state is State.UNKNOWN and isinstance(value, ast.Call):  # `psnr(pred, y)`: a project helper of a live value
            live = {a for a in value.args if isinstance(a, ast.Name) and self._live(a, losses, loop)}
            return bool(live) and flows.passes_graph(value, live)
        if state is not State.UNKNOWN or not isinstance(value, ast.Name):
            return state is State.GRAPH
        definitions = self.ctx.analysis(ValueKinds).reaching_definitions(value)
        holder = dict_of(self.ctx, definitions[0].node) if len(definitions) == 1 else None
        if isinstance(holder, ast.Call):  # `v` of `for k, v in metric.process(logits, y).items()`
            return self._live(holder, losses, loop)
        if len(definitions) == 1 and isinstance(definitions[0].value, ast.Call) and self._live(definitions[0].value, losses, loop):
            return True  # `f1 = soft_f1(logits, y)`: what the helper returns
        if any(self._data(d) for d in definitions):
            return False  # an item of what the loop iterates (`yb` of `for xb, yb in batches`): data, not made from the model
        made = {d.node for d in definitions}
        if terms_only:
            return bool(made) and self._summed_into(value, losses) is not None
        return bool(made) and any(flows.depends_on(loss, made) for loss in losses)

    def _summed_into(self, value: ast.Name, losses: dict) -> ast.Name | None:
        """The backpropagated loss `value` is a term of (`reg_loss` of `loss = task + beta * reg_loss`)."""
        return next((loss for loss in losses if any(value.id in t.through or _named(t.node, value.id) for t in signed_terms(self.ctx, loss))), None)

    def _data(self, definition) -> bool:
        """Is a definition an item of the batch: of what a loop iterates (`yb` of `for xb, yb in batches`), or of
        the batch a step function is given (`x, y = batch`, `y = batch["y"]`)?"""
        statement = self.ctx.scopes.statement(definition.node)
        if definition.value is None and isinstance(statement, LOOP_NODES):
            return True
        source = statement.value if isinstance(statement, ast.Assign) else None
        source = source.value if isinstance(source, ast.Subscript) else source
        if not isinstance(source, ast.Name):
            return False
        return any(isinstance(d.node, FUNCTION_NODES) for d in self.ctx.analysis(ValueKinds).reaching_definitions(source))

    def _training_loop(self, loop: ast.AST, loops: TrainingLoops) -> ast.AST:
        """The innermost loop around `loop` (itself included) that may train: an inner loop over the metrics
        (`for m in self.metrics.values(): m.update(output)`) hands on what the training iteration made."""
        around = [loop, *(a for a in self.ctx.scopes.ancestors(loop) if isinstance(a, LOOP_NODES))]
        return next((a for a in around if a in loops.may_train), loop)

    def _renewed_per_iteration(self, call: ast.Call) -> bool:
        """Is the object whose method `call` runs rebuilt or reset (`meter.reset()`) in the innermost loop
        around the call, on every path that reaches the call (not a periodic `if it % 500 == 0: meter.reset()`)?"""
        meter = self.ctx.text(receiver(call))
        values = self.ctx.analysis(ValueKinds)
        loop = next((a for a in self.ctx.scopes.ancestors(call) if isinstance(a, LOOP_NODES)), None)
        for node in own_nodes(loop.body) if loop is not None else ():
            renews = isinstance(node, ast.Assign) and any(self.ctx.text(t) == meter for t in node.targets)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "reset":
                renews = self.ctx.text(node.func.value) == meter
            if renews and values.same_path(node, call):
                return True
        return False

    def _part_of(self, value: ast.Name, loss: ast.Name, values: ValueKinds, holder: bool) -> bool:
        """Is `value` a term of the backpropagated loss: `v` of `for k, v in loss_dict.items()` where the
        loss is made from `loss_dict` (`loss = sum(loss_dict.values())`)?"""
        definitions = values.reaching_definitions(value)
        if len(definitions) != 1:
            return False
        loop = self.ctx.scopes.parent(definitions[0].node)
        if isinstance(loop, ast.Tuple):
            loop = self.ctx.scopes.parent(loop)
        if not isinstance(loop, ast.For) or _value_of(loop) is not definitions[0].node:
            return False
        terms = loop.iter.func.value
        if holder:  # a value of the dict holding the loss (`for k, v in losses.items()`)
            return same_tensor(values, terms, loss)
        made = _made_from(loss, values)
        return made is not None and any(isinstance(n, ast.Name) and n.id == terms.id for e in made for n in ast.walk(e))

    def _kept_across_iterations(self, total: ast.AST, loop: ast.AST, function) -> bool:
        """Is `total` (or the dict or list holding it) bound before the loop, never rebound inside it,
        and never backpropagated?"""
        total = _base(total)
        scope = function or self.ctx.tree
        if isinstance(total, ast.Attribute):
            return self._attribute_kept(total, loop, scope)
        bound_before, rebound = False, False
        for node in self.ctx.index.within(scope, ast.Name):
            if node.id == total.id and isinstance(node.ctx, ast.Store):
                inside = self._in_loop(node, loop)
                bound_before |= not inside and node.lineno < loop.lineno
                statement = self.ctx.scopes.parent(node)
                rebound |= inside and not isinstance(statement, ast.AugAssign) and _self_sum(statement) is None and self._renewed(node, loop)
        backpropagated = any(
            isinstance(n, ast.Name) and n.id == total.id
            for call in self.ctx.index.within(scope, ast.Call)
            if isinstance(call.func, ast.Attribute) and call.func.attr == "backward"
            for n in ast.walk(call)
        )  # fmt: skip
        return bound_before and not rebound and not backpropagated

    def _attribute_kept(self, total: ast.Attribute, loop: ast.AST, scope: ast.AST) -> bool:
        """Is `self.outputs` neither rebound nor cleared in the loop, and never backpropagated where it is read?"""
        text = self.ctx.text(total)
        for node in self.ctx.index.within(scope, ast.Attribute):
            if self.ctx.text(node) != text:
                continue
            parent = self.ctx.scopes.parent(node)
            renewed = self._in_loop(node, loop) and self._renewed(node, loop)
            if renewed and (isinstance(node.ctx, ast.Store) and not isinstance(parent, ast.AugAssign) and _self_sum(parent) is None):
                return False  # `self.outputs = []` every iteration
            if renewed and isinstance(parent, ast.Attribute) and parent.attr in ("clear", "reset"):
                return False
            if any(isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr == "backward" for a in self.ctx.scopes.ancestors(node)):
                return False  # `self.loss += reg` then `self.loss.backward()`
        return True

    def _renewed(self, node: ast.AST, loop: ast.AST) -> bool:
        """Does a reset at `node` renew the total in every iteration of `loop` (not under `if step % log_every
        == 0:`), or at the end of each accumulation window: under an `if` of the loop that also steps an
        optimizer (`running_loss = 0` after `optimizer.step()`, torchtune's recipes): the graphs it holds are
        those of the window's micro-batches, each already backpropagated."""
        if self.ctx.analysis(ValueKinds).same_path(node, loop):
            return True
        guards = [a for a in self.ctx.scopes.ancestors(node) if isinstance(a, ast.If) and loop in self.ctx.scopes.ancestors(a)]
        return any(
            isinstance(c.func, ast.Attribute) and c.func.attr == "step" and not c.args
            for guard in guards for c in self.ctx.index.within(guard, ast.Call)
        )  # fmt: skip

    def _in_loop(self, node: ast.AST, loop: ast.AST) -> bool:
        return loop in self.ctx.scopes.ancestors(node)

    def _fix(self, loss: ast.Name, total: ast.Name, function) -> Fix:
        applicability = Applicability.SAFE if self._only_logged(total, function) else Applicability.UNSAFE
        return self.ctx.fix(f"Accumulate `{loss.id}.item()`", applicability, self.ctx.insert_after(loss, ".item()"))

    def _only_logged(self, total: ast.Name, function) -> bool:
        """Is every read of `total` an argument of a logging call or a formatted string?"""
        for node in ast.walk(function or self.ctx.tree):
            if isinstance(node, ast.Name) and node.id == total.id and isinstance(node.ctx, ast.Load):
                if not self._in_logging(node):
                    return False
        return True

    def _in_logging(self, node: ast.AST) -> bool:
        for ancestor in self.ctx.scopes.ancestors(node):
            if isinstance(ancestor, ast.JoinedStr):
                return True
            if isinstance(ancestor, ast.Call):
                func = ancestor.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name in LOGGING_CALLS:
                    return True
            if isinstance(ancestor, (ast.stmt, *FUNCTION_NODES)):
                return False
        return False


def _made_from(name: ast.Name, values: ValueKinds, depth: int = 0) -> list[ast.AST] | None:
    """The expressions `name`'s value is made from: its assignments, and the terms added by `+=`
    (`loss = sum(terms.values())` then `loss += reg`); None when some binding is unknown."""
    made: list[ast.AST] = []
    for definition in values.reaching_definitions(name):
        statement = values.scopes.parent(definition.node)
        if definition.value is not None:
            made.append(definition.value)
        elif isinstance(statement, ast.AugAssign) and depth < MAX_AUGMENTED and statement.target is definition.node:
            earlier = _made_from(definition.node, values, depth + 1)
            if earlier is None:
                return None
            made += [statement.value, *earlier]
        else:
            return None
    return made or None


def _added_factors(value: ast.AST) -> list[ast.AST]:
    """What a sum adds that may be the loss: `loss`, both factors of `loss * x.size(0)`, the terms of `a + b`."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        return [value.left, value.right]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return [*_added_factors(value.left), *_added_factors(value.right)]
    return [value]


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _self_sum(statement: ast.AST) -> list[ast.AST] | None:
    """The values `total = total + loss` adds to the old total (in any order, the old total scaled too: a
    running average `avg = 0.9 * avg + 0.1 * loss`, `torch.lerp(avg, loss, w)`, `avg.lerp(loss, w)`, an arm of
    `ema = loss if ema is None else 0.98 * ema + 0.02 * loss`), also into an entry of a dict: `totals[k] = totals[k] +
    v`, `totals[k] = totals.get(k, 0) + v`; None for any other statement."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target = statement.targets[0]
    if _base(target) is None or not isinstance(_base(target), ast.Name):
        return None
    return _added_to(target, statement.value)


def _added_to(target: ast.AST, value: ast.AST) -> list[ast.AST] | None:
    """What `value` adds to the old value of `target` (`_self_sum`)."""
    if isinstance(value, ast.IfExp):
        arms = [_added_to(target, arm) for arm in (value.body, value.orelse)]
        return next((a for a in arms if a is not None), None)
    interpolated = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "lerp"
    if interpolated and len(value.args) == 3 and _reads(value.args[0], target):  # `torch.lerp(avg, loss, 0.1)`
        return [value.args[1]]
    if interpolated and len(value.args) == 2 and _reads(value.func.value, target):  # `avg.lerp(loss, 0.1)`
        return [value.args[0]]
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    operands, pending = [], [value]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pending += [node.right, node.left]
        else:
            operands.append(node)
    old = [o for o in operands if _reads(o, target) or (isinstance(o, ast.BinOp) and isinstance(o.op, ast.Mult) and (_reads(o.left, target) or _reads(o.right, target)))]
    return [o for o in operands if o not in old] if len(old) == 1 else None


def _added_in_place(node: ast.AST) -> ast.AST | None:
    """`avg` of `avg.add_(loss)` or `avg.mul_(0.9).add_(loss)`: a total changed in place."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_" and len(node.args) == 1):
        return None
    receiver = node.func.value
    while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr in ("mul_", "div_"):
        receiver = receiver.func.value
    return receiver if _base(receiver) is receiver else None


def _reads(value: ast.AST, target: ast.AST) -> bool:
    """Is `value` the old value of `target`: the same name or entry, or the entry read by `.get(key, default)`?"""
    if same_expression(value, target):
        return True
    get = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" and value.args
    return bool(get) and isinstance(target, ast.Subscript) and same_expression(value.func.value, target.value) and same_expression(value.args[0], target.slice)


def _base(target: ast.AST) -> ast.Name | ast.Attribute | None:
    """`total` for `total`, `stats` for `stats["loss"]` and `losses[k]`; `self.outputs` for an attribute
    of `self` (kept by the object across the loop's iterations)."""
    if isinstance(target, ast.Subscript):
        target = target.value
    return target if isinstance(target, ast.Name) or is_self_attribute(target) else None


def _held(receiver: ast.AST) -> ast.Subscript | ast.Attribute | None:
    """`output["loss"]`, `out.loss`: a loss held by a dict or an output object named by a local name."""
    if isinstance(receiver, ast.Subscript) and isinstance(receiver.slice, ast.Constant) and isinstance(receiver.value, ast.Name):
        return receiver
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id != "self":
        return receiver
    return None


def _value_of(loop: ast.For) -> ast.AST | None:
    """`v` of `for k, v in terms.items()` and of `for v in terms.values()`."""
    call = loop.iter
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)):
        return None
    if call.func.attr == "values":
        return loop.target
    pair = call.func.attr == "items" and isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2
    return loop.target.elts[1] if pair else None


def _constant_item(node: ast.AST) -> bool:
    """`res[0]`, `out["loss"]`, `terms[name]`: an item of a name at a constant key or one a name holds."""
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant | ast.Name)


def _holds_items(value: ast.AST) -> bool:
    """`list(step(batch))`, `tuple(...)`: a container of values, not one tensor."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple")
