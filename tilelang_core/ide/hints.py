"""Inlay hints: the facts worth seeing inline, where they belong, as short labels.

Static facts come first; a valid compiled model (see ``merge``) replaces them: concrete shapes,
threads after warp specialisation, real shared memory, inferred fragment layouts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from tilescope.core.display import buffer_text, kib, shape_text, stages_text
from tilescope.core.ide.layout_text import layout_label
from tilescope.core.ide.merge import Facts
from tilescope.core.model import Buffer, KernelModel
from tilescope.core.static.levels import capacity, level_by_name, level_bytes, level_of, size_text
from tilescope.core.static.records import BufferDecl, LaunchDecl, RegionDecl, StaticKernel

HintKind = Literal["buffers", "parameters", "launch", "layouts", "pipelines"]
HINT_KINDS: tuple[HintKind, ...] = ("buffers", "parameters", "launch", "layouts", "pipelines")
LINE_END = 1 << 30
"""A hint column meaning "after everything on the line": the launch hint follows the whole
``with T.Kernel(...) as (bx, by):`` header rather than splitting it (editors clamp to the end)."""


@dataclass(frozen=True)
class Hint:
    """A label shown after ``line:column`` (1-based line, 0-based column as in ``Span``)."""

    line: int
    column: int
    label: str
    kind: HintKind
    tooltip: str | None = None


def inlay_hints(
    facts: Facts, kinds: Iterable[str] = HINT_KINDS, first_line: int = 1, last_line: int | None = None
) -> list[Hint]:
    """Hints of the wanted kinds whose anchors lie within the given lines."""
    wanted = set(kinds)
    hints: list[Hint] = []
    for kernel in facts.static.kernels:
        end = kernel.span.end_line or kernel.span.line
        if end < first_line or (last_line is not None and kernel.span.line > last_line):
            continue
        hints.extend(_kernel_hints(kernel, facts.model(kernel), wanted, facts.static.dialect))
    return [h for h in sorted(hints, key=lambda h: (h.line, h.column)) if first_line <= h.line <= (last_line or h.line)]


def buffer_facts(decl: BufferDecl, model: KernelModel | None) -> Buffer:
    """The compiled record of a buffer when there is one, else the static one."""
    compiled = model.buffer(decl.buffer.name) if model else None
    return compiled or decl.buffer


def buffer_label(buffer: Buffer, with_scope: bool = True, dialect: str | None = None) -> str:
    """``128×32 · float16 · shared.dyn``; in an Ascend kernel the memory level and the bytes it takes
    there, ``256×128 · bfloat16 · L1 · 64 KB`` (a tensor parameter: ``GM``)."""
    level = level_of(buffer.scope) if dialect == "ascend" else None
    if level is None:
        return buffer_text(buffer.shape, buffer.dtype, buffer.scope if with_scope else None)
    label = buffer_text(buffer.shape, buffer.dtype, level.name)
    return label if buffer.bytes is None or level.capacity is None else f"{label} · {size_text(buffer.bytes)}"


def _kernel_hints(
    kernel: StaticKernel, model: KernelModel | None, wanted: set[str], dialect: str | None = None
) -> list[Hint]:
    hints: list[Hint] = []
    for decl in kernel.buffers:
        buffer = buffer_facts(decl, model)
        end_line = decl.anchor.end_line or decl.anchor.line
        end_column = decl.anchor.end_column or decl.anchor.column
        is_param = decl.buffer.is_param
        kind = "parameters" if is_param else "buffers"
        if kind in wanted:
            compiled = ascend_buffer_label(model, decl.buffer.name)
            label = compiled or buffer_label(buffer, with_scope=not is_param, dialect=dialect)
            hints.append(Hint(end_line, end_column, label, kind))
        layout = model.layout(decl.buffer.name) if model else None
        if "layouts" in wanted and layout is not None:
            label = layout_label(layout)
            if label:
                hints.append(Hint(end_line, end_column, label, "layouts", layout.text or None))
    if "launch" in wanted and dialect == "ascend":
        hints.extend(_ascend_launch_hints(kernel, model))
    elif "launch" in wanted:
        for index, launch in enumerate(kernel.launches or ([kernel.launch] if kernel.launch else [])):
            span = launch.span
            label = launch_label(kernel, model) if index == 0 else _static_launch_label(launch)
            if index == 0 and model is not None and model.ascend is not None:
                label = ascend_compiled_label(kernel, model)
            hints.append(Hint(span.end_line or span.line, LINE_END, label, "launch"))
    if "pipelines" in wanted:
        compiled = model.pipelines if model else []
        for index, pipeline in enumerate(kernel.pipelines):
            stages = compiled[index].num_stages if index < len(compiled) else pipeline.num_stages
            if pipeline.literal and stages == pipeline.num_stages:
                continue
            span = pipeline.span
            label = stages_text(stages)
            hints.append(Hint(span.end_line or span.line, span.end_column or 0, label, "pipelines"))
    return hints


def _ascend_launch_hints(kernel: StaticKernel, model: KernelModel | None) -> list[Hint]:
    """An Ascend launch: what the compiler decided where it ran (the kind, flags and levels), else its
    blocks (one per AI core at a time) and what its allocations take of each on-chip level against the
    part's capacity as written; each vector region with its threads."""
    hints: list[Hint] = []
    for index, launch in enumerate(kernel.launches or ([kernel.launch] if kernel.launch else [])):
        span = launch.span
        compiled = index == 0 and model is not None and model.ascend is not None
        label = ascend_compiled_label(kernel, model) if compiled and model else ascend_launch_label(kernel, launch)
        hints.append(Hint(span.end_line or span.line, LINE_END, label, "launch"))
    for region in kernel.regions:
        span = region.span
        hints.append(Hint(span.end_line or span.line, LINE_END, _REGION_LABELS[region.kind](region), "launch"))
    return hints


_REGION_LABELS: dict[str, Callable[[RegionDecl], str]] = {
    "SimtVF": lambda region: f"SIMT · {region.threads} threads",
    "SimdVF": lambda region: "SIMD · vector registers, no threads",
    "Cube": lambda region: "Cube core (AIC)",
    "Vector": lambda region: "Vector cores (AIV)",
}


def ascend_launch_label(kernel: StaticKernel, launch: LaunchDecl) -> str:
    """``grid 32 · L1 128 KB/512 KB · L0C 224 KB/256 KB · UB 96 KB/216 KB``: allocations as written,
    before the compiler's multi-buffering and merges (``static.levels``)."""
    parts = [f"grid {shape_text(launch.grid)}"]
    for name, size in level_bytes(kernel).items():
        limit = capacity(level_by_name(name), kernel)
        used = "?" if size is None else size_text(size)
        parts.append(f"{name} {used}/{kib(limit)}" if limit is not None else f"{name} {used}")
    return " · ".join(parts)


def ascend_buffer_label(model: KernelModel | None, name: str) -> str | None:
    """``256×256 · bfloat16 · L1 · 2 slots``: an Ascend kernel's buffer at its memory level, as compiled."""
    plan = model.ascend if model is not None else None
    found = next((b for b in plan.buffers if b.name == name), None) if plan is not None else None
    if found is None:
        return None
    slots = f" · {found.slots} slots" if found.slots > 1 else ""
    return buffer_text(found.shape, found.dtype, found.level) + slots


def ascend_compiled_label(kernel: StaticKernel, model: KernelModel) -> str:
    """``32 blocks · mix (Cube + Vector) · 11 flags · UB 128 KB``: what the Ascend pipeline decided."""
    assert model.ascend is not None
    plan = model.ascend
    blocks = shape_text(kernel.launch.grid) if kernel.launch is not None else "?"
    kind = {"mix": "Cube + Vector", "cube": "Cube", "vector": "Vector"}.get(plan.kernel_kind, plan.kernel_kind)
    levels = [f"{m.level} {kib(m.used)}" + ("" if m.fits else " (over)") for m in plan.memory]
    return " · ".join([f"{blocks} blocks", kind, f"{len(plan.flags)} flags", *levels])


def _static_launch_label(launch: LaunchDecl) -> str:
    """A second ``T.Kernel`` of the same prim_func: its own grid and threads as written."""
    return f"grid {shape_text(launch.grid)} · {launch.threads} threads"


def launch_label(kernel: StaticKernel, model: KernelModel | None) -> str:
    """``grid 8×8 · 128 threads · 48 KB shared``, compiled figures where known.

    Before compiling, shared memory is TileLang's own layout of the arena where the text says it
    exactly (``static.shared_plan``), else the sum of the allocations (with pipeline copies) when
    TileLang cannot merge any of them, else the certain lower bound, marked ``≥``.
    """
    assert kernel.launch is not None
    grid = shape_text(kernel.launch.grid)
    threads: object = kernel.launch.threads
    shared = kernel.shared_planned if kernel.shared_planned is not None else kernel.shared_bytes
    after_ws = None
    if model is not None and model.launch is not None:
        grid = shape_text(model.launch.grid_dims())
        threads = model.launch.threads
        if model.launch.threads_after_ws != model.launch.threads:
            after_ws = model.launch.threads_after_ws
        shared = model.shared_bytes
    parts = [f"grid {grid}", f"{threads} threads" + (f" ({after_ws} with producers)" if after_ws else "")]
    floor = kernel.shared_floor
    if model is None and kernel.shared_planned is None and shared and floor is not None and floor.bytes < shared:
        parts.append(f"≥ {kib(floor.bytes)} shared")
    elif shared:
        parts.append(f"{kib(shared)} shared")
    return " · ".join(parts)
