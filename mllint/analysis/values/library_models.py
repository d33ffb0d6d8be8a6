"""Models built by well-known libraries mllint does not read: which layer of theirs behaves differently in
training and eval mode, and whether they are returned in eval mode. `torchvision.models.resnet50()`,
`timm.create_model("efficientnet_b0")` and `torch.hub.load("pytorch/vision", "resnet18")`, `smp.Unet(...)` hold BatchNorm;
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


# Architecture families by a token anywhere in the builder's or the model's name (`resnet50`,
# `deeplabv3_resnet50`, `tf_efficientnet_b0`, `seresnext50_32x4d`), first match wins. Detection models
# keep their backbone's BatchNorm frozen (`FrozenBatchNorm2d`): mode-free, as torchvision documents (SSDlite
# trains its BatchNorm: read by its backbone).
# Normalizer-free and BiT ResNets have no BatchNorm; ViTs and timm's ConvNeXts and Swins default to no
# dropout (unknown here). torchvision's own Swin and ConvNeXt builders default to stochastic depth.
MODE_FREE = re.compile(r"rcnn|retinanet|fcos|ssd(?!lite)")
NORM_FREE = re.compile(r"(^|_)nf|nfnet|bit")
TORCHVISION_ONLY = ((re.compile(r"swin|convnext"), "StochasticDepth"),)
FAMILIES = (
    (re.compile(r"r3d|mc3|r2plus1d|s3d"), "BatchNorm3d"),
    (re.compile(
        r"resnet|resnext|densenet|mobilenet|efficientnet|regnet|shufflenet|mnasnet|inception|googlenet|vgg\d+_bn"
        r"|deeplab|fcn|lraspp|maxvit|xception|hrnet|dpn\d|senet|ghostnet|rexnet|mixnet|darknet|repvgg|nasnet"
    ), "BatchNorm2d"),
    (re.compile(r"alexnet|vgg\d+|squeezenet"), "Dropout"),
)  # fmt: skip
PRETRAINED = LibraryModel("Dropout", starts_in_eval=True)
CONFIGURED = LibraryModel("Dropout")  # `AutoModel.from_config(config)`: fresh weights, training mode
SEGMENTATION_MODELS = LibraryModel("BatchNorm2d")  # every `segmentation_models_pytorch` architecture
NOT_BUILDERS = {"list_models", "get_weight", "get_model_weights", "get_model_builder"}


def library_model(ctx, call: ast.Call) -> LibraryModel | None:
    """The model a call of a well-known library factory builds; None for any other call (or an unknown
    architecture). A mode-free model is a LibraryModel with no layer."""
    name = ctx.qualified_name(call.func)
    if not name or not is_library_factory(name):
        return None
    if name.startswith("torchvision.models.") or name in ("timm.create_model", "torch.hub.load"):
        return _family(*architecture(ctx, call))
    if name.startswith("segmentation_models_pytorch."):
        return SEGMENTATION_MODELS
    return PRETRAINED if name.endswith(".from_pretrained") else CONFIGURED


def architecture(ctx, call: ast.Call) -> tuple[str | None, bool]:
    """(the architecture's name, is it torchvision's) of an image model a factory builds:
    `torchvision.models.vgg16(...)` and `get_model("vgg16")`, `timm.create_model("resnet50")`,
    `torch.hub.load("pytorch/vision", "resnet18")`; (None, False) for any other call or a name not written."""
    name = ctx.qualified_name(call.func) or ""
    last = name.rsplit(".", 1)[-1]
    if name.startswith("torchvision.models.") and is_library_factory(name):
        return _literal(call_argument(call, 0, "name")) if last == "get_model" else last, True
    if name == "timm.create_model":
        return _literal(call_argument(call, 0, "model_name")), False
    if name == "torch.hub.load":
        repository = _literal(call_argument(call, 0, "repo_or_dir")) or ""
        return _literal(call_argument(call, 1, "model")), repository.startswith("pytorch/vision")
    return None, False


def is_library_factory(qualified: str) -> bool:
    """Does a call of this qualified name build a model of a library mllint does not read: torchvision's
    builders and `get_model`, `timm.create_model`, `torch.hub.load`, a `segmentation_models_pytorch`
    architecture (`smp.Unet`, `smp.create_model`), transformers' `from_pretrained` / `from_config` of a model
    class (`AutoModelFor...`, `BertModel`; not `AutoTokenizer` or `AutoConfig`)?"""
    head, _, last = qualified.rpartition(".")
    if qualified.startswith("torchvision.models."):
        return "_Weights" not in qualified and last not in NOT_BUILDERS
    if qualified in ("timm.create_model", "torch.hub.load", "segmentation_models_pytorch.create_model"):
        return True
    if head == "segmentation_models_pytorch":
        return last[:1].isupper()
    owner = head.rsplit(".", 1)[-1]
    return last in ("from_pretrained", "from_config") and qualified.startswith("transformers.") and ("Model" in owner or "For" in owner)


def _family(model_name: str | None, torchvision: bool) -> LibraryModel | None:
    name = (model_name or "").lower()
    if not name or NORM_FREE.search(name):
        return None
    if MODE_FREE.search(name):
        return LibraryModel("")
    for pattern, layer in (TORCHVISION_ONLY if torchvision else ()) + FAMILIES:
        if pattern.search(name):
            return LibraryModel(layer)
    return None


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
