"""Writes of the interpreted PrimFunc: buffer stores and element atomics (guarded as TileLang's safe-memory
pass guards them, and seen by the hazard tracker), and the fresh, uninitialised memory a block allocates.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tilelang import tvm
from tilescope.core.interpret.context import Context, Frame, Run
from tilescope.core.interpret.expr import compile_expr, thread_index
from tilescope.core.interpret.memory import Memory, np_dtype

tirx = tvm.tirx
ATOMICS = {"tl.atomic_add_elem_op": np.add, "tl.atomic_max_elem_op": np.fmax, "tl.atomic_min_elem_op": np.fmin}
"""TileLang's element atomics and the operation each applies."""


def compile_store(ctx: Context, node: Any) -> Run:
    """``buffer[indices] = value``."""
    b = ctx.buffer_slot(node.buffer)
    index = thread_index(ctx, node.buffer) + [compile_expr(ctx, i) for i in node.indices]
    value = compile_expr(ctx, node.value)
    guard = ctx.guard(node.buffer, list(node.indices))
    guard = (False, *guard) if guard is not None and ctx.per_thread(node.buffer) else guard
    line = ctx.line

    def store(f: Frame) -> None:
        tracker = f.findings.tracker
        if tracker is None:
            f.values[b].store(tuple(i(f) for i in index), value(f), f.mask, line, guard)
            return
        tracker.begin_statement()
        try:
            f.values[b].store(tuple(i(f) for i in index), value(f), f.mask, line, guard)
        finally:
            tracker.end_statement()

    return store


def compile_atomic(ctx: Context, call: Any, op: Any) -> Run:
    """An element atomic: ``T.atomic_add(dst[i], v)`` is ``atomic_add_elem_op(access_ptr(dst[i]), v)``;
    TileLang's safe-memory pass guards it like a store."""
    pointer = call.args[0]
    if not (isinstance(pointer, tirx.Call) and str(pointer.op.name) == "tl.access_ptr"):
        raise ctx.fail(f"an atomic on {pointer}")
    load = pointer.args[0]
    b = ctx.buffer_slot(load.buffer)
    index = thread_index(ctx, load.buffer) + [compile_expr(ctx, i) for i in load.indices]
    guard = ctx.guard(load.buffer, list(load.indices))
    guard = (False, *guard) if guard is not None and ctx.per_thread(load.buffer) else guard
    value = compile_expr(ctx, call.args[1])
    line = ctx.line

    def atomic(f: Frame) -> None:
        f.values[b].atomic(tuple(i(f) for i in index), value(f), f.mask, line, guard, op)

    return atomic


def allocate(ctx: Context, buffer: Any) -> Run:
    """A fresh buffer on every execution: block-local memory starts unwritten in each block."""
    k = ctx.buffer_slot(buffer)
    name, scope = str(buffer.name), str(buffer.scope())
    dtype = np_dtype(buffer.dtype)
    shape = [compile_expr(ctx, s) for s in buffer.shape]
    if ctx.per_thread(buffer):
        count = ctx.thread_count
        shape = [lambda f: count, *shape]
    seed = sum(name.encode())

    def alloc(f: Frame) -> None:
        dims = tuple(int(s(f)) for s in shape)
        f.values[k] = Memory(name, garbage(dims, dtype, seed), f.findings, scope=scope, initialised=False)

    return alloc


def garbage(shape: tuple[int, ...], dtype: np.dtype, seed: int) -> np.ndarray:
    """What uninitialised memory holds here: finite, fixed junk (the GPU's is finite junk too, and
    ``uninitialised-read`` findings say where it was read)."""
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.uniform(-100.0, 100.0, shape).astype(np.float32).astype(dtype)
