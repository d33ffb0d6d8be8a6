import ast

from mllint.analysis.facets.gradients import GradientFlow, State
from mllint.analysis.facets.kept_graphs import KeptGraphs
from mllint.analysis.facets.loops import LOOP_NODES, TRAINING_WORDS, TrainingLoops
from mllint.analysis.facets.meters import cut_on_a_path, kept_argument, returned_loss, same_tensor
from mllint.analysis.facets.totals import APPENDS, added, total_of
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.scopes import FUNCTION_NODES, own_nodes
from mllint.analysis.values.values import ValueKinds
from mllint.findings import Applicability, Fix
from mllint.rule import Rule
from mllint.source import one_line

COLLECTING = (ast.ListComp, ast.SetComp, ast.GeneratorExp)
KEEPING_BUILTINS = frozenset({"sum", "list", "tuple"})  # consume a generator into one value that keeps each item
KEEPING_FUNCTIONS = frozenset({"torch.stack", "torch.cat", "torch.sum"})
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
    `history["loss"].append(loss)`) kept across iterations, without `.item()` or `.detach()`; a total seeded out of view
    counts (declared `global` or `nonlocal`, or a script's total only updated in it: an earlier notebook cell made it). A total or list an object keeps (`self.running +=
    loss`, `self.outputs.append(out)`, `model.history.append(loss)` of a model built before the loop) counts unless the loop rebinds or
    clears it; a step function (a backward, then a step), or a method whose returned loss its caller backpropagates (`training_step`), that
    appends a live value to a list its object keeps and does not renew in it (`self.scores.append(dice(probs, y))`,
    `self.history["dice"].append(dice)`, cleared at the epoch's end) keeps every step's graph, since its callers run it per batch. It also reports the loss handed to a meter, an
    object of a project class (possibly in another module, or passed in by a caller) whose method adds
    what it is given into an attribute kept across calls (`losses.update(loss, n)` where `update` does
    `self.sum += val * n` or `self.values.append(val)`), also a meter held by another project object
    (`metrics.losses_track.update(loss)`). A loss held in a dict or an output object
    (`output["loss"].backward()`) is followed through its holder: the holder appended to a list
    (`outputs.append(output)`), its values summed (`running[k] += v` over `output.items()`) or handed to a
    meter that sums them (`self.sums[key] += losses[key]`). A loss a step function of the project
    backpropagates and returns as it is (alone, in a tuple, as a dict's value, scaled back: `return loss * accum`; also through a
    package's re-export) is followed into the loop
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
    (`(pred.argmax(1) == y).float().mean()`) or computed under `torch.no_grad()` (a sum there too), nor a parameter of the model (`used.append(param)` over
    `named_parameters()`: a leaf), nor what a loop that runs no backward hands on (a builder's transforms). A model's output, or any value the backpropagated loss is computed
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
        kept = self.ctx.analysis(KeptGraphs)
        reported: set[ast.AST] = set()
        self._collected(reported)
        self._stepped(kept, reported)
        loops = self.ctx.analysis(TrainingLoops)
        # Every loop: one that backpropagates (its optimizer may be unknown), one whose step function of
        # another module runs the backward (`total += trainer.step(b)`). A comprehension assigns nothing
        # across its iterations.
        for loop in self.ctx.index.of_type(*LOOP_NODES):
            function = self.ctx.scopes.enclosing_function(loop)
            losses = kept.backpropagated(loops.events_of_loop(loop), function) if loop in loops.may_train else {}
            for loss, total, fixable in kept.accumulations(loop):
                if loss in reported:
                    continue
                returned = returned_loss(self.ctx, loss)
                if returned is not None and kept.kept_across_iterations(total, loop, function):
                    reported.add(loss)
                    message = RETURNED_MESSAGE.format(loss=self.ctx.text(loss), what=returned.what, total=ast.unparse(total), function=returned.function, place=returned.places(self.ctx))
                    self.report(loss, message)
                    continue
                used = None
                if isinstance(loss, ast.Name):
                    used = next((u for u in losses if same_tensor(values, loss, u) or kept.part_of(loss, u, losses[u] is not None)), None)
                if used is None:
                    self._kept_live(kept, loss, total, loop, function, reported)
                    continue
                if not kept.kept_across_iterations(total, loop, function):
                    continue
                reported.add(loss)
                held = losses[used]
                if held is not None and loss.id == used.id:  # the holder itself: `outputs.append(output)`
                    if kept.replaced_without_graph(held, loss):
                        continue
                    self.report(loss, CONTAINER_MESSAGE.format(loss=loss.id, total=ast.unparse(total), held=ast.unparse(held), line=held.lineno))
                    continue
                message = self.message.format(loss=loss.id, total=ast.unparse(total))
                plain = fixable and held is None and isinstance(total_of(total), ast.Name)  # a holder's values may be no tensors
                fix = self._fix(loss, total_of(total), function) if plain else None
                self.report(loss, message, fix)
            self._metered(kept, loop, kept.training_loop(loop), losses, reported)
        # A step function (a backward, then an optimizer step, outside any loop of its own) runs once per
        # batch: what it hands to a meter its object or its caller keeps is kept across the steps.
        for function in self.ctx.index.of_type(ast.FunctionDef, ast.AsyncFunctionDef):
            if function.name not in NO_GRAD_HOOKS and loops.is_a_step(function):
                events = [e for e in loops.events_of_statements(function.body) if not e.loops]
                losses = kept.backpropagated(events, function)
                self._metered(kept, function, function, losses, reported)
                loss = lambda v, losses=losses: isinstance(v, ast.Name) and any(same_tensor(values, v, u) for u in losses)  # noqa: E731
                self._kept_by_object(kept, function, reported, lambda v, f=function, losses=losses, loss=loss: loss(v) or kept.live(v, losses, f))

    def _kept_live(self, kept: KeptGraphs, value: ast.AST, total: ast.AST, loop: ast.AST, function, reported: set[ast.AST]) -> None:
        """A value other than the loss that carries the graph of the training iteration around `loop` (a
        metric of the model's output: `psnr(sr, hr)`, a soft dice of the logits), added to a total or
        appended to a list kept across its iterations."""
        loops = self.ctx.analysis(TrainingLoops)
        training = kept.training_loop(loop)
        if value in reported or training not in loops.may_train or not kept.kept_across_iterations(total, training, function):
            return
        if isinstance(value, ast.Name) and cut_on_a_path(self.ctx.analysis(ValueKinds), value):
            return  # `df_loss = df_loss.detach().item()` after its backward
        losses = kept.backpropagated(loops.events_of_loop(training), function)
        if losses and kept.live(value, losses, training, terms_only=True):
            reported.add(value)
            term = kept.summed_into(value, losses) if isinstance(value, ast.Name) and self.ctx.analysis(GradientFlow).flow(value).state is not State.GRAPH else None
            made = f"it is a term of the loss backpropagated at line {term.lineno}" if term is not None else f"it is computed from the model's output{_by(kept, value)}"
            message = LIVE_MESSAGE.format(value=one_line(self.ctx.text(value), 50), made=made, total=ast.unparse(total_of(total)))
            self.report(value, message)

    def _kept_by_object(self, kept: KeptGraphs, step: ast.AST, reported: set[ast.AST], live) -> None:
        """A method run once per batch by its callers (a step function; one whose returned loss its caller
        backpropagates, `training_step`) that appends a live value (`live(value)`) to a list its object keeps
        and does not renew there: `self.train_scores.append(dice(torch.sigmoid(logits), mask))`,
        `self.history["dice"].append(dice)` of a dict of lists."""
        for node in own_nodes(step.body):
            appends = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in APPENDS
            found = added(node) if appends else None
            total = found.total if found is not None else None
            if not is_self_attribute(total) or not kept.attribute_kept(total, step, self.ctx.scopes.enclosing_class(step) or step):
                continue
            for value in (v for v in found.values if v not in reported and live(v)):
                reported.add(value)
                self.report(value, OBJECT_MESSAGE.format(value=one_line(self.ctx.text(value), 50), total=self.ctx.text(found.target), function=step.name))

    def _metered(self, kept: KeptGraphs, block: ast.AST, training: ast.AST, losses: dict, reported: set[ast.AST]) -> None:
        """The losses, or live values of the iteration `training`, that a method call in `block` hands to a
        meter of the project that keeps them (`losses.update(loss, n)`, `meters["psnr"].update(psnr(sr, hr))`)."""
        values = self.ctx.analysis(ValueKinds)
        for call, loss in kept.method_arguments(block):
            used = next((u for u in losses if same_tensor(values, loss, u)), None) if isinstance(loss, ast.Name) else None
            lost = used is None and returned_loss(self.ctx, loss) is None
            if loss in reported or (lost and not (kept.backpropagates(training) and kept.live(loss, losses, training))):
                continue
            if kept.renewed_per_iteration(call) or (block is training and isinstance(block, FUNCTION_NODES) and kept.made_here(call, block)):
                continue
            meter = kept_argument(self.ctx, call, loss)
            if meter is not None:
                reported.add(loss)
                place = _meter_place(meter)
                call_text = f"{self.ctx.text(call.func)}(...)"
                instead = f"`{self.ctx.text(loss)}.item()`" if used is None or losses[used] is None else "detached values"
                message = METER_MESSAGE if not lost else OUTPUT_MESSAGE
                made = ""
                if lost:  # a value made there; a list of them (`list(step(batch))`) detached item by item
                    instead = "detached values" if _holds_items(loss) else f"`{self.ctx.text(loss)}.detach()`"
                    made = f" (returned{by})" if (by := _by(kept, loss)) else ""
                self.report(loss, message.format(loss=self.ctx.text(loss), made=made, call=call_text, cls=meter.cls, attribute=meter.attribute, place=place, instead=instead))

    def _stepped(self, kept: KeptGraphs, reported: set[ast.AST]) -> None:
        """A step function (its returns carry a graph: the loss its caller backpropagates, once per batch)
        that hands that loss, or a value it is computed from, to a meter of its object kept across calls:
        `self.history.log_dict({"mse": mse, "loss": loss})` in `training_step`, which returns `loss`."""
        for function in self.ctx.index.of_type(ast.FunctionDef, ast.AsyncFunctionDef):
            if function.name in NO_GRAD_HOOKS:
                continue
            candidates = [
                (call, value) for call, value in kept.method_arguments(function)
                if isinstance(value, ast.Name) and value not in reported
                and not any(isinstance(a, LOOP_NODES) for a in self.ctx.scopes.ancestors(call))
            ]  # fmt: skip
            if not kept.returns_graph(function):
                continue
            if function in kept.backpropagated_returns:
                self._kept_by_object(kept, function, reported, lambda v, f=function: isinstance(v, ast.Name) and kept.feeds_return(v, f))
            kept_by: dict[ast.Call, list] = {}  # one finding per call, naming every value it keeps
            for call, value in candidates:
                if not kept.feeds_return(value, function):
                    continue
                meter = kept_argument(self.ctx, call, value)
                if meter is not None:
                    reported.add(value)
                    kept_by.setdefault(call, []).append((value, meter))
            for call, found in kept_by.items():
                (value, meter), names = found[0], ", ".join(f"`{v.id}`" for v, _ in found)
                place = _meter_place(meter)
                message = STEP_MESSAGE.format(
                    values=names, verb="carries" if len(found) == 1 else "carry", call=f"{self.ctx.text(call.func)}(...)",
                    cls=meter.cls, attribute=meter.attribute, place=place, function=function.name,
                )  # fmt: skip
                self.report(value, message)

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


def _by(kept: KeptGraphs, value: ast.AST) -> str:
    """` by `psnr`, utils.py:7` (where it returns the value) for a value a function of the project returns; empty for any other."""
    found = kept.maker(value)
    return f" by `{found[0]}`, {found[1]}" if found is not None else ""


def _meter_place(meter) -> str:
    """`metrics.py:18, the value made by `MAEMetric.process`, metrics.py:30`: where a meter accumulates, and what makes the value."""
    place = f"{meter.path}:{meter.line}" if meter.path else f"line {meter.line}"
    return place + (f", the value made by {meter.made}" if meter.made else "")


def _holds_items(value: ast.AST) -> bool:
    """`list(step(batch))`, `tuple(...)`: a container of values, not one tensor."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple")
