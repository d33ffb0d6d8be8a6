"""Which library calls make optimizers and learning-rate schedulers: torch's own, and those of the
libraries training code takes them from (transformers, timm, bitsandbytes, apex, ...). The one table
every training-loop rule reads.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

TORCH_SCHEDULERS = "torch.optim.lr_scheduler."
METRIC_SCHEDULER = TORCH_SCHEDULERS + "ReduceLROnPlateau"  # stepped with a metric, exempt from torch's order check
# Optimizer classes and factories, by module prefix or full name.
OPTIMIZER_MODULES = ("torch.optim.", "timm.optim.", "bitsandbytes.optim.", "apex.optimizers.", "torch_optimizer.")
NOT_OPTIMIZERS = (TORCH_SCHEDULERS, "torch.optim.swa_utils.")
OPTIMIZER_NAMES = re.compile(r"^(transformers|pytorch_transformers)(\.optimization)?\.(AdamW|Adafactor)$")
# The transformers warm-up schedules (functions, and the classes of its older releases): torch schedulers
# (LambdaLR) sized in optimizer steps.
TRANSFORMERS_SCHEDULES = re.compile(
    r"^(transformers|pytorch_transformers)(\.optimization)?\.(get_\w*schedule\w*|Warmup\w*Schedule|ConstantLRSchedule)$"
)
# Gradient scalers: `scaler.step(optimizer)` steps the optimizer it is given.
SCALERS = re.compile(r"^torch\.(cuda\.|cpu\.)?amp(\.grad_scaler)?\.GradScaler$|^torch\.distributed\.fsdp\.\w+\.ShardedGradScaler$")
PER_STEP_TORCH = {TORCH_SCHEDULERS + "OneCycleLR", TORCH_SCHEDULERS + "CyclicLR"}


@dataclass(frozen=True)
class Scheduler:
    name: str
    torch_order: bool  # a torch scheduler: it must step after the optimizer (PyTorch warns otherwise)
    per_step: bool  # sized in optimizer steps, whatever its arguments


def scheduler_made_by(name: str | None) -> Scheduler | None:
    """What the class or factory `name` (qualified) makes, when it makes a learning-rate scheduler."""
    if not name:
        return None
    if name.startswith(TORCH_SCHEDULERS):
        return Scheduler(name, name != METRIC_SCHEDULER, name in PER_STEP_TORCH)
    if name == "torch.optim.swa_utils.SWALR":
        return Scheduler(name, True, False)
    if TRANSFORMERS_SCHEDULES.match(name):
        return Scheduler(name, True, True)
    if name.startswith("timm.scheduler."):  # stepped with the epoch or update count it is at
        return Scheduler(name, False, False)
    return None


def is_optimizer(name: str | None) -> bool:
    """Does the class or factory `name` (qualified) make an optimizer?"""
    if not name or not (name.startswith(OPTIMIZER_MODULES) or OPTIMIZER_NAMES.match(name)):
        return False
    return scheduler_made_by(name) is None and not name.startswith(NOT_OPTIMIZERS)


def is_scaler(name: str | None) -> bool:
    """Does the class `name` (qualified) make a gradient scaler (`torch.amp.GradScaler`)?"""
    return bool(name and SCALERS.match(name))
