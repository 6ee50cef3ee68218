"""The one 2-D view of an inferred layout, drawn alike by ``tilescope layout``, the language server and VS Code.

Three rules live here and nowhere else:

* **fold**: the last two logical dimensions are the drawn tile; leading dimensions are pipeline
  stages (or slices) of which the first is drawn; a 1-D buffer longer than ``WRAP`` that divides by
  it wraps into rows of ``WRAP`` elements, a shorter one is one row;
* **colours**: :mod:`tilescope.core.ide.palette` (threads by warp and lane, registers light to dark,
  16-byte slots, conflict degrees), sent as one colour per value so renderers only look colours up;
* **order**: which buffer is shown first (:func:`plot_order`): fragments, then dynamic shared, then
  static shared memory, each in declaration order.

Values come from :mod:`tilescope.core.layout_eval` and :mod:`tilescope.core.perf.bank_conflicts`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from tilescope.core import layout_eval
from tilescope.core.display import dims_text
from tilescope.core.dtypes import require_bits
from tilescope.core.ide import palette
from tilescope.core.model import Buffer, KernelModel, Layout
from tilescope.core.perf import bank_conflicts
from tilescope.core.targets import ascend_level

WRAP = 16
"""1-D buffers longer than this (and divisible by it) are drawn in rows of this many elements."""
LABELLED = 32
"""Cell labels are given for the top-left ``LABELLED × LABELLED`` cells; past that the pattern repeats."""
PLOT_ORDER = ("local.fragment", "shared.dyn", "shared")
"""Scopes that have a layout view, in the order a kernel's buffers are offered."""
ViewKind = Literal["fragment", "shared"]


@dataclass(frozen=True)
class LegendEntry:
    label: str
    colour: str


@dataclass(frozen=True)
class Panel:
    """One way to colour the grid: ``values[r][c]`` is drawn in ``colours[values[r][c]]``."""

    id: str
    """``thread``, ``register``, ``slot``, ``conflict:<pattern>``, or an Ascend fractal's ``fractal`` and ``order``."""
    label: str
    caption: str
    """What the colours mean."""
    values: list[list[int]]
    colours: list[str]
    legend: list[LegendEntry]


@dataclass(frozen=True)
class Conflict:
    """One shared-memory access pattern's bank conflicts over the drawn tile; ``panel`` draws its degrees."""

    pattern: str
    description: str
    worst: int
    wavefronts: int
    ideal: int
    slowdown: float
    panel: str


@dataclass(frozen=True)
class BankRow:
    """One shared access of the buffer as the lowered kernel makes it, lanes by bank.

    ``lanes[b]`` are the lanes of the warp's first request whose access starts in bank ``b``: a
    bank holding many lanes at distinct words is the conflict.
    """

    line: int | None
    op: str
    instruction: str
    ways: int
    wavefronts: float
    ideal_wavefronts: float
    lanes: list[list[int]]


@dataclass(frozen=True)
class Fact:
    name: str
    value: str


@dataclass(frozen=True)
class LayoutView:
    buffer: str
    kind: ViewKind
    dtype: str
    title: str
    subtitle: str
    shape: list[int]
    """The logical shape; the grid is ``rows × cols`` after the fold."""
    rows: int
    cols: int
    stages: int
    """How many leading slices the tile has; the first is drawn."""
    fold: str
    """How the logical shape became the grid, in words ("" when it is the shape itself)."""
    labels: list[list[list[str]]]
    """One or two text lines per cell of the top-left ``LABELLED × LABELLED``: ``T0+3``, ``r5`` / an offset."""
    panels: list[Panel]
    """The default first."""
    conflicts: list[Conflict]
    facts: list[Fact]
    accesses: list[BankRow] = field(default_factory=list[BankRow])
    """The kernel's own accesses of this buffer (``KernelModel.shared_accesses``), in line order."""

    def panel(self, panel_id: str) -> Panel | None:
        return next((p for p in self.panels if p.id == panel_id), None)


@dataclass(frozen=True)
class KernelLayout:
    """A kernel's layout buffers in plot order, and the view of the chosen one."""

    kernel: str
    buffer: str
    buffers: list[str]
    view: LayoutView


class NoLayout(LookupError):
    """The kernel has no (evaluable) layout for the requested buffer; the message says what there is."""


def folded(values: NDArray[Any]) -> NDArray[Any]:
    """The drawn 2-D tile of ``values`` (one entry per logical element), by the fold rule."""
    while values.ndim > 2:
        values = values[0]
    if values.ndim == 2:
        return values
    if values.size > WRAP and values.size % WRAP == 0:
        return np.reshape(values, (-1, WRAP))
    return np.reshape(values, (1, -1))


def _fold_text(shape: list[int]) -> tuple[int, str]:
    stages = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    if stages > 1:
        leading = "stages" if len(shape) == 3 else f"slices ({dims_text(shape[:-2])})"
        return stages, f"first of {stages} {leading} drawn"
    if len(shape) == 1 and shape[0] > WRAP and shape[0] % WRAP == 0:
        return 1, f"drawn {WRAP} per row: element = {WRAP}·row + column"
    return 1, ""


def plot_order(buffers: Iterable[tuple[str, str]]) -> list[str]:
    """Names of ``(name, scope)`` buffers that have a layout view, in the order they are offered."""
    ranked = [(PLOT_ORDER.index(scope), k, name) for k, (name, scope) in enumerate(buffers) if scope in PLOT_ORDER]
    return [name for _, _, name in sorted(ranked)]


def layout_buffers(model: KernelModel) -> list[str]:
    """The kernel's buffers with an inferred layout, in plot order."""

    def scope(layout: Layout) -> str:
        declared = model.buffer(layout.buffer)
        if declared is not None and declared.scope in PLOT_ORDER:
            return declared.scope
        return "local.fragment" if layout.kind == "fragment" else "shared"

    return plot_order((layout.buffer, scope(layout)) for layout in model.layouts)


def choose(model: KernelModel, buffer: str | None = None) -> KernelLayout:
    """The view of ``buffer`` (the first in plot order when ``None``) with the kernel's other choices."""
    buffers = layout_buffers(model)
    name = buffer or (buffers[0] if buffers else None)
    layout = model.layout(name) if name else None
    if layout is None:
        known = ", ".join(buffers) or "none"
        raise NoLayout(f"no inferred layout for {buffer!r} in kernel {model.kernel} (layouts: {known})")
    try:
        view = layout_view(layout, model.buffer(layout.buffer))
    except (ValueError, IndexError, KeyError, SyntaxError, TypeError) as error:
        raise NoLayout(f"the layout of {layout.buffer} cannot be evaluated: {error}") from error
    return KernelLayout(model.kernel, layout.buffer, buffers, replace(view, accesses=bank_rows(model, layout.buffer)))


def bank_rows(model: KernelModel, buffer: str) -> list[BankRow]:
    """Each shared access of ``buffer`` in ``model``, with the lanes that start in each of the 32 banks."""
    rows: list[BankRow] = []
    for access in model.shared_accesses:
        if access.buffer != buffer:
            continue
        lanes: list[list[int]] = [[] for _ in range(bank_conflicts.BANKS)]
        for lane, bank in enumerate(access.lane_banks):
            if bank >= 0:
                lanes[bank].append(lane)
        rows.append(
            BankRow(
                access.line,
                access.op,
                access.instruction,
                access.ways,
                access.wavefronts,
                access.ideal_wavefronts,
                lanes,
            )
        )
    return rows


def layout_view(layout: Layout, buffer: Buffer | None) -> LayoutView:
    """Evaluate ``layout`` into its view; ``buffer`` supplies the dtype (float32 when unknown).

    Raises ``ValueError`` (``layout_eval.LayoutExprError``) when its expressions cannot be evaluated.
    """
    dtype = buffer.dtype if buffer else "float32"
    if layout.kind == "fragment":
        return _fragment(layout, dtype)
    if layout.swizzle and "fractal" in layout.swizzle:
        return _fractal(layout, dtype, ascend_level(buffer.scope) if buffer else None)
    return _shared(layout, dtype)


def _fractal(layout: Layout, dtype: str, level: str | None) -> LayoutView:
    """An Ascend Cube operand's fractal (nZ) layout: which fractal each element lands in, and where in it.
    No banks: L1 and L0 are not shared memory, so the CUDA bank panels would say nothing true."""
    smap = layout_eval.shared_map(layout)
    shape = list(smap.shape)
    offsets = folded(smap.offset)
    rows, cols = offsets.shape
    block = layout.output_shape[-2] * layout.output_shape[-1] if len(layout.output_shape) >= 2 else 1
    fractals = offsets // max(1, block)
    colours = [str(c) for c in palette.SLOT_COLOURS[:7]]  # seven: fractals step by a power of two down and across
    labels = [[[str(int(offsets[r, c]))] for c in range(min(cols, LABELLED))] for r in range(min(rows, LABELLED))]
    inner = f"{layout.output_shape[-2]}×{layout.output_shape[-1]}" if len(layout.output_shape) >= 2 else "1"
    panels = [
        Panel(
            "fractal",
            "by fractal",
            f"Each cell is one element, coloured by the {inner} fractal it is stored in (colours repeat every "
            f"{len(colours)} fractals); the number is its element offset in the buffer.",
            _ints(fractals % len(colours)),
            colours,
            [LegendEntry(f"fractal {k} (+{len(colours)}n)", c) for k, c in enumerate(colours)],
        ),
        Panel(
            "order",
            "by offset",
            "Each cell is one element, coloured by its position inside its fractal: rows of the fractal are "
            "contiguous, fractals follow one another down the columns (nZ).",
            _ints(offsets % max(1, block) * 8 // max(1, block)),
            colours,
            [LegendEntry(f"{k}/8 of the fractal", c) for k, c in enumerate(colours)],
        ),
    ]
    view = _view(
        layout,
        "shared",
        dtype,
        shape,
        offsets,
        f"{dims_text(layout.output_shape)} ({layout.swizzle})",
        f"{inner} fractals",
        labels,
        panels,
        [],
    )
    where = level or "on-chip"
    return replace(
        view, title=f"{layout.buffer}: {dims_text(shape)} {dtype} in {where} → {view.title.split('→ ', 1)[1]}"
    )


def _ints(values: NDArray[Any]) -> list[list[int]]:
    return values.astype(int).tolist()


def _facts(layout: Layout) -> list[Fact]:
    variables = ", ".join(layout.input_vars)
    facts = [Fact("shape", dims_text(layout.input_shape)), Fact("physical", dims_text(layout.output_shape))]
    if layout.thread is not None:
        facts.append(Fact(f"thread({variables})", layout.thread))
    facts.append(Fact(f"index({variables})", ", ".join(layout.index)))
    if layout.swizzle:
        facts.append(Fact("swizzle", layout.swizzle))
    if layout.text:
        facts.append(Fact("TileLang", layout.text))
    return facts


def _fragment(layout: Layout, dtype: str) -> LayoutView:
    fmap = layout_eval.fragment_map(layout)
    shape = list(fmap.shape)
    replicas = np.stack([folded(t) for t in fmap.thread])
    threads, registers = replicas[0], folded(fmap.local)
    corner = np.sort(replicas[:, :LABELLED, :LABELLED], axis=0)
    others = (np.diff(corner, axis=0) != 0).sum(axis=0)
    labels = [
        [
            [f"T{corner[0, r, c]}" + (f"+{others[r, c]}" if others[r, c] else ""), f"r{registers[r, c]}"]
            for c in range(corner.shape[2])
        ]
        for r in range(corner.shape[1])
    ]
    top = int(threads.max()) + 1
    warps = range(int(threads.min()) // palette.WARP, (top - 1) // palette.WARP + 1)
    count = max(1, int(registers.max()) + 1)
    rep = f", each element on {fmap.replicate} threads" if fmap.replicate > 1 else ""
    panels = [
        Panel(
            "thread",
            "by thread",
            "Each cell is one element, coloured by the thread that holds it (a hue per warp, darker by lane).",
            _ints(threads),
            [palette.thread_colour(t) for t in range(top)],
            [
                LegendEntry(
                    f"warp {w} (T{palette.WARP * w}–{palette.WARP * w + palette.WARP - 1})", palette.warp_colour(w)
                )
                for w in warps
            ],
        ),
        Panel(
            "register",
            "by register",
            "Each cell is one element, coloured by its register index in the thread that holds it.",
            _ints(registers),
            [palette.register_colour(k, count) for k in range(count)],
            [
                LegendEntry("r0", palette.register_colour(0, count)),
                LegendEntry(f"r{count - 1}", palette.register_colour(count - 1, count)),
            ],
        ),
    ]
    mapping = f"{fmap.thread_extent} threads × {fmap.elements_per_thread} registers{rep}"
    return _view(layout, "fragment", dtype, shape, threads, mapping, f"thread = {layout.thread}", labels, panels, [])


def _shared(layout: Layout, dtype: str) -> LayoutView:
    smap = layout_eval.shared_map(layout)
    shape = list(smap.shape)
    offsets = folded(smap.offset)
    rows, cols = offsets.shape
    bits = require_bits(dtype)
    slots = (offsets * bits // 8) % 128 // 16
    labels = [[[str(int(offsets[r, c]))] for c in range(min(cols, LABELLED))] for r in range(min(rows, LABELLED))]
    panels = [
        Panel(
            "slot",
            "by 16-byte slot",
            "Each cell is one element, coloured by the 16-byte slot (four banks) of its 128-byte line: the swizzle.",
            _ints(slots),
            list(palette.SLOT_COLOURS),
            [LegendEntry(f"slot {k} (banks {4 * k}–{4 * k + 3})", c) for k, c in enumerate(palette.SLOT_COLOURS)],
        )
    ]
    conflicts: list[Conflict] = []
    degree_legend = [LegendEntry(f"{name}-way", colour) for _, name, colour in palette.DEGREE_BINS]
    for report in bank_conflicts.analyze(smap, dtype):
        panel_id = f"conflict:{report.pattern}"
        worst, slowdown = report.max_degree, round(report.slowdown, 4)
        degree_colours = [palette.degree_colour(d) for d in range(max(bank_conflicts.BANKS, worst) + 1)]
        panels.append(
            Panel(
                panel_id,
                f"bank conflicts: {report.pattern}",
                f"{report.description}: worst {worst}-way, {report.wavefronts} wavefronts for {report.ideal} "
                f"conflict-free ({slowdown:.2f}×); each cell shows the degree of the read that fetches it.",
                _ints(np.reshape(report.degree, offsets.shape)),
                degree_colours,
                degree_legend,
            )
        )
        conflicts.append(
            Conflict(report.pattern, report.description, worst, report.wavefronts, report.ideal, slowdown, panel_id)
        )
    swizzle = f" ({layout.swizzle})" if layout.swizzle else ""
    mapping = f"physical {dims_text(layout.output_shape)}{swizzle}"
    vector = f"{max(1, 128 // bits)} elements per 16-byte vector"
    return _view(layout, "shared", dtype, shape, offsets, mapping, vector, labels, panels, conflicts)


def _view(
    layout: Layout,
    kind: ViewKind,
    dtype: str,
    shape: list[int],
    grid: NDArray[Any],
    mapping: str,
    detail: str,
    labels: list[list[list[str]]],
    panels: list[Panel],
    conflicts: list[Conflict],
) -> LayoutView:
    """The view of ``layout`` drawn as ``grid`` (the folded tile): ``mapping`` says where elements go."""
    stages, fold = _fold_text(shape)
    rows, cols = grid.shape
    return LayoutView(
        buffer=layout.buffer,
        kind=kind,
        dtype=dtype,
        title=f"{layout.buffer}: {dims_text(shape)} {dtype} {kind} → {mapping}",
        subtitle=detail + (f"   ·   {fold}" if fold else ""),
        shape=shape,
        rows=int(rows),
        cols=int(cols),
        stages=stages,
        fold=fold,
        labels=labels,
        panels=panels,
        conflicts=conflicts,
        facts=_facts(layout),
    )
