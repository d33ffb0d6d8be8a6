"""Runners that drive a training loop for the code (accelerate's `Accelerator`, lightning's `Fabric`) and
which of their methods hand back the objects they are given. The one table every analysis reads.
"""
from __future__ import annotations

import ast
from collections.abc import Callable

ACCELERATORS = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
FABRICS = frozenset({"lightning.fabric.Fabric", "lightning.Fabric", "lightning_fabric.Fabric", "lightning.fabric.fabric.Fabric"})
RUNNERS = ACCELERATORS | FABRICS
# method -> (the runners that have it, whether it hands back every argument or only its first). Every
# argument: one alone, else a tuple of them in order (`model, opt = accelerator.prepare(model, opt)`).
HANDING_BACK: dict[str, tuple[frozenset[str], bool]] = {
    "prepare": (ACCELERATORS, True),
    "prepare_model": (ACCELERATORS, False),
    "prepare_optimizer": (ACCELERATORS, False),
    "prepare_scheduler": (ACCELERATORS, False),
    "prepare_data_loader": (ACCELERATORS, False),
    "unwrap_model": (ACCELERATORS, False),
    "setup": (FABRICS, True),
    "setup_module": (FABRICS, False),
    "setup_optimizers": (FABRICS, True),
    "setup_dataloaders": (FABRICS, True),
}
# Keywords that add to what a method hands back (`fabric.setup(model, opt, scheduler=sched)`).
ADDING_KEYWORDS = frozenset({"scheduler"})


def is_runner(name: str | None) -> bool:
    """Is the qualified class `name` a runner?"""
    return name in RUNNERS


def handed_back(call: ast.Call, makers: Callable[[ast.expr], list[str | None] | None]) -> list[ast.expr] | None:
    """The arguments `call` gives back, in order, when it is a method of this table called on a receiver
    every one of whose `makers` (the qualified classes of the calls that may have made it, as the caller's
    analysis knows them) has that method; None otherwise, or when an argument is starred."""
    func = call.func
    row = HANDING_BACK.get(func.attr) if isinstance(func, ast.Attribute) else None
    if row is None or not call.args or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(k.arg is None or k.arg in ADDING_KEYWORDS for k in call.keywords):
        return None
    made = makers(func.value)
    return (list(call.args) if row[1] else [call.args[0]]) if made and all(m in row[0] for m in made) else None
