"""Draw a layout to PNG, SVG or PDF with matplotlib, readable at its natural size.

A large fragment is drawn twice: the whole tile coloured by thread (no text, so 16,384 cells stay
cheap), and a labelled close-up of its top-left corner, where the pattern repeats. A shared buffer
shows which 16-byte slot each vector lands in (the swizzle) beside one conflict heatmap per access.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle
from tilescope.visualizer.layout_view import FragmentView, SharedView
from tilescope.visualizer.palette import BANK_GROUP_COLOURS, thread_rgb, warp_rgb

LABEL_ALL = 32
"""Tiles up to this many rows and columns get a label in every cell."""
DETAIL = 16
"""Close-up size for larger tiles."""
DPI = 110
_MONO_ADVANCE = 0.602
"""Advance width of a DejaVu Sans Mono glyph, in ems."""


def save(view: FragmentView | SharedView, path: str | Path) -> Path:
    """Render ``view`` to ``path``; the suffix (.png, .svg, .pdf) picks the format."""
    path = Path(path)
    # Unhinted glyphs keep their exact advance, so monospaced label rows stay aligned with the cells.
    with rc_context({"text.hinting": "no_hinting"}):
        figure = draw_fragment(view) if isinstance(view, FragmentView) else draw_shared(view)
        FigureCanvasAgg(figure)
        figure.savefig(path, dpi=DPI)
    return path


def _grid_lines(ax, rows: int, cols: int, step: int) -> None:
    """White cell borders every ``step`` cells, as two line collections rather than hundreds of ticks."""
    ax.vlines(np.arange(-0.5, cols, step), -0.5, rows - 0.5, colors="white", linewidth=0.6)
    ax.hlines(np.arange(-0.5, rows, step), -0.5, cols - 0.5, colors="white", linewidth=0.6)


def _tick_step(n: int) -> int:
    """Every index up to 16 cells; beyond, a power of two giving at most 8 ticks (each tick costs ms)."""
    return 1 if n <= 16 else next(step for step in (8, 16, 32, 64, 128, 256, 1024, 1 << 30) if n / step <= 8)


def _ticks(ax, rows: int, cols: int) -> None:
    step_r, step_c = _tick_step(rows), _tick_step(cols)
    ax.set_xticks(np.arange(0, cols, step_c), [str(c) for c in range(0, cols, step_c)], fontsize=7)
    ax.set_yticks(np.arange(0, rows, step_r), [str(r) for r in range(0, rows, step_r)], fontsize=7)
    ax.xaxis.tick_top()


def _label_cells(ax, labels: list[list[tuple[str, ...]]], colour: str = "black") -> None:
    """Cell labels (one or two lines each) drawn one monospaced row at a time.

    Matplotlib lays out every Text separately (a few ms each), so 256 labels would cost seconds;
    a row of fixed-width slots, sized so a slot is exactly one cell wide, costs one Text per line.
    """
    cols = len(labels[0])
    ax.apply_aspect()
    cell_points = ax.get_position().width * ax.figure.get_figwidth() * 72 / cols
    longest = max(len(part) for row in labels for cell in row for part in cell) + 1
    width = max(longest, round(cell_points / (8.0 * _MONO_ADVANCE)))
    size = cell_points / (width * _MONO_ADVANCE)
    lines = len(labels[0][0])
    offsets = (0.0,) if lines == 1 else (-0.2, 0.22)
    for r, row in enumerate(labels):
        for line, dy in zip(range(lines), offsets, strict=True):
            text = "".join(cell[line].center(width) for cell in row)
            ax.text(
                (cols - 1) / 2,
                r + dy,
                text,
                ha="center",
                va="center",
                fontsize=size,
                family="DejaVu Sans Mono",
                color=colour,
            )


def draw_fragment(view: FragmentView) -> Figure:
    rows, cols = view.threads.shape
    colours = thread_rgb(view.threads)
    small = rows <= LABEL_ALL and cols <= LABEL_ALL
    if small:
        figure = Figure(figsize=(max(6.0, cols * 0.5 + 1.0), max(3.2, rows * 0.5 + 2.0)))
        figure.subplots_adjust(left=0.06, right=0.97, bottom=0.14, top=0.8)
        ax = detail = figure.add_subplot(1, 1, 1)
        dr, dc = rows, cols
    else:
        figure = Figure(figsize=(14.0, 7.6))
        figure.subplots_adjust(left=0.04, right=0.98, bottom=0.08, top=0.86, wspace=0.08)
        ax, detail = figure.subplots(1, 2)
        ax.set_title("whole tile, coloured by thread", fontsize=9)
        dr, dc = min(DETAIL, rows), min(DETAIL, cols)
        ax.add_patch(Rectangle((-0.5, -0.5), dc, dr, fill=False, edgecolor="black", linewidth=1.4))
        detail.set_title(f"rows 0–{dr - 1}, columns 0–{dc - 1}: thread T, register r", fontsize=9)
    ax.imshow(colours, interpolation="nearest", aspect="equal" if rows * 4 >= cols else "auto")
    _ticks(ax, rows, cols)
    _grid_lines(ax, rows, cols, 1 if small else 8)
    if not small:
        detail.imshow(colours[:dr, :dc], interpolation="nearest", aspect="equal")
        _ticks(detail, dr, dc)
        _grid_lines(detail, dr, dc, 1)
    _label_cells(detail, view.labels(dr, dc))
    warps = [Patch(color=warp_rgb(w), label=f"warp {w} (T{32 * w}–{32 * w + 31})") for w in range(view.warps)]
    figure.legend(handles=warps, loc="lower center", ncol=min(8, len(warps)), fontsize=8, frameon=False)
    figure.suptitle(view.title, fontsize=11)
    figure.text(0.5, 1 - 0.62 / figure.get_figheight(), view.subtitle, ha="center", fontsize=8, color="#444")
    return figure


def draw_shared(view: SharedView) -> Figure:
    panels = 1 + len(view.reports)
    figure = Figure(figsize=(4.2 * panels, 6.2))
    figure.subplots_adjust(left=0.05, right=0.97, bottom=0.12, top=0.84, wspace=0.35)
    axes = figure.subplots(1, panels, squeeze=False)[0]
    rows = min(view.offsets.shape[0], LABEL_ALL)
    vectors = view.slots[:rows, :: view.vector]
    mapping = axes[0]
    mapping.imshow(vectors, cmap=ListedColormap(BANK_GROUP_COLOURS), vmin=-0.5, vmax=7.5, aspect="auto")
    mapping.set_title(f"16-byte vector → slot in its 128-byte line\n(rows 0–{rows - 1}; a slot is 4 banks)", fontsize=9)
    if vectors.shape[1] <= 16:
        _label_cells(mapping, [[(str(int(v)),) for v in row] for row in vectors], colour="white")
    mapping.set_xlabel(f"vector ({view.vector} elements)", fontsize=8)
    _ticks(mapping, vectors.shape[0], vectors.shape[1])
    bounds = [1, 2, 3, 5, 9, 17, 33]
    names = ["1", "2", "3–4", "5–8", "9–16", "17–32"]
    cmap = ListedColormap(["#d9f0d3", "#fee08b", "#fdae61", "#f46d43", "#d73027", "#7f0000"])
    norm = BoundaryNorm(bounds, cmap.N)
    for ax, report in zip(axes[1:], view.reports, strict=True):
        image = ax.imshow(report.degree, cmap=cmap, norm=norm, interpolation="nearest", aspect="auto")
        ax.set_title(
            f"{report.pattern}: worst {report.max_degree}-way\n{report.slowdown:.2f}× the conflict-free wavefronts",
            fontsize=9,
        )
        ax.set_xlabel(report.description, fontsize=7, wrap=True)
        _ticks(ax, *report.degree.shape)
        last = report is view.reports[-1]
        bar = figure.colorbar(image, ax=ax, fraction=0.05, label="conflict degree" if last else None)
        bar.set_ticks([(lo + hi) / 2 for lo, hi in itertools.pairwise(bounds)], labels=names)
    figure.suptitle(view.title, fontsize=11)
    return figure
