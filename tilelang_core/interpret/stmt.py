"""Statements of the front-end PrimFunc, compiled once into closures.

The grid runs block after block. A block is the tile-level program as one sequence: at this point
of the pipeline TileLang has not yet split work among threads, so the block's threads are implicit
(a fragment is its whole logical tile). A block whose code names a thread index (``threadIdx.x``,
``.y`` or ``.z``: ``T.get_thread_binding``, ``threads=(32, 8)``) runs in per-thread mode instead:
every thread is a lane, numbered as CUDA forms warps, all in lockstep (so ``T.sync_threads`` holds
by construction), ``local`` buffers get one copy per thread, warp shuffles exchange lanes, and a
tile operation runs once for the block where every thread reaches it alike. What that cannot
express exactly (``T.Parallel`` or fragment elements in per-thread code, a tile operation under a
thread-dependent branch) is refused with its line. ``T.Parallel`` and vectorised loops become lane
axes (all iterations at once, which is what their independence allows); serial, unrolled and
pipelined loops run in order (pipelining reorders only asynchronous copies, whose results it must
not change): ``loops``. Stores, atomics and allocations are ``stores``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from tilelang import tvm
from tilelang.ir import get_stmt_span
from tilescope.core.interpret.context import Context, Frame, Run, key
from tilescope.core.interpret.expr import compile_expr
from tilescope.core.interpret.loops import parallel_loop, serial_loop
from tilescope.core.interpret.memory import NotInterpretable, np_dtype
from tilescope.core.interpret.stores import ATOMICS, allocate, compile_atomic, compile_store
from tilescope.core.interpret.tileops import compile_tileop

tirx = tvm.tirx
_NO_OPS = {"tirx.tvm_storage_sync", "tirx.assume", "tl.sync_threads", "tl.sync_warp", "tirx.tvm_thread_invariant"}


def _line(ctx: Context, node: Any) -> int:
    span = get_stmt_span(node)
    if span is None or span.source_name is None:
        return ctx.line
    if ctx.path is not None and str(span.source_name.name) != ctx.path:
        return ctx.line
    return int(span.line)


def _tile_line(ctx: Context, node: Any, call: Any) -> int:
    """The user's line of a tile operation whose span points into TileLang's own source (a macro
    such as ``T.reduce_sum(..., clear=False)``): the file's operation on the same buffers, the first
    at or after the enclosing statement's line."""
    span = get_stmt_span(node)
    if span is None or span.source_name is None or ctx.path is None or str(span.source_name.name) == ctx.path:
        return ctx.line
    names: set[str] = set()

    def visit(n: Any) -> None:
        if isinstance(n, tirx.BufferLoad):
            names.add(str(n.buffer.name))

    tirx.stmt_functor.post_order_visit(call, visit)
    lines = sorted(ctx.tile_lines.get(frozenset(names), []))
    later = [line for line in lines if line >= ctx.line]
    return later[0] if later else (lines[0] if lines else ctx.line)


def compile_stmt(ctx: Context, node: Any) -> Run:
    outer = ctx.line
    ctx.line = _line(ctx, node)
    try:
        return _compile(ctx, node)
    finally:
        ctx.line = outer


def _compile(ctx: Context, node: Any) -> Run:
    kind = type(node)
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise ctx.fail(f"the statement {kind.__name__}")
    return handler(ctx, node)


def _seq(ctx: Context, node: Any) -> Run:
    runs = [compile_stmt(ctx, s) for s in node.seq]

    def seq(f: Frame) -> None:
        for r in runs:
            r(f)

    return seq


def _bind(ctx: Context, node: Any) -> Run:
    k = ctx.slot(node.var)
    value = compile_expr(ctx, node.value)

    def bind(f: Frame) -> None:
        f.values[k] = value(f)

    return bind


def _attr(ctx: Context, node: Any) -> Run:
    if node.attr_key != "thread_extent":
        return compile_stmt(ctx, node.body)
    iv = node.node
    tag = str(iv.thread_tag)
    if tag.startswith("threadIdx"):
        return _threads(ctx, node)
    k = ctx.slot(iv.var)
    extent = _extent(node)
    axis = ctx.grid_depth
    ctx.grid.append(extent)
    ctx.grid_depth += 1
    try:
        body = compile_stmt(ctx, node.body)
    finally:
        ctx.grid_depth -= 1

    def grid(f: Frame) -> None:
        block = f.findings.block
        if axis == 0:
            del block[:]
            f.findings.launches += 1
            if f.findings.launches > 1 and f.findings.tracker is not None:
                f.findings.tracker.forget_blocks()
            if f.plan is not None:
                f.plan.start_launch(f)
        if len(block) <= axis:
            block.extend([0] * (axis + 1 - len(block)))
        for b in range(extent) if f.plan is None else f.plan.blocks(axis, extent):
            f.values[k] = b
            block[axis] = b
            if f.plan is not None:
                f.plan.start_block(block, axis)
            body(f)

    return grid


def _names(body: Any, var: Any) -> bool:
    found = []

    def visit(n: Any) -> None:
        if isinstance(n, tirx.Var) and n.same_as(var):
            found.append(n)

    tirx.stmt_functor.post_order_visit(body, visit)
    return bool(found)


def _extent(node: Any) -> int:
    """A launch extent, which must be a number: one computed from a scalar argument (a varlen kernel's
    ``max_seqlen``) is not known before the kernel runs, and the interpreter makes tensors only."""
    if not isinstance(node.value, tirx.IntImm):
        tag = node.node.thread_tag
        raise NotInterpretable(f"its {tag} extent {node.value} depends on a value known only when it runs")
    return int(node.value)


def _threads(ctx: Context, node: Any) -> Run:
    """The block's thread indices (``threadIdx.x``, ``.y``, ``.z``, bound one inside the other) and the code
    under them: per-thread mode when that code names any index of more than one thread, else the tile
    level, where naming one later is refused."""
    chain: list[tuple[Any, str, int]] = []
    while (
        isinstance(node, tirx.AttrStmt)
        and node.attr_key == "thread_extent"
        and str(node.node.thread_tag).startswith("threadIdx")
    ):
        chain.append((node.node.var, str(node.node.thread_tag), _extent(node)))
        node = node.body
    ctx.threads.extend(count for _var, _tag, count in chain)
    ones = [ctx.slot(var) for var, _tag, count in chain if count == 1]
    if not any(count > 1 and _names(node, var) for var, _tag, count in chain):
        for var, tag, count in chain:
            if count > 1:
                ctx.thread_vars[key(var)] = tag
        body = compile_stmt(ctx, node)
        return lambda f: _zero_then(f, ones, body)
    return _per_thread(ctx, [(var, tag, count) for var, tag, count in chain if count > 1], node, ones)


def _zero_then(f: Frame, slots: list[int], body: Run) -> None:
    for k in slots:
        f.values[k] = 0
    body(f)


def _per_thread(ctx: Context, axes: list[tuple[Any, str, int]], body_node: Any, ones: list[int]) -> Run:
    """Every thread of the block a lane, numbered as CUDA forms warps (``x`` fastest, then ``y``, ``z``);
    each index is its lane's coordinate, so a ``(32, 8)`` block runs as 256 lanes."""
    count = int(np.prod([c for _var, _tag, c in axes]))
    lanes = np.arange(count, dtype=np.int32)
    coords: list[tuple[int, np.ndarray]] = []
    stride = 1
    for var, _tag, extent in sorted(axes, key=lambda a: a[1]):
        coords.append((ctx.slot(var), (lanes // stride) % extent))
        stride *= extent
    linear = coords[0][0] if len(axes) == 1 else ctx.anonymous_slot("thread")
    ctx.thread_slot, ctx.thread_count = linear, count
    try:
        body = compile_stmt(ctx, body_node)
    finally:
        ctx.thread_slot = None
    axis = ("threadIdx.x", 0, count, 0)

    def threads(f: Frame) -> None:
        for k in ones:
            f.values[k] = 0
        f.values[linear] = lanes
        for k, values in coords:
            f.values[k] = values
        f.lanes = 1
        f.loops.append(axis)
        try:
            body(f)
        finally:
            f.lanes = 0
            f.loops.pop()

    return threads


def _for(ctx: Context, node: Any) -> Run:
    k = ctx.slot(node.loop_var)
    lo, extent = compile_expr(ctx, node.min), compile_expr(ctx, node.extent)
    body = compile_stmt(ctx, node.body)
    kind = node.kind
    if kind == tirx.ForKind.THREAD_BINDING:
        raise ctx.fail(f"a loop bound to {node.thread_binding.thread_tag}")
    if kind in (tirx.ForKind.PARALLEL, tirx.ForKind.VECTORIZED):
        if ctx.thread_slot is not None:
            raise ctx.fail("a T.Parallel or vectorised loop in per-thread code (code that names threadIdx.x)")
        return parallel_loop(k, lo, extent, body, np_dtype(node.loop_var.dtype), str(node.loop_var.name), ctx.line)
    return serial_loop(k, lo, extent, body)


def _if(ctx: Context, node: Any) -> Run:
    cond = compile_expr(ctx, node.condition)
    then = compile_stmt(ctx, node.then_case)
    other = compile_stmt(ctx, node.else_case) if node.else_case is not None else None

    def branch(f: Frame) -> None:
        c = cond(f)
        if not isinstance(c, np.ndarray):
            if c:
                then(f)
            elif other is not None:
                other(f)
            return
        saved = f.mask
        live = c if saved is None else saved & c
        if live.any():
            f.mask = live
            then(f)
        if other is not None:
            rest = ~c if saved is None else saved & ~c
            if rest.any():
                f.mask = rest
                other(f)
        f.mask = saved

    return branch


def _evaluate(ctx: Context, node: Any) -> Run:
    call = node.value
    if isinstance(call, tirx.Call):
        name = str(getattr(call.op, "name", call.op))
        if name.startswith("tl.tileop."):
            outer = ctx.line
            ctx.line = _tile_line(ctx, node, call)
            try:
                return compile_tileop(ctx, call, name)
            finally:
                ctx.line = outer
        if name in _NO_OPS:
            return lambda f: None
        if name in ATOMICS:
            return compile_atomic(ctx, call, ATOMICS[name])
    value = compile_expr(ctx, call)
    return lambda f: value(f) and None


def _block_realize(ctx: Context, node: Any) -> Run:
    predicate = compile_expr(ctx, node.predicate)
    block = node.block
    if block.init is not None:
        raise ctx.fail("a block init statement")
    if "safe_value_map" in block.annotations:
        raise ctx.fail("T.annotate_safe_value (a safe-value map)")
    allocs = [allocate(ctx, b) for b in block.alloc_buffers]
    body = compile_stmt(ctx, block.body)

    def realize(f: Frame) -> None:
        if not predicate(f):
            return
        for a in allocs:
            a(f)
        body(f)

    return realize


def _alloc_buffer(ctx: Context, node: Any) -> Run:
    return allocate(ctx, node.buffer)


def _decl_buffer(ctx: Context, node: Any) -> Run:
    ctx.buffer_slot(node.buffer)
    return lambda f: None


def _assert(ctx: Context, node: Any) -> Run:
    cond = compile_expr(ctx, node.condition)
    message = " ".join(str(p) for p in node.message_parts)
    line = ctx.line

    def check(f: Frame) -> None:
        if not np.all(cond(f)):
            raise AssertionError(f"kernel assertion failed at line {line}: {message}")

    return check


def _while(ctx: Context, node: Any) -> Run:
    cond = compile_expr(ctx, node.condition)
    body = compile_stmt(ctx, node.body)

    def loop(f: Frame) -> None:
        while True:
            c = cond(f)
            if isinstance(c, np.ndarray):
                raise NotInterpretable("not interpretable: a while condition that differs across lanes")
            if not c:
                return
            body(f)

    return loop


_HANDLERS: dict[type, Callable[[Context, Any], Run]] = {
    tirx.SeqStmt: _seq,
    tirx.Bind: _bind,
    tirx.AttrStmt: _attr,
    tirx.For: _for,
    tirx.IfThenElse: _if,
    tirx.BufferStore: compile_store,
    tirx.Evaluate: _evaluate,
    tirx.SBlockRealize: _block_realize,
    tirx.AllocBuffer: _alloc_buffer,
    tirx.DeclBuffer: _decl_buffer,
    tirx.AssertStmt: _assert,
    tirx.While: _while,
}
