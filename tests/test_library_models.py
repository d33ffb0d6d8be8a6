"""The table of well-known library models (`analysis.library_models`): what each factory builds."""
import ast

import pytest

from mllint.analysis.values.library_models import library_model
from mllint.context import FileContext
from mllint.source import SourceText

IMPORTS = "import timm\nimport torch\nimport torchvision\nfrom torchvision import models\nimport transformers\nimport segmentation_models_pytorch as smp\nfrom torchvision.models import segmentation, detection, video\nfrom transformers import AutoModel, AutoTokenizer, BertForMaskedLM\n"


def built(expression: str):
    source = IMPORTS + f"model = {expression}\n"
    tree = ast.parse(source)
    found = library_model(FileContext("example.py", SourceText(source), tree), tree.body[-1].value)
    return None if found is None else (found.layer, found.starts_in_eval)


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("torchvision.models.resnet50(weights=None)", ("BatchNorm2d", False)),
        ("models.efficientnet_b0()", ("BatchNorm2d", False)),
        ("models.vgg16_bn()", ("BatchNorm2d", False)),
        ("models.vgg16()", ("Dropout", False)),
        ("timm.create_model('mobilenetv3_large_100', pretrained=True)", ("BatchNorm2d", False)),
        ("torch.hub.load('pytorch/vision', 'resnet18', weights=None)", ("BatchNorm2d", False)),
        ("AutoModel.from_pretrained('bert-base-uncased')", ("Dropout", True)),
        ("BertForMaskedLM.from_pretrained(path)", ("Dropout", True)),
        ("transformers.AutoModelForCausalLM.from_pretrained(name)", ("Dropout", True)),
        ("AutoModel.from_config(config)", ("Dropout", False)),
        ("segmentation.deeplabv3_resnet50(weights='DEFAULT')", ("BatchNorm2d", False)),
        ("torchvision.models.segmentation.fcn_resnet101()", ("BatchNorm2d", False)),
        ("segmentation.lraspp_mobilenet_v3_large()", ("BatchNorm2d", False)),
        ("video.r3d_18()", ("BatchNorm3d", False)),
        ("models.swin_t()", ("StochasticDepth", False)),
        ("models.get_model('wide_resnet50_2', weights=None)", ("BatchNorm2d", False)),
        ("timm.create_model('tf_efficientnet_b3', num_classes=5)", ("BatchNorm2d", False)),
        ("timm.create_model('seresnext50_32x4d')", ("BatchNorm2d", False)),
        ("torch.hub.load('pytorch/vision:v0.10.0', 'deeplabv3_resnet101', pretrained=True)", ("BatchNorm2d", False)),
        ("torch.hub.load('facebookresearch/swav:main', 'resnet50')", ("BatchNorm2d", False)),
        ("smp.Unet('resnet34', classes=3)", ("BatchNorm2d", False)),
        ("smp.create_model('FPN', encoder_name='resnet34')", ("BatchNorm2d", False)),
        ("detection.fasterrcnn_resnet50_fpn(weights='DEFAULT')", ("", False)),  # FrozenBatchNorm2d: mode-free
        ("torchvision.models.detection.maskrcnn_resnet50_fpn_v2()", ("", False)),
        ("detection.keypointrcnn_resnet50_fpn()", ("", False)),
    ],
)
def test_known_factories(expression, expected):
    assert built(expression) == expected


@pytest.mark.parametrize(
    "expression",
    [
        "models.vit_b_16()",  # no dropout by default
        "timm.create_model(name)",  # which architecture is unknown
        "timm.create_model('vit_base_patch16_224')",
        "torch.hub.load('facebookresearch/dino:main', 'dino_vits16')",
        "AutoTokenizer.from_pretrained('bert-base-uncased')",  # not a model
        "Net.from_pretrained('x')",  # not transformers'
        "timm.create_model('swin_tiny_patch4_window7_224')",  # timm's Swin: no drop path by default
        "timm.create_model('nf_resnet50')",  # normalizer-free
        "models.get_model(name)",
        "models.ResNet50_Weights.DEFAULT.transforms()",  # not a model
        "smp.losses.DiceLoss(mode='binary')",
        "smp.encoders.get_preprocessing_fn('resnet34')",
    ],
)
def test_anything_else_is_unknown(expression):
    assert built(expression) is None
