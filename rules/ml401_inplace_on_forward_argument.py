import ast
from functools import cached_property

from mllint.analysis.facets.gradients import FLAG_METHODS
from mllint.analysis.facets.helper_effects import INPLACE, built_to_run, entry_of_module, forward_sites, taken_somewhere, tensor_parameters
from mllint.analysis.facets.hooks import kept_outputs, output_kept
from mllint.analysis.facets.views import held_after, kept_after, literal_loop_items, parameter_holders, read_again, read_with, unshared, viewed
from mllint.analysis.program.callers import Callers
from mllint.analysis.program.effects import ParameterEffects, takes_self
from mllint.analysis.program.project_view import ProjectView, place_in
from mllint.analysis.program.calls import bind_arguments
from mllint.analysis.program.classes import ModuleClasses
from mllint.analysis.objects.call_sites import built, made_classes, makers, passed_argument, possible_constants
from mllint.analysis.objects.callees import forward_calls
from mllint.analysis.objects.points_to import Objects
from mllint.analysis.syntax.names import call_argument, is_self_attribute, partial_target, training_test
from mllint.analysis.syntax.scopes import statement_blocks
from mllint.analysis.values.values import ValueKinds, canonical_class
from mllint.findings import Applicability
from mllint.rule import Rule
from mllint.source import one_line

OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
}  # fmt: skip
ATOMIC = (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript)
# Functions that take a sequence of tensors: an argument passed to them whole is a list of tensors.
SEQUENCE_FUNCTIONS = {
    "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
    "torch.dstack", "torch.column_stack",
}
LIST_METHODS = {"append", "extend", "insert", "pop"}

MAX_ALIASES = 4  # `out = x` then `y = out`: how many plain assignments back an argument is followed
# Activations that may work in place: functional forms take `inplace=True`, modules take it at construction
# (the position of the `inplace` argument when it is passed positionally).
INPLACE_FUNCTIONS = {
    "torch.nn.functional." + name
    for name in (
        "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardtanh", "hardswish", "rrelu",
        "threshold", "dropout",
    )
}  # fmt: skip
ALWAYS_INPLACE_FUNCTIONS = {
    "torch.relu_", "torch.nn.functional.relu_", "torch.nn.functional.leaky_relu_", "torch.nn.functional.elu_",
}  # fmt: skip
INPLACE_MODULES = {
    "torch.nn.ReLU": 0, "torch.nn.ReLU6": 0, "torch.nn.SELU": 0, "torch.nn.SiLU": 0, "torch.nn.Mish": 0,
    "torch.nn.Hardswish": 0, "torch.nn.LeakyReLU": 1, "torch.nn.ELU": 1, "torch.nn.CELU": 1, "torch.nn.Dropout": 1,
    "torch.nn.Hardtanh": 2, "torch.nn.RReLU": 2, "torch.nn.Threshold": 2,
}  # fmt: skip


LOCAL_MESSAGE = (
    "{activation} overwrites `{name}` in place, and line {line} reads `{read}` again: it sees the activated "
    "values, not the ones kept for it"
)

CALLER_MESSAGE = (
    "{activation} overwrites the forward argument `{name}` in place, and its caller still holds that tensor: "
    "`{call}` ({place}{line}) reads `{read}` after it (line {read_line}), which sees the activated values"
)

# In-place tensor methods that activate (a tensor kept before them sees the activated values).
ACTIVATING_METHODS = frozenset({"relu_", "sigmoid_", "tanh_", "clamp_", "clamp_min_", "clamp_max_", "hardtanh_"})
HOLDER_MESSAGE = (
    "{activation} overwrites `{name}` in place after `forward` put it in `{holder}`, and its caller reads that: "
    "`{call}` ({place}{line}) reads `{read}` after it (line {read_line}), which sees the activated values"
)


HELPER_MESSAGE = (
    "`{function}` changes its argument `{parameter}` in place, and a module's `{entry}` hands it its own input "
    "`{name}` ({place}): the caller's tensor changes; work on a new tensor here"
)
ENTRY_MESSAGE = (
    "`{function}` changes its argument `{parameter}` in place, and code outside the module hands it its own "
    "tensor (`{call}`, {place}): the caller's tensor changes; work on a new tensor here"
)
CALL_MESSAGE = (
    "`{call}` changes the forward argument `{name}` in place (`{change}`, {place}), and the caller's tensor "
    "changes: pass a copy (`{name}.clone()`)"
)
HOOK_MESSAGE = (
    "{activation} overwrites in place the output of `{layer}` (line {line}), which the forward hook registered "
    "at {place}{hook_line} keeps: what the hook kept are the activated values, not the layer's output"
)


class InplaceOnForwardArgument(Rule):
    """
    ## What it does
    Reports in-place changes of a tensor argument inside a module's `forward`: augmented assignment
    (`x /= 255`), in-place methods (`x.mul_(2)`, `x.clamp_(0, 1)`) and item assignment (`x[mask] = 0`),
    while the name (or a plain alias of it: `out = x` then `out += bias`; for item assignment, an alias
    indexed as only a tensor is, `out[:, :, :h] = ...`; or a view of it: `x.narrow(1, 0, 3).div_(s)`, an
    item of `torch.split(x, ...)`, `x.view(B, -1)`, `x[..., 2:4] /= s`, an in-place chain
    `x.sub_(m).div_(s)`, a loop variable over a literal tuple of them) still holds the caller's tensor, also
    when the in-place method's result is bound again (`x = x.relu_()` returns `x` itself) or returned. It also reports an in-place
    activation (`nn.ReLU(inplace=True)`, `F.relu(x, inplace=True)`, an `nn.Sequential` whose first layer
    is one) applied to the argument when `forward` reads it again later (a residual `out + x`, or an operand
    taking the call's result in the same expression: `x * self.gate(x)`, `torch.cat([x, f(x)])`; also through
    an alias made before: `identity = x`), or to a tensor of its own that it reads again (a skip connection
    kept before the activation: `h = self.act(skip)` then `torch.cat([h, skip])`; or a list or dict it was put
    in before, read after: `skips.append(s)`, `feats["c1"] = s`, also one `forward` is given, read by its
    caller, in a module's `forward` or a training script: `self.down(x, skips)` then `skips[1]`; the same for
    an in-place activation method, `feats.append(x)` then `x.relu_()`). When `forward` does not
    read its argument again (also after rebinding it: `x = F.leaky_relu(x, 0.1, inplace=True)`), the activation
    on it is reported where code of the project that calls the module (a `forward`: `self.block(x)`, `unit(x)`
    of `for unit in self.units`; a training loop or a trainer's method, also one its call sites give the model:
    `recon = model(clean)` in `def fit(model, data)` called as `fit(DAE(), data)`) still holds the tensor it
    passes and reads it after the call (`((recon - clean) ** 2).mean()`; `x.shape` and `len(x)` read no values): itself (`self.block(x) + x`), an alias or a layer's output that is the same tensor or
    a view of it (`identity = self.shortcut(x)` with `nn.Identity`, `self.tap(x)` with `nn.Flatten`,
    `x.flatten(1)`), or a list it was appended to (`skips.append(x)`). The `inplace=` value
    decides, read through the call sites of the constructor it is a parameter of (`nn.ReLU(inplace=inplace)`
    in `__init__(self, dim, inplace=True)`, every call site leaving it to its default), through an attribute
    set from one (`inplace=self.inplace`), a config's field default (`inplace=cfg.inplace` with a dataclass
    `inplace: bool = True`, a NamedTuple's, a `SimpleNamespace(inplace=True)`'s), a dict config's key
    (`inplace=cfg["act_inplace"]`, `cfg.get(...)`, with a dict literal passed as `cfg`), a `**kwargs` dict
    splatted into the constructor (`DenseLayer(ch, **layer_kwargs)`, `nn.ReLU(**act_kwargs)`), a command-line option's default (`inplace=args.inplace_act` with
    `parser.add_argument("--inplace-act", default=True)`), a `functools.partial(nn.ReLU, inplace=True)`
    passed down for an activation class (`act_layer()`) or a table's entry at every key the callers pass
    (`ACTS[kind]()` with `"relu": partial(nn.ReLU, inplace=True)`), and into the factory of the project that builds the activation
    (`self.act = get_activation("relu")` returning a table's class built with `inplace=inplace`). A child module whose
    every call in the project passes a tensor nothing else holds (`self.drop(torch.cat([a, b]))`, a torch
    layer's output, a fresh sum read nowhere after and made in the loop that gives it, not once before it (`model(X)` at every epoch), a copy: `h.clone()`, `h.detach().clone()`,
    `h.clone().detach()`, `copy.deepcopy(h)`, `h.mul(0.5)`; not `h.contiguous()`, `h.float()` or `h.to(d)`,
    which may return `h` itself) changes no caller's tensor, and is not reported. Only tensor arguments
    count: those annotated as `torch.Tensor`, an unannotated first argument, and any other the function
    joins into a tensor as an item of a list it writes (`torch.cat([x_t, cond], dim=1)`), unless the function
    treats it as a list of tensors (feature maps passed whole to `torch.cat`/`torch.stack`, given to
    `append`, or whose items `x[i]` are fed to the module's layers: `x[i] = self.head(x[i])`, or
    `x[i] = head(x[i])` in `for i, head in enumerate(self.heads)`, replaces a list item, no tensor
    changes). It also reports an in-place activation that overwrites the output of a layer a forward hook
    keeps as it is (`self.feats[i] = out`, `feats.append(output)`, `output.detach()` shares its storage; not
    `out.clone()` or `out.mean()`): the next layer of an `nn.Sequential` built to work in place (where some
    call site of its builder asks for it: `make_cnn(inplace_relu=True)`) after a layer the hook is registered
    on (`net[i].register_forward_hook(...)` for `i` in `(0, 2)`, `model.conv1.register_forward_hook(self.save)`),
    or an in-place activation in `forward` of such a layer's output (`x = self.conv1(x)` then `F.relu(x,
    inplace=True)`). An argument rebound on every arm of an `elif` chain that dispatches on one setting
    (`if self.attn_type == "self": ... elif self.attn_type == "context": ...`) no longer holds the
    caller's tensor after it. Changes made only when `self.training` is false (`if not
    self.training:`, the `else` of `if self.training:`, after an `if self.training:` that returns) are
    left alone: inference-only code, such as a detection head decoding its feature maps, works on
    intermediate activations and runs no backward. So are changes under `if self.inplace:`: the
    module's own option to work in place, as `nn.Dropout(inplace=True)` offers, asked for by its user.

    A project function or method that changes its parameter in place (`def standardize(x, m, s): return
    x.sub_(m).div_(s)`; a store into its items by a mask or a slice, `x[torch.rand_like(x) < p] = 0`), directly or through the functions it passes it to, given a `forward`'s tensor
    argument, is reported at its change when every call hands it such an argument, else at the call in
    `forward`; a helper that copies first (`x = x.clone()`, `x: Tensor = x.clone()`), or is given a copy or a
    fresh tensor, is not, nor a change under the helper's own switch (`x.mul_(s) if inplace else x.mul(s)`)
    when the call leaves it false (`inplace=False` by default) or hands it the module's option (`self.inplace`), nor one under a test of the module's attribute that no construction of it takes (`if self.inplace:` with
    `self.inplace = inplace` in `__init__(..., inplace=False)`, every construction leaving it to its default).
    A public method of a module other than `forward` that code outside the module calls for a result
    (`agent.act(obs)`, `model.encode(x)`; also through a parameter every call site fills with the same
    construction: `def update(agent, obs)` called with `agent = make_agent(...)`) counts as `forward` does: a change of its tensor argument, or of a
    helper it hands it to, is reported; one that returns nothing (`reset_noise(eps)`) or is named in place
    (`normalize_(x)`) changes it on purpose, and a call on `self` or handing a fresh tensor
    (`agent.act(torch.tensor(obs))`) is not such a call: a helper reached from one entry given the caller's
    own tensor (`agent.act(buf.obs[t])`, a slice of a stored buffer) is reported even when another entry is
    given only copies (`agent.value(obs.clone())`).

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
    alias_message = "in-place change of `{alias}`, which holds the forward argument `{name}`, changes the caller's tensor"
    activation_message = (
        "{activation} overwrites the forward argument `{name}` in place, and line {line} reads it again{alias}: "
        "it sees the activated values (and the caller's tensor changes)"
    )
    fix_applicability = Applicability.SAFE
    # A helper of another module a `forward` calls is read in its own file: in-place methods, augmented assignment.
    requires_any_text = ("forward", "Sequential", "_(", "+=", "-=", "*=", "/=")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._unshared: dict[tuple[ast.AST, str], bool] = {}  # `_given_unshared`'s answers
        self._any_callers: dict[ast.ClassDef, list] = {}  # the calls of a module class from any code of the project

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name != "forward" or self.ctx.analysis(ModuleClasses).method_of_module(node, self.ctx) is None:
            self._check_helper(node)
            return
        tensors = tensor_parameters(self.ctx, node)
        tensors -= self._sequence_parameters(node) if tensors else set()
        if not tensors:
            return
        for statement in _statements(node):
            if isinstance(statement, ast.AugAssign):
                argument = self._argument_held(statement.target, tensors)
                if argument and not self._excused(statement, node):
                    self._report_augmented(statement, argument)
                elif _indexes_a_tensor(statement.target) and isinstance(statement.target.value, ast.Name):  # `x[:, :3] /= s`
                    held = self._argument_held(statement.target.value, tensors)
                    if held and not self._excused(statement, node):
                        self.report(statement.target, self._message(statement.target.value.id, held))
            elif isinstance(statement, ast.Assign):
                for target in statement.targets:
                    # Through an alias only with a tensor's index (`out = x; out[:, :, :h] = ...`): `maps =
                    # features; maps[0] = ...` may well hold a list.
                    indexed = _indexes_a_tensor(target) and isinstance(target.value, ast.Name)
                    if indexed and (target.value.id in tensors or _sliced_dimensions(target)):
                        held = self._argument_held(target.value, tensors)
                        if held and not self._excused(statement, node):
                            self.report(target, self._message(target.value.id, held))
            if isinstance(statement, (ast.Expr, ast.Assign, ast.Return)) and isinstance(statement.value, ast.Call):
                # an in-place method returns its receiver: `x = x.relu_()` changed the caller's tensor too
                func = statement.value.func
                inplace = isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_")
                # `x.narrow(1, 0, 3).div_(s)`; a flag (`requires_grad_()`) is the tensor object's own, not its view's
                views = inplace and func.attr not in FLAG_METHODS
                changed = (self._storage_name(func.value) if views else func.value) if inplace else None
                name = isinstance(changed, ast.Name) and self._argument_held(changed, tensors, views=views)
                if name and not self._excused(statement, node):
                    self.report(statement.value, self._message(changed.id, name))
                elif isinstance(changed, ast.Name) and func.attr in ACTIVATING_METHODS and not self._excused(statement, node):
                    self._check_kept(statement.value, changed, node)  # `feats.append(x)`, then `x.relu_()`
        for call in self.ctx.index.within(node, ast.Call):
            self._check_activation(call, node, tensors)
            self._check_helper_call(call, node, tensors)

    def _check_helper(self, function: ast.FunctionDef) -> None:
        """A project function that changes its parameter in place, which every call hands a module's `forward`
        argument to (through functions passing it on): the change is made here."""
        if not any(INPLACE.sink(self.ctx, n) is not None for n in self.ctx.index.within(function, ast.Call, ast.AugAssign, ast.Assign)):
            return
        tensors = tensor_parameters(self.ctx, function) if entry_of_module(self.ctx, self.ctx, function) is not None else set()
        for parameter, reaches in self.ctx.analysis(ParameterEffects).of(function, INPLACE).items():
            local = next((
                r for r in reaches
                if not r.calls and taken_somewhere(self.ctx, self.ctx, function, r) and built_to_run(self.ctx, function, r.node)
            ), None)  # fmt: skip
            entry = entry_of_module(self.ctx, self.ctx, function, parameter) if local is not None and parameter in tensors else None
            if entry is not None:  # `agent.act(obs)` changing `obs`: as a `forward` would
                self.report(local.node, ENTRY_MESSAGE.format(
                    function=function.name, parameter=parameter, call=one_line(entry[0].text(entry[1]), 40),
                    place=place_in(self.ctx, entry[0], entry[1]),
                ))  # fmt: skip
                continue
            sites, other = forward_sites(self.ctx, self.ctx, function, parameter) if local is not None else ([], True)
            if sites and not other:
                caller, call, name = sites[0]
                self.report(local.node, HELPER_MESSAGE.format(
                    function=function.name, parameter=parameter, entry=caller.scopes.enclosing_function(call).name, name=name,
                    place=place_in(self.ctx, caller, call),
                ))  # fmt: skip

    def _check_helper_call(self, call: ast.Call, forward: ast.FunctionDef, tensors: set[str]) -> None:
        """`forward` hands its argument to a project function that changes it in place, which other calls
        use rightly (or whose calls are not known): the call here is what to change."""
        effects = self.ctx.analysis(ParameterEffects)
        callee = effects.callee(call) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
        changed = callee.ctx.analysis(ParameterEffects).of(callee.function, INPLACE) if callee is not None else None
        if not changed or self.ctx.scopes.enclosing_function(call) is not forward:
            return
        bound = bind_arguments(call, callee.function, takes_self(callee.ctx, callee.function))
        for parameter, reaches in changed.items():
            reaches = [r for r in reaches if r.taken_under(call, callee.function, strict=False)]
            argument = self._storage_name(bound.get(parameter)) if reaches else None
            name = self._argument_held(argument, tensors) if argument is not None else None
            if not name or self._excused(self.ctx.scopes.statement(call), forward):
                continue
            reach = reaches[0]
            helper = reach.ctx.scopes.enclosing_function(reach.node)
            own = next((p for p, rs in reach.ctx.analysis(ParameterEffects).of(helper, INPLACE).items() if any(r.node is reach.node and not r.calls for r in rs)), None)
            sites, other = forward_sites(self.ctx, reach.ctx, helper, own) if own is not None else ([], True)
            if other or not sites:
                self.report(call, CALL_MESSAGE.format(
                    call=one_line(self.ctx.text(call), 40), name=name, change=one_line(reach.ctx.text(reach.node), 40),
                    place=place_in(self.ctx, reach.ctx, reach.node),
                ))  # fmt: skip
            return

    def end_file(self) -> None:
        """An in-place activation in an `nn.Sequential` right after a layer whose output a forward hook keeps."""
        for call in self.ctx.index.of_type(ast.Call):
            if canonical_class(self.ctx.qualified_name(call.func)) != "torch.nn.Sequential":
                continue
            for before, layer in zip(call.args, call.args[1:]):
                if isinstance(layer, ast.Call) and self._builds_inplace_module(layer, possibly=True) and before in self._hooks_keep:
                    self._report_hooked(layer, f"`{self.ctx.text(layer)}`", before, self._hooks_keep[before])

    def _report_hooked(self, node: ast.AST, activation: str, layer: ast.Call, registration: tuple) -> None:
        home, hook = registration
        place = "line " if home is self.ctx else f"{self.ctx.analysis(ProjectView).display_path(home.real_path or home.path)}:"
        self.report(node, HOOK_MESSAGE.format(
            activation=activation, layer=one_line(self.ctx.text(layer), 40), line=layer.lineno, place=place, hook_line=hook.lineno,
        ))  # fmt: skip

    def _given_unshared(self, forward: ast.FunctionDef, name: str) -> bool:
        """Does every call of the module's instances in the project fill the argument with a tensor nothing
        else holds (`self.drop(torch.cat([a, b]))`)? Changing it in place changes no tensor of a caller.
        Asked only of an argument about to be reported."""
        key = (forward, name)
        if key not in self._unshared:
            calls = self.ctx.analysis(Callers).instance_calls(self.ctx.scopes.enclosing_class(forward))
            given = [(caller, call, bind_arguments(call, forward, skips_first=True)) for caller, call in calls or ()]
            self._unshared[key] = bool(given) and all(name in b and unshared(caller, b[name], call) for caller, call, b in given)
        return self._unshared[key]

    def _excused(self, statement: ast.stmt, forward: ast.FunctionDef) -> bool:
        """Does the statement run only in evaluation, or only when the module is asked to work in place?"""
        return self._inference_only(statement, forward) or self._asked_in_place(statement, forward)

    def _message(self, alias: str, name: str) -> str:
        return self.message.format(name=name) if alias == name else self.alias_message.format(alias=alias, name=name)

    def _check_activation(self, call: ast.Call, forward: ast.FunctionDef, tensors: set[str]) -> None:
        """`self.relu(x)` (an `nn.ReLU(inplace=True)`) or `F.relu(x, inplace=True)` on a tensor that
        `forward` reads again further down, itself or through an alias made before (`identity = x`): the
        argument, or a tensor of its own kept for a skip connection (`skip = self.down(x)`)."""
        argument = call.args[0] if call.args else None
        activation = self._inplace_activation(call) if isinstance(argument, ast.Name) else None
        if activation is None:
            return
        values = self.ctx.analysis(ValueKinds)
        held = [d.node for d in values.reaching_definitions(argument)]
        if not held:
            return
        names = {argument.id: held} | self._aliases(argument, held, forward, call)
        after = [n for n in self.ctx.index.within(forward, ast.Name) if isinstance(n.ctx, ast.Load) and (n.lineno, n.col_offset) > _end(call)]
        later = [  # read after the call, or with its result (`x * self.gate(x)`)
            n for n in [*read_with(self.ctx, call, set(names)), *after]
            if n.id in names and [d.node for d in values.reaching_definitions(n)] == names[n.id]
        ]  # fmt: skip
        if not later:
            held = held_after(self.ctx, argument, call)  # `skips.append(s)`, then `skips` read after the call
            hooked = self._hooked_output(argument) if held is None else None
            if held is not None:
                self.report(call, LOCAL_MESSAGE.format(activation=activation, name=argument.id, read=held.id, line=held.lineno))
            elif hooked is not None:
                self._report_hooked(call, activation, *hooked)
            elif not self._check_holder_held(call, activation, argument, forward):
                self._check_caller_held(call, activation, argument, forward, tensors)
            return
        name = self._argument_held(argument, tensors)
        if name:
            alias = f" (as `{later[0].id}`)" if later[0].id != argument.id else ""
            self.report(call, self.activation_message.format(activation=activation, name=name, line=later[0].lineno, alias=alias))
        else:
            self.report(call, LOCAL_MESSAGE.format(activation=activation, name=argument.id, read=later[0].id, line=later[0].lineno))

    def _hooked_output(self, tensor: ast.Name) -> tuple[ast.Call, tuple] | None:
        """(the layer, its hook's registration) when `tensor` is only the output of a layer whose output a
        forward hook keeps (`x = self.conv1(x)` with a hook on `self.conv1`)."""
        definitions = self.ctx.analysis(ValueKinds).reaching_definitions(tensor)
        if len(definitions) != 1 or not isinstance(definitions[0].value, ast.Call):
            return None
        layer = output_kept(self.ctx, definitions[0].value, self._hooks_keep)
        return (layer, self._hooks_keep[layer]) if layer is not None else None

    @cached_property
    def _hooks_keep(self) -> dict:
        """The layers of the file whose output a forward hook keeps, with the hook's registration."""
        return kept_outputs(self.ctx)

    def _check_kept(self, call: ast.Call, tensor: ast.Name, forward: ast.FunctionDef) -> None:
        """An in-place activation method (`x.relu_()`) on a tensor of `forward` put in a list or dict before,
        which `forward` or, for a list it is given, its caller reads after."""
        activation = f"`{self.ctx.text(call)}`"
        read = kept_after(self.ctx, tensor, call)
        if read is not None:
            self.report(call, LOCAL_MESSAGE.format(activation=activation, name=tensor.id, read=read.id, line=read.lineno))
        else:
            self._check_holder_held(call, activation, tensor, forward)

    def _check_holder_held(self, call: ast.Call, activation: str, argument: ast.Name, forward: ast.FunctionDef) -> bool:
        """The activation on a tensor `forward` put in a list it is given (`skips.append(s)`), which a module
        of the project that calls this one reads after the call (`torch.cat([h, skips[1]], 1)`)."""
        holders = parameter_holders(self.ctx, argument, call)
        cls = self.ctx.scopes.enclosing_class(forward)
        if not holders or cls is None:
            return False
        if cls not in self._any_callers:
            self._any_callers[cls] = forward_calls(self.ctx, cls, anywhere=True) or []
        for caller, site in self._any_callers[cls]:
            bound = bind_arguments(site, forward, skips_first=True)
            for holder in holders:
                read = read_again(caller, bound.get(holder), site)
                if read is not None:
                    place = "line " if caller is self.ctx else f"{self.ctx.analysis(ProjectView).display_path(caller.real_path or caller.path)}:"
                    self.report(call, HOLDER_MESSAGE.format(
                        activation=activation, name=argument.id, holder=holder, call=one_line(caller.text(site), 40), place=place,
                        line=site.lineno, read=read.id, read_line=read.lineno,
                    ))  # fmt: skip
                    return True
        return False

    def _check_caller_held(self, call: ast.Call, activation: str, argument: ast.Name, forward: ast.FunctionDef, tensors: set[str]) -> None:
        """The activation on the argument itself, which `forward` does not read again, while a module of the
        project that calls this one still holds the tensor it passes and reads it after the call
        (`identity = self.shortcut(x)` then `unit(x) + identity`; `skips.append(x)` then `down(x)`)."""
        name = self._argument_held(argument, tensors, views=False)
        if name is None or argument.id != name:
            return
        cls = self.ctx.scopes.enclosing_class(forward)
        if cls not in self._any_callers:
            self._any_callers[cls] = forward_calls(self.ctx, cls, anywhere=True) or []
        for caller, site in self._any_callers[cls]:
            read = held_after(caller, bind_arguments(site, forward, skips_first=True).get(name), site, scripts=True)
            if read is not None:
                place = "line " if caller is self.ctx else f"{self.ctx.analysis(ProjectView).display_path(caller.real_path or caller.path)}:"
                self.report(call, CALLER_MESSAGE.format(
                    activation=activation, name=name, call=one_line(caller.text(site), 40), place=place, line=site.lineno,
                    read=read.id, read_line=read.lineno,
                ))  # fmt: skip
                return

    def _aliases(self, argument: ast.Name, held: list, forward: ast.FunctionDef, call: ast.Call) -> dict[str, list]:
        """Names bound to the same tensor before the call (`identity = x`), with their own definitions."""
        values = self.ctx.analysis(ValueKinds)
        aliases = {}
        for node in self.ctx.index.within(forward, ast.Assign):
            value = node.value
            if (node.lineno, node.col_offset) < (call.lineno, call.col_offset) and isinstance(value, ast.Name) and value.id == argument.id:
                if [d.node for d in values.reaching_definitions(value)] == held:
                    aliases.update({t.id: [t] for t in node.targets if isinstance(t, ast.Name)})
        return aliases

    def _inplace_activation(self, call: ast.Call) -> str | None:
        """The in-place activation `call` applies (`nn.ReLU(inplace=True)`, or an `nn.Sequential` that starts
        with one), as a message names it; None if it is none."""
        name = self.ctx.qualified_name(call.func)
        if name in ALWAYS_INPLACE_FUNCTIONS or (name in INPLACE_FUNCTIONS and self._surely_true(call_argument(call, 99, "inplace"))):
            return f"`{self.ctx.text(call.func)}`"
        if name is not None:
            return None
        own = is_self_attribute(call.func)
        constructor = self.ctx.analysis(ValueKinds).constructor(call.func) if self._inplace_modules or own else None
        if constructor is not None and canonical_class(self.ctx.qualified_name(constructor.func)) == "torch.nn.Sequential":
            first = constructor.args[0] if constructor.args else None  # `nn.Sequential(nn.ReLU(inplace=True), ...)`
            if first not in self._inplace_modules:
                return None
            return f"`{self.ctx.text(call.func)}`, whose first layer is `{self.ctx.text(first)}` (line {first.lineno}),"
        if constructor in self._inplace_modules:  # built on another line (`self.act = nn.ReLU(...)` in `__init__`): named
            built_at = f" (line {constructor.lineno})" if constructor.lineno != call.lineno else ""
            return f"`{self.ctx.text(constructor)}`{built_at}"
        # Built elsewhere: by a factory of the project (`get_activation(act)`), in any module; a layer of
        # torch built here (`nn.Conv2d(...)`) was decided above.
        library = constructor is not None and (self.ctx.qualified_name(constructor.func) or "").startswith("torch.")
        made = built(self.ctx, call.func) if own and not library else None
        if not made or not all(self._builds_inplace_module(m, c) for c, m in made):
            return None
        home, construction = made[0]
        place = "line " if home is self.ctx else f"{self.ctx.analysis(ProjectView).display_path(home.real_path or home.path)}:"
        return f"`{self.ctx.text(call.func)}` (`{home.text(construction)}`, {place}{construction.lineno})"

    @cached_property
    def _inplace_modules(self) -> set[ast.Call]:
        """The file's constructions of activation modules that work in place (`nn.ReLU(inplace=True)`)."""
        return {c for c in self.ctx.index.by_type.get(ast.Call, ()) if self._builds_inplace_module(c)}

    def _builds_inplace_module(self, call: ast.Call, ctx=None, possibly: bool = False) -> bool:
        """`nn.ReLU(inplace=True)`, or `nn.ReLU(inplace=inplace)` where every call site of the function
        around it passes True (or leaves it to a default of True; with `possibly`, some call site does);
        `_ACTS[name](inplace=True)` where every class of the table is such an activation. `ctx`: the call's
        module (default: the linted file)."""
        ctx = ctx or self.ctx
        if not (call.keywords or call.args):
            return self._partial_inplace(call, ctx)
        named = ctx.qualified_name(call.func)
        if named is None and any(k.arg == "inplace" for k in call.keywords):  # a class from a table or a variable
            classes = [canonical_class(name) for name in made_classes(ctx, call, self.ctx) or ()]
        else:
            classes = [canonical_class(named)]
        if not classes or any(module not in INPLACE_MODULES for module in classes):
            return False
        flags = [passed_argument(call, INPLACE_MODULES[module], "inplace", ast.Constant(False)) for module in classes]
        if possibly:
            return all(flag is not None and True in (possible_constants(ctx, flag, self.ctx) or ()) for flag in flags)
        return all(self._surely_true(flag, ctx) for flag in flags)

    def _partial_inplace(self, call: ast.Call, ctx) -> bool:
        """`act_layer()` where `act_layer` is, under every call site, `partial(nn.ReLU, inplace=True)`
        (passed down from a config: `act_layer=cfg["act_layer"]`), or an entry of a table of them at every key
        the callers may pass (`ACTIVATIONS[name]()`)."""
        if isinstance(call.func, ast.Subscript):  # `ACTIVATIONS[name]()`, `name` what its callers pass
            keys = possible_constants(ctx, call.func.slice, self.ctx)
            items = ctx.analysis(Objects).called_objects(ctx, call, keys) if keys else None
            if not items or any(obj.kind != "made" or not isinstance(obj.node, ast.Call) for obj in items):
                return False
            found = [[(obj.ctx, obj.node) for obj in items]]
        elif isinstance(call.func, ast.Name):
            found = [made for made, _ in makers(ctx, call.func)]
        else:
            return False
        if not found:
            return False
        for made in found:
            for home, partial in made:
                if partial_target(home, partial) is None:
                    return False
                module = canonical_class(home.qualified_name(partial.args[0]))
                if module not in INPLACE_MODULES:
                    return False
                position = INPLACE_MODULES[module] + 1  # after the class
                flag = next((k.value for k in partial.keywords if k.arg == "inplace"), partial.args[position] if len(partial.args) > position else None)
                if not self._surely_true(flag, home):
                    return False
        return True

    def _surely_true(self, flag: ast.AST | None, ctx=None) -> bool:
        """`True`, or a value every call site of the project makes True (a parameter, `self.inplace` set from
        one, a config's field, a command-line option's default)."""
        if flag is None:
            return False
        values = possible_constants(ctx or self.ctx, flag, self.ctx)
        return bool(values) and all(value is True for value in values)

    def _sequence_parameters(self, function: ast.FunctionDef) -> set[str]:
        """Parameters the function uses as a list of tensors."""
        names = set()
        for call in self.ctx.index.within(function, ast.Call):
            func = call.func
            if call.args and isinstance(call.args[0], ast.Name) and self.ctx.qualified_name(func) in SEQUENCE_FUNCTIONS:
                names.add(call.args[0].id)
            elif isinstance(func, ast.Attribute) and func.attr in LIST_METHODS and isinstance(func.value, ast.Name):
                names.add(func.value.id)
            elif _calls_own_layer(func) or self._iterated_layer(func):
                names.update(a.value.id for a in call.args if _item_of_name(a))
        return names

    def _iterated_layer(self, func: ast.AST) -> bool:
        """Is `func` a loop variable over the module's layers (`head` in `for i, head in
        enumerate(self.heads)`, `for conv, x in zip(self.convs, xs)`)?"""
        definitions = self.ctx.analysis(ValueKinds).reaching_definitions(func) if isinstance(func, ast.Name) else []
        loops = [self.ctx.scopes.statement(d.node) for d in definitions]
        return bool(loops) and all(
            isinstance(loop, ast.For) and any(is_self_attribute(n) for n in ast.walk(loop.iter)) for loop in loops
        )  # fmt: skip

    def _inference_only(self, statement: ast.stmt, function: ast.FunctionDef) -> bool:
        """Does `statement` run only when `self.training` is false: inside `if not self.training:` (or
        the `else` of `if self.training:`), or after an `if self.training:` that returns?"""
        child = statement
        for ancestor in self.ctx.scopes.ancestors(statement):
            block = next((b for b in statement_blocks(ancestor) if any(s is child for s in b)), [])
            earlier = block[: next(i for i, s in enumerate(block) if s is child)] if block else []
            if any(_returns_when_training(s) for s in earlier):
                return True
            training = training_test(ancestor.test) if isinstance(ancestor, ast.If) else None
            if training is not None and training is (block is ancestor.orelse):
                return True
            if ancestor is function:
                return False
            child = ancestor
        return False

    def _asked_in_place(self, statement: ast.stmt, function: ast.FunctionDef) -> bool:
        """Is `statement` in the body of `if self.inplace:`: the module's own option to work in place, as
        `nn.Dropout(inplace=True)` offers?"""
        child = statement
        for ancestor in self.ctx.scopes.ancestors(statement):
            if isinstance(ancestor, ast.If) and any(s is child for s in ancestor.body) and _is_self_inplace(ancestor.test):
                return True
            if ancestor is function:
                return False
            child = ancestor
        return False

    def _argument_held(self, node: ast.AST, tensors: set[str], depth: int = 0, failed: dict | None = None, views: bool = True) -> str | None:
        """The tensor argument `node` may still hold, on some path: the argument itself, or through
        plain aliases (`out = x`). An augmented assignment (`x /= 255`) changes the tensor in place: the
        name still holds it after. `failed`: the names already followed in vain, with the fewest steps
        they were followed from (`x += ...` under N flags reach each other in N**MAX_ALIASES ways)."""
        failed = {} if failed is None else failed
        if not isinstance(node, ast.Name) or depth > MAX_ALIASES or failed.get(node, MAX_ALIASES + 1) <= depth:
            return None
        for definition in self.ctx.analysis(ValueKinds).reaching_definitions(node):
            if isinstance(definition.node, ast.FunctionDef):
                held = node.id if node.id in tensors and not self._given_unshared(definition.node, node.id) else None
            elif isinstance(self.ctx.scopes.parent(definition.node), ast.AugAssign):
                held = self._argument_held(definition.node, tensors, depth + 1, failed, views)
            else:  # an alias, or a view of the argument (`coords = x.narrow(1, 0, 3)`); an item of `for v in (x, y)`
                items = [definition.value] if definition.value is not None else literal_loop_items(self.ctx, definition.node)
                held = next(filter(None, (
                    self._argument_held(self._storage_name(v) if views else v, tensors, depth + 1, failed, views) for v in items
                )), None)  # fmt: skip
            if held:
                return held
        failed[node] = min(depth, failed.get(node, depth))
        return None

    def _storage_name(self, expr: ast.AST | None) -> ast.Name | None:
        """The name whose tensor `expr` is, or is a view of (`x.view(B, -1)`, `torch.split(x, ...)[1]`,
        `x[..., 2:4]`, `x.sub_(m)`)."""
        for _ in range(MAX_ALIASES):
            if expr is None or isinstance(expr, ast.Name):
                return expr
            expr = viewed(self.ctx, expr)
        return None

    def _report_augmented(self, statement: ast.AugAssign, argument: str) -> None:
        name, value = statement.target.id, statement.value
        value_text = self.ctx.text(value)
        if not isinstance(value, ATOMIC):
            value_text = f"({value_text})"
        replacement = f"{name} = {name} {OPERATORS[type(statement.op)]} {value_text}"
        fix = self.ctx.fix(f"Rebind: `{replacement}`", Applicability.SAFE, self.ctx.replace(statement, replacement))
        self.report(statement.target, self._message(name, argument), fix)


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno, node.end_col_offset)


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


def _returns_when_training(statement: ast.stmt) -> bool:
    """`if self.training: return ...` (or `raise`): what follows runs only in evaluation."""
    return isinstance(statement, ast.If) and training_test(statement.test) is True and isinstance(statement.body[-1], (ast.Return, ast.Raise))


def _indexes_a_tensor(target: ast.AST) -> bool:
    """`x[mask] = 0`, not `batch["pixels"] = ...` (a string key means a dict)."""
    if not isinstance(target, ast.Subscript):
        return False
    key = target.slice
    return not (isinstance(key, ast.Constant) and isinstance(key.value, str))


def _sliced_dimensions(target: ast.Subscript) -> bool:
    """`out[:, :, :h]`: an index of several dimensions, one a slice, which only a tensor (or array) takes."""
    key = target.slice
    return isinstance(key, ast.Tuple) and any(isinstance(e, ast.Slice) for e in key.elts)


def _is_self_inplace(test: ast.expr) -> bool:
    return is_self_attribute(test) and test.attr == "inplace"


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
