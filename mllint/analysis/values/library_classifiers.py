"""Library image classifiers mllint does not read and the attribute their last layer sits in: torchvision's
ResNets, EfficientNets, ... and `timm.create_model(...)` keep it in `fc`, `classifier`, `head` or (a
torchvision ViT) `heads`. Code that replaces it (`model.fc = nn.Linear(2048, 14)`) decides the model's
output: its shape (facets.shapes) and its kind (values)."""
from __future__ import annotations

TIMM_FACTORIES = frozenset({"timm.create_model", "timm.models.create_model"})
CLASSIFIER_HEADS = frozenset({"fc", "classifier", "head", "heads"})
TORCHVISION_CLASSIFIERS = tuple(
    "torchvision.models." + n
    for n in ("resnet", "resnext", "wide_resnet", "efficientnet", "mobilenet", "convnext", "densenet", "vgg", "regnet", "vit_", "swin")
)


def is_library_model(name: str) -> bool:
    """Does a call of this qualified name build a library classifier whose last layer is a head attribute?"""
    return name in TIMM_FACTORIES or name.startswith(TORCHVISION_CLASSIFIERS)
