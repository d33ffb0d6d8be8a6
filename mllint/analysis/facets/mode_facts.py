"""The facts of the train/eval mode facet (`modes.Modes`): what a model's mode may be at a point of a
function (`Fact`, a set of them per receiver key in a `State`), the model calls noted with them (`Use`), a
function's summary, the join of states at merges, and the torch tables and small syntax questions the
mode flow asks.
"""
from __future__ import annotations

import ast
import builtins
import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from mllint.analysis.syntax.names import reference_key
from mllint.analysis.objects.constants import fold
from mllint.analysis.objects.points_to import either, joined
from mllint.analysis.values.values import RETURNS_RECEIVER
from mllint.analysis.syntax.scopes import parameters
from mllint.analysis.syntax.tree import child_nodes
from mllint.findings import Related

MAX_CALL_DEPTH = 3  # how many calls deep helpers are followed
MAX_ROUNDS = 8  # loop fixpoint iterations
MAX_CONTEXTS = 4  # sets of constants a function is summarized under (`Modes.summary`)
GRAD_OFF = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
SET_GRAD_ENABLED = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}
GRAD_MODES = GRAD_OFF | SET_GRAD_ENABLED | {"torch.enable_grad", "torch.autograd.enable_grad"}  # decorators that run the body
# nn.Module methods that return the module itself and keep its mode.
SAME_MODULE = RETURNS_RECEIVER - {"train", "eval"}
# nn.Module methods that leave the mode alone.
MODE_NEUTRAL = SAME_MODULE | {
    "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "named_children", "state_dict", "load_state_dict", "zero_grad", "register_buffer", "register_parameter",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook", "get_submodule",
    "forward", "type",
}  # fmt: skip
# Calls that copy a module: the copy has its source's mode at the copy (an EMA or teacher made by `deepcopy`;
# `copy.copy` shares the submodules, whose modes then follow the source).
COPIES = {"copy.deepcopy"}
HARMLESS_BUILTINS = {"print", "len", "isinstance", "type", "id", "repr", "str", "hasattr", "getattr", "sum", "format"}
BUILTIN_NAMES = frozenset(dir(builtins))
# Methods that a library calls with the mode it has set itself (Lightning).
LIBRARY_HOOKS = {"validation_step", "test_step", "predict_step"}
EVALUATION_WORDS = {
    "validate", "validation", "val", "valid", "evaluate", "evaluation", "eval", "predict", "prediction",
    "inference", "test", "testing",
}  # fmt: skip
LOOPS = (ast.For, ast.AsyncFor, ast.While)
# The nodes that may make a statement act on the modes (see `Flow._acts`).
ACTING = (
    ast.Call, ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.withitem, ast.While, ast.Return, ast.Raise,
    ast.Break, ast.Continue,
)  # fmt: skip
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# What another module of the project must mention for a call of its functions to be followed: a switch of
# mode, or a model loaded in eval mode. Elsewhere the call stays unknown (reading every module a loop calls
# into costs too much).
FOLLOWED_MODULES = re.compile(rb"\.eval\(|\.train\(|\.from_pretrained\(")



class Mode(enum.Enum):
    TRAIN = "training"
    EVAL = "eval"
    ENTRY = "as the caller left it"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Fact:
    mode: Mode
    site: ast.AST | None = None  # the statement's call in the analysed function that set it
    origin: ast.AST | None = None  # the `m.train()`/`m.eval()`/construction that set it (maybe in a helper)
    built: ast.Call | None = None  # the construction of the model, when known
    source: str | None = None  # of ENTRY bound under another key: whose entry mode it is (`shadow = deepcopy(model)`)


ENTRY = frozenset({Fact(Mode.ENTRY)})
State = dict  # receiver key -> frozenset[Fact]


@dataclass(frozen=True)
class Use:
    call: ast.Call  # the model call (`model(x)`), maybe inside a helper
    site: ast.AST  # where the analysed function reaches it: the call itself or the call of the helper
    scope: ast.AST  # the analysed function (or module)
    key: str  # the receiver, as the analysed function names it
    facts: frozenset
    # Seen from a call site in another module (`site`, `scope` and the facts are that module's): the
    # receiver as the function around `call` names it, and the functions passed through on the way.
    own_key: str = ""
    through: str = ""  # ", through `report` (engine.py:30)"
    sites: tuple[Related, ...] = ()  # seen from call sites: they, innermost first (`callers.call_sites`)
    constants: tuple = ()  # the loop variables known as constants in the round of an unrolled loop it was seen in
    named: str = ""  # an object's receiver as the caller would spell it, when the call does not (`pair.enc` run by `pair.fit(b)`)

    @property
    def name(self) -> str:
        """The receiver as the linted file names it at the model call (an object's key: as the call spells it)."""
        key = self.own_key or self.key
        return key if not key.startswith("@") else self.named or reference_key(called_receiver(self.call)) or "the model"


@dataclass
class Summary:
    exit: State
    uses: list[Use]  # model calls whose mode depends on the caller (their facts include ENTRY)
    returned: frozenset
    returned_items: tuple[frozenset, ...] | None  # of each item, when every return is a tuple of as many
    cut: bool = False  # a call below was not followed, past `MAX_CALL_DEPTH`: asked less deep, it is worked out again


@dataclass(frozen=True)
class FlowFacts:
    """What a function's flow found, kept without the flow (which refers back to its `Modes`)."""

    uses: list[Use]
    before: dict[ast.AST, State]  # the state just before each call


@dataclass
class Targets:
    loop: ast.AST | None = None
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


def lookup(state: State, key: str) -> frozenset:
    """A key's facts: its own, else those of its nearest enclosing receiver (a mode set on a model holds
    for its submodules), else ENTRY."""
    while True:
        if key in state:
            return state[key]
        if "." not in key:
            return ENTRY
        key = key.rsplit(".", 1)[0]


def join(states: Iterable[State | None]) -> State | None:
    reachable = [s for s in states if s is not None]
    if not reachable:
        return None
    if len(reachable) == 1:
        return reachable[0]
    if all(s is reachable[0] for s in reachable):
        return reachable[0]
    joined = {}
    for key in {k for s in reachable for k in s}:
        facts = [lookup(s, key) for s in reachable]
        first = facts[0]
        joined[key] = first if all(f is first for f in facts) else frozenset().union(*facts)
    return joined



def is_test_path(path: str) -> bool:
    """`tests/test_engine.py`, `engine_test.py`, `conftest.py`."""
    *folders, name = path.replace("\\", "/").split("/")
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or bool({"test", "tests"} & set(folders))


def calls_in_evaluation_order(expr: ast.AST) -> list[ast.Call]:
    """The calls of an expression, each after the calls in its own arguments (not inside lambdas)."""
    order: list[ast.Call] = []
    stack: list[tuple[ast.AST, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if isinstance(node, (ast.Lambda, *FUNCTIONS, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            stack.append((node, True))
        stack += [(child, False) for child in reversed(child_nodes(node))]
    return order


def receiver_head(expr: ast.AST) -> str | None:
    """`self` for `self.model.encoder`: the name a reference (`names.reference_key`) starts with."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def linked_names(names: set[str], links: list[tuple[str, str]]) -> set[str]:
    """`names` and every name linked to one of them, directly or not."""
    found, changed = set(names), True
    while changed:
        changed = False
        for first, second in links:
            if (first in found) != (second in found):
                found.update((first, second))
                changed = True
    return found


def parameter_names(function: ast.AST) -> set[str]:
    """The names of a function's parameters, not `*args` and `**kwargs`."""
    return {a.arg for a in parameters(function, variadic=False)}


def called_receiver(call: ast.Call) -> ast.AST:
    """The model a model call runs: `net` in `net(x)` and `net.forward(x)`, `self.net` in `self.net(x)`."""
    func = call.func
    return func.value if isinstance(func, ast.Attribute) and func.attr == "forward" else func


def saved_mode(node: ast.AST) -> tuple[str, ast.AST] | None:
    """`was_training = model.training`: (the name, the model)."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return None
    value = node.value
    if isinstance(value, ast.Attribute) and value.attr == "training":
        return node.targets[0].id, value.value
    return None


def requested_mode(call: ast.Call, method: str) -> Mode:
    if method == "eval":
        return Mode.EVAL
    argument = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if argument is None:
        return Mode.TRAIN if not call.keywords else Mode.UNKNOWN
    if isinstance(argument, ast.Constant) and isinstance(argument.value, bool):
        return Mode.TRAIN if argument.value else Mode.EVAL
    return Mode.UNKNOWN


def common_built(facts: frozenset) -> ast.Call | None:
    built = {f.built for f in facts}
    return built.pop() if len(built) == 1 else None


def strip_same_module(value: ast.AST) -> ast.Call | None:
    """`Net().to(device)` -> `Net()`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SAME_MODULE:
        value = value.func.value
    return value if isinstance(value, ast.Call) else None


def moved_model(value: ast.AST) -> ast.AST:
    """`model` for `model.to(device).float()`: the object a chain of device and dtype moves returns."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in SAME_MODULE:
        value = value.func.value
    return value


def is_items(value: ast.AST | None, size: int) -> bool:
    """`(a, b)` with `size` items, none starred."""
    return (
        isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == size
        and not any(isinstance(e, ast.Starred) for e in value.elts)
    )  # fmt: skip


def last_round_arm(statement: ast.AST, loop: ast.AST | None) -> list | None:
    """The arm of an `if` in a loop's body that runs in the loop's last round only (`if step ==
    len(loader) - 1:` in `for step, batch in enumerate(loader)`, `if i + 1 == n:` in `for i in
    range(n)`; the `else` of `!=`): after it the loop ends, so what it does never reaches a later round."""
    if not isinstance(statement, ast.If) or not isinstance(loop, (ast.For, ast.AsyncFor)) or statement not in loop.body:
        return None
    test = statement.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    iterator, target = loop.iter, loop.target
    if not (isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name) and len(iterator.args) == 1) or iterator.keywords:
        return None
    if iterator.func.id == "range" and isinstance(target, ast.Name):
        counter, length = target.id, ast.unparse(iterator.args[0])
    elif iterator.func.id == "enumerate" and isinstance(target, ast.Tuple) and isinstance(target.elts[0], ast.Name):
        counter, length = target.elts[0].id, f"len({ast.unparse(iterator.args[0])})"
    else:
        return None
    sides = ast.unparse(test.left), ast.unparse(test.comparators[0])
    last = {(counter, f"{length} - 1"), (f"{counter} + 1", length)}
    if sides not in last and sides[::-1] not in last:
        return None
    return statement.body if isinstance(test.ops[0], ast.Eq) else statement.orelse


def is_getattr(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and bool(node.args)


def translate_key(callee_key: str, mapping: dict[str, str | None]) -> str | None:
    """The caller's key for a callee's: its head mapped (a parameter, `self`, a parameter of `__init__` an
    instance built at the call's site was passed), an object's own key as it is; a key of several
    objects (`points_to.joined`) when each of them translates."""
    if len(either(callee_key)) > 1:
        parts = [translate_key(key, mapping) for key in either(callee_key)]
        return None if None in parts else joined(parts)
    head, dot, rest = callee_key.partition(".")
    target = mapping.get(head)
    if head.startswith("@") and target is None:  # an object's own key, unless a construction passed it
        return callee_key
    return target + dot + rest if target is not None else None


def name_says_evaluation(name: str) -> bool:
    """`validate`, `run_evaluation`, `val_epoch`, `test`; not pytest's `test_*` functions."""
    words = name.lower().strip("_").split("_")
    if words[0] == "test" and len(words) > 1:
        return False
    return any(word in EVALUATION_WORDS for word in words)


def own_calls(body: ast.AST, constants: dict | None = None):
    """The calls a loop or function makes itself: not in nested loops, functions or classes (nor in the
    branches `constants`, the loop variables of an unrolled loop's round, decide against)."""
    stack = child_nodes(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*LOOPS, *FUNCTIONS, ast.Lambda, ast.ClassDef)):
            continue
        if constants and isinstance(node, (ast.If, ast.IfExp)):
            decided = fold(node.test, constants)
            if decided is not None:
                arm = node.body if decided else node.orelse
                stack += [node.test, *(arm if isinstance(arm, list) else [arm])]
                continue
        if isinstance(node, ast.Call):
            yield node
        stack += child_nodes(node)
