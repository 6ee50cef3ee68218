"""Hover, hint and label text about a layout, as views of the same fold as the drawn layout.

Kept apart from :mod:`tilescope.core.ide.layout_view` so hints (asked on every keystroke) do not
import numpy; the thread map, which evaluates the layout, imports it when first asked.
"""

from __future__ import annotations

from tilescope.core.model import Buffer, KernelModel, Layout

THREAD_MAP_SIZE = 8
"""Rows and columns of the thread map in a fragment's hover."""


def layout_label(layout: Layout) -> str:
    """``128 threads × 128/thread`` for a fragment, the swizzle for a shared layout ("" for none)."""
    if layout.kind == "fragment":
        text = f"{layout.thread_extent} threads × {layout.elements_per_thread}/thread"
        replicate = layout.replicate or 1
        return text + (f", replicated ×{replicate}" if replicate > 1 else "")
    return f"layout {layout.swizzle}" if layout.swizzle and layout.swizzle != "none" else ""


def buffer_stages(kernel: KernelModel, buffer: Buffer) -> int | None:
    """How many copies of a shared buffer the software pipeline keeps: the leading dimension the
    compiler's inferred layout adds to the declared shape (``None`` when it adds none)."""
    layout = kernel.layout(buffer.name)
    if layout and layout.kind == "layout" and len(layout.input_shape) == len(buffer.shape) + 1:
        return layout.input_shape[0]
    return None


_thread_maps: dict[tuple[object, ...], str | None] = {}


def thread_map_text(layout: Layout, size: int = THREAD_MAP_SIZE) -> str | None:
    """Which thread holds each of the top-left ``size × size`` cells of the drawn tile of a fragment."""
    key = (layout.buffer, layout.thread, tuple(layout.index), tuple(layout.input_shape), layout.replicate, size)
    if key not in _thread_maps:
        if len(_thread_maps) > 256:
            _thread_maps.clear()
        _thread_maps[key] = _thread_map(layout, size)
    return _thread_maps[key]


def _thread_map(layout: Layout, size: int) -> str | None:
    from tilescope.core import layout_eval
    from tilescope.core.ide.layout_view import folded

    try:
        fragment = layout_eval.fragment_map(layout)
    except (ValueError, IndexError, KeyError, SyntaxError, TypeError):
        return None
    rows: list[list[int]] = folded(fragment.thread[0])[:size, :size].tolist()
    width = max(len(str(int(v))) for row in rows for v in row)
    return "\n".join(" ".join(str(int(v)).rjust(width) for v in row) for row in rows)
