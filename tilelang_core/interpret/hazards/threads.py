"""Which thread runs each iteration of a ``T.Parallel`` loop, from TileLang's own loop layouts.

``tl.LayoutInference`` annotates every parallel loop nest with the fragment that maps its
iterations to threads (``parallel_loop_layout``). Two iterations that land on one thread run one
after the other, so only iterations on different threads can race; the interpreter's lanes are
iterations, and this map turns them into threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tilescope.core.layout_eval import LayoutExprError, fragment_map
from tilescope.core.model import Layout

LoopKey = tuple[int, str]
"""A loop nest by the line of its outermost loop and that loop's variable name; a nest TileLang
fused into one loop (``i_j_fused``) keeps no line, and is keyed by line 0 and the fused name."""


def loop_layouts(layout_module: Any, path: str | None) -> dict[LoopKey, list[Layout]]:
    """Every annotated parallel loop nest of the module after ``tl.LayoutInference``."""
    from tilelang import tvm
    from tilelang.ir import get_stmt_span
    from tilescope.core.worker.extract import layout_record

    found: dict[LoopKey, list[Layout]] = {}
    if layout_module is None:
        return found

    def visit(node: Any) -> None:
        if not isinstance(node, tvm.tirx.For) or "parallel_loop_layout" not in node.annotations:
            return
        span = get_stmt_span(node)
        if (
            span is not None
            and path is not None
            and span.source_name is not None
            and str(span.source_name.name) != path
        ):
            return
        line = int(span.line) if span is not None else 0
        name = str(node.loop_var.name)
        try:
            found.setdefault((line, name), []).append(layout_record(name, node.annotations["parallel_loop_layout"]))
        except Exception:  # a layout TileLang cannot print is simply not used
            return

    for func in layout_module.functions.values():
        if isinstance(func, tvm.tirx.PrimFunc):
            tvm.tirx.stmt_functor.post_order_visit(func.body, visit)
    return found


Loops = list[tuple[str, Any, int, int]]


class ThreadMap:
    """Threads of the interpreter's lanes: per-thread code names them, parallel loops by layout."""

    def __init__(self, layouts: dict[LoopKey, list[Layout]]) -> None:
        self._layouts = layouts
        self._cache: dict[tuple[Any, ...], np.ndarray | None] = {}

    def of(self, loops: Loops) -> np.ndarray | None:
        """The thread of every lane, shaped like the lanes (innermost loop first), or ``None``."""
        if not loops:
            return None
        key = tuple((name, count, line) for name, _, count, line in loops)
        if key in self._cache:
            return self._cache[key]
        found = self._compute(loops)
        self._cache[key] = found
        return found

    def _compute(self, loops: Loops) -> np.ndarray | None:
        if loops[0][0] == "threadIdx.x":
            return np.arange(loops[0][2], dtype=np.int64)
        name, _, _, line = loops[0]
        counts = [count for _, _, count, _ in loops]
        fused = "_".join(n for n, _, _, _ in loops) + "_fused"
        candidates = self._layouts.get((line, name)) or self._layouts.get((0, fused)) or []
        if not candidates or len({(c.thread, tuple(c.input_shape)) for c in candidates}) != 1:
            return None
        layout = candidates[0]
        if list(layout.input_shape) not in (counts, [int(np.prod(counts))]):
            return None
        try:
            threads = fragment_map(layout).thread[0].reshape(counts)
        except (LayoutExprError, ValueError, IndexError):
            return None
        return np.ascontiguousarray(threads.transpose(tuple(reversed(range(threads.ndim)))))


def iteration(loops: Loops, position: tuple[int, ...]) -> str:
    """``i=3, j=0`` for a lane position (innermost loop first, as the lanes are shaped)."""
    parts = []
    for depth, (name, start, _, _) in enumerate(loops):
        axis = len(position) - 1 - depth
        if axis < 0:
            break
        offset = int(np.asarray(start).reshape(-1)[0]) if np.ndim(start) else int(start)
        parts.append(f"{name}={offset + int(position[axis])}")
    return ", ".join(parts)
