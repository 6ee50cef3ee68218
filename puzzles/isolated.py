"""Grading in a child process, so that a learner's kernel cannot take the grader down with it.

A kernel that faults leaves the CUDA context unusable for the rest of the process, and one that
hangs never returns: either way only the child is lost. The child is kept warm between checks
(importing torch and TileLang costs seconds) and replaced after any runtime failure.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any

from puzzles.report import Report
from tilelang_core.model import from_json, to_json


def _serve(conn: Connection) -> None:
    from puzzles import catalog, grader

    while True:
        request = conn.recv()
        if request is None:
            return
        puzzle = catalog.get(request["puzzle"])
        report = grader.grade(puzzle, request["path"], device=request["device"], perf=request["perf"])
        conn.send(to_json(report))


class IsolatedGrader:
    """``grade`` as a service: one warm child process, restarted after a crash, fault or timeout."""

    def __init__(self, timeout_s: float = 600.0) -> None:
        self.timeout_s = timeout_s
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: SpawnProcess | None = None
        self._conn: Connection | None = None

    def __enter__(self) -> IsolatedGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> Connection:
        if self._proc is None or not self._proc.is_alive() or self._conn is None:
            self.close()
            parent, child = self._ctx.Pipe()
            self._proc = self._ctx.Process(target=_serve, args=(child,), daemon=True)
            self._proc.start()
            child.close()
            self._conn = parent
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(BrokenPipeError, OSError):
                self._conn.send(None)
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            self._proc.join(timeout=2)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
            self._proc = None

    def _kill(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._proc = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def grade(self, puzzle: str, path: str | Path, *, device: str, perf: bool = True) -> Report:
        path = str(Path(path).resolve())
        conn = self._start()
        request: dict[str, Any] = {"puzzle": puzzle, "path": path, "device": device, "perf": perf}
        conn.send(request)
        problem = None
        try:
            if conn.poll(self.timeout_s):
                data = conn.recv()
                report = from_json(Report, data)
                if report.failure == "runtime-error":
                    self._kill()
                return report
            problem = f"The check did not finish within {self.timeout_s:g} s: the kernel may never terminate."
        except (EOFError, OSError):
            problem = "The grading process died while running the kernel (a crash in compiled code)."
        self._kill()
        return Report(puzzle=puzzle, path=path, device=device, passed=False, failure="runtime-error", summary=problem)
