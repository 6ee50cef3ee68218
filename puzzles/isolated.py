"""``IsolatedGrader``: the one in-process grader, which the grading service runs for the app and the shell.

It keeps the grader's helper processes (``session``) between checks: a warm kernel process and a
spare loader, so a check pays for neither import; for checks without a GPU also a spare compiler
worker (the core's ``Analyzer``, which lowers for sm_90), used by one check only, like the loader,
since it runs the file's code too. The verdict is always made here, in this process (``judge``); a
crash, hang or forged message in a helper only ever fails the check.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tilescope.puzzles.session import DEFAULT_OPTIONS, CheckOptions, Session

if TYPE_CHECKING:
    from tilescope.core import Analyzer
    from tilescope.puzzles.report import Report


class IsolatedGrader:
    def __init__(self, *, keep_spare: bool = True, cpu_only: bool = False) -> None:
        self.session = Session(keep_spare=keep_spare, cpu_only=cpu_only)
        self.keep_spare = keep_spare
        self._lock = threading.Lock()
        self._spare_analyzer: Analyzer | None = None

    def __enter__(self) -> IsolatedGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.session.close()
        if self._spare_analyzer is not None:
            self._spare_analyzer.stop()  # at once, even while its worker still starts
            self._spare_analyzer = None

    def _analyzer(self) -> Analyzer | None:
        """A fresh analyzer for one check, already warming (None without spares: ``grade_cpu`` makes one)."""
        if not self.keep_spare:
            return None
        analyzer = self._spare_analyzer or _warming()
        self._spare_analyzer = None
        return analyzer

    def check(
        self, puzzle: str, path: str | Path, options: CheckOptions = DEFAULT_OPTIONS, started: float | None = None
    ) -> Report:
        """Check ``path`` for ``puzzle``: on the GPU if there is one (``options.device`` None), else the CPU path.

        ``options.timeout_s`` bounds starting the helpers and loading the file, counted from ``started``
        (a ``time.monotonic()`` value, default now), and then each compile and each run.
        """
        device, timeout_s, seed = options.device, options.timeout_s, options.seed
        from tilescope.puzzles import catalog, grader, judge
        from tilescope.puzzles.children import ChildGone

        p = catalog.get(puzzle)
        started = time.monotonic() if started is None else started
        with self._lock:
            if device is None:
                try:
                    _, hello = self.session.executor(started + timeout_s - time.monotonic())
                except ChildGone as gone:
                    return judge.exit_report({"puzzle": p.id, "path": str(path), "device": "?"}, gone, "starting", [])
                device = "cuda" if hello.get("cuda") else "cpu"
            if device == "cpu":
                analyzer = self._analyzer()
                if analyzer is not None:
                    analyzer.timeout_s = timeout_s
                try:
                    return grader.grade_cpu(
                        p,
                        path,
                        session=self.session,
                        analyzer=analyzer,
                        timeout_s=timeout_s,
                        started=started,
                        seed=seed,
                    )
                finally:
                    if analyzer is not None:
                        analyzer.close()
                        self._spare_analyzer = _warming()
            return judge.check(
                p,
                path,
                self.session,
                device="cuda",
                perf=options.perf,
                timeout_s=timeout_s,
                started=started,
                seed=seed,
                sanitize=options.sanitize,
            )


def _warming() -> Analyzer:
    """An analyzer whose worker starts now, on a thread (it imports TileLang: seconds)."""
    from tilescope.core import Analyzer

    analyzer = Analyzer()

    def warm() -> None:
        with contextlib.suppress(Exception):  # a worker that cannot start is reported by the check that needs it
            analyzer.warm()

    threading.Thread(target=warm, daemon=True).start()
    return analyzer
