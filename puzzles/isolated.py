"""``IsolatedGrader``: the one in-process grader, which the grading service runs for the app and the shell.

It keeps the grader's helper processes (``session``) between checks: a warm kernel process and a
spare loader, so a check pays for neither import. The verdict is always made here, in this process
(``judge``); a crash, hang or forged message in a helper only ever fails the check.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tilescope.puzzles.session import DEFAULT_TIMEOUT_S, Session

if TYPE_CHECKING:
    from tilescope.puzzles.report import Report


class IsolatedGrader:
    def __init__(self, *, keep_spare: bool = True, cpu_only: bool = False) -> None:
        self.session = Session(keep_spare=keep_spare, cpu_only=cpu_only)
        self._lock = threading.Lock()

    def __enter__(self) -> IsolatedGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.session.close()

    def grade(
        self,
        puzzle: str,
        path: str | Path,
        *,
        device: str | None = None,
        perf: bool = True,
        seed: int | None = None,
        sanitize: bool = False,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        started: float | None = None,
    ) -> Report:
        """Check ``path`` for ``puzzle``: on the GPU if there is one (``device=None``), else the CPU path.

        ``timeout_s`` bounds starting the helpers and loading the file, counted from ``started`` (a
        ``time.monotonic()`` value, default now), and then each compile and each run.
        """
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
                return grader.grade_cpu(p, path, session=self.session, timeout_s=timeout_s, started=started, seed=seed)
            return judge.check(
                p,
                path,
                self.session,
                device="cuda",
                perf=perf,
                timeout_s=timeout_s,
                started=started,
                seed=seed,
                sanitize=sanitize,
            )
