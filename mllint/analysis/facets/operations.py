"""Shape operations: what torch and NumPy functions and tensor methods make of the shapes of their
arguments (constructors with sizes, element-wise functions, `view`/`reshape`, `squeeze`/`unsqueeze`,
`permute`/`transpose`, reductions, `matmul`, `cat`/`stack`, ...). `Operations` is the part of the shape
analysis's interpreter that answers them; the interpreter gives it the values of the arguments. Which
function does what is one table, `vocabulary.FUNCTIONS`; `function_shape` reads a call by its row."""
from __future__ import annotations

import ast

from mllint.analysis.facets.dims import Dim, Shape, Sym, broadcast, dim_key, floor_divide, multiply, quotient
from mllint.analysis.facets.indexing import int_literal, normalise
from mllint.analysis.facets.layer_shapes import LOSSES, flatten, loss_output, pooled_sizes
from mllint.analysis.facets.tensor_values import Frame, Items, Listed, Number, Size, Tensor, nested_shape, value_shape
from mllint.analysis.facets.vocabulary import (
    INDEXED, PAIR_NAMES,
    ARRAY, BROADCAST, EINSUM, ELEMENTWISE, EYE, FUNCTIONS, JOIN, KEYWORD_ALIASES, LEGACY, LIKE, METHOD, METHOD_ALIASES, POOL, RANGE, SIZES, STEPS,
    Row, rows_of,
)
from mllint.analysis.syntax.names import call_argument, is_self_attribute

SAME_SHAPE_METHODS = frozenset(
    "abs neg exp log log1p log2 log10 sqrt rsqrt sigmoid tanh relu float double half bfloat16 long int bool "
    "to cuda cpu detach clone contiguous clamp clamp_min clamp_max clip sign square softmax log_softmax "
    "type_as floor ceil round reciprocal sin cos expm1 erf nan_to_num masked_fill requires_grad_ "
    "pin_memory astype abs_ neg_ exp_ log_ sqrt_ sigmoid_ tanh_ relu_ clamp_ clip_ add_ sub_ mul_ div_ pow_ "
    "fill_ zero_ normal_ uniform_ masked_fill_ detach_ copy_ float_ round_ tolist numpy "
    "index_add index_add_ scatter_add scatter_add_ index_copy index_copy_ index_fill index_fill_ scatter scatter_".split()
)
# In-place methods return their receiver, whose shape torch never changes (`a.add_(b)` refuses to grow `a`),
# except those made to change it.
RESHAPING_IN_PLACE = frozenset("resize_ resize_as_ squeeze_ unsqueeze_ t_ transpose_ swapdims_ swapaxes_ as_strided_ set_".split())


def keeps_shape(method: str) -> bool:
    """Does the tensor method `method` return a tensor of its receiver's shape (`x.abs()`, `x.fill_diagonal_(0)`)?"""
    in_place = method.endswith("_") and not method.startswith("_") and method not in RESHAPING_IN_PLACE
    return method in SAME_SHAPE_METHODS or in_place


# Methods that keep the shape when told the dim to run along (NumPy's `cumsum()` without one flattens).
ALONG_A_DIM = frozenset("cumsum cumprod logcumsumexp flip roll".split())
BROADCAST_METHODS = frozenset("add sub mul div pow maximum minimum eq ne lt le gt ge".split())
REDUCTIONS = frozenset("sum mean prod amax amin logsumexp nansum nanmean argmax argmin all any".split())
TORCH = "torch."
FUNCTIONAL = "torch.nn.functional."
SAME_SHAPE_FUNCTIONS = rows_of(ELEMENTWISE, TORCH)
KEEPS_ENDS = SAME_SHAPE_FUNCTIONS | rows_of(LIKE)  # of a tensor of unknown rank: its known ends
PAIRWISE_EXTREMA = frozenset({"torch.min", "torch.max"})  # of two tensors: their element-wise extremes
PAD_SEQUENCE = frozenset({"torch.nn.utils.rnn.pad_sequence"})
SIZED_CONSTRUCTORS = frozenset(n for n, r in FUNCTIONS.items() if r.kind == SIZES and r.spread and n.startswith(TORCH))
PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
TENSOR_OPTIONS = frozenset("dtype device requires_grad layout pin_memory".split())  # keywords that keep a shape

ANY_RECEIVER_METHODS = frozenset(
    "unsqueeze squeeze flatten permute transpose swapaxes swapdims t matmul mm bmm std var reshape".split()
)
TENSOR_METHODS = (
    SAME_SHAPE_METHODS | ALONG_A_DIM | BROADCAST_METHODS | REDUCTIONS | ANY_RECEIVER_METHODS
    | {"size", "view", "view_as", "reshape_as", "expand_as", "expand", "new_zeros", "new_ones", "new_empty", "norm", "index_select"}
    | {"split", "chunk", "gather"} | set(METHOD_ALIASES)
)  # fmt: skip


# How a count is spelled: the last name of `n`, `opt.batch_size`, `num_items`, `n_rows`, `self.bs`.
COUNT_NAMES = frozenset({"n", "bs", "batchsize"})
COUNT_PREFIXES, COUNT_SUFFIXES = ("n_", "num_"), ("_size", "_len", "_count")


def _spells_a_count(node: ast.AST) -> bool:
    """Is `node` a name or attribute spelled as a count (`batch_size`, `cfg.n_samples`, `len(x)`)? A
    legacy constructor given one (`torch.FloatTensor(opt.batch_size)`) makes a tensor of that size;
    given data (`torch.FloatTensor(rewards)`), one of the data's shape."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id == "len" or node.func.id == "int" and len(node.args) == 1 and _spells_a_count(node.args[0])
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    name = name.lower()
    return name in COUNT_NAMES or name.startswith(COUNT_PREFIXES) or name.endswith(COUNT_SUFFIXES)


def _unknown(value: object) -> bool:
    """A value the analysis knows nothing of (no shape, no ends, no Python structure)."""
    return value is None or isinstance(value, Tensor) and value.shape is None and not value.ends


class Operations:
    def dim(self, node: ast.AST) -> Dim:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv)):
            combine = multiply if isinstance(node.op, ast.Mult) else floor_divide
            return combine(self.dim(node.left), self.dim(node.right))
        owner = node.value if isinstance(node, ast.Attribute) else None
        value = self.value_of(node)
        if isinstance(value, Number) and isinstance(value.dim, Sym):
            return value.dim  # a size the call sites name (`n, T, C = X.shape` then `FCN(T, C)`)
        spelled = self.shapes.static_dim(node) if is_self_attribute(node) or is_self_attribute(owner) else None
        if isinstance(spelled, Sym) and spelled.key[0] in ("parameter", "field"):
            return spelled  # `self.dim` of `__init__(self, dim)`, `self.cfg.dim`: the symbol the layers built from it have
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
            if isinstance(value, Items):  # `shape = (n, d)`
                return tuple(v.dim for v in value.values) if all(isinstance(v, Number) for v in value.values) else None
        return tuple(self.dim(a) for a in args)

    def from_array(self, data: ast.AST) -> Shape | None:
        """The shape `torch.tensor(data)` / `np.array(data)` give: an array's own, or a nest of Python lists'
        (`torch.tensor(labels)`, `np.array([score])` is `(1,)`, `torch.tensor([[b["y"]] for b in batch])`), or a
        pandas frame's or Series'."""
        array = self.value_of(data)
        if isinstance(array, (Listed, Items, Number)):
            shape = nested_shape(array)
            if shape is not None or not isinstance(array, Items):
                return shape
        if isinstance(array, Frame) and not (array.positional or array.labelled or array.windowed or array.accessor):
            return array.shape  # `torch.tensor(df["y"])`, `np.asarray(df[cols])`: a frame's values
        return array.shape if isinstance(array, Tensor) else _literal_shape(data)

    def indexed_pair(self, node: ast.Call, method: str, shape: Shape | None, at: int) -> Items | None:
        """`x.max(1)`, `torch.topk(x, k, dim=1)`, `x.sort()`: the (values, indices) pair, both of the shape
        the method leaves (`at`: where the arguments after the tensor start, 1 for `torch.max(x, 1)`)."""
        if method not in INDEXED or shape is None:
            return None
        offset = 1 if method in ("topk", "kthvalue") else 0  # `k` comes first
        dim_node = call_argument(node, at + offset, "dim")
        if dim_node is None and method not in ("sort", "topk", "kthvalue"):
            return None  # `x.max()`: one value; (`x.max(other)`: element-wise, its dim no int)
        position = normalise(int_literal(dim_node) if dim_node is not None else -1, len(shape))
        if position is None:
            return None
        if method in ("sort", "cummax", "cummin"):
            result = shape
        elif method == "topk":
            result = shape[:position] + (self.dim(call_argument(node, at, "k")),) + shape[position + 1 :]
        else:
            keep = call_argument(node, at + offset + 1, "keepdim")
            if keep is not None and not (isinstance(keep, ast.Constant) and isinstance(keep.value, bool)):
                return None
            result = shape[:position] + ((1,) if keep is not None and keep.value else ()) + shape[position + 1 :]
        return Items(tuple(Tensor(result, ("pair", id(node), i)) for i in range(2)), PAIR_NAMES)

    def torch_function(self, node: ast.Call, name: str) -> Shape | None:
        row = FUNCTIONS.get(name)
        if row is not None:
            return self.function_shape(node, name, row)
        args = node.args
        first = call_argument(node, 0, "input")
        if name in PAIRWISE_EXTREMA and len(args) == 2 and not node.keywords:  # `torch.min(q1, q2)`: element-wise
            other = self.value_of(args[1])  # (a number there is the dim a reduction runs along)
            return broadcast(self.shape_of(args[0]), other.shape) if isinstance(other, Tensor) else None
        if name == "torch.randperm" and len(args) == 1:
            return (self.dim(args[0]),)
        if name in LOSSES and name.startswith(FUNCTIONAL):
            return loss_output(name, node, self.shape_of(first), self.shape_of(call_argument(node, 1, "target")))
        if name == FUNCTIONAL + "cosine_similarity" and all(k.arg in ("dim", "eps") for k in node.keywords) and len(args) <= 3:
            joint = broadcast(self.shape_of(first), self.shape_of(call_argument(node, 1, "x2")))
            dim = int_literal(call_argument(node, 2, "dim")) if call_argument(node, 2, "dim") is not None else 1
            position = normalise(dim, len(joint)) if joint is not None and dim is not None else None
            return joint[:position] + joint[position + 1 :] if position is not None else None  # the dim it compares along
        if name in PAD_SEQUENCE:  # a list of `(L, *rest)` tensors of different lengths L, padded
            listed = self.value_of(first)
            item = listed.item.shape if isinstance(listed, Listed) and isinstance(listed.item, Tensor) else None
            batch_first = next((k.value for k in node.keywords if k.arg == "batch_first"), args[1] if len(args) > 1 else None)
            if not item or not isinstance(batch_first, ast.Constant) and batch_first is not None:
                return None
            first_dims = (listed.length, None) if batch_first is not None and batch_first.value is True else (None, listed.length)
            return (*first_dims, *item[1:])
        return None

    def function_shape(self, node: ast.Call, name: str, row: Row) -> Shape | None:
        """The shape of a call of a function of the vocabulary (`vocabulary.FUNCTIONS`), as its row says."""
        kind, args = row.kind, node.args
        if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in node.keywords):
            return None
        given = next((k.value for k in node.keywords if row.keyword and k.arg == row.keyword), None)
        if given is None and (row.at < len(args) if row.at >= 0 else args):
            given = args[row.at]
        if kind == SIZES:
            if row.spread and given is not None and not any(k.arg == row.keyword for k in node.keywords):
                return self.sizes(args[row.at :])  # `torch.randn(8, 1)`, `np.random.rand(n, d)`
            if row.at == -1 and not isinstance(given, (ast.Tuple, ast.List)):
                return None
            return self.sizes([given]) if given is not None else None  # (none given: a number)
        if kind == LEGACY and args:
            values = [self.value_of(a) for a in args]
            counts = [isinstance(v, Number) and v.dim is not None or (_unknown(v) and _spells_a_count(a)) for a, v in zip(args, values)]
            if all(counts) or isinstance(values[0], Size):
                return self.sizes(args)  # `torch.Tensor(n, d)`, `torch.FloatTensor(opt.batch_size)`: uninitialised, of those sizes
            return self.from_array(args[0]) if len(args) == 1 else None
        if kind == ARRAY:
            return self.from_array(given) if given is not None else None
        if kind in (ELEMENTWISE, LIKE):
            return self.shape_of(given)
        if kind == BROADCAST:
            if len(args) < len(row.method) or (len(row.method) == 3 and (len(args) != 3 or node.keywords)):
                return None  # (`torch.where(mask)` alone gives a tuple of indices)
            values = [self.value_of(args[p]) for p in row.method]
            joint: Shape | None = ()
            for value in values:
                joint = broadcast(joint, () if isinstance(value, Number) else value_shape(value))
            return joint
        if kind == STEPS:
            return (self.dim(given),) if given is not None else (row.default,) if row.default else None
        if kind == RANGE:
            return self.arange(node)
        if kind == EYE and args:
            return (self.dim(args[0]), self.dim(given) if given is not None else self.dim(args[0]))
        if kind == METHOD:
            receiver = self.value_of(args[row.at]) if len(args) > row.at else None
            return self.delegated(node, row, receiver) if isinstance(receiver, Tensor) else None
        if kind == EINSUM:
            return self.einsum(args)
        if kind == POOL:  # (a pool returning its indices too gives a pair)
            shape, spatial = self.shape_of(args[0]) if args else None, row.default
            if shape is None or len(shape) not in (spatial + 1, spatial + 2) or any(k.arg == "return_indices" for k in node.keywords):
                return None
            sizes = pooled_sizes(given, spatial) if row.method == "adaptive" else (None,) * spatial
            return shape[:-spatial] + sizes if sizes is not None else None
        if kind == JOIN:
            form = row.method or name.rpartition(".")[2]
            listed = self.value_of(call_argument(node, 0, "tensors")) if form == "stack" else None
            along = call_argument(node, 1, "dim") or next((k.value for k in node.keywords if k.arg == "axis"), None)
            if isinstance(listed, Listed) and isinstance(listed.item, Tensor) and listed.item.shape is not None and int_literal(along) in (None, 0):
                return (listed.length, *listed.item.shape)  # `torch.stack(scores)` of a list of samples' tensors
            return self.concatenate(node, form)
        return None

    def delegated(self, node: ast.Call, row: Row, receiver: Tensor) -> Shape | None:
        """`np.sum(a, axis=1)` as `a.sum(dim=1)`: the method the row names, called on the receiver with the
        arguments after it (NumPy's keywords spelled as torch's)."""
        keywords = [ast.keyword(arg=KEYWORD_ALIASES.get(k.arg, k.arg), value=k.value) for k in node.keywords]
        rest = [k.value for k in keywords if k.arg == "shape"] + list(node.args[row.at + 1 :])
        shifted = ast.Call(func=node.func, args=rest, keywords=[k for k in keywords if k.arg != "shape"])
        result = self.method(shifted, row.method, receiver)
        return result.shape if isinstance(result, Tensor) else result if isinstance(result, tuple) else None

    def permutation(self, node: ast.Call) -> Shape | None:
        """`np.random.permutation(n)` / `rng.permutation(n)`: `(n,)`; of an array, its rows shuffled."""
        if len(node.args) != 1 or node.keywords:
            return None
        value = self.value_of(node.args[0])
        if isinstance(value, Number):
            return (value.dim,)  # `(?,)` of a count not known: one dimension
        return value.shape if isinstance(value, Tensor) else None

    def arange(self, node: ast.Call) -> Shape | None:
        """`arange(stop)`, `arange(start, stop[, step])`: its length when the bounds are ints, else unknown."""
        if not 1 <= len(node.args) <= 3 or not all(k.arg in TENSOR_OPTIONS for k in node.keywords):
            return None
        bounds = [self.dim(a) for a in node.args]
        if len(bounds) == 1:
            return (bounds[0],)
        return (len(range(*bounds)),) if all(isinstance(b, int) for b in bounds) and bounds[-1] != 0 else (None,)

    def einsum(self, args: list[ast.AST]) -> Shape | None:
        """`einsum("ij,j->i", a, v)`: each output letter's size as an operand gives it (an implicit output:
        the letters written once, in order); None with `...` or an operand of unknown rank."""
        equation = args[0] if args else None
        if not (isinstance(equation, ast.Constant) and isinstance(equation.value, str)) or "." in equation.value:
            return None
        operands = args[1].elts if len(args) == 2 and isinstance(args[1], (ast.List, ast.Tuple)) else args[1:]
        inputs, arrow, output = equation.value.replace(" ", "").partition("->")
        terms = inputs.split(",")
        shapes = [self.shape_of(o) for o in operands]
        if len(terms) != len(shapes) or any(s is None or len(s) != len(t) for s, t in zip(shapes, terms)):
            return None
        sizes: dict[str, Dim] = {}
        for term, shape in zip(terms, shapes):
            for letter, size in zip(term, shape):
                sizes[letter] = size if sizes.get(letter) in (None, 1) else sizes[letter]
        letters = "".join(terms)
        output = output if arrow else "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        return tuple(sizes[c] for c in output) if all(c in sizes for c in output) else None

    def method(self, node: ast.Call, method: str, receiver: Tensor) -> object | None:
        """A tensor method's result: a Tensor, a Size, a Number, or a shape tuple (a new tensor)."""
        shape, args, method = receiver.shape, node.args, METHOD_ALIASES.get(method, method)
        if method == "size":
            head = receiver.ends[0] if receiver.ends else ()  # a batch's first size, whatever its rank
            if not args and not node.keywords:
                return Size(shape, receiver.key, receiver.label, head)
            position = int_literal(call_argument(node, 0, "dim"))
            if position is None:
                return None
            if shape is not None:
                return Number(shape[position]) if -len(shape) <= position < len(shape) else None
            return Number(head[position] if 0 <= position < len(head) else Sym(("size", receiver.key, position), f"{receiver.label}.size({position})"))
        if method in ("view", "reshape"):
            target = self.sizes(args) if args and not node.keywords else None
            if target is None:
                return None
            if shape is None:  # `x.view(x.shape[1], x.shape[0], -1)`: x's leading sizes, as the view names them
                shape, target = own_sizes(receiver.key, target)
                shape = shape or trailing_source(receiver.ends, target)
                if shape is not None and self.record:
                    self.shapes.view_sources[node] = shape
            target = _infer_minus_one(shape, target)
            if self.record:
                self.shapes.view_targets[node] = target
            return target
        if keeps_shape(method) or (method in ALONG_A_DIM and (node.args or node.keywords)):
            return shape
        if method == "gather":  # `q.gather(1, a.unsqueeze(1))`: the index's shape, of the receiver's rank
            index = self.shape_of(call_argument(node, 1, "index"))
            return index if shape is None or index is None or len(index) == len(shape) else None
        if method in BROADCAST_METHODS:
            other = call_argument(node, 0, "other")
            other_value = self.value_of(other)
            return shape if isinstance(other_value, Number) else broadcast(shape, value_shape(other_value))
        if shape is None and method in REDUCTIONS and not args and not node.keywords:
            return ()  # `w.mean()` of any rank: one value
        if shape is None:  # `a.ravel()`, `x.flatten()` of any rank: one dimension
            return (None,) if method == "flatten" and not args and not node.keywords else None
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
        if method == "transpose" and not args and not node.keywords:
            return tuple(reversed(shape))  # NumPy's `a.transpose()`
        if method == "transpose" and len(args) != 2:
            method = "permute"  # numpy's `a.transpose(1, 0, 2)`, `a.transpose((0, 2, 3, 1))`
        if method == "permute":
            order = [int_literal(a) for a in (args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args)]
            if not order:
                return None
            positions = [normalise(p, rank) for p in order]
            if None in positions or sorted(positions) != list(range(rank)):
                return None
            return tuple(shape[p] for p in positions)
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
        if method == "index_select":  # `w.index_select(0, idx)`: as `w[idx]`
            position = normalise(int_literal(call_argument(node, 0, "dim")), rank)
            index = call_argument(node, 1, "index")
            rows = selected_rows(self.value_of(index), self.ctx.text(index)) if index is not None else None
            return None if position is None or rows is None else shape[:position] + (rows,) + shape[position + 1 :]
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

    def concatenate(self, node: ast.Call, form: str) -> Shape | None:
        """`cat` (`concatenate`), `stack`, or NumPy's `hstack`/`vstack`/`column_stack` (`form`) of a list."""
        tensors = call_argument(node, 0, "tensors")
        dim_node = call_argument(node, 1, "dim") or next((k.value for k in node.keywords if k.arg == "axis"), None)
        position = int_literal(dim_node) if dim_node is not None else 0
        parts = self.listed_parts(tensors) if tensors is not None and position is not None else None
        if not parts:
            return None
        shapes = [value_shape(p) for p in parts]
        if None in shapes:  # a list of other tensors besides (`[x] + [emb(c) for ...]`): of the same rank
            return _joined_along(shapes, position, form == "stack") if form in ("cat", "stack") else None
        first = shapes[0]
        if any(s is None or len(s) != len(first) for s in shapes):
            return None
        if form not in ("cat", "stack"):  # vectors side by side (`hstack`), as rows, as columns; arrays along 0 or 1
            vectors = len(first) == 1
            position = 0 if form == "vstack" or (vectors and form == "hstack") else 1
            form = "stack" if vectors and form != "hstack" else "cat"
        stack = form == "stack"
        # The other sizes are equal, or `cat` raises: symbols that differ (`z[a]`, `z[b]` of two rows of one edge index) are one.
        agreed = tuple(_one_size([s[i] for s in shapes]) for i in range(len(first)))
        if stack:
            position = normalise(position, len(first) + 1)
            same = None not in agreed
            return agreed[:position] + (len(shapes),) + agreed[position:] if same and position is not None else None
        position = normalise(position, len(first))
        if position is None:
            return None
        others_match = all(d is not None for i, d in enumerate(agreed) if i != position)
        parts = [s[position] for s in shapes]
        total = sum(parts) if all(isinstance(p, int) for p in parts) else None
        return agreed[:position] + (total,) + agreed[position + 1 :] if others_match else None


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


def _one_size(sizes: list) -> Dim:
    """The size tensors joined by `cat`/`stack` all have in one dimension: an int they name, else the first
    symbol; None when one is unknown or two ints differ."""
    ints = {d for d in sizes if isinstance(d, int)}
    if None in sizes or len(ints) > 1:
        return None
    return ints.pop() if ints else sizes[0]


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
    rest = bool(target) and target[-1] == -1  # `x.view(())` names no size
    named = target[:-1] if rest else target
    positions = [d.key[2] for d in named if isinstance(d, Sym) and d.key[:2] == ("size", key) and type(d.key[2]) is int]
    if len(positions) != len(named) or sorted(positions) != list(range(len(named))) or len(named) < 2:
        return None, target
    source = tuple(sorted(named, key=lambda d: d.key[2]))
    if not rest:
        return source, target
    remainder = Sym(("rest", key, len(named)), "...")
    return (*source, remainder), (*named, remainder)


def trailing_source(ends: tuple[Shape, Shape] | None, target: Shape) -> Shape | None:
    """The source of a view of a tensor of unknown rank whose known last sizes the target ends with, in
    whatever order, every size of the target stated: `(..., T, d)` viewed as `(b, d, T)` is `(b, T, d)` (the
    sizes before `T, d` hold as many elements as `b`)."""
    tail = ends[1] if ends else ()
    keys = [repr(dim_key(d)) for d in tail]
    if len(tail) < 2 or len(target) <= len(tail) or None in target or -1 in target or None in tail or 1 in tail:
        return None
    if len(set(keys)) != len(keys) or sorted(keys) != sorted(repr(dim_key(d)) for d in target[-len(tail) :]):
        return None
    return tuple(target[: -len(tail)]) + tuple(tail)


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


def selected_rows(index: object, text: str) -> Dim:
    """How many rows a one-dimensional index tensor (`perm[i:i + bs]`, a mask, a Series) selects: a symbol
    of that index, the same for every tensor it indexes."""
    if isinstance(index, (Tensor, Frame)) and index.shape is not None and len(index.shape) == 1:
        return Sym(("selected", index.key), f"len({text})", "selected", (index.shape[0],))
    return None
