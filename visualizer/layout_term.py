"""Draw a layout view in the terminal with rich, sized to the console.

Each panel of the core's view (threads, registers, slots, conflict degrees) is drawn whole with
half-block characters (two rows per line), sampled down when wider than the terminal, in the
view's own colours; the top-left corner is then spelled out with the view's cell labels.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text
from tilescope.core.ide import LayoutView, Panel

CORNER = 16
"""Rows and columns of the labelled close-up."""


def _half_blocks(panel: Panel, step: int) -> Text:
    """Two grid rows per terminal line: the upper cell as foreground of ``▀``, the lower as background."""
    text = Text()
    rows = panel.values[::step]
    for r in range(0, len(rows), 2):
        upper = rows[r][::step]
        lower = rows[r + 1][::step] if r + 1 < len(rows) else None
        for c, top in enumerate(upper):
            fg = panel.colours[top]
            text.append("▀", style=f"{fg} on {panel.colours[lower[c]]}" if lower else fg)
        text.append("\n")
    return text


def _sampling(rows: int, cols: int, width: int, lines: int) -> tuple[int, str]:
    """The stride that fits ``cols`` into ``width`` characters and ``rows`` into ``lines`` half-block lines."""
    step = max(1, -(-cols // max(8, width)), -(-rows // (2 * lines)))
    note = f" (every {step}th row and column)" if step > 1 else ""
    return step, note


def _legend(panel: Panel) -> Text:
    legend = Text()
    for entry in panel.legend:
        if legend:
            legend.append("  ")
        legend.append(entry.label, style=f"bold {entry.colour}")
    return legend


def _whole(view: LayoutView, panel: Panel, width: int, lines: int) -> list[RenderableType]:
    step, note = _sampling(view.rows, view.cols, width, lines)
    return [Text(f"\n{panel.label}, whole tile{note}:", style="italic"), _legend(panel), _half_blocks(panel, step)]


def _corner(view: LayoutView, panel: Panel, width: int) -> list[RenderableType]:
    labels = [row[:CORNER] for row in view.labels[:CORNER]]
    cell = max(len(line) for row in labels for lines in row for line in lines) + 1
    shown = max(1, min(len(labels[0]), (width - 4) // (cell + 1)))
    table = Table(show_header=True, header_style="dim", box=None, padding=(0, 0), pad_edge=False)
    table.add_column("", style="dim", justify="right")
    for c in range(shown):
        table.add_column(str(c), justify="center", width=cell + 1)
    for r, row in enumerate(labels):
        cells = [
            Text("\n".join(lines), style=f"black on {panel.colours[panel.values[r][c]]}", justify="center")
            for c, lines in enumerate(row[:shown])
        ]
        table.add_row(str(r), *cells)
    what = "thread over register" if view.kind == "fragment" else "physical element offset"
    return [Text(f"\nrows 0–{len(labels) - 1}, columns 0–{shown - 1}: {what}", style="italic"), table]


def _conflicts(view: LayoutView) -> Table:
    summary = Table("access", "worst", "vs conflict-free", "what", box=None, header_style="bold")
    for conflict in view.conflicts:
        panel = view.panel(conflict.panel)
        colour = panel.colours[conflict.worst] if panel else "white"
        summary.add_row(
            conflict.pattern,
            Text(f" {conflict.worst}-way ", style=f"black on {colour}"),
            f"{conflict.slowdown:.2f}×",
            conflict.description,
        )
    return summary


def renderable(view: LayoutView, width: int, colour: bool = True) -> RenderableType:
    """``view`` as rich renderables fitted to ``width`` columns; without ``colour`` (``NO_COLOR``, a
    pipe) the whole-tile maps, which are colour alone, give way to the labelled corner and the table."""
    main = view.panels[0]
    parts: list[RenderableType] = [Text(view.title, style="bold"), Text(view.subtitle, style="dim")]
    if colour:
        parts += _whole(view, main, width, 32)
    parts += _corner(view, main, width)
    if view.conflicts:
        parts += [Text(""), _conflicts(view)]
    if not colour:
        parts.append(Text("\n(the whole-tile maps are drawn in colour: on a colour terminal, or with -o FILE)"))
        return Group(*parts)
    for conflict in view.conflicts:
        panel = view.panel(conflict.panel)
        if panel is not None and any(v != conflict.worst for row in panel.values for v in row):
            parts += _whole(view, panel, width, 16)
    return Group(*parts)


def render(view: LayoutView, console: Console) -> None:
    """Print ``view`` to ``console``, fitted to its width."""
    colour = console.color_system is not None and not console.no_color
    console.print(renderable(view, console.width, colour))
