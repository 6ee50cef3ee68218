"""Source lines of IR nodes, across releases.

TileLang 0.1.14 and later stamp a span on every statement and buffer its script parser builds
(``TILELANG_ENABLE_IR_SPAN``), read through ``tilelang.ir.get_*_span``. 0.1.10 to 0.1.13 stamp
none: there every lookup answers None and ``with_static_lines`` takes the lines from the static
tier, which reads the same declarations from the source.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import tilelang.ir as tl_ir
from tilescope.core.model import Access, Buffer, Launch, Pipeline, Span
from tilescope.core.static import StaticKernel

_STMT = getattr(tl_ir, "get_stmt_span", None)
_BUFFER = getattr(tl_ir, "get_buffer_span", None)
STAMPED = _STMT is not None and _BUFFER is not None
"""Whether this release puts source spans on the IR."""


def stmt_span(node: Any) -> Any | None:
    return _STMT(node) if _STMT is not None else None


def buffer_span(buf: Any) -> Any | None:
    return _BUFFER(buf) if _BUFFER is not None else None


def location(span: Any | None) -> tuple[str, int] | None:
    """``(file, line)`` of a span, or None when it has no source."""
    if span is None or span.source_name is None:
        return None
    return str(span.source_name.name), int(span.line)


def with_static_lines(
    static: StaticKernel | None,
    buffers: list[Buffer],
    accesses: list[Access],
    launch: Launch | None,
    pipelines: list[Pipeline],
) -> tuple[list[Buffer], list[Access], Launch | None, list[Pipeline]]:
    """Lines the IR did not carry, from the static declarations of the same kernel.

    Buffers match by name; a tile operation matches the first unclaimed static one with the same op,
    reads and writes; pipelines match by position when both tiers saw as many. A line is never
    guessed: what matches nothing stays None.
    """
    if static is None:
        return buffers, accesses, launch, pipelines
    declared = {d.buffer.name: d.buffer.line for d in static.buffers}
    buffers = [b if b.line is not None else replace(b, line=declared.get(b.name)) for b in buffers]
    unclaimed = [a for a in static.accesses if a.line is not None]
    matched: list[Access] = []
    for access in accesses:
        twin = next((s for s in unclaimed if _same_op(s, access)), None) if access.line is None else None
        if twin is not None:
            unclaimed.remove(twin)
            access = replace(access, line=twin.line)
        matched.append(access)
    accesses = sorted(matched, key=lambda a: a.line or 0)
    if launch is not None and launch.span is None and static.launch is not None:
        launch = replace(launch, span=Span(line=static.launch.span.line))
    if len(pipelines) == len(static.pipelines):
        pipelines = [
            p if p.line is not None else replace(p, line=s.span.line)
            for p, s in zip(pipelines, static.pipelines, strict=True)
        ]
    return buffers, accesses, launch, pipelines


_LOWERED_AS = {"clear": "fill"}
"""Static op names that the compiler's IR spells differently (``T.clear`` is a fill)."""


def _same_op(static: Access, compiled: Access) -> bool:
    return (
        _LOWERED_AS.get(static.op, static.op) == compiled.op
        and set(static.reads) == set(compiled.reads)
        and set(static.writes) == set(compiled.writes)
    )
