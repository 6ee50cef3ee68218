"""Ascend 950's memory levels as TileLang's scopes name them, with what each holds and its capacity.

The Ascend dialect allocates into five on-chip levels (``T.alloc_l1`` is ``shared.l1``, ``T.alloc_shared``
the Unified Buffer, ``shared.dyn``); tensors live in global memory (GM). The capacities are those
TileLang's own scheduler plans against (``src/ascend/transform/auto_schedule.cc`` in the 0.1.15
wheel; ``tests/static/test_ascend_levels.py`` reads them there again): a SIMT region (``T.SimtVF``)
takes 32 KB of the Unified Buffer for its threads' context.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilescope.core.display import kib
from tilescope.core.static.records import BufferDecl, StaticKernel

KB = 1024
UB_BYTES = 248 * KB
SIMT_CONTEXT_BYTES = 32 * KB


@dataclass(frozen=True)
class Level:
    name: str
    """``GM``, ``L1``, ``L0A``, ``L0B``, ``L0C`` or ``UB``."""
    capacity: int | None
    """Bytes one core has of it (``None`` for GM)."""
    holds: str
    """Whose memory it is, in a few words."""


_LEVELS = {
    "global": Level("GM", None, "global memory"),
    "shared.l1": Level("L1", 512 * KB, "the Cube core's L1 buffer"),
    "shared.l0a": Level("L0A", 64 * KB, "the Cube unit's left-matrix input"),
    "shared.l0b": Level("L0B", 64 * KB, "the Cube unit's right-matrix input"),
    "shared.l0c": Level("L0C", 256 * KB, "the Cube unit's accumulator"),
    "shared.dyn": Level("UB", UB_BYTES, "a Vector core's Unified Buffer"),
    "shared": Level("UB", UB_BYTES, "a Vector core's Unified Buffer"),
}
ORDER = ("GM", "L1", "L0A", "L0B", "L0C", "UB")
"""The levels in the order data flows through a GEMM: GM, L1, L0A/L0B, L0C, UB."""


def level_of(scope: str) -> Level | None:
    """The Ascend level a TileLang scope is (``shared.l1``: L1), ``None`` for any other scope."""
    return _LEVELS.get(scope)


def level_by_name(name: str) -> Level:
    """The level called ``name`` (one of ``ORDER``)."""
    return next(level for level in _LEVELS.values() if level.name == name)


def capacity(level: Level, kernel: StaticKernel) -> int | None:
    """What the kernel may use of a level: the Unified Buffer less the SIMT context where it has a SIMT region."""
    if level.name == "UB" and level.capacity is not None and any(r.kind == "SimtVF" for r in kernel.regions):
        return level.capacity - SIMT_CONTEXT_BYTES
    return level.capacity


def level_bytes(kernel: StaticKernel) -> dict[str, int | None]:
    """Bytes of each on-chip level the kernel's allocations take, in ``ORDER`` (``None`` where a size is
    symbolic): what the text asks for, before the compiler's multi-buffering and UB merges."""
    found: dict[str, int | None] = {}
    for decl in kernel.buffers:
        level = level_of(decl.buffer.scope)
        if level is None or level.capacity is None or decl.buffer.is_param:
            continue
        size = _bytes(decl)
        before = found.get(level.name, 0)
        found[level.name] = None if size is None or before is None else before + size
    return {name: found[name] for name in ORDER if name in found}


def _bytes(decl: BufferDecl) -> int | None:
    return decl.buffer.bytes


def size_text(size: int) -> str:
    """``32 B``, ``28 KB``: a small Ascend buffer (a few scalars of UB) is not ``0.0 KB``."""
    return f"{size} B" if size < 1024 else kib(size)
