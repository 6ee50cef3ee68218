"""Expressions of the front-end PrimFunc, compiled once into closures over numpy values.

Inside a ``T.Parallel`` nest a loop variable is an index array with one axis per loop, so one
evaluation computes every lane; elsewhere values are scalars. Types follow TIR's: integer constants
are Python ints (numpy keeps an array's dtype against them), float constants numpy scalars of their
dtype, so float16 and bfloat16 arithmetic rounds after each operation, as the GPU's does. The two
arms of ``T.if_then_else`` are evaluated under complementary lane masks, so a load guarded by the
condition is checked only where the condition holds, as on the GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from tilelang import tvm
from tilescope.core.interpret.context import Context, Fn, Frame
from tilescope.core.interpret.memory import NotInterpretable, cast, np_dtype

tirx = tvm.tirx
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _tdiv(a: Any, b: Any) -> Any:
    """C's integer division, truncating toward zero."""
    q = a // b
    r = a - q * b
    return q + ((r != 0) & ((a < 0) != (b < 0)))


def _round(x: Any) -> Any:
    """C's ``round``: halves away from zero."""
    return np.sign(x) * np.floor(np.abs(x) + x.dtype.type(0.5))


_UNARY: dict[str, Callable[[Any], Any]] = {
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(x.dtype.type(10), x),
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: x.dtype.type(1) / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sigmoid": lambda x: x.dtype.type(1) / (x.dtype.type(1) + np.exp(-x)),
    "erf": lambda x: _erf(x).astype(x.dtype),
    "fabs": np.abs,
    "abs": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": _round,
    "nearbyint": np.rint,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
    "bitwise_not": np.invert,
}
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "pow": np.power,
    "fmod": np.fmod,
    "copysign": np.copysign,
    "atan2": np.arctan2,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "shift_left": np.left_shift,
    "shift_right": np.right_shift,
    "hypot": np.hypot,
}
_NO_EFFECT = {"tirx.likely"}


def _float(dtype: str) -> bool:
    return str(dtype).startswith(("float", "bfloat"))


def _typed(fn: Callable[[Any], Any], dtype: np.dtype) -> Callable[[Any], Any]:
    def apply(x: Any) -> Any:
        return fn(np.asarray(x, dtype=dtype) if not isinstance(x, np.ndarray | np.generic) else x)

    return apply


def compile_expr(ctx: Context, node: Any) -> Fn:
    """A closure computing ``node`` in a frame."""
    kind = type(node)
    if kind is tirx.IntImm:
        if str(node.dtype) == "bool":
            v = bool(node.value)
            return lambda f: v
        i = int(node.value)
        return lambda f: i
    if kind is tirx.FloatImm:
        c = np_dtype(node.dtype).type(node.value)
        return lambda f: c
    if kind is tirx.Var or kind is tirx.SizeVar:
        thread = ctx.thread_vars.get(int(node.__chandle__()))
        if thread is not None:
            raise ctx.fail(f"the thread index {thread} (T.get_thread_binding or a per-thread loop)")
        k = ctx.slot(node)
        return lambda f: f.values[k]
    if kind is tirx.BufferLoad:
        return _load(ctx, node)
    if kind is tirx.Cast:
        return _cast(ctx, node)
    if kind is tirx.Call:
        return _call(ctx, node)
    if kind is tirx.Select:
        c, t, e = (compile_expr(ctx, x) for x in (node.condition, node.true_value, node.false_value))
        return lambda f: _select(c(f), t(f), e(f))
    if kind is tirx.Not:
        a = compile_expr(ctx, node.a)
        return lambda f: np.logical_not(a(f))
    if kind is tirx.Let:
        k = ctx.slot(node.var)
        value, body = compile_expr(ctx, node.value), compile_expr(ctx, node.body)

        def let(f: Frame) -> Any:
            f.values[k] = value(f)
            return body(f)

        return let
    binary = _BINOPS.get(kind)
    if binary is not None:
        a, b = compile_expr(ctx, node.a), compile_expr(ctx, node.b)
        return binary(ctx, node, a, b)
    raise ctx.fail(f"the expression {type(node).__name__} ({node})")


def _select(c: Any, t: Any, e: Any) -> Any:
    if isinstance(c, np.ndarray):
        return np.where(c, t, e)
    return t if c else e


def thread_index(ctx: Context, buffer: Any) -> list[Fn]:
    """The leading index of a per-thread buffer (its thread), or nothing; fragments, whose
    elements belong to threads by a layout not yet inferred, are refused in per-thread code."""
    if ctx.thread_slot is None:
        return []
    if str(buffer.scope()) == "local.fragment":
        raise ctx.fail(f"an element of the fragment {buffer.name} in per-thread code (code that names threadIdx.x)")
    if not ctx.per_thread(buffer):
        return []
    k = ctx.thread_slot
    return [lambda f: f.values[k]]


def _load(ctx: Context, node: Any) -> Fn:
    b = ctx.buffer_slot(node.buffer)
    index = thread_index(ctx, node.buffer) + [compile_expr(ctx, i) for i in node.indices]
    guard = ctx.guard(node.buffer, list(node.indices))
    guard = (False, *guard) if guard is not None and ctx.per_thread(node.buffer) else guard
    line = ctx.line
    if len(index) == 1:
        (i0,) = index
        return lambda f: f.values[b].load((i0(f),), f.mask, line, guard)
    if len(index) == 2:
        i0, i1 = index
        return lambda f: f.values[b].load((i0(f), i1(f)), f.mask, line, guard)
    return lambda f: f.values[b].load(tuple(i(f) for i in index), f.mask, line, guard)


def _cast(ctx: Context, node: Any) -> Fn:
    value = compile_expr(ctx, node.value)
    dtype = np_dtype(node.dtype)
    return lambda f: cast(value(f), dtype)


def _masked_pair(cond: Fn, then: Fn, other: Fn, dtype: np.dtype) -> Fn:
    def if_then_else(f: Frame) -> Any:
        c = cond(f)
        if not isinstance(c, np.ndarray):
            return then(f) if c else other(f)
        saved = f.mask
        f.mask = c if saved is None else saved & c
        x = then(f)
        f.mask = ~c if saved is None else saved & ~c
        y = other(f)
        f.mask = saved
        return cast(np.where(c, x, y), dtype)

    return if_then_else


def _call(ctx: Context, node: Any) -> Fn:
    name = str(node.op.name) if hasattr(node.op, "name") else str(node.op)
    args = list(node.args)
    short = name.removeprefix("tirx.").removeprefix("tl.")
    if name == "tirx.if_then_else":
        c, t, e = (compile_expr(ctx, a) for a in args)
        return _masked_pair(c, t, e, np_dtype(node.dtype))
    if name in _NO_EFFECT:
        return compile_expr(ctx, args[0])
    if name == "tirx.reinterpret":
        value = compile_expr(ctx, args[0])
        dtype = np_dtype(node.dtype)
        return lambda f: np.asarray(value(f)).view(dtype)[()]
    if name in _SHUFFLES:
        return _shuffle(ctx, name, args)
    if name in ("tirx.infinity", "tl.infinity"):
        inf = np_dtype(node.dtype).type(np.inf)
        return lambda f: inf
    if name.startswith("tirx.") and short in _UNARY and len(args) == 1:
        fn = _typed(_UNARY[short], np_dtype(args[0].dtype))
        a = compile_expr(ctx, args[0])
        return lambda f: fn(a(f))
    if name.startswith("tirx.") and short in _BINARY and len(args) == 2:
        fn2 = _BINARY[short]
        dtype = np_dtype(node.dtype)
        a, b = compile_expr(ctx, args[0]), compile_expr(ctx, args[1])
        return lambda f: cast(fn2(a(f), b(f)), dtype)
    raise ctx.fail(f"{name}")


_SHUFFLES = {"tl.shfl_xor_sync", "tl.shfl_down_sync", "tl.shfl_up_sync", "tl.shfl_sync"}


def _shuffle(ctx: Context, name: str, args: list[Any]) -> Fn:
    """CUDA's warp shuffles over the thread lanes: a lane outside its ``width`` segment keeps its
    own value, as ``__shfl_*_sync`` returns it."""
    if ctx.thread_slot is None:
        raise ctx.fail(f"{name} outside per-thread code")
    k, count = ctx.thread_slot, ctx.thread_count
    value, delta, width = compile_expr(ctx, args[1]), compile_expr(ctx, args[2]), compile_expr(ctx, args[3])
    line = ctx.line

    def shuffle(f: Frame) -> Any:
        tid, v, d, w = f.values[k], value(f), delta(f), int(width(f))
        if isinstance(d, np.ndarray) or np.ndim(v) > 1 or f.lanes != 1:
            raise NotInterpretable(f"not interpretable: a shuffle of varying shape at line {line}", line)
        v = np.broadcast_to(v, (count,))
        lane, base = tid % w, tid - tid % w
        if name == "tl.shfl_xor_sync":
            src = base + (lane ^ int(d))
            src = np.where((lane ^ int(d)) < w, src, tid)
        elif name == "tl.shfl_down_sync":
            src = np.where(lane + int(d) < w, tid + int(d), tid)
        elif name == "tl.shfl_up_sync":
            src = np.where(lane >= int(d), tid - int(d), tid)
        else:
            src = base + int(d) % w
        return v[np.clip(src, 0, count - 1)]

    return shuffle


def _arith(op: Callable[[Any, Any], Any]) -> Callable[[Context, Any, Fn, Fn], Fn]:
    def make(ctx: Context, node: Any, a: Fn, b: Fn) -> Fn:
        return lambda f: op(a(f), b(f))

    return make


def _division(float_op: Callable[[Any, Any], Any], int_op: Callable[[Any, Any], Any]) -> Any:
    def make(ctx: Context, node: Any, a: Fn, b: Fn) -> Fn:
        if _float(node.dtype):
            return lambda f: float_op(a(f), b(f))
        line = ctx.line

        def divide(f: Frame) -> Any:
            x, y = a(f), b(f)
            if np.any(np.asarray(y) == 0):
                raise ZeroDivisionError(f"integer division by zero at line {line}")
            return int_op(x, y)

        return divide

    return make


def _extremum(float_op: Callable[[Any, Any], Any], int_op: Callable[[Any, Any], Any]) -> Any:
    def make(ctx: Context, node: Any, a: Fn, b: Fn) -> Fn:
        op = float_op if _float(node.dtype) else int_op
        return lambda f: op(a(f), b(f))

    return make


def _py_max(x: Any, y: Any) -> Any:
    return np.maximum(x, y) if isinstance(x, np.ndarray) or isinstance(y, np.ndarray) else max(x, y)


def _py_min(x: Any, y: Any) -> Any:
    return np.minimum(x, y) if isinstance(x, np.ndarray) or isinstance(y, np.ndarray) else min(x, y)


_BINOPS: dict[type, Callable[[Context, Any, Fn, Fn], Fn]] = {
    tirx.Add: _arith(lambda x, y: x + y),
    tirx.Sub: _arith(lambda x, y: x - y),
    tirx.Mul: _arith(lambda x, y: x * y),
    tirx.Div: _division(lambda x, y: x / y, _tdiv),
    tirx.Mod: _division(np.fmod, lambda x, y: x - _tdiv(x, y) * y),
    tirx.FloorDiv: _division(lambda x, y: np.floor(x / y), lambda x, y: x // y),
    tirx.FloorMod: _division(lambda x, y: x - np.floor(x / y) * y, lambda x, y: x % y),
    # CUDA's fmaxf/fminf return the other operand when one is NaN; so do np.fmax/np.fmin.
    tirx.Max: _extremum(np.fmax, _py_max),
    tirx.Min: _extremum(np.fmin, _py_min),
    tirx.EQ: _arith(lambda x, y: x == y),
    tirx.NE: _arith(lambda x, y: x != y),
    tirx.LT: _arith(lambda x, y: x < y),
    tirx.LE: _arith(lambda x, y: x <= y),
    tirx.GT: _arith(lambda x, y: x > y),
    tirx.GE: _arith(lambda x, y: x >= y),
    tirx.And: _arith(lambda x, y: x & y),
    tirx.Or: _arith(lambda x, y: x | y),
}
