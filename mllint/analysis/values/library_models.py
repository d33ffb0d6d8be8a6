"""Models built by well-known libraries mllint does not read: which layer of theirs behaves differently in
training and eval mode, and whether they are returned in eval mode. `torchvision.models.resnet50()`,
`timm.create_model("efficientnet_b0")` and `torch.hub.load("pytorch/vision", "resnet18")` hold BatchNorm;
`AutoModelForSequenceClassification.from_pretrained(...)` holds Dropout and, as transformers calls
`model.eval()` after loading the weights, starts in eval mode. `is_module_base`: which library classes are
`torch.nn.Module`s (the base, Lightning's, torch's layers), the one answer for a base class named by its
qualified name."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from mllint.analysis.syntax.names import call_argument
from mllint.analysis.values.values import canonical_class


MODULE_BASES = {"torch.nn.Module", "lightning.LightningModule", "lightning.pytorch.LightningModule",
                "pytorch_lightning.LightningModule"}  # fmt: skip
NOT_MODULES = {"torch.nn.Parameter", "torch.nn.Buffer"}


def is_module_base(qualified: str | None) -> bool:
    """Is a class of this name a `torch.nn.Module`: the base itself, Lightning's, or a torch layer
    (`torch.nn.Sequential`, a loss base such as `torch.nn.modules.loss._Loss`, not `torch.nn.Parameter`)?"""
    name = canonical_class(qualified) or ""
    if name in MODULE_BASES:
        return True
    last = name.rsplit(".", 1)[-1].lstrip("_")  # `torch.nn._WeightedLoss`, a loss base
    return name == f"torch.nn.{name.rsplit('.', 1)[-1]}" and last[:1].isupper() and name not in NOT_MODULES


@dataclass(frozen=True)
class LibraryModel:
    layer: str  # "BatchNorm2d", "Dropout"
    starts_in_eval: bool = False


# Architecture families by the start of their name (torchvision's builders, timm's model names); only
# those whose default configuration has a mode-dependent layer. ViTs and ConvNeXts default to no dropout.
BATCH_NORM_FAMILIES = (
    "resnet", "resnext", "wide_resnet", "densenet", "mobilenet", "efficientnet", "regnet", "shufflenet", "mnasnet",
    "inception", "googlenet", r"vgg\d+_bn",
)  # fmt: skip
FAMILIES = (
    (re.compile("|".join(BATCH_NORM_FAMILIES)), "BatchNorm2d"),
    (re.compile(r"alexnet|vgg\d+$|squeezenet"), "Dropout"),
)
PRETRAINED = LibraryModel("Dropout", starts_in_eval=True)
HUB_REPOSITORIES = {"pytorch/vision", "pytorch/vision:main"}


def library_model(ctx, call: ast.Call) -> LibraryModel | None:
    """The model a call of a well-known library factory builds; None for any other call."""
    name = ctx.qualified_name(call.func)
    if not name:
        return None
    if name.startswith("torchvision.models."):
        return _family(name.rsplit(".", 1)[-1])
    if name == "timm.create_model":
        return _family(_literal(call_argument(call, 0, "model_name")))
    if name == "torch.hub.load" and _literal(call_argument(call, 0, "repo_or_dir")) in HUB_REPOSITORIES:
        return _family(_literal(call_argument(call, 1, "model")))
    owner, _, method = name.rpartition(".")
    cls = owner.rsplit(".", 1)[-1]
    if owner.startswith("transformers.") and method == "from_pretrained" and ("Model" in cls or "For" in cls):
        return PRETRAINED
    return None


def _family(model_name: str | None) -> LibraryModel | None:
    for pattern, layer in FAMILIES:
        if model_name and pattern.match(model_name):
            return LibraryModel(layer)
    return None


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
