"""The table of well-known library models (`analysis.library_models`): what each factory builds."""
import ast

import pytest

from mllint.analysis.values.library_models import library_model
from mllint.context import FileContext
from mllint.source import SourceText

IMPORTS = "import timm\nimport torch\nimport torchvision\nfrom torchvision import models\nimport transformers\nfrom transformers import AutoModel, AutoTokenizer, BertForMaskedLM\n"


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
    ],
)
def test_anything_else_is_unknown(expression):
    assert built(expression) is None
