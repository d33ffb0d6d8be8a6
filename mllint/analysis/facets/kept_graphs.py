"""What keeps a training iteration's autograd graph alive across iterations (ML207): the names a loop
backpropagates, what a loop adds into a total or appends to a list (`totals.added`), whether that total
outlives the iteration, which values carry the iteration's graph (a model's output, a term of the loss, a
metric a project helper computes from them; not a parameter, not data), what a method call hands to a
meter, and the project function that makes a value.
"""
from __future__ import annotations

import ast
from functools import cached_property

from mllint.analysis.facets.gradients import ANY_MODULE, GradientFlow, State, backward_loss, managed_losses, under_no_grad
from mllint.analysis.facets.loop_events import Event, EventKind
from mllint.analysis.facets.loops import LOOP_NODES, TrainingLoops
from mllint.analysis.facets.loss_terms import signed_terms
from mllint.analysis.facets.meters import dict_of, receiver, returned_loss, same_tensor
from mllint.analysis.objects.steps import steps_optimizer
from mllint.analysis.facets.totals import APPENDS, added, root_of, total_of
from mllint.analysis.program.project_view import ProjectView
from mllint.analysis.program.summaries import function_returns
from mllint.analysis.syntax.names import is_self_attribute
from mllint.analysis.syntax.scopes import FUNCTION_NODES, own_nodes, statement_blocks
from mllint.analysis.values.values import ValueKinds

MAX_AUGMENTED = 4  # how many `loss += term` statements back a loss is followed


class KeptGraphs:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.values = ctx.analysis(ValueKinds)
        self.flows = ctx.analysis(GradientFlow)
        self.loops = ctx.analysis(TrainingLoops)
        self._names_kept: dict[tuple[str, ast.AST, ast.AST], bool] = {}  # (name, loop, scope) -> `_name_kept`

    def backpropagated(self, events: list[Event], function) -> dict[ast.Name, ast.AST | None]:
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

    def replaced_without_graph(self, held: ast.Subscript, kept: ast.AST) -> bool:
        """Is the item `held` (`output["loss"]`, backpropagated) replaced by a value that carries no graph, after
        the backward, in the block of the statement that keeps its holder (`output["loss"] = output["loss"].detach()`
        before or after `outputs.append(output)`: the list holds the same dict)?"""
        statement = self.ctx.scopes.statement(kept)
        block = next((b for b in statement_blocks(self.ctx.scopes.parent(statement)) if statement in b), [statement])
        item = ast.unparse(held)
        return any(
            isinstance(other, ast.Assign)
            and other.lineno > held.lineno
            and any(ast.unparse(target) == item for target in other.targets)
            and self.flows.flow(other.value).state is State.NONE
            for other in block
        )

    def accumulations(self, loop: ast.AST):
        """(value, total as written, whether `.item()` after the value fixes it) for each value a statement of
        the loop's body adds into a total or appends to a list (`totals.added`). A sum computed under
        `torch.no_grad()` records no graph (`with torch.no_grad(): total += loss`); an append keeps the value itself."""
        for node in own_nodes(loop.body):
            found = added(node)
            appended = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in APPENDS
            if found is not None and (appended or not under_no_grad(self.ctx, node)):
                yield from ((value, found.target, found.plain) for value in found.values)

    def method_arguments(self, block: ast.AST):
        """(call, argument) for each name or call passed to a method of an object in a loop's or a function's
        body: `meter.update(loss, n)`, `m(pred, y)` of `for m in self.metrics`."""
        for node in own_nodes(block.body):
            if isinstance(node, ast.Call) and (isinstance(node.func, ast.Attribute) or self._called_object(node.func)):
                if isinstance(node.func, ast.Attribute) and node.func.attr in APPENDS:  # a list's append: `accumulations`
                    continue
                for argument in [*node.args, *(k.value for k in node.keywords)]:
                    if isinstance(argument, (ast.Name, ast.Call)) or constant_item(argument):  # `meter.update(trainer.train_step(batch))`, `res[0]`
                        yield node, argument
                    elif isinstance(argument, (ast.List, ast.Tuple)):  # `meter.update([loss])`
                        yield from ((node, e) for e in argument.elts if isinstance(e, ast.Name))
                    elif isinstance(argument, ast.Dict):  # `history.log_dict({"mse": mse, "loss": loss})`
                        yield from ((node, e) for e in argument.values if isinstance(e, ast.Name))

    def _called_object(self, func: ast.AST) -> bool:
        """A local name called as an object (`m(pred, y)` of `for m in self.metrics`), no function it imports or defines."""
        return isinstance(func, ast.Name) and self.ctx.qualified_name(func) is None and bool(self.values.reaching_definitions(func))

    def live(self, value: ast.AST, losses: dict, loop: ast.AST, terms_only: bool = False) -> bool:
        """Does `value` carry the graph of the iteration: a model's output (`pred = model(x)`), or a value
        the backpropagated loss is computed from (`logits` of `loss = criterion(logits, y)`)? Not a name
        bound only before the loop (the model itself, handed to an evaluator: no iteration's graph), nor a
        parameter (a leaf). `terms_only`: of the values the loss is computed from, only a term it sums
        (`reg_loss` of `loss = task + beta * reg_loss`), not a factor such as a return weighting a log-likelihood."""
        if constant_item(value) and isinstance(value.slice, ast.Name):  # `terms[name]` of a dict of the loss's terms
            return self.live(value.value, losses, loop, terms_only)
        definitions = self.values.reaching_definitions(value) if isinstance(value, ast.Name) else None
        if definitions is not None and not any(self.in_loop(d.node, loop) for d in definitions):
            return False
        if self.flows.parameter(value):
            return False  # a parameter (`p` of `model.named_parameters()`): a leaf, no iteration's graph
        if returned_loss(self.ctx, value, feeding=True) is not None:  # `output = engine.process(batch)`: `(y_pred, y)`
            return True
        state = self.flows.flow(value).state
        if state is State.UNKNOWN and isinstance(value, ast.Call):  # `psnr(pred, y)`: a project helper of a live value
            live = {a for a in value.args if isinstance(a, ast.Name) and self.live(a, losses, loop)}
            return bool(live) and self.flows.passes_graph(value, live)
        if state is not State.UNKNOWN or not isinstance(value, ast.Name):
            return state is State.GRAPH
        holder = dict_of(self.ctx, definitions[0].node) if len(definitions) == 1 else None
        if isinstance(holder, ast.Call):  # `v` of `for k, v in metric.process(logits, y).items()`
            return self.live(holder, losses, loop)
        if len(definitions) == 1 and isinstance(definitions[0].value, ast.Call) and self.live(definitions[0].value, losses, loop):
            return True  # `f1 = soft_f1(logits, y)`: what the helper returns
        if any(self._data(d) for d in definitions):
            return False  # an item of what the loop iterates (`yb` of `for xb, yb in batches`): data, not made from the model
        made = {d.node for d in definitions}
        if terms_only:
            return bool(made) and self.summed_into(value, losses) is not None
        return bool(made) and any(self.flows.depends_on(loss, made) for loss in losses)

    def summed_into(self, value: ast.Name, losses: dict) -> ast.Name | None:
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
        return any(isinstance(d.node, FUNCTION_NODES) for d in self.values.reaching_definitions(source))

    def training_loop(self, loop: ast.AST) -> ast.AST:
        """The innermost loop around `loop` (itself included) that may train: an inner loop over the metrics
        (`for m in self.metrics.values(): m.update(output)`) hands on what the training iteration made."""
        around = [loop, *(a for a in self.ctx.scopes.ancestors(loop) if isinstance(a, LOOP_NODES))]
        return next((a for a in around if a in self.loops.may_train), loop)

    def backpropagates(self, block: ast.AST) -> bool:
        """Does an iteration of `block` run a backward (a step function does; a loop, in its own code or a
        callee's)? Only then does it make a graph that a kept value holds on to (not a builder's loop over
        transforms)."""
        return isinstance(block, FUNCTION_NODES) or self.loops.trains(block)

    def renewed_per_iteration(self, call: ast.Call) -> bool:
        """Is the object whose method `call` runs rebuilt or reset (`meter.reset()`) in the innermost loop
        around the call, on every path that reaches the call (not a periodic `if it % 500 == 0: meter.reset()`)?"""
        meter = self.ctx.text(receiver(call))
        loop = next((a for a in self.ctx.scopes.ancestors(call) if isinstance(a, LOOP_NODES)), None)
        for node in own_nodes(loop.body) if loop is not None else ():
            renews = isinstance(node, ast.Assign) and any(self.ctx.text(t) == meter for t in node.targets)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "reset":
                renews = self.ctx.text(node.func.value) == meter
            if renews and self.values.same_path(node, call):
                return True
        return False

    def made_here(self, call: ast.Call, function: ast.AST) -> bool:
        """Is the meter `call` runs a method of a local name of `function` (built there: renewed per call)?"""
        meter = receiver(call)
        while isinstance(meter, ast.Subscript | ast.Attribute) and not is_self_attribute(meter):
            meter = meter.value
        definitions = self.values.reaching_definitions(meter) if isinstance(meter, ast.Name) else []
        return any(not isinstance(d.node, FUNCTION_NODES) and self.ctx.scopes.enclosing_function(d.node) is function for d in definitions)

    def part_of(self, value: ast.Name, loss: ast.Name, holder: bool) -> bool:
        """Is `value` a term of the backpropagated loss: `v` of `for k, v in loss_dict.items()` where the
        loss is made from `loss_dict` (`loss = sum(loss_dict.values())`)? `holder`: the loss is held by a
        dict, and `value` is one of its values (`for k, v in losses.items()`)."""
        definitions = self.values.reaching_definitions(value)
        if len(definitions) != 1:
            return False
        loop = self.ctx.scopes.parent(definitions[0].node)
        if isinstance(loop, ast.Tuple):
            loop = self.ctx.scopes.parent(loop)
        if not isinstance(loop, ast.For) or _value_of(loop) is not definitions[0].node:
            return False
        terms = loop.iter.func.value
        if holder:
            return same_tensor(self.values, terms, loss)
        made = _made_from(loss, self.values)
        return made is not None and any(isinstance(n, ast.Name) and n.id == terms.id for e in made for n in ast.walk(e))

    def kept_across_iterations(self, total: ast.AST, loop: ast.AST, function) -> bool:
        """Is `total` (or the dict or list holding it) bound before the loop (also out of view:
        `Scopes.bound_out_of_view`), never renewed inside it (see `_renewed`), and never backpropagated?"""
        total = total_of(total)
        scope = function or self.ctx.tree
        if isinstance(total, ast.Attribute):  # `self.outputs`; `model.history` of a model kept across the loop
            owner = root_of(total)
            return (owner.id == "self" or self.kept_across_iterations(owner, loop, function)) and self.attribute_kept(total, loop, scope)
        key = (total.id, loop, scope)  # asked once per term added to the total: a walk of the scope each
        if key not in self._names_kept:
            self._names_kept[key] = self._name_kept(total.id, loop, function)
        return self._names_kept[key]

    def _name_kept(self, name: str, loop: ast.AST, function) -> bool:
        scope = function or self.ctx.tree
        bound_before, rebound = self.ctx.scopes.bound_out_of_view(function, name), False  # a global, an earlier cell's total
        for node in self.ctx.index.within(scope, ast.Name):
            if node.id == name and isinstance(node.ctx, ast.Store):
                inside = self.in_loop(node, loop)
                bound_before |= not inside and node.lineno < loop.lineno
                rebound |= inside and not _adds(self.ctx.scopes.parent(node)) and self._renewed(node, loop)
        backpropagated = any(
            isinstance(n, ast.Name) and n.id == name
            for call in self.ctx.index.within(scope, ast.Call)
            if isinstance(call.func, ast.Attribute) and call.func.attr == "backward"
            for n in ast.walk(call)
        )  # fmt: skip
        return bound_before and not rebound and not backpropagated

    def attribute_kept(self, total: ast.Attribute, loop: ast.AST, scope: ast.AST) -> bool:
        """Is `self.outputs` neither rebound nor cleared in the loop, and never backpropagated where it is read?"""
        text = self.ctx.text(total)
        for node in self.ctx.index.within(scope, ast.Attribute):
            if self.ctx.text(node) != text:
                continue
            parent = self.ctx.scopes.parent(node)
            renewed = self.in_loop(node, loop) and self._renewed(node, loop)
            if renewed and isinstance(node.ctx, ast.Store) and not _adds(parent):
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
        if self.values.same_path(node, loop):
            return True
        guards = [a for a in self.ctx.scopes.ancestors(node) if isinstance(a, ast.If) and loop in self.ctx.scopes.ancestors(a)]
        return any(steps_optimizer(self.ctx, guard) for guard in guards)

    def in_loop(self, node: ast.AST, loop: ast.AST) -> bool:
        return loop in self.ctx.scopes.ancestors(node)

    def returns_graph(self, function: ast.AST) -> bool:
        """Does `function` return a name that carries a graph (the loss its caller backpropagates)?"""
        returned = function_returns(function)
        return bool(returned) and any(isinstance(r, ast.Name) and self.flows.flow(r).state is State.GRAPH for r in returned)

    @cached_property
    def backpropagated_returns(self) -> set[ast.AST]:
        """The functions of this file whose returned loss a caller backpropagates, once per batch: a hook a
        training library runs (`training_step`, `compute_loss`: `gradients.managed_losses`), a function this
        file calls and backpropagates what it returns (`loss = model.training_step(batch)`, `loss.backward()`)."""
        found = {self.ctx.scopes.enclosing_function(node) for node, _ in managed_losses(self.ctx)}
        for call in self.ctx.index.of_type(ast.Call):
            loss = backward_loss(self.ctx, call)
            for definition in self.values.reaching_definitions(loss) if isinstance(loss, ast.Name) else ():
                callee = self.flows.callee(definition.value, followed=ANY_MODULE) if isinstance(definition.value, ast.Call) else None
                if callee is not None and callee[0].ctx is self.ctx:
                    found.add(callee[0].function)
        return found

    def feeds_return(self, value: ast.Name, function: ast.AST) -> bool:
        """Does `value` carry a graph into what `function` returns by name (the same tensor, or one computed
        from it: `dice` of `loss = bce + (1 - dice)`, `return loss`)? A value a project helper computes from
        a live one (`dice = soft_dice(logits, mask)`) carries one too."""
        if self.flows.flow(value).state is not State.GRAPH and not self.live(value, {}, function):
            return False
        returned = [r for r in function_returns(function) or () if isinstance(r, ast.Name)]
        made = {d.node for d in self.values.reaching_definitions(value)}
        return any(same_tensor(self.values, value, r) or self.flows.depends_on(r, made) for r in returned)

    def maker(self, value: ast.AST) -> tuple[str, str] | None:
        """(its name, where it returns the value: `utils.py:7`, or `line 7` in this file) of the function of the
        project whose return `value` is (`f1 = soft_f1(logits, y)`, or a value of the dict it returns: `v` of
        `for k, v in metric.process(p, y).items()`); None for any other value."""
        definitions = self.values.reaching_definitions(value) if isinstance(value, ast.Name) else []
        call = value if isinstance(value, ast.Call) else dict_of(self.ctx, definitions[0].node) if len(definitions) == 1 else None
        call = call if call is not None or len(definitions) != 1 else definitions[0].value
        found = self.flows.callee(call, followed=ANY_MODULE) if isinstance(call, ast.Call) else None
        returned = function_returns(found[0].function) if found is not None else None
        if not returned:
            return None
        callee = found[0]
        path = "" if callee.ctx is self.ctx else self.ctx.analysis(ProjectView).display_path(callee.ctx.real_path or callee.ctx.path)
        cls = callee.ctx.scopes.enclosing_class(callee.function)
        name = f"{cls.name}.{callee.function.name}" if cls is not None else callee.function.name
        return name, f"{path}:{returned[-1].lineno}" if path else self.ctx.place(returned[-1])


def _adds(statement: ast.AST) -> bool:
    """Does a store in `statement` add to the total rather than renew it (`total += x`, `avg = 0.9 * avg + v`)?"""
    return isinstance(statement, ast.AugAssign) or added(statement) is not None


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


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


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


def constant_item(node: ast.AST) -> bool:
    """`res[0]`, `out["loss"]`, `terms[name]`: an item of a name at a constant key or one a name holds."""
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant | ast.Name)
