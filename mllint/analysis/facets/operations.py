"""Shape operations: what torch and NumPy functions and tensor methods make of the shapes of their
arguments (constructors with sizes, element-wise functions, `view`/`reshape`, `squeeze`/`unsqueeze`,
`permute`/`transpose`, reductions, `matmul`, `cat`/`stack`, ...). `Operations` is the part of the shape
analysis's interpreter that answers them; the interpreter gives it the values of the arguments."""
from __future__ import annotations

import ast

from mllint.analysis.facets.data_shapes import FROM_ARRAY
from mllint.analysis.facets.dims import Dim, Shape, Sym, broadcast, floor_divide, multiply, quotient
from mllint.analysis.facets.indexing import int_literal, normalise
from mllint.analysis.facets.layer_shapes import LOSSES, flatten, loss_output
from mllint.analysis.facets.tensor_values import Items, Listed, Number, Size, Tensor, nested_shape, value_shape
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.values.values import STACK_FUNCTIONS

SAME_SHAPE_METHODS = frozenset(
    "abs neg exp log log1p log2 log10 sqrt rsqrt sigmoid tanh relu float double half bfloat16 long int bool "
    "to cuda cpu detach clone contiguous clamp clamp_min clamp_max clip sign square softmax log_softmax "
    "type_as floor ceil round reciprocal sin cos expm1 erf nan_to_num masked_fill requires_grad_ "
    "pin_memory astype abs_ neg_ exp_ log_ sqrt_ sigmoid_ tanh_ relu_ clamp_ clip_ add_ sub_ mul_ div_ pow_ "
    "fill_ zero_ normal_ uniform_ masked_fill_ detach_ copy_ float_ round_ tolist numpy "
    "index_add index_add_ scatter_add scatter_add_ index_copy index_copy_ index_fill index_fill_ scatter scatter_".split()
)
# Methods that keep the shape when told the dim to run along (NumPy's `cumsum()` without one flattens).
ALONG_A_DIM = frozenset("cumsum cumprod logcumsumexp flip roll".split())
BROADCAST_METHODS = frozenset("add sub mul div pow maximum minimum eq ne lt le gt ge".split())
REDUCTIONS = frozenset("sum mean prod amax amin logsumexp nansum nanmean argmax argmin all any".split())
TORCH = "torch."
FUNCTIONAL = "torch.nn.functional."
SAME_SHAPE_FUNCTIONS = frozenset(
    [TORCH + n for n in "exp log log1p sqrt rsqrt sigmoid tanh relu abs square clamp clip neg sign softmax "
     "log_softmax nan_to_num expm1 sin cos erf floor ceil round".split()]
    + [FUNCTIONAL + n for n in "relu relu6 gelu silu mish sigmoid tanh softmax log_softmax dropout elu selu "
       "leaky_relu softplus hardswish normalize layer_norm".split()]
)  # fmt: skip
WHERE = frozenset({"torch.where", "numpy.where"})
PAD_SEQUENCE = frozenset({"torch.nn.utils.rnn.pad_sequence"})
BROADCAST_FUNCTIONS = frozenset(TORCH + n for n in "add sub mul div pow maximum minimum".split())
SIZED_CONSTRUCTORS = frozenset(TORCH + n for n in "randn rand zeros ones empty".split())
PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
LIKE_CONSTRUCTORS = frozenset(TORCH + n + "_like" for n in "randn rand zeros ones empty full randint".split())
TENSOR_OPTIONS = frozenset("dtype device requires_grad layout pin_memory".split())  # keywords that keep a shape

ANY_RECEIVER_METHODS = frozenset(
    "unsqueeze squeeze flatten permute transpose swapaxes swapdims t matmul mm bmm std var reshape".split()
)
TENSOR_METHODS = (
    SAME_SHAPE_METHODS | ALONG_A_DIM | BROADCAST_METHODS | REDUCTIONS | ANY_RECEIVER_METHODS
    | {"size", "view", "view_as", "reshape_as", "expand_as", "expand", "new_zeros", "new_ones", "new_empty", "norm"}
    | {"split", "chunk"}
)  # fmt: skip


class Operations:
    def dim(self, node: ast.AST) -> Dim:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv)):
            combine = multiply if isinstance(node.op, ast.Mult) else floor_divide
            return combine(self.dim(node.left), self.dim(node.right))
        value = self.value_of(node)
        if isinstance(value, Number):
            return value.dim
        if isinstance(value, Tensor) and value.shape is None:
            return Sym(value.key, value.label)
        return None

    def where(self, args: list[ast.AST]) -> Shape | None:
        """`where(condition, a, b)`: the three broadcast (a number counts as `()`)."""
        shapes = [() if isinstance(self.value_of(a), Number) else self.shape_of(a) for a in args]
        return broadcast(broadcast(shapes[0], shapes[1]), shapes[2])

    def sizes(self, args: list[ast.AST]) -> Shape | None:
        """The sizes given as `f(2, 3)`, `f((2, 3))`, `f([2, 3])` or `f(x.shape)`."""
        if any(isinstance(a, ast.Starred) for a in args):
            return None
        if len(args) == 1:
            if isinstance(args[0], (ast.Tuple, ast.List)):
                return self.sizes(args[0].elts) if not any(isinstance(e, ast.Starred) for e in args[0].elts) else None
            value = self.value_of(args[0])
            if isinstance(value, Size):
                return value.dims
        return tuple(self.dim(a) for a in args)

    def from_array(self, data: ast.AST) -> Shape | None:
        """The shape `torch.tensor(data)` / `np.array(data)` give: an array's own, or a nest of Python lists'
        (`torch.tensor(labels)`, `np.array([score])` is `(1,)`, `torch.tensor([[b["y"]] for b in batch])`)."""
        array = self.value_of(data)
        if isinstance(array, (Listed, Items, Number)):
            shape = nested_shape(array)
            if shape is not None or not isinstance(array, Items):
                return shape
        return array.shape if isinstance(array, Tensor) else _literal_shape(data)

    def torch_function(self, node: ast.Call, name: str) -> Shape | None:
        args = node.args
        first = call_argument(node, 0, "input")
        if name in SIZED_CONSTRUCTORS:
            size = next((k.value for k in node.keywords if k.arg == "size"), None)
            return self.sizes([size] if size is not None else args)
        if name == "torch.full":
            return self.sizes([call_argument(node, 0, "size")]) if call_argument(node, 0, "size") is not None else None
        if name in LIKE_CONSTRUCTORS or name in SAME_SHAPE_FUNCTIONS or name in PARAMETERS:
            return self.shape_of(first)
        if name == "torch.randint":
            size = next((k.value for k in node.keywords if k.arg == "size"), args[-1] if args else None)
            return self.sizes([size]) if isinstance(size, (ast.Tuple, ast.List)) else None
        if name == "torch.randperm" and len(args) == 1:
            return (self.dim(args[0]),)
        if name == "torch.arange" and 1 <= len(args) <= 3 and all(k.arg in TENSOR_OPTIONS for k in node.keywords):
            bounds = [self.dim(a) for a in args]
            if len(bounds) == 1:
                return (bounds[0],)
            return (len(range(*bounds)),) if all(isinstance(b, int) for b in bounds) and bounds[-1] != 0 else (None,)
        if name == "torch.linspace":
            return (self.dim(call_argument(node, 2, "steps")),) if call_argument(node, 2, "steps") is not None else None
        if name in FROM_ARRAY and first is not None:
            return self.from_array(first)
        if name in BROADCAST_FUNCTIONS:
            return broadcast(self.shape_of(first), self.shape_of(call_argument(node, 1, "other")))
        if name in LOSSES and name.startswith(FUNCTIONAL):
            return loss_output(name, node, self.shape_of(first), self.shape_of(call_argument(node, 1, "target")))
        if name in WHERE and len(args) == 3 and not node.keywords:
            return self.where(args)
        if name == FUNCTIONAL + "cosine_similarity" and all(k.arg in ("dim", "eps") for k in node.keywords) and len(args) <= 3:
            joint = broadcast(self.shape_of(first), self.shape_of(call_argument(node, 1, "x2")))
            dim = int_literal(call_argument(node, 2, "dim")) if call_argument(node, 2, "dim") is not None else 1
            position = normalise(dim, len(joint)) if joint is not None and dim is not None else None
            return joint[:position] + joint[position + 1 :] if position is not None else None  # the dim it compares along
        method = name[len(TORCH):]
        if "." not in method and first is not None and (method in REDUCTIONS or method in ANY_RECEIVER_METHODS):
            receiver = self.value_of(first)
            if isinstance(receiver, Tensor):
                shifted = ast.Call(func=node.func, args=args[1:], keywords=[k for k in node.keywords if k.arg != "input"])
                result = self.method(shifted, method, receiver)
                return result.shape if isinstance(result, Tensor) else None
        if name in PAD_SEQUENCE:  # a list of `(L, *rest)` tensors of different lengths L, padded
            listed = self.value_of(first)
            item = listed.item.shape if isinstance(listed, Listed) and isinstance(listed.item, Tensor) else None
            batch_first = next((k.value for k in node.keywords if k.arg == "batch_first"), args[1] if len(args) > 1 else None)
            if not item or not isinstance(batch_first, ast.Constant) and batch_first is not None:
                return None
            first_dims = (listed.length, None) if batch_first is not None and batch_first.value is True else (None, listed.length)
            return (*first_dims, *item[1:])
        if name in STACK_FUNCTIONS:
            listed = self.value_of(first) if name == "torch.stack" else None
            if isinstance(listed, Listed) and isinstance(listed.item, Tensor) and listed.item.shape is not None:
                return (listed.length, *listed.item.shape)  # `torch.stack(scores)` of a list of samples' tensors
            return self.concatenate(node, name == "torch.stack")
        return None

    def method(self, node: ast.Call, method: str, receiver: Tensor) -> object | None:
        """A tensor method's result: a Tensor, a Size, a Number, or a shape tuple (a new tensor)."""
        shape, args = receiver.shape, node.args
        if method == "size":
            if not args and not node.keywords:
                return Size(shape, receiver.key, receiver.label)
            position = int_literal(call_argument(node, 0, "dim"))
            if position is None:
                return None
            if shape is not None:
                return Number(shape[position]) if -len(shape) <= position < len(shape) else None
            return Number(Sym(("size", receiver.key, position), f"{receiver.label}.size({position})"))
        if method in ("view", "reshape"):
            target = self.sizes(args) if args and not node.keywords else None
            if target is None:
                return None
            if shape is None:  # `x.view(x.shape[1], x.shape[0], -1)`: x's leading sizes, as the view names them
                shape, target = own_sizes(receiver.key, target)
                if shape is not None and self.record:
                    self.shapes.view_sources[node] = shape
            target = _infer_minus_one(shape, target)
            if self.record:
                self.shapes.view_targets[node] = target
            return target
        if method in SAME_SHAPE_METHODS or (method in ALONG_A_DIM and (node.args or node.keywords)):
            return shape
        if method in BROADCAST_METHODS:
            other = call_argument(node, 0, "other")
            other_value = self.value_of(other)
            return shape if isinstance(other_value, Number) else broadcast(shape, value_shape(other_value))
        if shape is None:
            return None
        if method in ("split", "chunk") and shape and int_literal(call_argument(node, 1, "dim")) in (None, 0):
            if len(node.args) + len(node.keywords) == 1 or int_literal(call_argument(node, 1, "dim")) == 0:
                part = Sym(("chunk", id(node)), f"len({receiver.label} chunk)")
                return Listed(Tensor((part, *shape[1:]), ("chunk", id(node)), "chunk"), None)  # `perm.split(64)`
        if method in ("view_as", "reshape_as", "expand_as"):
            return self.shape_of(call_argument(node, 0, "other"))
        if method in ("new_zeros", "new_ones", "new_empty"):
            return self.sizes(args)
        return self.shape_method(node, method, shape)

    def shape_method(self, node: ast.Call, method: str, shape: Shape) -> Shape | None:
        rank, args = len(shape), node.args
        if method == "unsqueeze":
            position = normalise(int_literal(call_argument(node, 0, "dim")), rank + 1)
            return None if position is None else shape[:position] + (1,) + shape[position:]
        if method == "squeeze":
            dims = [int_literal(a) for a in args] + [int_literal(k.value) for k in node.keywords if k.arg == "dim"]
            if not dims:  # a symbol (a batch) is taken for more than one: `(B, 1)` gives `(B,)`
                return tuple(d for d in shape if d != 1) if None not in shape else None
            positions = [normalise(d, rank) for d in dims]
            if None in positions or any(shape[p] not in (1,) and not isinstance(shape[p], int) for p in positions):
                return None  # a symbol may be 1
            return tuple(d for i, d in enumerate(shape) if not (i in positions and d == 1))
        if method == "flatten":
            start = int_literal(call_argument(node, 0, "start_dim")) if call_argument(node, 0, "start_dim") else 0
            end = int_literal(call_argument(node, 1, "end_dim")) if call_argument(node, 1, "end_dim") else -1
            return flatten(shape, start, end)
        if method == "permute":
            order = [int_literal(a) for a in (args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args)]
            if not order:
                return None
            positions = [normalise(p, rank) for p in order]
            if None in positions or sorted(positions) != list(range(rank)):
                return None
            return tuple(shape[p] for p in positions)
        if method == "transpose" and len(args) != 2:
            method = "permute"  # numpy's `a.transpose(1, 0, 2)`
        if method in ("transpose", "swapaxes", "swapdims"):
            a = normalise(int_literal(call_argument(node, 0, "dim0")), rank)
            b = normalise(int_literal(call_argument(node, 1, "dim1")), rank)
            if a is None or b is None:
                return None
            swapped = list(shape)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            return tuple(swapped)
        if method == "t" and rank <= 2:
            return tuple(reversed(shape))
        if method in REDUCTIONS or method in ("std", "var", "norm"):
            return self.reduction(node, method, shape)
        if method in ("matmul", "mm", "bmm"):
            return matmul_shape(shape, self.shape_of(call_argument(node, 0, "other")))
        if method == "expand":
            target = self.sizes(args)
            if target is None or len(target) < rank:
                return None
            return target[: len(target) - rank] + tuple(
                old if new == -1 else new for old, new in zip(shape, target[len(target) - rank :])
            )
        return None

    def reduction(self, node: ast.Call, method: str, shape: Shape) -> Shape | None:
        dim_node = next((k.value for k in node.keywords if k.arg in ("dim", "axis")), None)  # NumPy's `axis=`
        if dim_node is None and node.args and method != "norm":
            if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, bool):
                return None  # `x.std(False)`: the old `unbiased` argument
            dim_node = node.args[0]
        keepdim_node = next((k.value for k in node.keywords if k.arg in ("keepdim", "keepdims")), None)
        if keepdim_node is None and len(node.args) >= 2 and method != "norm":
            keepdim_node = node.args[1]
        if keepdim_node is not None and not (isinstance(keepdim_node, ast.Constant) and isinstance(keepdim_node.value, bool)):
            return None
        keepdim = keepdim_node is not None and keepdim_node.value
        if dim_node is None:
            return () if not node.keywords and (method != "norm" or not node.args) else None
        elements = dim_node.elts if isinstance(dim_node, (ast.Tuple, ast.List)) else [dim_node]
        positions = {normalise(int_literal(e), len(shape)) for e in elements}
        if None in positions:
            return None
        return tuple(1 if i in positions else d for i, d in enumerate(shape) if keepdim or i not in positions)

    def concatenate(self, node: ast.Call, stack: bool) -> Shape | None:
        tensors = call_argument(node, 0, "tensors")
        dim_node = call_argument(node, 1, "dim") or next((k.value for k in node.keywords if k.arg == "axis"), None)
        position = int_literal(dim_node) if dim_node is not None else 0
        parts = self.listed_parts(tensors) if tensors is not None and position is not None else None
        if not parts:
            return None
        shapes = [value_shape(p) for p in parts]
        if None in shapes:  # a list of other tensors besides (`[x] + [emb(c) for ...]`): of the same rank
            return _joined_along(shapes, position, stack)
        first = shapes[0]
        if any(s is None or len(s) != len(first) for s in shapes):
            return None
        if stack:
            position = normalise(position, len(first) + 1)
            same = all(all(x is not None and x == y for x, y in zip(first, s)) for s in shapes)
            return first[:position] + (len(shapes),) + first[position:] if same and position is not None else None
        position = normalise(position, len(first))
        if position is None:
            return None
        others_match = all(
            all(x is not None and x == y for i, (x, y) in enumerate(zip(first, s)) if i != position) for s in shapes
        )
        parts = [s[position] for s in shapes]
        total = sum(parts) if all(isinstance(p, int) for p in parts) else None
        return first[:position] + (total,) + first[position + 1 :] if others_match else None


    def listed_parts(self, node: ast.AST) -> list | None:
        """The tensors a list expression holds, one value each (`[a, b]`, `[a] + rest`, a list the analysis
        knows); None among them for any number of tensors not known one by one (a comprehension, a list
        appended to). None: not a list."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.listed_parts(node.left), self.listed_parts(node.right)
            return left + right if left is not None and right is not None else None
        if isinstance(node, (ast.List, ast.Tuple)):
            return [None if isinstance(e, ast.Starred) else self.value_of(e) for e in node.elts]
        value = self.value_of(node)
        if isinstance(node, ast.Name) and isinstance(value, Tensor) and value.key[0] == "assigned":
            assigned = self.shapes.values.reaching_values(node)  # `parts = [...] + [x]`, unchanged since: joined here
            statement = self.ctx.scopes.parent(assigned[0]) if assigned and len(assigned) == 1 else None
            if isinstance(statement, ast.Assign) and isinstance(assigned[0], ast.BinOp) and any(id(t) == value.key[1] for t in statement.targets):
                return self.listed_parts(assigned[0])
            return None
        if isinstance(value, Items):
            return list(value.values)
        if isinstance(value, Listed) or isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return [value.item if isinstance(value, Listed) else None, None]
        return None


def _joined_along(shapes: list, position: int, stack: bool) -> Shape | None:
    """`cat`/`stack` of tensors some of which are unknown: all have the rank of the known ones, and their
    sizes where the known ones agree (the joined dimension's size unknown)."""
    known = [s for s in shapes if s is not None]
    if not known or any(len(s) != len(known[0]) for s in known):
        return None
    agreed = tuple(d if all(s[i] == d for s in known) else None for i, d in enumerate(known[0]))
    at = normalise(position, len(agreed) + 1 if stack else len(agreed))
    if at is None:
        return None
    return agreed[:at] + (None,) + agreed[at:] if stack else agreed[:at] + (None,) + agreed[at + 1 :]


def matmul_shape(a: Shape | None, b: Shape | None) -> Shape | None:
    if a is None or b is None or not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(b) == 1:
        return a[:-1]
    if len(a) == 1:
        return b[:-2] + b[-1:]
    batch = broadcast(a[:-2], b[:-2])
    return None if batch is None else batch + (a[-2], b[-1])


def own_sizes(key: tuple, target: Shape) -> tuple[Shape | None, Shape]:
    """(the source's shape, the target) of a view of a tensor of unknown rank whose target is made of
    its own sizes, each once: `(x.shape[2], x.shape[0], x.shape[1])` makes x `(S0, S1, S2)`;
    `(x.size(1), x.size(0), -1)` makes it `(S0, S1, R)`, R the rest the `-1` stands for. (None, target)
    unless the sizes named are the first ones of x, with at most a last `-1` after them."""
    rest = target[-1] == -1
    named = target[:-1] if rest else target
    positions = [d.key[2] for d in named if isinstance(d, Sym) and d.key[:2] == ("size", key) and type(d.key[2]) is int]
    if len(positions) != len(named) or sorted(positions) != list(range(len(named))) or len(named) < 2:
        return None, target
    source = tuple(sorted(named, key=lambda d: d.key[2]))
    if not rest:
        return source, target
    remainder = Sym(("rest", key, len(named)), "...")
    return (*source, remainder), (*named, remainder)


def _infer_minus_one(source: Shape | None, target: Shape) -> Shape:
    """A `-1` in a view's target: what the source's size leaves for it (`(B, T, C).view(B, T, H, -1)`
    gives `C // H`), when every dimension of both is known."""
    if target.count(-1) != 1:
        return target
    inferred = quotient(source, tuple(d for d in target if d != -1)) if source is not None else None
    return tuple(inferred if d == -1 else d for d in target)


def _literal_shape(node: ast.AST) -> Shape | None:
    """`torch.tensor([[1, 2], [3, 4]])` has shape (2, 2): nested literal lists of equal lengths."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return ()
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        inner = [_literal_shape(e) for e in node.elts]
        if inner and all(s is not None and s == inner[0] for s in inner):
            return (len(node.elts),) + inner[0]
        return (0,) if not inner else None
    return None
