"""``IsolatedGrader``: the one in-process grader, which the grading service runs for the app and the shell.

It keeps the grader's helper processes (``session``) between checks: a warm kernel process and a
spare loader, so a check pays for neither import; for checks without a GPU also a spare compiler
worker (the core's ``Analyzer``, which lowers for sm_90), used by one check only, like the loader,
since it runs the file's code too. Here the route is chosen (``gpu_route`` or ``cpu_route``); the
verdict is always made in this process (``judge``); a crash, hang or forged message in a helper only
ever fails the check.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from tilescope.puzzles.session import DEFAULT_OPTIONS, CheckOptions, Session

if TYPE_CHECKING:
    from tilescope.puzzles.report import Report
    from tilescope.puzzles.seal import SealedAnalyzer


class IsolatedGrader:
    def __init__(self, *, keep_spare: bool = True, cpu_only: bool = False) -> None:
        self.session = Session(keep_spare=keep_spare, cpu_only=cpu_only)
        self.keep_spare = keep_spare
        self._lock = threading.Lock()
        self._spare_analyzer: SealedAnalyzer | None = None

    def __enter__(self) -> IsolatedGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.session.close()
        if self._spare_analyzer is not None:
            self._spare_analyzer.stop()  # at once, even while its worker still starts
            self._spare_analyzer = None

    def _analyzer(self) -> SealedAnalyzer | None:
        """A fresh analyzer for one check, already warming (None without spares: the CPU route makes one)."""
        if not self.keep_spare:
            return None
        analyzer = self._spare_analyzer or _warming()
        self._spare_analyzer = None
        return analyzer

    def check(self, puzzle: str, path: str | Path, options: CheckOptions = DEFAULT_OPTIONS) -> Report:
        """Check ``path`` for ``puzzle``: on the GPU if there is one (``options.device`` None), else the CPU path.

        ``options.timeout_s`` bounds the file's own time: loading it, then each compile and each run (the
        helpers' start is not the file's time and has its own limit).
        """
        from tilescope.puzzles import catalog, judge
        from tilescope.puzzles.children import ChildGone
        from tilescope.puzzles.cpu_route import CpuRoute
        from tilescope.puzzles.failures import exit_report
        from tilescope.puzzles.gpu_route import GpuRoute

        p = catalog.get(puzzle)
        with self._lock:
            device = options.device
            if device is None:
                try:
                    _, hello = self.session.executor()
                except ChildGone as gone:
                    return exit_report({"puzzle": p.id, "path": str(path), "device": "?"}, gone, "starting", [])
                device = "cuda" if hello.get("cuda") else "cpu"
            if device == "cuda":
                route = GpuRoute(perf=options.perf, sanitize=options.sanitize)
                return judge.check(p, path, route, session=self.session, timeout_s=options.timeout_s, seed=options.seed)
            analyzer = self._analyzer()
            if analyzer is not None:
                analyzer.timeout_s = options.timeout_s
            try:
                route = CpuRoute(analyzer=analyzer)
                return judge.check(p, path, route, session=self.session, timeout_s=options.timeout_s, seed=options.seed)
            finally:
                if analyzer is not None:
                    analyzer.close()
                    self._spare_analyzer = _warming()


def _warming() -> SealedAnalyzer:
    """A sealed analyzer whose worker starts now, on a thread (it imports TileLang: seconds)."""
    from tilescope.puzzles.seal import SealedAnalyzer

    analyzer = SealedAnalyzer(DEFAULT_OPTIONS.timeout_s)

    def warm() -> None:
        with contextlib.suppress(Exception):  # a worker that cannot start is reported by the check that needs it
            analyzer.warm()

    threading.Thread(target=warm, daemon=True).start()
    return analyzer
