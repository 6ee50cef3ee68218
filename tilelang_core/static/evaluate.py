"""Evaluate the small expressions kernels use for shapes and dtypes, symbolically where unknown.

``T.ceildiv(N, block_N)`` with ``N=1024, block_N=128`` is ``8``; with ``N`` unknown it stays the
text ``ceildiv(N, 128)``. Nothing is executed: only literals, names bound in ``env``, arithmetic
and a few pure helpers are understood; everything else becomes its source text.

Arithmetic is bounded so that no text can stall the editor: a number beyond ``2**40`` (no tile
or tensor extent comes near), a power or shift that would produce one, or an expression nested
too deeply becomes unknown instead of being computed.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tilescope.core.dtypes import dtype_bits

_DTYPE_ALIASES = {
    "float": "float32",
    "half": "float16",
    "double": "float64",
    "int": "int32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
}
_DTYPES = {
    "bool",
    "int4",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint4",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8_e4m3",
    "float8_e5m2",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
}
LIMIT = 2**40
"""The largest magnitude evaluated; anything larger is unknown."""
_TEXT_LIMIT = 80
_DTYPE_SHAPE = re.compile(r"bool|(u?int|float|bfloat)\d+(_[a-z0-9]+)?(x\d+)?")
_BINARY = {
    ast.Add: ("+", lambda a, b: a + b),
    ast.Sub: ("-", lambda a, b: a - b),
    ast.Mult: ("*", lambda a, b: a * b),
    ast.FloorDiv: ("//", lambda a, b: a // b),
    ast.Mod: ("%", lambda a, b: a % b),
    ast.Div: ("/", lambda a, b: a / b),
    ast.Pow: ("**", lambda a, b: a**b if _small_power(a, b) else _too_large()),
    ast.LShift: ("<<", lambda a, b: a << b if 0 <= b <= 40 else _too_large()),
    ast.RShift: (">>", lambda a, b: a >> b),
}


@dataclass(frozen=True)
class Sym:
    """A value known only by its expression text (``M``, ``ceildiv(N, 128)``)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Shaped:
    """A tensor made in the file (``torch.randn(M, K)``), known by its shape only."""

    shape: tuple[Any, ...]
    dtype: str | None = None
    """The element type when the file says it (``dtype=torch.float16``, ``.half()``)."""
    data: tuple[Any, ...] | None = None
    """The numbers of a 1-D ``torch.tensor([2048, 6144])`` written in the file."""

    def __str__(self) -> str:
        return f"tensor{self.shape}"


Value = Any
"""int, float, bool, str, ``Sym``, ``Shaped``, or a tuple of values."""
_TORCH_MAKERS = {"randn", "rand", "empty", "zeros", "ones", "full", "randint", "tensor"}
_TORCH_MAKERS |= {"randn_like", "empty_like", "zeros_like", "ones_like", "rand_like"}
_SAME_SHAPE = {"cuda", "cpu", "half", "float", "bfloat16", "to", "contiguous", "clone", "detach", "requires_grad_"}
_CASTS = {"half": "float16", "float": "float32", "bfloat16": "bfloat16"}
_STR_TESTS = {"isdigit", "isalpha", "isalnum", "isupper", "islower", "isspace"}


def dtype_name(value: Value) -> str | None:
    """The canonical dtype a value denotes (``"float"`` → ``float32``), or ``None``."""
    if isinstance(value, str):
        name = _DTYPE_ALIASES.get(value, value)
        return name if name in _DTYPES or _DTYPE_SHAPE.fullmatch(name) else None
    return None


def dotted_name(node: ast.AST) -> str:
    """The last name of ``tvm.DataType`` / ``DataType``."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _small_power(base: object, exponent: object) -> bool:
    """Whether ``base ** exponent`` stays within ``LIMIT`` (checked before computing it)."""
    if not (isinstance(base, int | float) and isinstance(exponent, int | float)):
        return False
    if abs(base) <= 1:
        return abs(exponent) <= 64
    return -64 <= exponent <= 40 / math.log2(abs(base))


def _too_large() -> Value:
    raise OverflowError


def _bounded(value: Value) -> Value:
    """``value``, or ``OverflowError`` for a number too large (or not finite) to be a size."""
    if isinstance(value, int) and not isinstance(value, bool) and not -LIMIT <= value <= LIMIT:
        raise OverflowError
    if isinstance(value, float) and not (math.isfinite(value) and abs(value) <= LIMIT):
        raise OverflowError
    return value


def is_known_int(value: Value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def as_dim(value: Value) -> int | str:
    """A shape extent for the model: an int when known, else its text."""
    if is_known_int(value):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return str(value)


def evaluate(node: ast.expr | None, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    """The value of ``node`` under ``env``; ``Sym`` of the source text when it cannot be known."""
    if node is None:
        return None
    try:
        return _eval(node, env, aliases)
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError):
        return Sym(_text(node))


def _text(node: ast.AST) -> str:
    """The node's source text, shortened: a symbolic value is shown, never computed on."""
    if _size_over(node, 400):
        return "…"
    try:
        text = ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError, MemoryError):
        return "?"
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def _size_over(node: ast.AST, limit: int) -> bool:
    """Whether the tree has more than ``limit`` nodes (checked without recursion)."""
    stack = [node]
    count = 0
    while stack:
        count += 1
        if count > limit:
            return True
        current = stack.pop()
        stack.extend(ast.iter_child_nodes(current))
    return False


def _eval(node: ast.expr, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    if isinstance(node, ast.Constant):
        return _bounded(node.value)
    if isinstance(node, ast.Name):
        return env[node.id] if node.id in env else Sym(node.id)
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(_eval(e, env, aliases) for e in node.elts)
    if isinstance(node, ast.Attribute):
        if node.attr == "bits" and isinstance(node.value, ast.Call) and dotted_name(node.value.func) == "DataType":
            dtype = dtype_name(_eval(node.value.args[0], env, aliases)) if node.value.args else None
            bits = dtype_bits(dtype) if dtype else None
            return bits if bits is not None else Sym(_text(node))
        if node.attr in ("shape", "T", "dtype", "ndim"):
            base = _eval(node.value, env, aliases)
            if isinstance(base, Shaped) and node.attr == "ndim":
                return len(base.shape)
            if isinstance(base, Shaped) and node.attr == "dtype":
                return base.dtype if base.dtype is not None else Sym(_text(node))
            if isinstance(base, Shaped):
                return base.shape if node.attr == "shape" else Shaped(tuple(reversed(base.shape)), base.dtype)
        if isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in env:
            return env[f"{node.value.id}.{node.attr}"]
        if isinstance(node.value, ast.Name) and node.value.id in aliases and dtype_name(node.attr):
            return _DTYPE_ALIASES.get(node.attr, node.attr)
        if isinstance(node.value, ast.Name) and node.value.id == "torch" and dtype_name(node.attr):
            return node.attr
        return Sym(_text(node))
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env, aliases)
        if isinstance(node.op, ast.USub):
            return -operand if _numeric(operand) else _sym(f"-{_wrap(operand)}")
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not) and isinstance(operand, bool):
            return not operand
        return Sym(_text(node))
    if isinstance(node, ast.BinOp):
        return _binary(node, env, aliases)
    if isinstance(node, ast.Call):
        return _call(node, env, aliases)
    if isinstance(node, ast.IfExp):
        test = _eval(node.test, env, aliases)
        if isinstance(test, bool):
            return _eval(node.body if test else node.orelse, env, aliases)
        return Sym(_text(node))
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _eval(node.left, env, aliases), _eval(node.comparators[0], env, aliases)
        if (_numeric(left) and _numeric(right)) or (isinstance(left, str) and isinstance(right, str)):
            op = node.ops[0]
            table = {ast.Eq: left == right, ast.NotEq: left != right}
            if _numeric(left):
                table.update({ast.Lt: left < right, ast.LtE: left <= right, ast.Gt: left > right})
                table[ast.GtE] = left >= right
            if type(op) in table:
                return table[type(op)]
        return Sym(_text(node))
    if isinstance(node, ast.Subscript):
        base = _eval(node.value, env, aliases)
        index = _eval(node.slice, env, aliases)
        if isinstance(base, tuple) and is_known_int(index) and -len(base) <= index < len(base):
            return base[index]
        return Sym(_text(node))
    return Sym(_text(node))


def _numeric(value: Value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _sym(text: str) -> Sym:
    return Sym(text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…")


def _wrap(value: Value) -> str:
    text = str(value)
    return f"({text})" if isinstance(value, Sym) and " " in text else text


def _binary(node: ast.BinOp, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    left, right = _eval(node.left, env, aliases), _eval(node.right, env, aliases)
    symbol, func = _BINARY.get(type(node.op), (None, None))
    if symbol is None or func is None:
        return Sym(_text(node))
    if _numeric(left) and _numeric(right):
        result = _bounded(func(left, right))
        if isinstance(node.op, ast.Div) and isinstance(result, float) and result.is_integer():
            return int(result)
        return result
    if isinstance(left, str | tuple) and isinstance(node.op, ast.Add) and type(left) is type(right):
        if len(left) + len(right) > 4096:
            raise OverflowError
        return left + right
    if isinstance(left, Shaped) or isinstance(right, Shaped):
        return _elementwise(left, right, node)
    if isinstance(node.op, ast.Mult) and (left == 1 or right == 1):
        return right if left == 1 else left
    return _sym(f"{_wrap(left)} {symbol} {_wrap(right)}")


def _extent(base: Shaped, name: str, args: list[Value], node: ast.Call) -> Value:
    """``x.size()``, ``x.size(1)``, ``x.dim()`` of a tensor made in the file."""
    if name != "size":
        return len(base.shape)
    if not args:
        return base.shape
    if len(args) == 1 and is_known_int(args[0]) and -len(base.shape) <= args[0] < len(base.shape):
        return base.shape[args[0]]
    return Sym(_text(node))


def _elementwise(left: Value, right: Value, node: ast.BinOp) -> Value:
    """A tensor with a number (``2 * a - 1``) or with a tensor of the same shape keeps its shape."""
    if isinstance(node.op, ast.MatMult):
        return Sym(_text(node))
    tensors = [v for v in (left, right) if isinstance(v, Shaped)]
    others = [v for v in (left, right) if not isinstance(v, Shaped)]
    if len(tensors) == 2 and tensors[0].shape == tensors[1].shape:
        dtype = tensors[0].dtype if tensors[0].dtype == tensors[1].dtype else None
        return Shaped(tensors[0].shape, dtype)
    if len(tensors) == 1 and _numeric(others[0]):
        return Shaped(tensors[0].shape, tensors[0].dtype)
    return Sym(_text(node))


def _tensor(node: ast.Call, name: str, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    """The shape (and dtype) of ``torch.randn(M, K)``, ``torch.full((M, N), 0)``, ``torch.randint(0, 9, (M,))``..."""
    args = [a for a in node.args if not isinstance(a, ast.Starred)]
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    dtype = dtype_name(_eval(keywords["dtype"], env, aliases)) if "dtype" in keywords else None
    size = keywords.get("size")
    if name in ("randn_like", "empty_like", "zeros_like", "ones_like", "rand_like"):
        base = _eval(args[0], env, aliases) if args else None
        return Shaped(base.shape, dtype or base.dtype) if isinstance(base, Shaped) else Sym(_text(node))
    if name == "tensor":
        data = _eval(args[0], env, aliases) if args else None
        flat = data if isinstance(data, tuple) and data and all(_numeric(v) for v in data) else None
        shape: list[Value] = []
        while isinstance(data, tuple):
            shape.append(len(data))
            data = data[0] if data else None
        if isinstance(data, Sym | Shaped):
            return Sym(_text(node))
        return Shaped(tuple(shape), dtype, flat)
    if name == "randint":
        size = size if size is not None else (args[-1] if args else None)
        args = []
    elif name == "full":
        size = args[0] if args else size
        args = []
    if size is not None:
        value = _eval(size, env, aliases)
        return Shaped(value if isinstance(value, tuple) else (value,), dtype)
    values = tuple(_eval(a, env, aliases) for a in args)
    if len(values) == 1 and isinstance(values[0], tuple):
        return Shaped(values[0], dtype)
    return Shaped(values, dtype)


_UNDERSTOOD = {
    *("t", "join", "size", "dim", "ndimension", "max", "min", "sum", "item", "tolist", "ceildiv", "cdiv", "int"),
    *("float", "gcd", "lcm", "ceil", "floor", "dynamic", "symbolic", "len"),
}


def understood(name: str) -> bool:
    """Whether a call of this name can have a value here (the rest are unknown without looking)."""
    known = name in _UNDERSTOOD or name in _TORCH_MAKERS or name in _SAME_SHAPE
    return known or _in_place(name) or bool(dtype_name(name))


def _in_place(name: str) -> bool:
    """``x.normal_()``, ``x.zero_()``: PyTorch's in-place methods return the tensor itself."""
    return name.endswith("_") and not name.startswith("_") and name[:-1].isidentifier()


def _same_shape(base: Shaped, name: str, node: ast.Call, env: Mapping[str, Value], aliases: frozenset[str]) -> Shaped:
    """A tensor method that keeps the shape: ``.t()`` reverses it, casts change the dtype."""
    if name == "t":
        return Shaped(tuple(reversed(base.shape)), base.dtype)
    if name in _CASTS:
        return Shaped(base.shape, _CASTS[name])
    if _in_place(name) and name != "requires_grad_":
        return Shaped(base.shape, base.dtype)  # new values: the numbers written are gone
    if name == "to":
        given = [_eval(a, env, aliases) for a in [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]]
        dtypes = [d for d in map(dtype_name, given) if d]
        if dtypes:
            return Shaped(base.shape, dtypes[0])
        return Shaped(base.shape, None) if any(isinstance(g, Sym) for g in given) else base
    return base


def _join(node: ast.Call, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    """``"".join(c for c in "int8" if c.isdigit())``: a known string filtered by ``str`` tests."""
    sep = _eval(node.func.value, env, aliases) if isinstance(node.func, ast.Attribute) else None
    arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if not isinstance(sep, str) or not isinstance(arg, ast.GeneratorExp | ast.ListComp):
        return Sym(_text(node))
    (gen,) = arg.generators if len(arg.generators) == 1 else (None,)
    if gen is None or not isinstance(gen.target, ast.Name) or gen.is_async:
        return Sym(_text(node))
    items = _eval(gen.iter, env, aliases)
    if not isinstance(items, str | tuple) or len(items) > 256:
        return Sym(_text(node))
    var = gen.target.id
    parts: list[str] = []
    for item in items:
        scope = {**env, var: item}
        if all(_str_test(test, var, item) for test in gen.ifs):
            part = _eval(arg.elt, scope, aliases)
            if not isinstance(part, str):
                return Sym(_text(node))
            parts.append(part)
    return sep.join(parts)


def _str_test(test: ast.expr, var: str, item: Value) -> bool:
    """``c.isdigit()`` / ``not c.isdigit()`` on a known character; anything else is not understood."""
    negate = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    call = test.operand if isinstance(test, ast.UnaryOp) and negate else test
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _STR_TESTS
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == var
        and isinstance(item, str)
        and not call.args
    ):
        raise ValueError("not a string test")
    return getattr(item, call.func.attr)() != negate


def _call(node: ast.Call, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    owner = func.value if isinstance(func, ast.Attribute) else None
    if isinstance(owner, ast.Name) and owner.id == "torch" and name in _TORCH_MAKERS:
        return _tensor(node, name, env, aliases)
    if isinstance(func, ast.Attribute) and (name in _SAME_SHAPE | {"t"} or _in_place(name)):
        base = _eval(func.value, env, aliases)
        if isinstance(base, Shaped):
            return _same_shape(base, name, node, env, aliases)
    if isinstance(func, ast.Attribute) and name in ("max", "min", "sum", "item", "tolist") and not node.args:
        base = _eval(func.value, env, aliases)
        if isinstance(base, Shaped) and base.data is not None:
            reduce = {"max": max, "min": min, "sum": sum, "tolist": tuple}.get(name)
            if reduce is not None:
                return reduce(base.data)
            return base.data[0] if len(base.data) == 1 else Sym(_text(node))
    if isinstance(func, ast.Attribute) and name in ("size", "dim", "ndimension"):
        base = _eval(func.value, env, aliases)
        if isinstance(base, Shaped):
            return _extent(base, name, [_eval(a, env, aliases) for a in node.args], node)
    if isinstance(func, ast.Attribute) and name == "join":
        return _join(node, env, aliases)
    known = name in ("ceildiv", "cdiv", "min", "max", "int", "gcd", "lcm", "dynamic", "symbolic", "ceil", "floor")
    known = known or name in ("len", "sum") or dtype_name(name)
    args = [_eval(a, env, aliases) for a in node.args if not isinstance(a, ast.Starred)] if known else []
    if name in ("ceildiv", "cdiv") and len(args) == 2:
        a, b = args
        if is_known_int(a) and is_known_int(b) and b != 0:
            return -(-a // b)
        return _sym(f"ceildiv({a}, {b})")
    if name in ("min", "max") and len(args) >= 2:
        if all(_numeric(a) for a in args):
            return min(args) if name == "min" else max(args)
        return _sym(f"{name}({', '.join(map(str, args))})")
    if name in ("gcd", "lcm") and len(args) >= 2 and all(is_known_int(a) for a in args):
        return _bounded((math.gcd if name == "gcd" else math.lcm)(*args))
    if name in ("len", "sum") and owner is None and len(args) == 1 and isinstance(args[0], tuple):
        if name == "len":
            return len(args[0])
        if all(_numeric(v) for v in args[0]):
            return _bounded(sum(args[0]))
    if name == "int" and len(args) == 1 and _numeric(args[0]):
        return int(args[0])
    if name == "float" and owner is None and len(args) == 1 and _numeric(args[0]):
        return float(args[0])
    if name == "int" and len(args) == 1 and isinstance(args[0], str) and 0 < len(args[0]) <= 12:
        return int(args[0])  # a digit string such as int("".join(...)); ValueError makes it unknown
    if name in ("ceil", "floor") and len(args) == 1 and _numeric(args[0]) and dotted_name(owner or func) == "math":
        return math.ceil(args[0]) if name == "ceil" else math.floor(args[0])
    if name in ("dynamic", "symbolic") and args and isinstance(args[0], str):
        return Sym(args[0])
    owner = func.value if isinstance(func, ast.Attribute) else None
    is_primitive = isinstance(owner, ast.Name) and owner.id in aliases
    if is_primitive and dtype_name(name) and not args:
        return name
    callee = _text(func) if isinstance(func, ast.Name | ast.Attribute) else "call"
    return Sym(f"{callee}(…)")
