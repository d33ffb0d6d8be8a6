"""Output shapes of `torch.nn` layers from their constructor arguments: `nn.Linear(h, 1)` maps `(..., h)`
to `(..., 1)`. Sizes come from the constructor's literal arguments; anything else is a symbol of its own.
"""
from __future__ import annotations

import ast
import re

from mllint.analysis.facets.dims import Dim, Shape, Sym, broadcast, floor_divide, product
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.syntax.tree import same_expression
from mllint.analysis.values.library_classifiers import TIMM_FACTORIES, is_library_model

SHAPE_PRESERVING = frozenset(
    "torch.nn." + name
    for name in (
        "ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "LeakyReLU", "ELU", "SELU", "CELU", "PReLU",
        "Softplus", "Hardswish", "Hardsigmoid", "Hardtanh", "Softmax", "LogSoftmax", "Identity", "Dropout",
        "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "LayerNorm", "GroupNorm", "BatchNorm1d",
        "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm",
        "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder", "TransformerDecoderLayer",  # (of the first input)
    )
)  # fmt: skip
LINEAR = "torch.nn.Linear"
CONVOLUTIONS = {"torch.nn.Conv1d": 1, "torch.nn.Conv2d": 2, "torch.nn.Conv3d": 3}
ADAPTIVE_POOLS = {f"torch.nn.Adaptive{kind}Pool{n}d": n for kind in ("Avg", "Max") for n in (1, 2, 3)}
POOLS = {f"torch.nn.{kind}Pool{n}d": n for kind in ("Avg", "Max", "LP") for n in (1, 2, 3)}


def constructor_dim(expr: ast.AST | None) -> Dim:
    """A size given to a constructor: a literal int, else a symbol standing for that argument."""
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    if expr is None:
        return None
    return Sym(("constructor-argument", id(expr)), ast.unparse(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else "?")


def torch_layer_output(name: str, constructor: ast.Call, shape: Shape | None, size=constructor_dim) -> Shape | None:
    """The output shape of the `torch.nn` layer `name` built by `constructor`, for an input of `shape`;
    `size` gives the constructor's size arguments as dimensions."""
    if shape is None:
        return None
    if name in SHAPE_PRESERVING:
        return shape
    if name == "torch.nn.Linear" and len(shape) >= 1:
        return shape[:-1] + (size(call_argument(constructor, 1, "out_features")),)
    if name == "torch.nn.Embedding":
        return shape + (size(call_argument(constructor, 1, "embedding_dim")),)
    if name == "torch.nn.EmbeddingBag" and len(shape) == 2:  # bags of equal length, one per row
        return shape[:1] + (size(call_argument(constructor, 1, "embedding_dim")),)
    if name in CONVOLUTIONS:
        spatial = CONVOLUTIONS[name]
        channels = size(call_argument(constructor, 1, "out_channels"))
        if len(shape) == spatial + 2:
            return (shape[0], channels) + convolved_sizes(constructor, shape[2:], size)
        if len(shape) == spatial + 1:
            return (channels,) + convolved_sizes(constructor, shape[1:], size)
        return None
    if name in POOLS and len(shape) in (POOLS[name] + 1, POOLS[name] + 2):
        return shape[: len(shape) - POOLS[name]] + pooled_sides(name, constructor, shape[len(shape) - POOLS[name] :])
    if name in ADAPTIVE_POOLS:
        spatial = ADAPTIVE_POOLS[name]
        sizes = pooled_sizes(call_argument(constructor, 0, "output_size"), spatial)
        if sizes is None or len(shape) not in (spatial + 1, spatial + 2):
            return None
        return shape[: len(shape) - spatial] + sizes
    if name == "torch.nn.Flatten":
        start = _literal_int(call_argument(constructor, 0, "start_dim"), 1)
        end = _literal_int(call_argument(constructor, 1, "end_dim"), -1)
        return flatten(shape, start, end)
    return None


def convolved_sizes(constructor: ast.Call, sides: Shape, size=constructor_dim) -> Shape:
    """A convolution's output sides for input `sides`, from literal kernel, stride, padding and dilation
    (one int each): `(n + 2p - d(k - 1) - 1) // s + 1` of an int side; a symbolic side cut into patches
    (kernel = stride, no padding: `n // patch`, the kernel's symbol if it is not literal). None: unknown."""
    kernel, stride = call_argument(constructor, 2, "kernel_size"), call_argument(constructor, 3, "stride")
    k = _literal_int(kernel, 0)
    s = _literal_int(stride, 1) if stride is not None or k is not None else None
    p, d = _literal_int(call_argument(constructor, 4, "padding"), 0), _literal_int(call_argument(constructor, 5, "dilation"), 1)
    patches = stride is not None and kernel is not None and ast.unparse(stride) == ast.unparse(kernel) and p == 0 and d == 1  # `Conv2d(c, d, patch, patch)`
    out = []
    for side in sides:
        if isinstance(side, int) and None not in (k, s, p, d) and k > 0 and s > 0:
            out.append((side + 2 * p - d * (k - 1) - 1) // s + 1)
        elif isinstance(side, Sym) and patches:
            out.append(floor_divide(side, k if k is not None else size(kernel)))
        else:
            out.append(None)
    return tuple(out)


def pooled_sides(name: str, constructor: ast.Call, sides: Shape) -> Shape:
    """A pool's output sides, from a literal kernel, stride (the kernel's, by default) and padding; None
    for a side not known (`ceil_mode`, dilation or `LPPool`'s extra argument given)."""
    if name.startswith("torch.nn.LP") or len(constructor.args) > 3 or any(k.arg not in ("kernel_size", "stride", "padding") for k in constructor.keywords):
        return (None,) * len(sides)
    k = _literal_int(call_argument(constructor, 0, "kernel_size"), 0)
    stride = call_argument(constructor, 1, "stride")
    s = k if stride is None or (isinstance(stride, ast.Constant) and stride.value is None) else _literal_int(stride, 1)
    p = _literal_int(call_argument(constructor, 2, "padding"), 0)
    if None in (k, s, p) or k <= 0 or s <= 0:
        return (None,) * len(sides)
    return tuple(
        (n + 2 * p - k) // s + 1 if isinstance(n, int) else floor_divide(n, k) if isinstance(n, Sym) and s == k and p == 0 else None
        for n in sides
    )


def pooled_sizes(output_size: ast.AST | None, spatial: int) -> Shape | None:
    """The spatial sizes an adaptive pool gives: `k` for each of them, or a tuple of ints."""
    if isinstance(output_size, ast.Constant) and type(output_size.value) is int:
        return (output_size.value,) * spatial
    elements = output_size.elts if isinstance(output_size, ast.Tuple) and len(output_size.elts) == spatial else []
    sizes = tuple(e.value for e in elements if isinstance(e, ast.Constant) and type(e.value) is int)
    return sizes if elements and len(sizes) == spatial else None


RECURRENT = frozenset({"torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"})


def torch_layer_outputs(name: str, constructor: ast.Call, shapes: list[Shape | None], size=constructor_dim) -> tuple | None:
    """The outputs of a `torch.nn` layer that returns a tuple, as nested tuples of shapes (None: unknown):
    a recurrent layer's `(output, h_n)` (an LSTM's `(output, (h_n, c_n))`) for a batched input of known
    rank, `nn.MultiheadAttention`'s `(attn_output, weights)`."""
    first = shapes[0] if shapes else None
    if name in RECURRENT and first is not None and len(first) == 3:
        layout = recurrent_layout(constructor, size)
        if layout is None:
            return None
        batch_first, features, hidden, layers = layout
        batch, steps = (first[0], first[1]) if batch_first else (first[1], first[0])
        output = (batch, steps, features) if batch_first else (steps, batch, features)
        state = (layers, batch, hidden)
        return (output, (state, state)) if name == "torch.nn.LSTM" else (output, state)
    if name == "torch.nn.MultiheadAttention" and first is not None and len(first) >= 2:
        return first[:-1] + (size(call_argument(constructor, 0, "embed_dim")),), None
    return None


def batched_recurrent(name: str, constructor: ast.Call, batch: Dim, key: tuple, size=constructor_dim) -> tuple | None:
    """A batch-first recurrent layer's outputs for a batch `(batch, ...)` of unknown rank (a loader's): the
    sequence `(batch, steps, features)`, its steps a size of their own, and the final state(s)."""
    layout = recurrent_layout(constructor, size) if name in RECURRENT and batch not in (1, None) else None
    if layout is None or not layout[0]:
        return None
    output = (batch, Sym(("size", key, 1), "steps"), layout[1])
    state = (layout[3], batch, layout[2])
    return (output, (state, state)) if name == "torch.nn.LSTM" else (output, state)


def recurrent_layout(constructor: ast.Call, size=constructor_dim) -> tuple[bool, Dim, Dim, Dim] | None:
    """(batch_first, the output's features, hidden size, layers x directions) of a recurrent layer, read
    from its constructor; None when `batch_first` or `bidirectional` is not a literal (or `proj_size`)."""
    keywords = {k.arg: k.value for k in constructor.keywords}
    if any(isinstance(v, ast.Starred) for v in constructor.args) or None in keywords or len(constructor.args) > 3:
        return None
    batch_first, bidirectional = _literal_bool(keywords.get("batch_first")), _literal_bool(keywords.get("bidirectional"))
    if batch_first is None or bidirectional is None or "proj_size" in keywords:
        return None
    hidden, directions = size(call_argument(constructor, 1, "hidden_size")), 2 if bidirectional else 1
    depth = call_argument(constructor, 2, "num_layers")
    layers = _literal_int(depth, 1)
    layers = layers if layers is not None else size(depth)  # `num_layers=n`: a symbol
    return batch_first, product((directions, hidden)), hidden, product((layers, directions))


def changes_width(name: str, constructor: ast.Call, shape: Shape, size=constructor_dim) -> bool:
    """Does the torch layer `name` built by `constructor` give an input of `shape` another feature size: a
    `Linear` (its last dimension) or a convolution (its channels) whose output size is neither its input
    size as written (`Linear(d, d)`) nor the input's?"""
    if name == "torch.nn.Linear" and shape:
        given, made, width = call_argument(constructor, 0, "in_features"), call_argument(constructor, 1, "out_features"), shape[-1]
    elif name in CONVOLUTIONS and len(shape) >= 2:
        given, made, width = call_argument(constructor, 0, "in_channels"), call_argument(constructor, 1, "out_channels"), shape[-CONVOLUTIONS[name] - 1]
    else:
        return False
    if made is None or (given is not None and same_expression(given, made)):
        return False
    return size(made) != width


def torch_layer_ends(name: str, constructor: ast.Call, ends: tuple[Shape, Shape], size=constructor_dim):
    """The known ends of a layer's output for an input of unknown rank with known `ends`:
    `nn.Linear(h, 1)` maps `(batch, ...)` to `(batch, ..., 1)` (a batch of scalars, `(batch,)`, would
    not fit a `Linear(h, ...)`: its features are a dimension of their own)."""
    head, tail = ends
    if name in SHAPE_PRESERVING:
        return ends
    if name == "torch.nn.Linear":
        return head, tail[:-1] + (size(call_argument(constructor, 1, "out_features")),)
    if (name in POOLS or name in ADAPTIVE_POOLS) and len(head) >= 2:
        return head, ()  # a batch's pooled signal: its batch and channels kept
    return None


def batched_convolution(name: str, constructor: ast.Call, ends: tuple[Shape, Shape], size=constructor_dim) -> Shape | None:
    """A convolution's output for a batch of unknown rank, `(B, ...)`: batched, it is `(B, C_out, ?, ?)`
    (unbatched, the batch would be its input's channels)."""
    head = ends[0]
    if name not in CONVOLUTIONS or not head or head[0] in (1, None):
        return None
    return (head[0], size(call_argument(constructor, 1, "out_channels"))) + (None,) * CONVOLUTIONS[name]


def spatial_symbols(name: str, shape: Shape | None, key: tuple) -> Shape | None:
    """A convolution's or pool's output with the spatial sizes it leaves unknown named as sizes of that
    output (`h.size(2)` names the same), so a view of it matches them by what they stand for."""
    spatial = CONVOLUTIONS.get(name) or POOLS.get(name)
    if shape is None or not spatial or len(shape) < spatial:
        return shape
    rank = len(shape)
    return shape[: rank - spatial] + tuple(
        Sym(("size", key, i), name) if d is None else d for i, (d, name) in enumerate(zip(shape[rank - spatial :], SIDES[spatial]), rank - spatial)
    )


SIDES = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}  # how messages show them


# The channels of torchvision's ResNets' last stage: `nn.Sequential(*list(resnet.children())[:-2])` keeps
# the feature maps `(B, C, h, w)`, `[:-1]` their average pool `(B, C, 1, 1)`.
RESNET_CHANNELS = {
    **{f"torchvision.models.{n}": 512 for n in ("resnet18", "resnet34")},
    **{f"torchvision.models.{n}": 2048 for n in (
        "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d",
        "wide_resnet50_2", "wide_resnet101_2",
    )},
}  # fmt: skip
TRUNCATED_OUTPUT = {2: (None, None), 1: (1, 1)}  # children cut from the end -> the spatial sizes left


# The features torchvision's classifiers whose head is one `Linear` give it (`fc.in_features`): their
# ResNets' last channels, and DenseNets' (their head is `classifier`).
HEAD_FEATURES = {
    **RESNET_CHANNELS,
    **{f"torchvision.models.densenet{n}": width for n, width in ((121, 1024), (161, 2208), (169, 1664), (201, 1920))},
}


def head_features(model: str) -> Dim:
    """The width of the features a torchvision classifier `model` gives its head: what `model.fc =
    nn.Identity()` leaves of a batch, `(B, 2048)` for a ResNet-50. None: not known."""
    return HEAD_FEATURES.get(model)


# Library image models made by a factory: a classifier's output is `(B, num_classes)` for a batch of images
# `(B, C, H, W)`, ImageNet's 1000 classes for a torchvision builder not given `num_classes`; timm's
# `features_only=True` gives a list of feature maps `(B, C_i, h_i, w_i)`.
TORCHVISION_CLASSES = 1000


def library_model_output(name: str, constructor: ast.Call, batch: Dim, size=constructor_dim, kept: bool = False) -> tuple[Shape, bool] | None:
    """(the output's shape, whether it is a list of such feature maps) of a library image model `name` built
    by `constructor`, run on a batch of images of `batch` (a symbol: a loader's); None when unknown (no
    `num_classes` and a head that may be replaced (`kept`: it is not), or 0, or a `global_pool` given:
    pooled or not, features of unknown rank)."""
    timm = name in TIMM_FACTORIES
    if batch in (1, None) or not is_library_model(name):
        return None
    keywords = {k.arg: k.value for k in constructor.keywords}
    if None in keywords or (timm and "global_pool" in keywords):
        return None
    if timm and _literal_bool(keywords.get("features_only")):
        return (batch, None, None, None), True
    default = TORCHVISION_CLASSES if kept and not timm else 0  # (timm's default is its weights')
    classes = size(keywords["num_classes"]) if "num_classes" in keywords else default
    return ((batch, classes), False) if classes != 0 else None


# Parts of library image models whose output rank is known: torchvision's `features` (VGG, AlexNet,
# DenseNet, MobileNet, EfficientNet, ConvNeXt, ...) and timm's `forward_features` of a convolutional network
# give feature maps `(B, C, h, w)`; the `avgpool` of a torchvision model that pools to one cell `(B, C, 1, 1)`.
# Token models (ViTs, Swins: `(B, N, C)` or channels last) and VGG's `avgpool` (to 7 x 7) are not read.
CONVOLUTIONAL = re.compile(
    r"resnet|resnext|densenet|mobilenet|efficientnet|regnet|vgg|alexnet|squeezenet|mnasnet|convnext|inception"
    r"|googlenet|xception|dpn\d|senet|rexnet|ghostnet|mixnet|darknet|repvgg|nasnet|hrnet"
)
TOKENS = re.compile(r"vit|deit|swin|beit|mixer|former|cait|xcit|coat|twins|tnt|pit_|crossvit")
POOLED_TO_ONE = re.compile(r"resnet|resnext|regnet|efficientnet|mobilenet_v3|convnext|inception|googlenet|shufflenet")
FEATURE_MAPS = {"features": True, "forward_features": False}  # the part -> is it torchvision's (else timm's)


def library_part_output(architecture: str | None, torchvision: bool, part: str, images: Shape | None) -> Shape | None:
    """The output of the part `part` (`features`, `forward_features`, `avgpool`) of a library image model of
    `architecture` run on a batch of images (or feature maps, for `avgpool`) `(B, C, H, W)`."""
    name = (architecture or "").lower()
    if images is None or len(images) != 4 or images[0] in (1, None) or not CONVOLUTIONAL.search(name) or TOKENS.search(name):
        return None
    if FEATURE_MAPS.get(part) is torchvision:
        return (images[0], None, None, None)
    return (*images[:2], 1, 1) if part == "avgpool" and torchvision and POOLED_TO_ONE.search(name) else None


def truncated_children(expr: ast.AST) -> tuple[ast.AST, int] | None:
    """`list(base.children())[:-k]` (or `[*base.children()][:-k]`): (`base`, k)."""
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice)) or expr.slice.lower or expr.slice.step:
        return None
    upper = expr.slice.upper
    cut = -upper.operand.value if isinstance(upper, ast.UnaryOp) and isinstance(upper.op, ast.USub) and isinstance(upper.operand, ast.Constant) else None
    listed = expr.value
    if isinstance(listed, ast.Call) and isinstance(listed.func, ast.Name) and listed.func.id == "list" and len(listed.args) == 1:
        listed = listed.args[0]
    elif isinstance(listed, ast.List) and len(listed.elts) == 1 and isinstance(listed.elts[0], ast.Starred):
        listed = listed.elts[0].value
    else:
        return None
    children = isinstance(listed, ast.Call) and isinstance(listed.func, ast.Attribute) and listed.func.attr == "children"
    return (listed.func.value, -cut) if children and isinstance(cut, int) and not listed.args else None


def truncated_resnet(model: str | None, cut: int, batch) -> Shape | None:
    """The output of a torchvision ResNet `model` with its last `cut` children cut, for a batch `(batch, ...)`."""
    channels, spatial = RESNET_CHANNELS.get(model or ""), TRUNCATED_OUTPUT.get(cut)
    return (batch, channels, *spatial) if channels is not None and spatial is not None and batch not in (1, None) else None


def flatten(shape: Shape, start: int | None, end: int | None) -> Shape | None:
    rank = len(shape)
    if start is None or end is None or rank == 0:
        return shape if rank == 0 and start in (0, -1) and end in (0, -1) else None
    start, end = start % rank if -rank <= start < rank else None, end % rank if -rank <= end < rank else None
    if start is None or end is None or start > end:
        return None
    return shape[:start] + (product(shape[start : end + 1]),) + shape[end + 1 :]


def _literal_int(expr: ast.AST | None, default: int) -> int | None:
    if expr is None:
        return default
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        value = _literal_int(expr.operand, 0)
        return -value if value is not None else None
    return expr.value if isinstance(expr, ast.Constant) and type(expr.value) is int else None


def _literal_bool(expr: ast.AST | None) -> bool | None:
    """A literal True or False; False when absent (the default); None for anything else."""
    if expr is None:
        return False
    return expr.value if isinstance(expr, ast.Constant) and isinstance(expr.value, bool) else None


# Losses by name, with where `reduction` goes among the constructor's (or the function's) arguments and
# whether they are element-wise (their `reduction="none"` result is input and target broadcast) or take
# a class dimension (dim 1 of the input, which their per-sample result drops).
FUNCTIONAL = "torch.nn.functional."
LOSSES = {
    **{"torch.nn." + n: (2, True) for n in ("MSELoss", "L1Loss", "SmoothL1Loss")},
    "torch.nn.HuberLoss": (0, True),
    **{"torch.nn." + n: (3, True) for n in ("BCELoss", "BCEWithLogitsLoss")},
    **{"torch.nn." + n: (4, False) for n in ("CrossEntropyLoss", "NLLLoss")},
    **{FUNCTIONAL + n: (4, True) for n in ("mse_loss", "l1_loss", "smooth_l1_loss")},
    FUNCTIONAL + "huber_loss": (2, True),
    **{FUNCTIONAL + n: (5, True) for n in ("binary_cross_entropy", "binary_cross_entropy_with_logits")},
    **{FUNCTIONAL + n: (6, False) for n in ("cross_entropy", "nll_loss")},
}

SAME_SIZES = frozenset({"BCELoss", "BCEWithLogitsLoss", "binary_cross_entropy", "binary_cross_entropy_with_logits"})


def loss_output(name: str, call: ast.Call, input: Shape | None, target: Shape | None) -> Shape | None:
    """The shape of a loss's result: `()` when reduced (the default), per element for `reduction="none"`
    (input and target broadcast, of the one size the binary cross-entropies require; without the class dimension for cross-entropy and NLL); None: unknown
    (a `reduction` that is no literal, the deprecated `reduce`/`size_average`)."""
    position, elementwise = LOSSES[name]
    if any(k.arg in ("reduce", "size_average") or k.arg is None for k in call.keywords):
        return None
    reduction = call_argument(call, position, "reduction")
    if reduction is None:
        return ()
    if not isinstance(reduction, ast.Constant) or reduction.value not in ("none", "mean", "sum"):
        return None
    if reduction.value != "none":
        return ()
    if elementwise and name.rpartition(".")[2] in SAME_SIZES:
        return input if input is not None else target  # they must be of one size, or the call raises
    if elementwise:
        return broadcast(input, target)
    if input is None or len(input) == 0:
        return None
    return input[:1] + input[2:] if len(input) >= 2 else ()
