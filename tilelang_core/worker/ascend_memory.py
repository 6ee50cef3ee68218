"""The memory plan of an Ascend kernel (see ``ascend``): each buffer's level, bytes and slots, where
``tl.MergeUBAllocations`` placed it, each level's use against the part's capacity, and the warning
when a level does not fit."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import AscendBuffer, Buffer, Diagnostic, MemoryLevel, Span
from tilescope.core.targets import ASCEND_LEVELS, ASCEND_UB_WITH_SIMT, ascend_level
from tilescope.core.worker.ascend_ir import as_int, base_name, funcs
from tvm import tirx

_LEVEL_ORDER = ("GM", "L1", "L0A", "L0B", "L0C", "UB")


def merged_allocations(device_mod: Any) -> dict[str, tuple[str, int]]:
    """Each buffer the final kernel declares over another's storage (``MergeUBAllocations``, the dynamic L1):
    its name to the allocation's name and bytes."""
    merged: dict[str, tuple[str, int]] = {}
    allocations: dict[Any, tuple[str, int]] = {}

    def visit(node: Any) -> None:
        if isinstance(node, tirx.AllocBuffer):
            size = 1
            for d in node.buffer.shape:
                size *= as_int(d) or 0
            allocations[node.buffer.data] = (str(node.buffer.name), size * _dtype_bytes(str(node.buffer.dtype)))
        elif isinstance(node, tirx.DeclBuffer) and node.buffer.data in allocations:
            owner = allocations[node.buffer.data]
            if base_name(owner[0]) != base_name(str(node.buffer.name)):
                merged.setdefault(base_name(str(node.buffer.name)), owner)

    for func in funcs(device_mod):
        tirx.stmt_functor.post_order_visit(func.body, visit)
    return merged


def _dtype_bytes(dtype: str) -> int:
    """Bytes per element as ``dtypes`` reads the width (a sub-byte type counts a byte, no width four)."""
    return max(1, (dtype_bits(dtype) or 32) // 8)


def level_buffers(buffers: list[Buffer], versions: dict[str, int]) -> list[AscendBuffer]:
    found = []
    for buf in buffers:
        level = ascend_level(buf.scope)
        if level is None:
            continue
        slots = versions.get(buf.name, 1)
        found.append(
            AscendBuffer(
                name=buf.name,
                level=level,
                shape=list(buf.shape),
                dtype=buf.dtype,
                bytes=buf.bytes,
                slots=slots,
                line=buf.line,
                is_param=buf.is_param,
            )
        )
    return found


def with_merge(buf: AscendBuffer, merged: dict[str, tuple[str, int]], offsets: dict[str, int]) -> AscendBuffer:
    if buf.name not in merged:
        return buf
    owner, size = merged[buf.name]
    return replace(buf, storage=owner, storage_bytes=size, offset=offsets.get(buf.name))


MERGE_PASS = "tl.MergeUBAllocations"


def merge_offsets(modules: list[Any], names: list[str]) -> dict[str, int]:
    """Each merged buffer's byte offset in its allocation, as ``tl.MergeUBAllocations`` placed it.

    The pass rewrites every ``tvm_access_ptr(dtype, buffer.data, index, ...)`` of a merged buffer to
    ``tvm_access_ptr(dtype, arena.data, FloorDiv(bit_offset, bits) + index, ...)``; the calls before and
    after it pair up in program order (every occurrence visited, ``ir_transform`` does not skip shared nodes).
    """
    at = next((i for i, n in enumerate(names) if n == MERGE_PASS), None)
    if at is None or at == 0 or at >= len(modules):
        return {}
    found: dict[str, int] = {}
    for before, after in zip(_access_ptrs(modules[at - 1]), _access_ptrs(modules[at]), strict=False):
        old, new = before.args[1], after.args[1]
        if not (isinstance(old, tirx.Var) and isinstance(new, tirx.Var)) or old.same_as(new):
            continue
        bits = _placed_bits(after.args[2])
        if bits is not None:
            found.setdefault(base_name(str(old.name)), bits // 8)
    return found


def _access_ptrs(module: Any) -> list[Any]:
    found: list[Any] = []

    def post(node: Any) -> None:
        if isinstance(node, tirx.Call) and str(getattr(node.op, "name", "")).endswith("tvm_access_ptr"):
            found.append(node)

    for func in funcs(module):
        tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Call"])
    return found


def _placed_bits(index: Any) -> int | None:
    """``FloorDiv(bit_offset, bits) + ...``: the bit offset the merge added to an index."""
    while isinstance(index, tirx.Add):
        if isinstance(index.a, tirx.FloorDiv) and isinstance(index.a.a, tirx.IntImm):
            return int(index.a.a)
        index = index.a
    if isinstance(index, tirx.FloorDiv) and isinstance(index.a, tirx.IntImm):
        return int(index.a)
    return None


def memory_levels(buffers: list[AscendBuffer], simt: bool) -> list[MemoryLevel]:
    levels = []
    for level in _LEVEL_ORDER[1:]:
        on = [b for b in buffers if b.level == level and not b.is_param]
        if not on:
            continue
        capacity = ASCEND_UB_WITH_SIMT if level == "UB" and simt else ASCEND_LEVELS[level]
        used = sum((b.bytes or 0) * b.slots for b in on)
        levels.append(
            MemoryLevel(level=level, capacity=capacity, used=used, buffers=[b.name for b in on], fits=used <= capacity)
        )
    return levels


def overflow(level: MemoryLevel, kernel: str, buffers: list[AscendBuffer], auto_schedule: bool) -> Diagnostic:
    first = next((b.line for b in buffers if b.level == level.level and b.line), None)
    form = None if auto_schedule else "manual"
    return diagnostic(
        "ascend-memory-overflow",
        Span(line=first or 1),
        form=form,
        kernel=kernel,
        level=level.level,
        used=level.used,
        capacity=level.capacity,
        buffers=", ".join(level.buffers),
    )
