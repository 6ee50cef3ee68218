"""Read the kernel model out of TVM IR, in the worker.

Buffers, launch geometry, pipelines and tile operations come from the PrimFunc as TileLang built
it (its spans point at the user's lines); layouts come from the module right after
``tl.LayoutInference``; threads after warp specialisation and shared memory from the final
device module.
"""

from __future__ import annotations

import dataclasses
import functools
import linecache
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
from tilescope.core import layout_eval
from tilescope.core.compat import spans
from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import Access, Buffer, Layout, Pipeline
from tvm import tirx

_TILE_OPS = {
    "copy": "copy",
    "gemm": "gemm",
    "gemm_py": "gemm",
    "fill": "fill",
    "reduce": "reduce",
    "cumsum": "cumsum",
    "atomicadd": "atomic_add",
    "atomic_add": "atomic_add",
    "im2col": "im2col",
}
_REGION_READ, _REGION_WRITE = 1, 2


def _line(span: Any, path: str) -> int | None:
    location = spans.location(span)
    if not location:
        return None
    file, line = location
    return int(line) if file == path or not path else None


def _dim(extent: Any) -> int | str:
    return int(extent) if isinstance(extent, tirx.IntImm | int) else str(extent)


def _bytes(shape: list[int | str], dtype: str) -> int | None:
    if not all(isinstance(d, int) for d in shape):
        return None
    bits = dtype_bits(dtype)
    return math.prod(shape) * bits // 8 if bits else None  # type: ignore[arg-type]  # the check above makes every extent an int


def _buffer(buf: Any, path: str, is_param: bool) -> Buffer:
    shape = [_dim(d) for d in buf.shape]
    dtype = str(buf.dtype)
    span = spans.buffer_span(buf)
    return Buffer(
        name=str(buf.name),
        shape=shape,
        dtype=dtype,
        scope=str(buf.scope()),
        bytes=_bytes(shape, dtype),
        line=_line(span, path),
        is_param=is_param,
    )


def _visit(stmt: Any, visitor: Any) -> None:
    tirx.stmt_functor.post_order_visit(stmt, visitor)


def buffers(func: Any, path: str) -> list[Buffer]:
    """Parameters in signature order, then every ``T.alloc_*`` in program order."""
    params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    result = [_buffer(b, path, True) for b in params]
    allocs: list[tuple[Any, Buffer]] = []

    def visit(node: Any) -> None:
        if isinstance(node, tirx.SBlock):
            allocs.extend((b.data, _buffer(b, path, False)) for b in node.alloc_buffers)

    _visit(func.body, visit)
    # One entry per allocation, told apart by its data variable, not its name: a macro called four
    # times allocates four ``buf1_frag``s, as TileLang does.
    seen = [b.data for b in params]
    for data, buf in sorted(allocs, key=lambda pair: pair[1].line or 0):
        if not any(data.same_as(other) for other in seen):
            seen.append(data)
            result.append(buf)
    return result


def _has(func: Any, key: str) -> bool:
    return func.attrs is not None and key in func.attrs


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def pipelines(func: Any, path: str) -> list[Pipeline]:
    found: list[Pipeline] = []

    def visit(node: Any) -> None:
        if isinstance(node, tirx.For) and "num_stages" in node.annotations:
            found.append(
                Pipeline(
                    loop_var=str(node.loop_var),
                    num_stages=int(node.annotations["num_stages"]),
                    line=_line(spans.stmt_span(node), path),
                )
            )

    _visit(func.body, visit)
    return sorted(found, key=lambda p: p.line or 0)


def accesses(func: Any, path: str) -> list[Access]:
    """Tile operations and ``T.Parallel`` loops with the buffers each reads and writes."""
    pipelined: list[Access] = []

    def visit_loops(node: Any) -> None:
        if isinstance(node, tirx.For) and "num_stages" in node.annotations:
            pipelined.extend(_collect(node.body, path))

    _visit(func.body, visit_loops)
    found = [dataclasses.replace(a, pipelined=a in pipelined) for a in _collect(func.body, path)]
    return sorted(found, key=lambda a: a.line or 0)


def _collect(stmt: Any, path: str) -> list[Access]:
    found: list[Access] = []

    def visit(node: Any) -> None:
        if isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call):
            access = _tile_op(node, path)
            if access is not None:
                found.append(access)
        elif isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            reads: list[str] = []
            writes: list[str] = []

            def inner(n: Any) -> None:
                if isinstance(n, tirx.BufferLoad) and n.buffer.name not in reads:
                    reads.append(str(n.buffer.name))
                if isinstance(n, tirx.BufferStore) and n.buffer.name not in writes:
                    writes.append(str(n.buffer.name))

            _visit(node.body, inner)
            line = _line(spans.stmt_span(node), path)
            # Nested loops of one T.Parallel share its line; releases without spans, its buffers.
            if not any(
                a.op == "parallel" and a.line == line and (line or (a.reads, a.writes) == (reads, writes))
                for a in found
            ):
                found.append(Access("parallel", line, reads, writes))

    _visit(stmt, visit)
    return found


def _tile_op(node: Any, path: str) -> Access | None:
    call = node.value
    name = str(getattr(call.op, "name", ""))
    if not name.startswith("tl.tileop."):
        return None
    short = name.removeprefix("tl.tileop.")
    reads: list[str] = []
    writes: list[str] = []
    for arg in call.args:
        if isinstance(arg, tirx.Call) and str(getattr(arg.op, "name", "")) in (
            "tl.region",
            "tl.tileop.region",
        ):
            buffer = str(arg.args[0].buffer.name)
            mask = _int(arg.args[1])
            if mask & _REGION_READ and buffer not in reads:
                reads.append(buffer)
            if mask & _REGION_WRITE and buffer not in writes:
                writes.append(buffer)
        elif isinstance(arg, tirx.BufferLoad):
            if not reads:
                reads.append(str(arg.buffer.name))
            elif str(arg.buffer.name) not in writes:
                writes.append(str(arg.buffer.name))
    op = _TILE_OPS.get(short, short)
    if op == "reduce":
        kind = next((str(a.value) for a in call.args if isinstance(a, tirx.StringImm)), "")
        op = f"reduce_{kind}" if kind else op
    line = _line(spans.stmt_span(node), path) or _line_from_source(path, op, reads + writes)
    return Access(op, line, reads, writes)


def _line_from_source(path: str, op: str, buffers: list[str]) -> int | None:
    """The line of a tile op that TileLang left without a span (reductions), when exactly one matches.

    The worker registered the file's text in ``linecache``, so this reads what was analysed.
    """
    call = re.compile(rf"\b{re.escape(op)}\s*\(\s*{re.escape(buffers[0])}\b") if buffers else None
    if call is None:
        return None
    matches = [i for i, text in enumerate(linecache.getlines(path), start=1) if call.search(text)]
    return matches[0] if len(matches) == 1 else None


def layouts(layout_module: Any | None, named: Mapping[str, str] | None = None) -> list[Layout]:
    """Every ``layout_map`` entry of the module, one per buffer; a shared layout is named by the CUDA swizzle it
    equals, unless ``named`` names its buffer's already (Ascend's fractal kinds: comparing those with CUDA's
    swizzles would build each candidate for nothing)."""
    if layout_module is None:
        return []
    found: dict[str, Layout] = {}
    known = named or {}

    def visit(node: Any) -> None:
        if isinstance(node, tirx.SBlock) and "layout_map" in node.annotations:
            for buf, layout in node.annotations["layout_map"].items():
                name = str(buf.name)
                if name not in found:
                    record = layout_record(name, layout)
                    if name in known:
                        record = dataclasses.replace(record, swizzle=known[name])
                    elif record.kind == "layout":
                        record = dataclasses.replace(record, swizzle=swizzle_name(buf, record))
                    found[name] = record

    for func in layout_module.functions.values():
        if isinstance(func, tirx.PrimFunc):
            _visit(func.body, visit)
    return list(found.values())


def layout_record(name: str, layout: Any) -> Layout:
    input_shape = [int(d) for d in layout.get_input_shape()]
    output_shape = [int(d) for d in layout.get_output_shape()]
    variables = [str(v) for v in layout.get_forward_vars()]
    index = [str(e) for e in layout.get_forward_index()]
    text = str(layout._DebugOutput()) if hasattr(layout, "_DebugOutput") else repr(layout)
    shared = Layout(
        buffer=name,
        kind="layout",
        input_shape=input_shape,
        output_shape=output_shape,
        input_vars=variables,
        index=index,
        text=text,
    )
    if not hasattr(layout, "forward_thread"):
        return shared
    rep_var = variables[0] if len(variables) > len(input_shape) else None
    return dataclasses.replace(
        shared,
        kind="fragment",
        input_vars=variables[1:] if rep_var else variables,
        thread=str(layout.forward_thread),
        replicate_var=rep_var,
        replicate=int(layout.replicate_size),
        thread_extent=int(layout.get_thread_size()),
        thread_begin=_thread_begin(layout),
        elements_per_thread=math.prod(output_shape),
    )


def _thread_begin(fragment: Any) -> int | None:
    thread_range = getattr(fragment, "thread_range", None)
    try:
        return int(thread_range.min) if thread_range is not None else None
    except (TypeError, ValueError):
        return None


_SWIZZLES = (
    ("none", "make_linear_layout", 0),
    ("128B swizzle", "make_full_bank_swizzled_layout", 8),
    ("64B swizzle", "make_half_bank_swizzled_layout", 4),
    ("32B swizzle", "make_quarter_bank_swizzled_layout", 2),
)
"""Each shared layout's name, TileLang's maker, and the 16-byte chunks a row of the swizzle must be a multiple
of (TileLang's ``Make*BankSwizzleLayout2D``; 0: any row)."""


def swizzle_name(buf: Any, record: Layout) -> str:
    """Name a shared layout by comparing it, on one pipeline stage, with TileLang's own swizzles.

    Each candidate is built by TileLang for a 2-D buffer of the tile's shape and dtype; the first
    whose physical offsets match the inferred layout's on every element names it.
    """
    if len(record.input_shape) < 2:
        return "none" if record.index == record.input_vars else "custom"
    rows, cols = record.input_shape[-2:]
    stage_elements = rows * cols
    inferred = layout_eval.shared_map(record).offset.reshape(-1)[:stage_elements]
    inferred = inferred - inferred.min()
    for name, maker, chunks in _SWIZZLES:
        if not _swizzle_applies(rows, cols, int(buf.dtype.bits), chunks):
            continue
        offsets = _candidate_offsets(rows, cols, str(buf.dtype), maker)
        if offsets is not None and offsets.shape == inferred.shape and bool((offsets == inferred).all()):
            return name
    return "padded" if int(inferred.max()) + 1 > stage_elements else "custom"


@functools.lru_cache(maxsize=256)
def _candidate_offsets(rows: int, cols: int, dtype: str, maker: str) -> np.ndarray | None:
    """TileLang's own swizzle for a tile, as offsets; ``None`` where it does not apply.

    Building one costs TileLang about 0.1 s and depends only on shape and dtype, while kernels of
    one process keep reusing a few tile shapes, so each is built once per worker.
    """
    from tilelang import layout as tl_layout

    tile = tirx.decl_buffer((rows, cols), dtype, scope="shared.dyn")
    try:
        candidate = layout_record("tile", getattr(tl_layout, maker)(tile))
        offsets = layout_eval.shared_map(candidate).offset.reshape(-1)
    except Exception:  # a swizzle that does not apply to this shape or dtype
        return None
    offsets.setflags(write=False)
    return offsets


def _swizzle_applies(rows: int, cols: int, bits: int, chunks: int) -> bool:
    """Whether TileLang builds a swizzle of rows of ``chunks`` 16-byte chunks for a tile, by the checks its C++
    makes (rows 4 or a multiple of 8, a row a multiple of the chunks). Asking for one that does not apply
    raises from C++, and the first such error of a process symbolises a native backtrace: over a second, paid
    by every worker's first analysis of a narrow tile. A release stricter than this still raises, and is still
    caught."""
    if not chunks:
        return True
    if bits <= 0 or 128 % bits:
        return False
    return (rows == 4 or rows % 8 == 0) and cols % (128 // bits * chunks) == 0


def shared_bytes(device_mod: Any | None) -> int:
    """Dynamic plus static shared memory of the largest kernel in the device module."""
    if device_mod is None:
        return 0
    totals = []
    for func in device_mod.functions.values():
        if not isinstance(func, tirx.PrimFunc):
            continue
        total = int(func.attrs["dyn_shared_memory_buf"]) if _has(func, "dyn_shared_memory_buf") else 0
        static: list[int] = []

        def visit(node: Any, static: list[int] = static) -> None:
            if isinstance(node, tirx.AllocBuffer) and str(node.buffer.scope()) == "shared":
                buf = node.buffer
                static.append(math.prod(_int(e) for e in buf.shape) * (dtype_bits(str(buf.dtype)) or 0) // 8)

        _visit(func.body, visit)
        totals.append(total + sum(static))
    return max(totals, default=0)


def warp_specialized(layout_module: Any | None) -> bool:
    if layout_module is None:
        return False
    found = []

    def visit(node: Any) -> None:
        if isinstance(node, tirx.AttrStmt) and str(node.attr_key) == "kWarpSpecializationScope":
            found.append(node)

    for func in layout_module.functions.values():
        if isinstance(func, tirx.PrimFunc):
            _visit(func.body, visit)
    return bool(found)
