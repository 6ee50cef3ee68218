"""The Ascend 950 facts of one lowered kernel, read from TileLang's own IR, in the worker.

TileLang's Ascend pipeline decides what the user never writes: which statement runs on the Cube
core (AIC), which on the Vector cores (AIV) and which on both (scalar control); the pipe flags
between the hardware pipes and the Cube-Vector flags; multi-buffer slots. All of it is in the IR
it leaves behind, so nothing here guesses:

- the **schedule** is the module right after ``tl.InsertSync``: every statement sits under a
  ``tl.ascend_task`` attribute whose ``core_mask`` says its core (bit 1 AIV, bit 2 AIC, both: run
  by each core's scalar unit), and the flags it inserted are ``ascend_set_flag``/``ascend_wait_flag``
  (pipe to pipe, with an event id) and ``ascend_cross_core_set_flag``/``_wait_flag`` (Cube to Vector);
  loops carry ``num_stages`` and ``multi_buffer_eligible``, the kernel block
  ``tl.buffer_versions_map`` (slots per buffer);
- the **flags and core split** of the code that runs are those of the final device module, whose
  ``CUBE`` and ``VECTOR`` blocks become the ``ASC_IS_AIC``/``ASC_IS_AIV`` sections of the AscendC;
- the **memory plan** counts each buffer's bytes times its slots per level against the part's
  capacity (``targets.ASCEND_LEVELS``), as ``tl.AutoSchedule`` does.
"""

from __future__ import annotations

from typing import Any

from tilescope.core.model import AscendModel, Buffer, Diagnostic, Layout
from tilescope.core.worker import ascend_ir, ascend_memory, ascend_schedule, extract
from tvm import tirx

SCHEDULE_PASS = "tl.InsertSync"


def model(
    prim_func: Any,
    modules: list[Any],
    names: list[str],
    device_mod: Any | None,
    buffers: list[Buffer],
    path: str,
    source: str,
    kernel: str,
    auto_schedule: bool,
) -> tuple[AscendModel, list[Diagnostic]]:
    """The Ascend model of a kernel lowered (or stopped) with its passes recorded."""
    scheduled = ascend_ir.module_after(modules, names, SCHEDULE_PASS)
    lines = source.splitlines()
    walk = ascend_schedule.Walk(path, lines)
    if scheduled is not None:
        for func in ascend_ir.funcs(scheduled):
            walk.visit(func.body, 0)
    elif device_mod is not None:
        walk.unscheduled = "scalar"
        for func in ascend_ir.funcs(device_mod):
            walk.visit(func.body, 0)
    simt = ascend_schedule.simt_threads(device_mod) if device_mod is not None else []
    ascend_buffers = ascend_memory.level_buffers(buffers, walk.versions)
    memory = ascend_memory.memory_levels(ascend_buffers, bool(simt) or walk.simt)
    sections, flags, kind = ascend_schedule.core_sections(device_mod) if device_mod is not None else ({}, [], "unknown")
    merged = ascend_memory.merged_allocations(device_mod) if device_mod is not None else {}
    offsets = ascend_memory.merge_offsets(modules, names)
    ascend_buffers = [ascend_memory.with_merge(b, merged, offsets) for b in ascend_buffers]
    result = AscendModel(
        kernel_kind=kind,
        buffers=ascend_buffers,
        memory=memory,
        schedule=walk.steps,
        loops=walk.loops,
        flags=flags,
        sections=sections,
        simt_threads=simt,
        scheduled=scheduled is not None,
    )
    diagnostics = [
        ascend_memory.overflow(level, kernel, ascend_buffers, auto_schedule) for level in memory if not level.fits
    ]
    return result, diagnostics


_FRACTAL_KINDS = {
    0: "nZ fractal, K-major",
    1: "nZ fractal, L0C 16×16",
    2: "fractal, scale factors",
    3: "nZ fractal, MN-major",
}
"""``kind`` of TileLang's ``_AscendFractalLayout`` (``tilelang/layout/ascend.py``: MajorK, L0C, SF, MajorMN)."""


def fractal_layouts(layout_module: Any | None) -> list[Layout]:
    """The layouts read after ``tl.AscendLayoutInference``, each fractal one named for its kind."""
    if layout_module is None:
        return []
    kinds: dict[str, str] = {}

    def visit(node: Any) -> None:
        if isinstance(node, tirx.SBlock) and "layout_map" in node.annotations:
            for buf, layout in node.annotations["layout_map"].items():
                kind = ascend_ir.as_int(getattr(layout, "kind", None))
                if kind is not None:
                    kinds.setdefault(str(buf.name), _FRACTAL_KINDS.get(kind, f"fractal kind {kind}"))

    for func in ascend_ir.funcs(layout_module):
        tirx.stmt_functor.post_order_visit(func.body, visit)
    return extract.layouts(layout_module, kinds)
