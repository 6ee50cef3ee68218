"""Draw a layout view to PNG, SVG or PDF with matplotlib, readable at its natural size.

A large fragment is drawn twice: the whole tile coloured by thread (no text, so 16,384 cells stay
cheap), and a labelled close-up of its top-left corner, where the pattern repeats. A shared buffer
shows which 16-byte slot each element lands in (the swizzle) beside one conflict heatmap per access.
Every colour and label is the core view's; this module only lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
from matplotlib import rc_context  # pyright: ignore[reportUnknownVariableType]  # its fname is an unparameterised PathLike
from matplotlib.axis import XAxis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle
from matplotlib.transforms import Bbox
from tilescope.core.ide import LayoutView, Panel

LABEL_ALL = 32
"""Tiles up to this many rows and columns get a label in every cell."""
DETAIL = 16
"""Close-up size for larger tiles."""
DPI = 110
_MONO_ADVANCE = 0.602
"""Advance width of a DejaVu Sans Mono glyph, in ems."""


class Axes(Protocol):
    """The calls this module makes on a matplotlib ``Axes``, typed (matplotlib leaves their ``**kwargs`` untyped)."""

    def imshow(self, X: np.ndarray, *, interpolation: str, aspect: Literal["equal", "auto"]) -> object: ...
    def vlines(self, x: np.ndarray, ymin: float, ymax: float, *, colors: str, linewidth: float) -> object: ...
    def hlines(self, y: np.ndarray, xmin: float, xmax: float, *, colors: str, linewidth: float) -> object: ...
    def set_xticks(self, ticks: np.ndarray, labels: list[str], *, fontsize: int) -> object: ...
    def set_yticks(self, ticks: np.ndarray, labels: list[str], *, fontsize: int) -> object: ...
    @property
    def xaxis(self) -> XAxis: ...
    def text(
        self, x: float, y: float, s: str, *, ha: str, va: str, fontsize: float, family: str, color: str
    ) -> object: ...
    def set_title(self, label: str, *, fontsize: int) -> object: ...
    def set_xlabel(self, xlabel: str, *, fontsize: int, wrap: bool = False) -> object: ...
    def add_patch(self, p: Rectangle) -> object: ...
    def apply_aspect(self) -> None: ...
    def get_position(self) -> Bbox: ...


class Page(Protocol):
    """The calls this module makes on a matplotlib ``Figure`` whose ``**kwargs`` matplotlib leaves untyped."""

    def savefig(self, fname: Path, *, dpi: int) -> None: ...
    def legend(
        self, *, handles: list[Patch], loc: Literal["lower center"], ncol: int, fontsize: int, frameon: bool
    ) -> object: ...
    def suptitle(self, t: str, *, fontsize: int) -> object: ...
    def text(self, x: float, y: float, s: str, *, ha: str, fontsize: int, color: str) -> object: ...
    def get_figheight(self) -> float: ...


def save(view: LayoutView, path: str | Path) -> Path:
    """Render ``view`` to ``path``; the suffix (.png, .svg, .pdf) picks the format."""
    path = Path(path)
    # Unhinted glyphs keep their exact advance, so monospaced label rows stay aligned with the cells.
    with rc_context({"text.hinting": "no_hinting"}):
        figure = draw_fragment(view) if view.kind == "fragment" else draw_shared(view)
        FigureCanvasAgg(figure)
        _write(figure, path)
    return path


def _write(page: Page, path: Path) -> None:
    page.savefig(path, dpi=DPI)


def rgb(panel: Panel) -> np.ndarray:
    """(rows, cols, 3): each cell's colour from the panel's own table."""
    table = np.array([to_rgb(c) for c in panel.colours], dtype=float)
    return table[np.asarray(panel.values, dtype=np.int64)]


def _finish(page: Page, legend: Sequence[Panel], title: str, subtitle: str | None = None) -> None:
    """The legend of the ``legend`` panels' colours below, the title (and the subtitle under it) above."""
    handles = [Patch(color=entry.colour, label=entry.label) for panel in legend for entry in panel.legend]
    page.legend(handles=handles, loc="lower center", ncol=min(8, len(handles)), fontsize=8, frameon=False)
    page.suptitle(title, fontsize=11)
    if subtitle is not None:
        page.text(0.5, 1 - 0.62 / page.get_figheight(), subtitle, ha="center", fontsize=8, color="#444")


def _image(ax: Axes, colours: np.ndarray, aspect: Literal["equal", "auto"]) -> None:
    ax.imshow(colours, interpolation="nearest", aspect=aspect)


def _grid_lines(ax: Axes, rows: int, cols: int, step: int) -> None:
    """White cell borders every ``step`` cells, as two line collections rather than hundreds of ticks."""
    ax.vlines(np.arange(-0.5, cols, step), -0.5, rows - 0.5, colors="white", linewidth=0.6)
    ax.hlines(np.arange(-0.5, rows, step), -0.5, cols - 0.5, colors="white", linewidth=0.6)


def _tick_step(n: int) -> int:
    """Every index up to 16 cells; beyond, a power of two giving at most 8 ticks (each tick costs ms)."""
    return 1 if n <= 16 else next(step for step in (8, 16, 32, 64, 128, 256, 1024, 1 << 30) if n / step <= 8)


def _ticks(ax: Axes, rows: int, cols: int) -> None:
    step_r, step_c = _tick_step(rows), _tick_step(cols)
    ax.set_xticks(np.arange(0, cols, step_c), [str(c) for c in range(0, cols, step_c)], fontsize=7)
    ax.set_yticks(np.arange(0, rows, step_r), [str(r) for r in range(0, rows, step_r)], fontsize=7)
    ax.xaxis.tick_top()


def _label_cells(ax: Axes, figure: Figure, labels: Sequence[Sequence[Sequence[str]]], colour: str = "black") -> None:
    """Cell labels (one or two lines each) drawn one monospaced row at a time.

    Matplotlib lays out every Text separately (a few ms each), so 256 labels would cost seconds;
    a row of fixed-width slots, sized so a slot is exactly one cell wide, costs one Text per line.
    """
    cols = len(labels[0])
    ax.apply_aspect()
    cell_points = ax.get_position().width * figure.get_figwidth() * 72 / cols
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


def draw_fragment(view: LayoutView) -> Figure:
    rows, cols = view.rows, view.cols
    panel = view.panels[0]
    colours = rgb(panel)
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
        ax.set_title(f"whole tile, {panel.label}", fontsize=9)
        dr, dc = min(DETAIL, rows), min(DETAIL, cols)
        ax.add_patch(Rectangle((-0.5, -0.5), dc, dr, fill=False, edgecolor="black", linewidth=1.4))
        detail.set_title(f"rows 0–{dr - 1}, columns 0–{dc - 1}: thread T, register r", fontsize=9)
    _image(ax, colours, "equal" if rows * 4 >= cols else "auto")
    _ticks(ax, rows, cols)
    _grid_lines(ax, rows, cols, 1 if small else 8)
    if not small:
        _image(detail, colours[:dr, :dc], "equal")
        _ticks(detail, dr, dc)
        _grid_lines(detail, dr, dc, 1)
    _label_cells(detail, figure, [row[:dc] for row in view.labels[:dr]])
    _finish(figure, [panel], view.title, view.subtitle)
    return figure


def draw_shared(view: LayoutView) -> Figure:
    slots, *degrees = [view.panels[0]] + [p for c in view.conflicts if (p := view.panel(c.panel)) is not None]
    figure = Figure(figsize=(4.2 * (1 + len(degrees)), 6.2))
    figure.subplots_adjust(left=0.05, right=0.97, bottom=0.16, top=0.84, wspace=0.35)
    axes: list[Axes] = list(figure.subplots(1, 1 + len(degrees), squeeze=False)[0])
    mapping = axes[0]
    _image(mapping, rgb(slots), "auto")
    heading = "16-byte slot of each element\nin its 128-byte line (4 banks each)"
    mapping.set_title(heading if slots.id == "slot" else f"{slots.label}\n(Ascend fractal layout)", fontsize=9)
    if view.rows <= LABEL_ALL and view.cols <= DETAIL:
        _label_cells(mapping, figure, view.labels, colour="white")
    mapping.set_xlabel(view.subtitle, fontsize=8)
    _ticks(mapping, view.rows, view.cols)
    for ax, conflict, panel in zip(axes[1:], view.conflicts, degrees, strict=True):
        _image(ax, rgb(panel), "auto")
        ax.set_title(
            f"{conflict.pattern}: worst {conflict.worst}-way\n{conflict.slowdown:.2f}× the conflict-free wavefronts",
            fontsize=9,
        )
        ax.set_xlabel(conflict.description, fontsize=7, wrap=True)
        _ticks(ax, view.rows, view.cols)
    _finish(figure, [slots, *degrees[:1]], view.title)
    return figure
