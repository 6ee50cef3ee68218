"""Evaluate the small expressions kernels use for shapes and dtypes, symbolically where unknown.

``T.ceildiv(N, block_N)`` with ``N=1024, block_N=128`` is ``8``; with ``N`` unknown it stays the
text ``ceildiv(N, 128)``. Nothing is executed: only literals, names bound in ``env``, arithmetic
and a few pure helpers are understood; everything else becomes its source text. The value types
and bounds are in ``symbolic``, what tensors made with PyTorch look like in ``tensor_shapes``.

Arithmetic is bounded so that no text can stall the editor: a number beyond ``2**40``, a power or
shift that would produce one, or an expression nested too deeply becomes unknown instead of being
computed; every node evaluated is a step of a budget (``budget``). So is size: a sum or join is
predicted before it is built, every value an expression builds is measured (``admitted``), and one
beyond ``budget.MAX_SIZE`` characters and items ends the budget, unknown.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping

from tilescope.core.dtypes import dtype_bits
from tilescope.core.static.budget import (
    EXPRESSION_SECONDS,
    EXPRESSION_STEPS,
    OverBudget,
    budgeted,
    charge,
    charge_size,
)
from tilescope.core.static.symbolic import (
    DTYPE_ALIASES,
    Shaped,
    Sym,
    Value,
    admitted,
    bounded,
    dotted_name,
    dtype_name,
    is_known_int,
    node_text,
    numeric,
    short_sym,
    size,
    text_of,
    wrapped,
)
from tilescope.core.static.tensor_shapes import (
    SAME_SHAPE,
    TORCH_MAKERS,
    elementwise,
    extent,
    in_place,
    same_shape,
    tensor,
)

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
_STR_TESTS = {"isdigit", "isalpha", "isalnum", "isupper", "islower", "isspace"}


def _small_power(base: object, exponent: object) -> bool:
    """Whether ``base ** exponent`` stays within ``LIMIT`` (checked before computing it)."""
    if not (isinstance(base, int | float) and isinstance(exponent, int | float)):
        return False
    if abs(base) <= 1:
        return abs(exponent) <= 64
    return -64 <= exponent <= 40 / math.log2(abs(base))


def _too_large() -> Value:
    raise OverflowError


def evaluate(node: ast.expr | None, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    """The value of ``node`` under ``env``; ``Sym`` of the source text when it cannot be known."""
    if node is None:
        return None
    with budgeted(EXPRESSION_STEPS, EXPRESSION_SECONDS):
        try:
            return _eval(node, env, aliases)
        except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError, OverBudget):
            return Sym(node_text(node))


def _eval(node: ast.expr, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    """The value of one node, paid for by its size: a name's or a literal's value was measured when it
    was built (or is the source's own), what any other node builds is measured here, so no value
    that grows by nesting another (``(t, t)``) outgrows ``MAX_SIZE`` by more than one step."""
    charge()
    value = _node_value(node, env, aliases)
    return value if isinstance(node, ast.Name | ast.Constant) else admitted(value)


def _node_value(node: ast.expr, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    if isinstance(node, ast.Constant):
        return bounded(node.value)
    if isinstance(node, ast.Name):
        return env[node.id] if node.id in env else Sym(node.id)
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(_eval(e, env, aliases) for e in node.elts)
    if isinstance(node, ast.Attribute):
        if node.attr == "bits" and isinstance(node.value, ast.Call) and dotted_name(node.value.func) == "DataType":
            dtype = dtype_name(_eval(node.value.args[0], env, aliases)) if node.value.args else None
            bits = dtype_bits(dtype) if dtype else None
            return bits if bits is not None else Sym(node_text(node))
        if node.attr in ("shape", "T", "dtype", "ndim"):
            base = _eval(node.value, env, aliases)
            if isinstance(base, Shaped) and node.attr == "ndim":
                return len(base.shape)
            if isinstance(base, Shaped) and node.attr == "dtype":
                return base.dtype if base.dtype is not None else Sym(node_text(node))
            if isinstance(base, Shaped):
                return base.shape if node.attr == "shape" else Shaped(tuple(reversed(base.shape)), base.dtype)
        if isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in env:
            return env[f"{node.value.id}.{node.attr}"]
        if isinstance(node.value, ast.Name) and node.value.id in aliases and dtype_name(node.attr):
            return DTYPE_ALIASES.get(node.attr, node.attr)
        if isinstance(node.value, ast.Name) and node.value.id == "torch" and dtype_name(node.attr):
            return node.attr
        return Sym(node_text(node))
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env, aliases)
        if isinstance(node.op, ast.USub):
            return -operand if numeric(operand) else short_sym(f"-{wrapped(operand)}")
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not) and isinstance(operand, bool):
            return not operand
        return Sym(node_text(node))
    if isinstance(node, ast.BinOp):
        return _binary(node, env, aliases)
    if isinstance(node, ast.Call):
        return _call(node, env, aliases)
    if isinstance(node, ast.IfExp):
        test = _eval(node.test, env, aliases)
        if isinstance(test, bool):
            return _eval(node.body if test else node.orelse, env, aliases)
        return Sym(node_text(node))
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _eval(node.left, env, aliases), _eval(node.comparators[0], env, aliases)
        if (numeric(left) and numeric(right)) or (isinstance(left, str) and isinstance(right, str)):
            op = node.ops[0]
            table = {ast.Eq: left == right, ast.NotEq: left != right}
            if numeric(left) and numeric(right):
                table.update({ast.Lt: left < right, ast.LtE: left <= right, ast.Gt: left > right})
                table[ast.GtE] = left >= right
            if type(op) in table:
                return table[type(op)]
        return Sym(node_text(node))
    if isinstance(node, ast.Subscript):
        base = _eval(node.value, env, aliases)
        index = _eval(node.slice, env, aliases)
        if isinstance(base, tuple) and is_known_int(index) and -len(base) <= index < len(base):
            return base[index]
        return Sym(node_text(node))
    return Sym(node_text(node))


def _binary(node: ast.BinOp, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    left, right = _eval(node.left, env, aliases), _eval(node.right, env, aliases)
    symbol, func = _BINARY.get(type(node.op), (None, None))
    if symbol is None or func is None:
        return Sym(node_text(node))
    if numeric(left) and numeric(right):
        result = bounded(func(left, right))
        if isinstance(node.op, ast.Div) and isinstance(result, float) and result.is_integer():
            return int(result)
        return result
    if isinstance(left, str | tuple) and isinstance(node.op, ast.Add) and type(left) is type(right):
        charge_size(size(left) + size(right))
        return left + right
    if isinstance(left, Shaped) or isinstance(right, Shaped):
        return elementwise(left, right, node)
    if isinstance(node.op, ast.Mult) and (left == 1 or right == 1):
        return right if left == 1 else left
    return short_sym(f"{wrapped(left)} {symbol} {wrapped(right)}")


_UNDERSTOOD = {
    *("t", "join", "size", "dim", "ndimension", "max", "min", "sum", "item", "tolist", "ceildiv", "cdiv", "int"),
    *("float", "gcd", "lcm", "ceil", "floor", "dynamic", "symbolic", "len"),
}


def understood(name: str) -> bool:
    """Whether a call of this name can have a value here (the rest are unknown without looking)."""
    known = name in _UNDERSTOOD or name in TORCH_MAKERS or name in SAME_SHAPE
    return known or in_place(name) or bool(dtype_name(name))


def _join(node: ast.Call, env: Mapping[str, Value], aliases: frozenset[str]) -> Value:
    """``"".join(c for c in "int8" if c.isdigit())``: a known string filtered by ``str`` tests."""
    sep = _eval(node.func.value, env, aliases) if isinstance(node.func, ast.Attribute) else None
    arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if not isinstance(sep, str) or not isinstance(arg, ast.GeneratorExp | ast.ListComp):
        return Sym(node_text(node))
    (gen,) = arg.generators if len(arg.generators) == 1 else (None,)
    if gen is None or not isinstance(gen.target, ast.Name) or gen.is_async:
        return Sym(node_text(node))
    items = _eval(gen.iter, env, aliases)
    if not isinstance(items, str | tuple) or len(items) > 256:
        return Sym(node_text(node))
    var = gen.target.id
    parts: list[str] = []
    for item in items:
        charge()
        scope = {**env, var: item}
        if all(_str_test(test, var, item) for test in gen.ifs):
            part = _eval(arg.elt, scope, aliases)
            if not isinstance(part, str):
                return Sym(node_text(node))
            parts.append(part)
    charge_size(sum(map(len, parts)) + len(sep) * max(len(parts) - 1, 0))
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
    if isinstance(owner, ast.Name) and owner.id == "torch" and name in TORCH_MAKERS:
        return tensor(node, name, lambda n: _eval(n, env, aliases))
    if isinstance(func, ast.Attribute) and (name in SAME_SHAPE | {"t"} or in_place(name)):
        base = _eval(func.value, env, aliases)
        if isinstance(base, Shaped):
            return same_shape(base, name, node, lambda n: _eval(n, env, aliases))
    if isinstance(func, ast.Attribute) and name in ("max", "min", "sum", "item", "tolist") and not node.args:
        base = _eval(func.value, env, aliases)
        if isinstance(base, Shaped) and base.data is not None:
            reduce = {"max": max, "min": min, "sum": sum, "tolist": tuple}.get(name)
            if reduce is not None:
                return reduce(base.data)
            return base.data[0] if len(base.data) == 1 else Sym(node_text(node))
    if isinstance(func, ast.Attribute) and name in ("size", "dim", "ndimension"):
        base = _eval(func.value, env, aliases)
        if isinstance(base, Shaped):
            return extent(base, name, [_eval(a, env, aliases) for a in node.args], node)
    if isinstance(func, ast.Attribute) and name == "join":
        return _join(node, env, aliases)
    known = name in ("ceildiv", "cdiv", "min", "max", "int", "gcd", "lcm", "dynamic", "symbolic", "ceil", "floor")
    known = known or name in ("len", "sum") or dtype_name(name)
    args = [_eval(a, env, aliases) for a in node.args if not isinstance(a, ast.Starred)] if known else []
    if name in ("ceildiv", "cdiv") and len(args) == 2:
        a, b = args
        if is_known_int(a) and is_known_int(b) and b != 0:
            return -(-a // b)
        return short_sym(f"ceildiv({text_of(a)}, {text_of(b)})")
    if name in ("min", "max") and len(args) >= 2:
        if all(numeric(a) for a in args):
            return min(args) if name == "min" else max(args)
        return short_sym(f"{name}({', '.join(map(text_of, args))})")
    if name in ("gcd", "lcm") and len(args) >= 2 and all(is_known_int(a) for a in args):
        return bounded((math.gcd if name == "gcd" else math.lcm)(*args))
    if name in ("len", "sum") and owner is None and len(args) == 1 and isinstance(args[0], tuple):
        if name == "len":
            return len(args[0])
        if all(numeric(v) for v in args[0]):
            return bounded(sum(args[0]))
    if name == "int" and len(args) == 1 and numeric(args[0]):
        return int(args[0])
    if name == "float" and owner is None and len(args) == 1 and numeric(args[0]):
        return float(args[0])
    if name == "int" and len(args) == 1 and isinstance(args[0], str) and 0 < len(args[0]) <= 12:
        return int(args[0])  # a digit string such as int("".join(...)); ValueError makes it unknown
    if name in ("ceil", "floor") and len(args) == 1 and numeric(args[0]) and dotted_name(owner or func) == "math":
        return math.ceil(args[0]) if name == "ceil" else math.floor(args[0])
    if name in ("dynamic", "symbolic") and args and isinstance(args[0], str):
        return Sym(args[0])
    owner = func.value if isinstance(func, ast.Attribute) else None
    is_primitive = isinstance(owner, ast.Name) and owner.id in aliases
    if is_primitive and dtype_name(name) and not args:
        return name
    callee = node_text(func) if isinstance(func, ast.Name | ast.Attribute) else "call"
    return Sym(f"{callee}(…)")
