"""A scrolling view of IR diffs that draws only the lines on screen.

Built on Textual's line API: ``render_line`` is called for visible rows only, so a 5,000-line IR
costs the same to show as a 50-line one. Each row is syntax-highlighted (TVMScript is Python) the
first time it is drawn (one regular expression, :mod:`visualizer.tir_highlight`) and cached.
"""

from __future__ import annotations

from typing import Literal

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from tilescope.core.ide import Pair, Row
from tilescope.visualizer.tir_highlight import highlight

Mode = Literal["unified", "split", "listing"]

_GUTTER = 15
_SPLIT_GUTTER = 11
_BACKGROUND = {"add": "on #12361f", "del": "on #3d1618", "hunk": "", "same": ""}
_SIGN = {"add": "+", "del": "-", "hunk": " ", "same": " "}
_MATCH = Style(bgcolor="#7a6a00", bold=True)


class IRView(ScrollView, can_focus=True):
    """Rows of a diff (``unified``), pairs of rows (``split``), or a whole IR (``listing``)."""

    DEFAULT_CSS = """
    IRView { background: $surface; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[Row] | list[Pair] = []
        self._mode: Mode = "unified"
        self._search = ""
        self._cache: dict[tuple[int, int], Text] = {}
        self._longest = 0
        """Characters in the longest line shown (of either side, side by side)."""

    @property
    def mode(self) -> Mode:
        return self._mode

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def show(self, rows: list[Row] | list[Pair], mode: Mode) -> None:
        """Replace the content; widths are measured now, highlighting waits until a row is drawn."""
        self._rows = rows
        self._mode = mode
        self._cache.clear()
        if mode == "split":
            self._longest = max(
                (len(r.text) for p in rows if isinstance(p, Pair) for r in (p.left, p.right) if r), default=0
            )
        else:
            self._longest = max((len(r.text) for r in rows if isinstance(r, Row)), default=0)
        self._measure()
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _measure(self) -> None:
        """The scrollable width: side by side, both halves scroll together far enough right to show the
        end of the longest line in a half of the view's width, which changes when the pass list is hidden."""
        if self._mode == "split":
            screen = self.size.width or 160
            width = screen + max(0, _SPLIT_GUTTER + 1 + self._longest - (screen - 1) // 2)
        else:
            width = _GUTTER + 1 + self._longest
        self.virtual_size = Size(width, len(self._rows))

    def on_resize(self) -> None:
        self._measure()

    def plain_lines(self) -> list[str]:
        """The content as plain text, one string per row (what a search or a test reads)."""
        out: list[str] = []
        for item in self._rows:
            if isinstance(item, Pair):
                out.append(f"{item.left.text if item.left else ''} │ {item.right.text if item.right else ''}")
            else:
                out.append(f"{_SIGN[item.kind]}{item.text}")
        return out

    def search(self, term: str, after: int = -1) -> int | None:
        """Scroll to the first row after ``after`` containing ``term`` (case-insensitive), wrapping."""
        self._search = term.lower()
        self._cache.clear()
        self.refresh()
        if not term:
            return None
        lines = [line.lower() for line in self.plain_lines()]
        order = [*range(after + 1, len(lines)), *range(0, after + 1)]
        hit = next((i for i in order if self._search in lines[i]), None)
        if hit is not None:
            self.scroll_to(y=max(0, hit - 3), animate=False)
        return hit

    def _code(self, row: Row, width_key: int = 0) -> Text:
        key = (id(row), width_key)
        text = self._cache.get(key)
        if text is None:
            if row.kind == "hunk":
                text = Text(row.text, style="bold #6ea8fe")
            else:
                text = highlight(row.text)
                text.rstrip()
            if self._search:
                text.highlight_words([self._search], _MATCH, case_sensitive=False)
            self._cache[key] = text
        return text

    def _gutter(self, row: Row | None, numbers: Literal["both", "old", "new"]) -> Text:
        """Line numbers (old, new, or both) and the Python source line, dimmed."""
        src = f"py{row.source:<4}" if row and row.source else "      "
        if numbers == "both":
            old = f"{row.old:>4}" if row and row.old else "    "
            new = f"{row.new:>4}" if row and row.new else "    "
            return Text(f"{old}{new} {src}", style="dim")
        number = (row.old if numbers == "old" else row.new) if row else None
        return Text(f"{number or '':>4} {src}", style="dim")

    def _row_text(self, row: Row | None, numbers: Literal["both", "old", "new"]) -> Text:
        line = self._gutter(row, numbers)
        if row is None:
            return line
        line.append(_SIGN[row.kind], style="bold green" if row.kind == "add" else "bold red")
        line.append_text(self._code(row))
        if row.kind in ("add", "del"):
            line.stylize(_BACKGROUND[row.kind])
        return line

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        if index >= len(self._rows):
            return Strip.blank(width, self.rich_style)
        item = self._rows[index]
        console = self.app.console  # pyright: ignore[reportUnknownMemberType]  # Widget.app is generic in the app's result
        if isinstance(item, Pair):
            half = max(10, (width - 1) // 2)
            left = self._half(item.left, "old", scroll_x, half)
            right = self._half(item.right, "new", scroll_x, half)
            return Strip.join([left, Strip([Segment("│", Style(color="#555555"))], 1), right])
        text = self._row_text(item, "both")
        strip = Strip(text.render(console), text.cell_len)
        return strip.crop_extend(scroll_x, scroll_x + width, self._fill(item))

    def _half(self, row: Row | None, side: Literal["old", "new"], scroll_x: int, width: int) -> Strip:
        text = self._row_text(row, side)
        strip = Strip(text.render(self.app.console), text.cell_len)  # pyright: ignore[reportUnknownMemberType]  # as above
        return strip.crop_extend(scroll_x, scroll_x + width, self._fill(row))

    def _fill(self, row: Row | None) -> Style:
        """The style of the blank space after a row: its add/delete colour runs to the edge."""
        background = _BACKGROUND[row.kind] if row else ""
        return self.rich_style + Style.parse(background) if background else self.rich_style
