"""Tile operations (``tl.tileop.*`` calls) on whole regions, with TileLang's own rules.

* ``T.copy`` (and its async/TMA forms): the loop runs over the non-unit extents of the region in
  the lower-level scope (fragment over shared over global); each side is masked against its
  buffer's shape on its non-unit dimensions only, reads outside yield zero and writes outside are
  dropped (``CopyNode::MakeSIMTLoop`` in ``src/op/copy.cc``). A unit dimension is not masked, so
  an index outside it is a real out-of-bounds access and is reported.
* ``T.gemm``: ``C = (clear_accum ? 0 : C) + op(A) @ op(B)``, products exact and summed in float32
  (float64 for float64, int64 for integers), then rounded once to C's dtype.
* ``T.reduce_*``: over one dimension, combined with the destination unless ``clear``; max/min
  skip NaN like CUDA's ``fmaxf``.
* ``T.fill``/``T.clear``: no masking (``FillNode::MakeSIMTLoop``), every index checked.
* ``T.atomic_add``/``max``/``min`` on regions: read-modify-write of the destination; blocks run
  one after another, so the result is what any interleaving of whole atomics gives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tilelang import tvm
from tilescope.core.interpret.context import Context, Fn, Frame, Run
from tilescope.core.interpret.expr import compile_expr
from tilescope.core.interpret.memory import Memory, NotInterpretable, cast, read_box, write_box

tirx = tvm.tirx


@dataclass(frozen=True)
class Region:
    slot: int
    name: str
    scope: str
    mins: list[Fn]
    extents: list[int]
    guard: tuple[bool, ...] | None
    """Dimensions TileLang's safe-memory pass bounds-checks (global buffers only)."""
    threaded: bool
    """The operation sits in per-thread code (one lane per thread)."""


def _region(ctx: Context, arg: Any) -> Region:
    extents: list[Any]
    if isinstance(arg, tirx.Call) and str(getattr(arg.op, "name", "")) in ("tl.region", "tl.tileop.region"):
        load, extents = arg.args[0], list(arg.args[2:])
    elif isinstance(arg, tirx.BufferLoad):
        load, extents = arg, [1] * len(arg.indices)
    else:
        raise ctx.fail(f"a tile operand of the form {type(arg).__name__} {getattr(arg, 'op', '')}")
    if not all(isinstance(e, tirx.IntImm) for e in extents):
        raise ctx.fail("a tile region with a non-constant extent")
    buffer = load.buffer
    sizes = [int(e.value) for e in extents]
    guard = ctx.guard(buffer, list(load.indices))
    if guard is not None:
        guard = tuple(g or size != 1 for g, size in zip(guard, sizes, strict=True))
    return Region(
        ctx.buffer_slot(buffer),
        str(buffer.name),
        str(buffer.scope()),
        [compile_expr(ctx, i) for i in load.indices],
        sizes,
        guard,
        ctx.thread_slot is not None,
    )


def _starts(ctx: Context, f: Frame, region: Region, what: str, line: int) -> list[int]:
    """The region's corner. A tile operation runs once per block: never inside a ``T.Parallel``
    loop, and in per-thread code only where every thread reaches it with the same region."""
    threaded = region.threaded
    if f.lanes and not (threaded and f.lanes == 1 and f.mask is None):
        where = "under a branch that differs across threads" if threaded else "inside a T.Parallel loop"
        raise NotInterpretable(f"not interpretable: uses {what} {where} at line {line}", line)
    corner = [m(f) for m in region.mins]
    if any(np.ndim(c) for c in corner):
        message = f"not interpretable: uses {what} on a region that differs across threads at line {line}"
        raise NotInterpretable(message, line)
    return [int(c) for c in corner]


def _level(scope: str) -> int:
    if scope in ("local.fragment", "local"):
        return 2
    if scope in ("shared", "shared.dyn", "shared.tmem"):
        return 1
    return 0


def _valid(region: Region, starts: list[int], memory: Memory, loop: list[int]) -> list[tuple[int, int]]:
    """Per loop axis, the iterations ``T.copy``'s predicate keeps on this side: the region's
    non-unit dimensions, in order, each inside its buffer's shape."""
    ranges = []
    axes = [axis for axis, extent in enumerate(region.extents) if extent != 1]
    for axis, extent in zip(axes, loop, strict=True):
        lo, hi = max(0, -starts[axis]), min(extent, memory.shape[axis] - starts[axis])
        ranges.append((lo, max(lo, hi)))
    return ranges


def _side_box(region: Region, starts: list[int], ranges: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """The buffer box a span of loop iterations touches on one side of a copy."""
    corner, extents = list(starts), [1] * len(starts)
    spans = iter(ranges)
    for axis, extent in enumerate(region.extents):
        if extent != 1:
            lo, hi = next(spans)
            corner[axis] += lo
            extents[axis] = hi - lo
    return corner, extents


def _copy(ctx: Context, call: Any) -> Run:
    src, dst = _region(ctx, call.args[0]), _region(ctx, call.args[1])
    base = src if _level(src.scope) >= _level(dst.scope) else dst
    loop = [e for e in base.extents if e != 1]
    if len([e for e in src.extents if e != 1]) != len(loop) or len([e for e in dst.extents if e != 1]) != len(loop):
        raise ctx.fail(f"T.copy between regions of different ranks ({src.extents} and {dst.extents})")
    line = ctx.line

    def copy(f: Frame) -> None:
        s_start, d_start = _starts(ctx, f, src, "T.copy", line), _starts(ctx, f, dst, "T.copy", line)
        smem, dmem = f.values[src.slot], f.values[dst.slot]
        s_valid, d_valid = _valid(src, s_start, smem, loop), _valid(dst, d_start, dmem, loop)
        if any(hi <= lo for lo, hi in d_valid):
            return
        values = np.zeros(loop, dtype=dmem.dtype)
        both = [(max(a, c), max(max(a, c), min(b, d))) for (a, b), (c, d) in zip(s_valid, d_valid, strict=True)]
        if all(hi > lo for lo, hi in both):
            corner, extents = _side_box(src, s_start, both)
            block = read_box(smem, corner, extents, line, src.guard)
            values[tuple(slice(lo, hi) for lo, hi in both)] = cast(
                block.reshape([hi - lo for lo, hi in both]), dmem.dtype
            )
        corner, extents = _side_box(dst, d_start, d_valid)
        written = values[tuple(slice(lo, hi) for lo, hi in d_valid)].reshape(extents)
        write_box(dmem, corner, written, line, dst.guard)

    return copy


def _fill(ctx: Context, call: Any) -> Run:
    dst = _region(ctx, call.args[0])
    value = compile_expr(ctx, call.args[1])
    line = ctx.line

    def fill(f: Frame) -> None:
        corner = _starts(ctx, f, dst, "T.fill", line)
        memory: Memory = f.values[dst.slot]
        filled = np.full(dst.extents, cast(value(f), memory.dtype), dtype=memory.dtype)
        write_box(memory, corner, filled, line, dst.guard)

    return fill


def _matrix(ctx: Context, region: Region, what: str) -> None:
    if len(region.extents) < 2 or any(e != 1 for e in region.extents[:-2]):
        raise ctx.fail(f"a T.gemm {what} operand that is not a 2-D tile ({region.extents})")


def _accumulator(dtype: np.dtype) -> np.dtype:
    if dtype.kind in "iu":
        return np.dtype(np.int64)
    return np.dtype(np.float64 if dtype == np.float64 else np.float32)


def _matmul(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Through torch, which ``Kernel`` runs on one thread: numpy's OpenBLAS wakes its thread pool
    for every small tile product, which on a busy machine costs far more than the product."""
    import torch

    return (torch.from_numpy(np.ascontiguousarray(lhs)) @ torch.from_numpy(np.ascontiguousarray(rhs))).numpy()


def _gemm(ctx: Context, call: Any) -> Run:
    a, b, c = (_region(ctx, x) for x in call.args[:3])
    for region, what in ((a, "A"), (b, "B"), (c, "C")):
        _matrix(ctx, region, what)
    trans_a, trans_b = bool(call.args[3].value), bool(call.args[4].value)
    clear = call.args[9]
    if not isinstance(clear, tirx.IntImm):
        raise ctx.fail("T.gemm with a clear_accum that is not a constant")
    clear_accum = bool(clear.value)
    line = ctx.line

    def tile(f: Frame, region: Region) -> np.ndarray:
        corner = _starts(ctx, f, region, "T.gemm", line)
        return read_box(f.values[region.slot], corner, region.extents, line, region.guard).reshape(region.extents[-2:])

    def gemm(f: Frame) -> None:
        av, bv = tile(f, a), tile(f, b)
        cmem: Memory = f.values[c.slot]
        corner = _starts(ctx, f, c, "T.gemm", line)
        acc = _accumulator(cmem.dtype)
        lhs = av.astype(acc).T if trans_a else av.astype(acc)
        rhs = bv.astype(acc).T if trans_b else bv.astype(acc)
        product = _matmul(lhs, rhs).reshape(c.extents)
        if not clear_accum:
            product = product + read_box(cmem, corner, c.extents, line, c.guard).astype(acc)
        write_box(cmem, corner, cast(product, cmem.dtype), line, c.guard)

    return gemm


_REDUCERS: dict[str, tuple[Callable[..., Any], Callable[[Any, Any], Any]]] = {
    "sum": (lambda x, axis: np.sum(x, axis=axis), np.add),
    "abssum": (lambda x, axis: np.sum(np.abs(x), axis=axis), np.add),
    "max": (lambda x, axis: np.fmax.reduce(x, axis=axis), np.fmax),
    "absmax": (lambda x, axis: np.fmax.reduce(np.abs(x), axis=axis), np.fmax),
    "min": (lambda x, axis: np.fmin.reduce(x, axis=axis), np.fmin),
    "bitand": (lambda x, axis: np.bitwise_and.reduce(x, axis=axis), np.bitwise_and),
    "bitor": (lambda x, axis: np.bitwise_or.reduce(x, axis=axis), np.bitwise_or),
    "bitxor": (lambda x, axis: np.bitwise_xor.reduce(x, axis=axis), np.bitwise_xor),
}


def _reduce(ctx: Context, call: Any) -> Run:
    src, dst = _region(ctx, call.args[0]), _region(ctx, call.args[1])
    kind = str(call.args[2].value)
    dim = int(call.args[3].value)
    clear = bool(call.args[4].value)
    if kind not in _REDUCERS:
        raise ctx.fail(f"T.reduce of kind {kind}")
    reduce_all, combine = _REDUCERS[kind]
    line = ctx.line

    def reduce(f: Frame) -> None:
        s_corner, d_corner = _starts(ctx, f, src, "T.reduce", line), _starts(ctx, f, dst, "T.reduce", line)
        smem, dmem = f.values[src.slot], f.values[dst.slot]
        values = read_box(smem, s_corner, src.extents, line, src.guard)
        acc = _accumulator(dmem.dtype) if kind in ("sum", "abssum") else values.dtype
        result = reduce_all(values.astype(acc), dim).reshape(dst.extents)
        if not clear:
            result = combine(read_box(dmem, d_corner, dst.extents, line, dst.guard).astype(result.dtype), result)
        write_box(dmem, d_corner, cast(result, dmem.dtype), line, dst.guard)

    return reduce


def _atomic(combine: Callable[[Any, Any], Any]) -> Callable[[Context, Any], Run]:
    def make(ctx: Context, call: Any) -> Run:
        src, dst = _region(ctx, call.args[0]), _region(ctx, call.args[1])
        if [e for e in src.extents if e != 1] != [e for e in dst.extents if e != 1]:
            raise ctx.fail(f"an atomic between regions of different shapes ({src.extents} and {dst.extents})")
        line = ctx.line

        def atomic(f: Frame) -> None:
            s_corner, d_corner = _starts(ctx, f, src, "T.atomic", line), _starts(ctx, f, dst, "T.atomic", line)
            smem, dmem = f.values[src.slot], f.values[dst.slot]
            values = read_box(smem, s_corner, src.extents, line, src.guard).reshape(dst.extents)
            current = read_box(dmem, d_corner, dst.extents, line, dst.guard)
            merged = cast(combine(current, cast(values, dmem.dtype)), dmem.dtype)
            write_box(dmem, d_corner, merged, line, dst.guard)

        return atomic

    return make


_TILE_OPS: dict[str, Callable[[Context, Any], Run]] = {
    "tl.tileop.copy": _copy,
    "tl.tileop.async_copy": _copy,
    "tl.tileop.tma_copy": _copy,
    "tl.tileop.fill": _fill,
    "tl.tileop.gemm": _gemm,
    "tl.tileop.reduce": _reduce,
    "tl.tileop.atomicadd": _atomic(np.add),
    "tl.tileop.atomicmax": _atomic(np.fmax),
    "tl.tileop.atomicmin": _atomic(np.fmin),
}


def compile_tileop(ctx: Context, call: Any, name: str) -> Run:
    make = _TILE_OPS.get(name)
    if make is None:
        raise ctx.fail(f"the tile operation {name.removeprefix('tl.tileop.')}")
    return make(ctx, call)
