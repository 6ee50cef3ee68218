"""``tilescope trace``: browse every pass the compiler ran and what it did to the IR.

Left, the passes grouped by phase (unchanged ones hidden until asked for); right, the selected
pass's diff against the IR before it, with the Python line behind each IR line; below, what the
pass does in plain words. IR is fetched from the core on demand, in worker threads, so the
interface never waits on the compiler; the +/− counts fill in the background. Side by side, the
pass list steps aside so each half has room, and the IR scrolls sideways (←/→). ``k`` lists the
file's kernels and opens another, compiled in a worker thread while the current one stays on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option, OptionDoesNotExist
from textual.worker import get_current_worker  # pyright: ignore[reportUnknownVariableType]  # generic in a result it cannot know
from tilescope.core.ide import Diff, Row, listing, side_by_side
from tilescope.core.model import IRText
from tilescope.visualizer.ir_view import IRView
from tilescope.visualizer.trace_session import NoTrace, TraceSession

CUDA = -2
"""The pseudo-pass that shows the generated CUDA after the last pass."""


class PassList(OptionList):
    """The passes, one option each, under disabled phase headings."""


class KernelPicker(ModalScreen[str | None]):
    """The file's kernels, the one shown marked; Enter opens the highlighted one, Escape keeps it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Keep this kernel")]

    def __init__(self, kernels: Sequence[str], shown: str) -> None:
        super().__init__()
        self.kernels = list(kernels)
        self.shown = shown

    def compose(self) -> ComposeResult:
        options = [
            Option(Text(f"{'●' if name == self.shown else ' '} {name}"), id=f"kernel-{name}") for name in self.kernels
        ]
        with Vertical(id="kernel-box"):
            yield Static(Text("Open which kernel of this file?", style="bold"))
            yield OptionList(*options, id="kernels")

    def on_mount(self) -> None:
        kernels = self.query_one("#kernels", OptionList)
        kernels.highlighted = self.kernels.index(self.shown) if self.shown in self.kernels else 0
        kernels.focus()

    @on(OptionList.OptionSelected, "#kernels")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss((event.option.id or "").removeprefix("kernel-"))


class TraceApp(App[None]):
    CSS_PATH = "trace_app.tcss"
    TITLE = "tilescope trace"
    AUTO_FOCUS = "#passes"
    _mounted = False
    """Whether the widgets exist (``App.is_mounted`` asks about a widget, not the app)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_change", "Next change"),
        Binding("p", "previous_change", "Prev change"),
        Binding("u", "toggle_unchanged", "Unchanged"),
        Binding("v", "toggle_split", "Side by side"),
        Binding("i", "toggle_full", "Full IR"),
        Binding("slash", "filter_passes", "Filter passes"),
        Binding("f", "find", "Find in IR"),
        Binding("c", "show_cuda", "CUDA"),
        Binding("k", "pick_kernel", "Kernel"),
        Binding("escape", "close_inputs", "Close", show=False),
        Binding("q", "quit", "Quit"),
    ]

    show_unchanged: reactive[bool] = reactive(False)
    split: reactive[bool] = reactive(False)
    full_ir: reactive[bool] = reactive(False)
    current: reactive[int | None] = reactive(None)
    name_filter: reactive[str] = reactive("")

    def __init__(
        self,
        session: TraceSession,
        kernels: Sequence[str] = (),
        open_kernel: Callable[[str], TraceSession] | None = None,
    ) -> None:
        """``kernels``: every kernel of the file, for ``k``; ``open_kernel(name)`` compiles one into a new
        session (raising ``NoTrace`` with the reason when it cannot), called off the UI thread."""
        super().__init__()
        self.session = session
        self.kernels = list(kernels) or [session.kernel.kernel]
        self.open_kernel = open_kernel
        self.sub_title = session.title
        self._last_hit = -1
        self._counted: set[int] = set()

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="filter passes by name", id="filter")
                yield PassList(id="passes")
            with Vertical(id="right"):
                yield Static(id="heading")
                yield Input(placeholder="find in IR (enter: next match)", id="search")
                yield IRView(id="ir")
                yield Static(id="about")
        yield Footer()

    def on_mount(self) -> None:
        self._mounted = True
        for shown_pass in ("current", "split", "full_ir"):
            self.watch(self, shown_pass, self.refresh_view, init=False)
        for listed in ("show_unchanged", "name_filter"):
            self.watch(self, listed, self.rebuild_list, init=False)
        self.watch(self, "split", self._make_room, init=False)
        self._open_first()

    def _open_first(self) -> None:
        self.rebuild_list()
        first = next((p.index for p in self.session.passes if p.changed), 0)
        self.select(first)
        self.count_changes()

    def _make_room(self) -> None:
        """Side by side, the pass list steps aside (n, p and / still work) and the IR takes the keys."""
        self.query_one("#left").display = not self.split
        (self.query_one(IRView) if self.split else self.query_one(PassList)).focus()

    # ----- the pass list -------------------------------------------------------------------

    def _visible(self) -> list[int]:
        term = self.name_filter.lower()
        return [
            p.index
            for p in self.session.passes
            if (self.show_unchanged or p.changed or p.index == self.current)
            and (not term or term in self.session.passes[p.index].label.lower())
        ]

    def _prompt(self, index: int) -> Text:
        record = self.session.passes[index]
        diff = self.session.known_diff(index)
        marker = "●" if record.changed else "·"
        counts = f"+{diff.added} −{diff.removed}" if diff and diff.changed else ("=" if diff else "…")
        text = Text(
            f"{marker}{index:>3} ", style="bold" if record.changed else "dim", no_wrap=True, overflow="ellipsis"
        )
        text.append(f"{self.session.passes[index].label:<34.34}", style="" if record.changed else "dim")
        text.append(f"{counts:>10}", style="green" if diff and diff.changed else "dim")
        text.append(f"{record.duration_ms:>8.1f}ms", style="dim")
        return text

    def rebuild_list(self) -> None:
        options: list[Option] = []
        phase = None
        for index in self._visible():
            record = self.session.passes[index]
            if record.phase != phase:
                phase = record.phase
                options.append(Option(Text(phase.upper(), style="bold italic"), id=f"phase-{index}", disabled=True))
            options.append(Option(self._prompt(index), id=f"pass-{index}"))
        if self.session.cuda:
            options.append(Option(Text("⇒ generated CUDA", style="bold"), id="cuda"))
        passes = self.query_one(PassList)
        passes.set_options(options)
        self._counted = {i for i in self._visible() if self.session.known_diff(i) is not None}
        self._highlight_current()

    def _highlight_current(self) -> None:
        passes = self.query_one(PassList)
        wanted = "cuda" if self.current == CUDA else f"pass-{self.current}"
        try:
            passes.highlighted = passes.get_option_index(wanted)
        except OptionDoesNotExist:
            passes.highlighted = None

    @on(OptionList.OptionHighlighted, "#passes")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        option_id = event.option.id or ""
        self.current = CUDA if option_id == "cuda" else int(option_id.removeprefix("pass-"))

    def select(self, index: int) -> None:
        """Show pass ``index`` (or ``CUDA``), listing it even when unchanged passes are hidden."""
        self.current = index
        if index != CUDA and f"pass-{index}" not in {o.id for o in self.query_one(PassList).options}:
            self.rebuild_list()
        self._highlight_current()

    # ----- the right pane ------------------------------------------------------------------

    def refresh_view(self) -> None:
        if self.current is None or not self._mounted:
            return
        if self.current == CUDA:
            self._show_cuda()
            return
        diff = self.session.known_diff(self.current)
        if diff is not None and not self.full_ir:
            # already diffed: draw now, without a round trip through a worker thread
            self.show_pass(self.current, diff, diff.rows, self.split)
            return
        self.query_one("#heading", Static).update(
            Text(f"{self.session.passes[self.current].label} · loading…"), layout=False
        )
        self.load(self.current, self.split, self.full_ir)

    @work(thread=True, exclusive=True, group="load")
    def load(self, index: int, split: bool, full: bool) -> None:
        """Fetch (once) and diff the pass's IR off the UI thread, then show it."""
        diff = self.session.diff(index)
        rows = listing(self.session.ir(index)) if full else diff.rows
        self.call_from_thread(self.show_pass, index, diff, rows, split and not full)

    def show_pass(self, index: int, diff: Diff, rows: list[Row], split: bool) -> None:
        if index != self.current:
            return
        record = self.session.passes[index]
        view = self.query_one(IRView)
        if self.full_ir:
            view.show(rows, "listing")
            what = f"full IR after the pass, {len(rows)} lines"
        elif not diff.changed:
            view.show([Row("hunk", "(this pass left the IR unchanged)")], "unified")
            what = "no change"
        else:
            view.show(side_by_side(diff) if split else rows, "split" if split else "unified")
            what = f"+{diff.added} −{diff.removed} lines" + (" · side by side" if split else "")
        heading = Text(f"{index}. {self.session.passes[index].label}", style="bold")
        heading.append(f"  {record.phase} · {record.duration_ms:.2f} ms · {what}", style="dim")
        self.query_one("#heading", Static).update(heading, layout=False)
        self._describe(index)
        self._refresh_prompt(index)

    def _describe(self, index: int) -> None:
        view = self.session.passes[index]
        about = self.query_one("#about", Static)
        if view.what is None:
            about.update(Text("No catalogue entry for this pass.", style="dim"), layout=False)
            return
        text = Text(view.what + "\n")
        text.append("Look for: ", style="bold")
        text.append(view.look_for or "", style="italic")
        about.update(text, layout=False)

    def _show_cuda(self) -> None:
        rows = listing(IRText(self.session.cuda or "", []))
        self.query_one(IRView).show(rows, "listing")
        self.query_one("#heading", Static).update(
            Text(f"generated CUDA · {len(rows)} lines · {self.session.kernel.target}", style="bold"), layout=False
        )
        self.query_one("#about", Static).update(
            Text("The device source the last pass's IR became: what nvcc compiles.", style="italic"), layout=False
        )

    def _refresh_prompt(self, index: int) -> None:
        """Put the +/− counts into the pass's line, once they are known (each redraw costs the list)."""
        if index in self._counted or self.session.known_diff(index) is None:
            return
        for passes in self.query(PassList):
            if f"pass-{index}" in {o.id for o in passes.options}:
                passes.replace_option_prompt(f"pass-{index}", self._prompt(index))
                self._counted.add(index)

    @work(thread=True, group="count")
    def count_changes(self) -> None:
        """Diff every changing pass in the background, so the list can show its +/− counts."""
        worker = get_current_worker()  # pyright: ignore[reportUnknownVariableType]  # as imported
        changing = [record.index for record in self.session.passes if record.changed]
        self.session.irs(i for index in changing for i in (index - 1, index))  # one lowering for them all
        for record in self.session.passes:
            if worker.is_cancelled:
                return
            if record.changed:
                self.session.diff(record.index)
                self.call_from_thread(self._refresh_prompt, record.index)

    # ----- actions -------------------------------------------------------------------------

    def _step(self, direction: int) -> None:
        start = self.current if self.current not in (None, CUDA) else -1
        indices = range(start + direction, len(self.session.passes)) if direction > 0 else range(start - 1, -1, -1)
        target = next((i for i in indices if self.session.passes[i].changed), None)
        if target is not None:
            self.select(target)

    def action_next_change(self) -> None:
        self._step(+1)

    def action_previous_change(self) -> None:
        self._step(-1)

    def action_toggle_unchanged(self) -> None:
        self.show_unchanged = not self.show_unchanged
        self.notify("showing every pass" if self.show_unchanged else "hiding passes that left the IR unchanged")

    def action_toggle_split(self) -> None:
        self.split = not self.split

    def action_toggle_full(self) -> None:
        self.full_ir = not self.full_ir

    def action_pick_kernel(self) -> None:
        if self.open_kernel is None or len(self.kernels) < 2:
            self.notify(f"{self.session.kernel.kernel} is the only kernel of this file")
            return
        self.push_screen(KernelPicker(self.kernels, self.session.kernel.kernel), self._kernel_picked)

    def _kernel_picked(self, name: str | None) -> None:
        if name and name != self.session.kernel.kernel:
            self.notify(f"compiling {name}…")
            self.switch_kernel(name)

    @work(thread=True, exclusive=True, group="kernel")
    def switch_kernel(self, name: str) -> None:
        """Compile kernel ``name`` off the UI thread; the one shown stays until it is ready."""
        if self.open_kernel is None:
            return
        try:
            session = self.open_kernel(name)
        except NoTrace as err:
            self.call_from_thread(self.notify, f"{name}: {err}", severity="error", timeout=10)
            return
        self.call_from_thread(self.use_session, session)

    def use_session(self, session: TraceSession) -> None:
        """Show another kernel's trace from its first changing pass."""
        for group in ("count", "load"):  # the old session's fetches
            self.workers.cancel_group(self, group)  # pyright: ignore[reportUnknownMemberType]  # generic in a result it cannot know
        self.session = session
        self.sub_title = session.title
        self._last_hit = -1
        self._counted = set()
        self.current = None
        self._open_first()

    def action_show_cuda(self) -> None:
        if self.session.cuda:
            self.select(CUDA)

    def action_filter_passes(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_find(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.focus()

    def action_close_inputs(self) -> None:
        for box in self.query(Input):
            box.display = False
        self.query_one(PassList).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.name_filter = event.value

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        """Enter opens the pass the filter found (the first, unless the one shown matches too)."""
        matches = self._visible()
        if not matches:
            self.notify(f"no pass matches {self.name_filter!r}", severity="warning")
            return
        self.query_one("#filter", Input).display = False
        self.select(self.current if self.current in matches else matches[0])
        self.query_one(PassList).focus()

    @on(Input.Submitted, "#search")
    def _find_next(self, event: Input.Submitted) -> None:
        hit = self.query_one(IRView).search(event.value, self._last_hit)
        self._last_hit = hit if hit is not None else -1
        if hit is None:
            self.notify(f"{event.value!r} not found", severity="warning")
