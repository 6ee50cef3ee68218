"""The puzzles app: a list with progress, the statement, hints, and a results pane.

``e`` opens the learner's file in ``$EDITOR``; ``c`` checks it; ``w`` re-checks on every save.
Checks run on a worker thread through the per-user grading service that ``puzzles check`` uses
too (one warm grader for both), so the interface never blocks on a compile and a faulting kernel
cannot take it down.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Markdown, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option
from tilescope.puzzles import catalog, service, workspace
from tilescope.puzzles.progress import ProgressStore, PuzzleStatus
from tilescope.puzzles.render import report_lines, target_words
from tilescope.puzzles.report import Report
from tilescope.puzzles.session import CheckOptions
from tilescope.puzzles.workspace import is_solution_copy


def _row(p: catalog.Puzzle, s: PuzzleStatus) -> str:
    mark = "✓" if s.solved else "·" if s.attempts else " "
    stars = "★" * s.best_stars if s.solved else ""
    return f"{mark} {p.id} {p.title[:32]:<32} {stars}"


KEYS = {"e": "edit", "c": "check", "w": "watch", "h": "hint", "r": "reset", "v": "reveal", "q": "quit"}
"""Each key and its action; the footer names the action."""


class PuzzlesApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "TileLang puzzles"
    BINDINGS: ClassVar[list[BindingType]] = [Binding(key, action, action.capitalize()) for key, action in KEYS.items()]

    def __init__(self, store: ProgressStore | None = None, device: str | None = None) -> None:
        super().__init__()
        self.store = store or ProgressStore()
        self.device = device
        self.puzzles = list(catalog.puzzles())
        self.current = self.puzzles[0]
        self.watching = False
        self.checking = False
        self._mtime: float | None = None
        self._reveal_armed: str | None = None
        self._grader = service.Client()

    def compose(self) -> ComposeResult:
        yield OptionList(*(Option(_row(p, self.store.status(p.id)), id=p.id) for p in self.puzzles), id="puzzle-list")
        with Vertical(id="detail"):
            yield Static(id="title")
            yield Static(id="status")
            with TabbedContent(id="tabs"):
                with TabPane("Statement", id="tab-statement"):
                    yield Markdown(id="statement")
                with TabPane("Hints", id="tab-hints"):
                    yield Markdown(id="hints")
                with TabPane("Results", id="tab-results"), VerticalScroll():
                    yield Static("No check yet: press c.", id="results", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.show(self.current)
        self.set_interval(1.0, self._poll_file)

    def on_unmount(self) -> None:
        self._grader.cancel()
        self.store.close()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self.show(catalog.get(event.option.id))

    def show(self, puzzle: catalog.Puzzle) -> None:
        self.current = puzzle
        self._reveal_armed = None
        self.query_one("#title", Static).update(f"{puzzle.id} · {puzzle.title} — {puzzle.topic}")
        self.query_one("#statement", Markdown).update(puzzle.statement())
        self._refresh_hints()
        self._refresh_status()
        last = self.store.last_report(puzzle.id)
        self.query_one("#results", Static).update(
            "\n".join(report_lines(_report(last), puzzle.title)) if last else "No check yet: press c."
        )
        self._mtime = self._file_mtime()

    def _refresh_status(self) -> None:
        p, s = self.current, self.store.status(self.current.id)
        path = workspace.learner_path(p)
        target = target_words(p.perf)
        watch = " · watching" if self.watching else ""
        best = f" · best {s.best_percent:.0f}%" if s.best_percent is not None else ""
        self.query_one("#status", Static).update(
            f"{path} · target {target} · {s.attempts} attempts{best} · hints {s.hints_shown}/{len(p.hints)}{watch}"
        )
        index = self.puzzles.index(p)
        self.query_one("#puzzle-list", OptionList).replace_option_prompt_at_index(index, _row(p, s))

    def _refresh_hints(self) -> None:
        p = self.current
        shown = self.store.hints_shown(p.id)
        body = "\n\n".join(f"**Hint {i}.** {text}" for i, text in enumerate(p.hints[:shown], 1))
        more = f"\n\n*{len(p.hints) - shown} more: press h.*" if shown < len(p.hints) else ""
        self.query_one("#hints", Markdown).update((body or "*No hints shown yet: press h.*") + more)

    def _file_mtime(self) -> float | None:
        path = workspace.learner_path(self.current)
        return path.stat().st_mtime if path.exists() else None

    def action_edit(self) -> None:
        path = workspace.start(self.current)
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        with self.suspend():
            subprocess.run([*shlex.split(editor), str(path)], check=False)
        self._refresh_status()

    def action_hint(self) -> None:
        self.store.unlock_hint(self.current.id, len(self.current.hints))
        self._refresh_hints()
        self._refresh_status()
        self.query_one("#tabs", TabbedContent).active = "tab-hints"

    def action_reset(self) -> None:
        path, saved = workspace.reset(self.current)
        self.notify(f"Starter restored; your version is in {saved}" if saved else f"Created {path}")
        self._mtime = self._file_mtime()

    def action_reveal(self) -> None:
        p = self.current
        if not self.store.status(p.id).solved and self._reveal_armed != p.id:
            self._reveal_armed = p.id
            self.notify("Not solved yet: press v again to see the solution.", severity="warning")
            return
        self.store.mark_revealed(p.id)
        self.query_one("#statement", Markdown).update(
            p.statement() + "\n\n## Reference solution\n\n```python\n" + p.solution_path.read_text() + "```\n"
        )
        self.query_one("#tabs", TabbedContent).active = "tab-statement"
        self._refresh_status()

    def action_watch(self) -> None:
        self.watching = not self.watching
        self.set_class(self.watching, "watching")
        self._mtime = self._file_mtime()
        self._refresh_status()

    def _poll_file(self) -> None:
        mtime = self._file_mtime()
        if self.watching and mtime is not None and mtime != self._mtime and not self.checking:
            self._mtime = mtime
            self.action_check()

    def action_check(self) -> None:
        if self.checking:
            return
        path = workspace.start(self.current)
        self.checking = True
        self.query_one("#results", Static).update(f"Checking {path} on {self.device or 'the GPU, if there is one'}…")
        self.query_one("#tabs", TabbedContent).active = "tab-results"
        self._run_check(self.current, path)

    @work(thread=True, exclusive=True)
    def _run_check(self, puzzle: catalog.Puzzle, path: Path) -> None:
        try:
            report = self._grader.check(puzzle.id, path, CheckOptions(device=self.device))
        except RuntimeError as err:
            if self.is_running:
                self.call_from_thread(self.show_failure, str(err))
            return
        if self.is_running:
            self.call_from_thread(self.show_report, puzzle, report)

    def show_failure(self, message: str) -> None:
        """The grading service itself failed: nothing was graded, nothing is recorded."""
        self.checking = False
        self.query_one("#results", Static).update(f"No verdict: {message}")

    def show_report(self, puzzle: catalog.Puzzle, report: Report) -> None:
        """Record a check's report and show it (if that puzzle is still on screen)."""
        self.checking = False
        self.store.record(report, counts=not is_solution_copy(puzzle, Path(report.path)))
        if puzzle.id == self.current.id:
            self.query_one("#results", Static).update("\n".join(report_lines(report, puzzle.title)))
            self._refresh_status()
        else:
            index = self.puzzles.index(puzzle)
            self.query_one("#puzzle-list", OptionList).replace_option_prompt_at_index(
                index, _row(puzzle, self.store.status(puzzle.id))
            )


def _report(data: dict) -> Report:
    from tilescope.core.model import from_json

    return from_json(Report, data)
