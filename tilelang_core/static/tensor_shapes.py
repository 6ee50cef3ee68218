"""Shapes and dtypes of the PyTorch tensors a file makes: ``torch.randn(M, K)``, ``x.half()``, ``x.size(1)``.

Kernels get their sizes from the tensors passed to them, so the static tier follows a tensor from
its maker through shape-keeping methods and arithmetic. Operands are evaluated through the caller's
``Eval`` so that ``evaluate`` stays the one place that folds expressions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tilescope.core.static.symbolic import Shaped, Sym, Value, dtype_name, is_known_int, node_text, numeric

Eval = Callable[[ast.expr], Value]
"""The value of a subexpression in the caller's scope."""

TORCH_MAKERS = {"randn", "rand", "empty", "zeros", "ones", "full", "randint", "tensor"}
TORCH_MAKERS |= {"randn_like", "empty_like", "zeros_like", "ones_like", "rand_like"}
SAME_SHAPE = {"cuda", "cpu", "half", "float", "bfloat16", "to", "contiguous", "clone", "detach", "requires_grad_"}
_CASTS = {"half": "float16", "float": "float32", "bfloat16": "bfloat16"}


def in_place(name: str) -> bool:
    """``x.normal_()``, ``x.zero_()``: PyTorch's in-place methods return the tensor itself."""
    return name.endswith("_") and not name.startswith("_") and name[:-1].isidentifier()


def extent(base: Shaped, name: str, args: list[Value], node: ast.Call) -> Value:
    """``x.size()``, ``x.size(1)``, ``x.dim()`` of a tensor made in the file."""
    if name != "size":
        return len(base.shape)
    if not args:
        return base.shape
    if len(args) == 1 and is_known_int(args[0]) and -len(base.shape) <= args[0] < len(base.shape):
        return base.shape[args[0]]
    return Sym(node_text(node))


def elementwise(left: Value, right: Value, node: ast.BinOp) -> Value:
    """A tensor with a number (``2 * a - 1``) or with a tensor of the same shape keeps its shape."""
    if isinstance(node.op, ast.MatMult):
        return Sym(node_text(node))
    tensors = [v for v in (left, right) if isinstance(v, Shaped)]
    others = [v for v in (left, right) if not isinstance(v, Shaped)]
    if len(tensors) == 2 and tensors[0].shape == tensors[1].shape:
        dtype = tensors[0].dtype if tensors[0].dtype == tensors[1].dtype else None
        return Shaped(tensors[0].shape, dtype)
    if len(tensors) == 1 and numeric(others[0]):
        return Shaped(tensors[0].shape, tensors[0].dtype)
    return Sym(node_text(node))


def tensor(node: ast.Call, name: str, value: Eval) -> Value:
    """The shape (and dtype) of ``torch.randn(M, K)``, ``torch.full((M, N), 0)``, ``torch.randint(0, 9, (M,))``..."""
    args = [a for a in node.args if not isinstance(a, ast.Starred)]
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    dtype = dtype_name(value(keywords["dtype"])) if "dtype" in keywords else None
    size = keywords.get("size")
    if name in ("randn_like", "empty_like", "zeros_like", "ones_like", "rand_like"):
        base = value(args[0]) if args else None
        return Shaped(base.shape, dtype or base.dtype) if isinstance(base, Shaped) else Sym(node_text(node))
    if name == "tensor":
        data = value(args[0]) if args else None
        flat = data if isinstance(data, tuple) and data and all(numeric(v) for v in data) else None
        shape: list[Value] = []
        while isinstance(data, tuple):
            shape.append(len(data))
            data = data[0] if data else None
        if isinstance(data, Sym | Shaped):
            return Sym(node_text(node))
        return Shaped(tuple(shape), dtype, flat)
    if name == "randint":
        size = size if size is not None else (args[-1] if args else None)
        args = []
    elif name == "full":
        size = args[0] if args else size
        args = []
    if size is not None:
        sized = value(size)
        return Shaped(sized if isinstance(sized, tuple) else (sized,), dtype)
    values = tuple(value(a) for a in args)
    if len(values) == 1 and isinstance(values[0], tuple):
        return Shaped(values[0], dtype)
    return Shaped(values, dtype)


def same_shape(base: Shaped, name: str, node: ast.Call, value: Eval) -> Shaped:
    """A tensor method that keeps the shape: ``.t()`` reverses it, casts change the dtype."""
    if name == "t":
        return Shaped(tuple(reversed(base.shape)), base.dtype)
    if name in _CASTS:
        return Shaped(base.shape, _CASTS[name])
    if in_place(name) and name != "requires_grad_":
        return Shaped(base.shape, base.dtype)  # new values: the numbers written are gone
    if name == "to":
        given = [value(a) for a in [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]]
        dtypes = [d for d in map(dtype_name, given) if d]
        if dtypes:
            return Shaped(base.shape, dtypes[0])
        return Shaped(base.shape, None) if any(isinstance(g, Sym) for g in given) else base
    return base
