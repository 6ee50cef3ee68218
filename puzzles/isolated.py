"""``IsolatedGrader``: checks as a service for the app and the command line.

It keeps the grader's helper processes (``session``) between checks: a warm kernel process and a
spare loader, so a check in the app pays for neither import. The verdict is always made here, in
this process (``judge``); a crash, hang or forged message in a helper only ever fails the check.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilescope.puzzles.report import Report


class IsolatedGrader:
    def __init__(self, timeout_s: float = 60.0, *, keep_spare: bool = True, cpu_only: bool = False) -> None:
        from tilescope.puzzles.session import Session

        self.timeout_s = timeout_s
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
    ) -> Report:
        """Check ``path`` for ``puzzle``: on the GPU if there is one (``device=None``), else the CPU path."""
        from tilescope.puzzles import catalog, grader, judge
        from tilescope.puzzles.children import ChildGone

        p = catalog.get(puzzle)
        with self._lock:
            if device is None:
                try:
                    _, hello = self.session.executor()
                except ChildGone as gone:
                    return judge.exit_report({"puzzle": p.id, "path": str(path), "device": "?"}, gone, "starting", [])
                device = "cuda" if hello.get("cuda") else "cpu"
            if device == "cpu":
                return grader.grade_cpu(p, path, session=self.session, timeout_s=self.timeout_s, seed=seed)
            return judge.check(
                p, path, self.session, device=device, perf=perf, timeout_s=self.timeout_s, seed=seed, sanitize=sanitize
            )
