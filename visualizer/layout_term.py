"""Draw a layout in the terminal with rich: the same colours as the images, sized to the console.

The whole tile is drawn with half-block characters (two rows per line), sampled down when it is
wider than the terminal; the top-left corner is then spelled out cell by cell.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text
from tilescope.visualizer.layout_view import FragmentView, SharedView
from tilescope.visualizer.palette import BANK_GROUP_COLOURS, hex_colour, thread_rgb, warp_rgb

_DEGREE_COLOURS = {1: "#d9f0d3", 2: "#fee08b", 4: "#fdae61", 8: "#f46d43", 16: "#d73027", 32: "#7f0000"}


def _degree_colour(degree: int) -> str:
    return next(colour for limit, colour in _DEGREE_COLOURS.items() if degree <= limit)


def _half_blocks(colours: list[list[str]], step: int) -> Text:
    """Two grid rows per terminal line: the upper cell as foreground of ``▀``, the lower as background."""
    text = Text()
    rows = colours[::step]
    for r in range(0, len(rows), 2):
        upper = rows[r][::step]
        lower = rows[r + 1][::step] if r + 1 < len(rows) else None
        for c, top in enumerate(upper):
            text.append("▀", style=f"{top} on {lower[c]}" if lower else top)
        text.append("\n")
    return text


def _sampling(rows: int, cols: int, width: int, lines: int) -> tuple[int, str]:
    """The stride that fits ``cols`` into ``width`` characters and ``rows`` into ``lines`` half-block lines."""
    step = max(1, -(-cols // max(8, width)), -(-rows // (2 * lines)))
    note = f" (every {step}th row and column)" if step > 1 else ""
    return step, note


def fragment(view: FragmentView, width: int) -> RenderableType:
    rows, cols = view.threads.shape
    colours = [[hex_colour(c) for c in row] for row in thread_rgb(view.threads)]
    step, note = _sampling(rows, cols, width, 32)
    legend = Text("  ".join(f"warp {w}" for w in range(view.warps)))
    offset = 0
    for w in range(view.warps):
        label = f"warp {w}"
        legend.stylize(f"bold {hex_colour(warp_rgb(w))}", offset, offset + len(label))
        offset += len(label) + 2
    shown_rows = min(rows, 16)
    labels = view.labels(shown_rows, min(cols, 16))
    cell = max(len(part) for row in labels for pair in row for part in pair) + 1
    shown_cols = max(1, min(cols, 16, (width - 4) // (cell + 1)))
    table = Table(show_header=True, header_style="dim", box=None, padding=(0, 0), pad_edge=False)
    table.add_column("", style="dim", justify="right")
    for c in range(shown_cols):
        table.add_column(str(c), justify="center", width=cell + 1)
    for r, row in enumerate(labels):
        cells = [
            Text(f"{thread}\n{register}", style=f"black on {colours[r][c]}", justify="center")
            for c, (thread, register) in enumerate(row[:shown_cols])
        ]
        table.add_row(str(r), *cells)
    return Group(
        Text(view.title, style="bold"),
        Text(view.subtitle, style="dim"),
        legend,
        Text(f"\nwhole tile{note}:", style="italic"),
        _half_blocks(colours, step),
        Text(f"rows 0–{shown_rows - 1}, columns 0–{shown_cols - 1}: thread over register", style="italic"),
        table,
    )


def shared(view: SharedView, width: int) -> RenderableType:
    vectors = view.slots[:, :: view.vector]
    shown = vectors[:16]
    grid = Text()
    for r, row in enumerate(shown):
        grid.append(f"{r:>3} ", style="dim")
        for slot in row[: max(1, (width - 5) // 3)]:
            grid.append(f" {slot} ", style=f"black on {BANK_GROUP_COLOURS[int(slot)]}")
        grid.append("\n")
    summary = Table("access", "worst", "vs conflict-free", "what", box=None, header_style="bold")
    maps: list[RenderableType] = []
    for report in view.reports:
        style = f"black on {_degree_colour(report.max_degree)}"
        summary.add_row(
            report.pattern,
            Text(f" {report.max_degree}-way ", style=style),
            f"{report.slowdown:.2f}×",
            report.description,
        )
        if report.max_degree == int(report.degree.min()):
            continue
        rows, cols = report.degree.shape
        step, note = _sampling(rows, cols, width, 16)
        colours = [[_degree_colour(int(d)) for d in row] for row in report.degree]
        maps += [
            Text(f"\n{report.pattern} conflict degree per element{note}:", style="italic"),
            _half_blocks(colours, step),
        ]
    return Group(
        Text(view.title, style="bold"),
        Text("\n16-byte vector → slot (0–7, four banks each) of its 128-byte line, rows 0–15:", style="italic"),
        grid,
        summary,
        *maps,
    )


def render(view: FragmentView | SharedView, console: Console) -> None:
    """Print ``view`` to ``console``, fitted to its width."""
    width = console.width
    console.print(fragment(view, width) if isinstance(view, FragmentView) else shared(view, width))
