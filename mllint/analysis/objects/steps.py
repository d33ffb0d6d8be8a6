"""What a `.step(...)` call steps: an optimizer (`opt.step()`, `opt.step(closure)`), an optimizer through
its gradient scaler (`scaler.step(opt)`), a learning-rate scheduler (one stepped with a metric,
`ReduceLROnPlateau`, apart), or anything else (`env.step(action)`, `stopper.step(score)`). The one answer
every reader of steps asks (the training loop's events, objectives, modes, model selection).

What made the receiver decides, as the objects layer follows it (built here, returned by a project helper,
taken from a builder's tuple, a class a config chooses); else, under the call sites of the function whose
parameter it is; the receiver's name only when neither tells.
"""
from __future__ import annotations

import ast
import enum
import re
from typing import NamedTuple

from mllint.analysis.objects.call_sites import built, made_classes, makers
from mllint.analysis.values.optimizers import METRIC_SCHEDULER, is_optimizer, is_scaler, scheduler_made_by

OPTIMIZER_NAME = re.compile(r"optim|(^|_)opt($|_|[a-z]?\d*$)", re.IGNORECASE)
SCHEDULER_NAME = re.compile(r"sched", re.IGNORECASE)
SCALER_NAME = re.compile(r"scaler", re.IGNORECASE)
READABLE = (ast.Name, ast.Attribute, ast.Subscript)


class StepKind(enum.Enum):
    OPTIMIZER = "optimizer"
    SCHEDULER = "scheduler"
    PLATEAU = "plateau"  # a scheduler stepped with a metric (`ReduceLROnPlateau`)
    OTHER = "other"  # `env.step(action)`, an early stopper's, an unknown object's


class Step(NamedTuple):
    kind: StepKind
    stepped: ast.AST  # the optimizer or scheduler stepped: `opt` of `opt.step()` and of `scaler.step(opt)`
    scaled: bool = False  # through a gradient scaler


class Steps:
    """`step_of` memoized per call, for one file."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self._steps: dict[tuple[ast.Call, ast.AST], Step | None] = {}

    def of(self, call: ast.Call, func: ast.AST | None = None) -> Step | None:
        key = (call, func or call.func)
        if key not in self._steps:
            self._steps[key] = _step_of(self.ctx, call, func or call.func)
        return self._steps[key]


def step_of(ctx, call: ast.Call, func: ast.AST | None = None) -> Step | None:
    """What `call` steps, when it calls a `step` method (`func`: the method it calls, when bound to a name
    first: `step = opt.step`); None for any other call, and for a module's function (`torch.optim.step`)."""
    return ctx.analysis(Steps).of(call, func)


def stepped_optimizer(ctx, call: ast.Call) -> ast.AST | None:
    """The optimizer `call` steps (`opt` of `opt.step()`, of `scaler.step(opt)`); None for any other call."""
    step = step_of(ctx, call)
    return step.stepped if step is not None and step.kind is StepKind.OPTIMIZER else None


def steps_optimizer(ctx, node: ast.AST) -> bool:
    """Does `node` (a statement, a branch: `if (i + 1) % accumulation == 0:`) step an optimizer?"""
    return any(stepped_optimizer(ctx, call) is not None for call in ctx.index.within(node, ast.Call))


def _step_of(ctx, call: ast.Call, func: ast.AST) -> Step | None:
    if not (isinstance(func, ast.Attribute) and func.attr == "step") or ctx.qualified_name(func.value) is not None:
        return None
    receiver = func.value
    readable = isinstance(receiver, READABLE)
    kinds = _kinds(ctx, built(ctx, receiver)) if readable else None
    if kinds is None:
        kinds = _named_kind(ctx.text(receiver))
    if kinds is None and readable:  # a parameter: as the first call site that tells builds it
        kinds = next((k for made, binding in makers(ctx, receiver) if binding is not None and (k := _kinds(ctx, made))), None)
    if kinds == "scaler":
        return Step(StepKind.OPTIMIZER, call.args[0], scaled=True) if call.args else Step(StepKind.OTHER, receiver)
    return Step(kinds or StepKind.OTHER, receiver)


def _kinds(ctx, made: list[tuple[object, ast.Call]] | None) -> StepKind | str | None:
    """What stepping an object made by these calls is, when they all agree (a gradient scaler: "scaler");
    None when one is unknown."""
    kinds = {_kind_of_class(name) for home, call in made or () for name in made_classes(home, call, ctx) or {None}}
    return kinds.pop() if len(kinds) == 1 else None


def _kind_of_class(name: str | None) -> StepKind | str | None:
    if not name:
        return None
    if is_scaler(name):
        return "scaler"
    if (scheduler := scheduler_made_by(name)) is not None:
        return StepKind.PLATEAU if scheduler.name == METRIC_SCHEDULER else StepKind.SCHEDULER
    return StepKind.OPTIMIZER if is_optimizer(name) else None  # a class of the project's: its name may tell


def _named_kind(text: str) -> StepKind | str | None:
    """The receiver's last name: `scaler`, `self.lr_scheduler`, `opt_g`; None when it says nothing."""
    identifiers = re.findall(r"[A-Za-z_]\w*", text)
    last = identifiers[-1] if identifiers else ""
    if SCALER_NAME.search(last):
        return "scaler"
    if SCHEDULER_NAME.search(last):
        return StepKind.SCHEDULER
    return StepKind.OPTIMIZER if OPTIMIZER_NAME.search(last) else None


def names_optimizer(text: str) -> bool:
    """Is the last name of `text` an optimizer's (`self.optim`, `opt_g`)?"""
    return _named_kind(text) is StepKind.OPTIMIZER
