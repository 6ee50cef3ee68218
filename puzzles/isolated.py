"""Grading in a child process, so that a learner's kernel cannot take the grader down with it.

A kernel that faults leaves the CUDA context unusable for the rest of the process, and one that
hangs never returns: either way only the child is lost. The child is kept warm between checks
(importing torch and TileLang costs seconds) and replaced after any runtime failure. Requests and
reports travel as JSON lines over the child's stdin and a private copy of its stdout; whatever the
compiler prints goes to stderr.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from tilescope.core.model import from_json, to_json
from tilescope.core.spawn import module_command
from tilescope.puzzles.report import Report


def serve(requests: IO[str], replies: IO[str]) -> None:
    """The child's loop: one JSON request per line in, one JSON report per line out."""
    from tilescope.puzzles import catalog, grader

    for line in requests:
        request = json.loads(line)
        puzzle = catalog.get(request["puzzle"])
        report = grader.grade(puzzle, request["path"], device=request["device"], perf=request["perf"])
        replies.write(json.dumps(to_json(report)) + "\n")
        replies.flush()


class IsolatedGrader:
    """``grade`` as a service: one warm child process, restarted after a crash, fault or timeout."""

    def __init__(self, timeout_s: float = 600.0, python: str | None = None) -> None:
        self.timeout_s = timeout_s
        self.python = python or sys.executable
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()

    def __enter__(self) -> IsolatedGrader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                module_command(self.python, "tilescope.puzzles.isolated"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                cwd=str(Path(__file__).resolve().parent.parent),
            )
            self._lines = queue.Queue()
            threading.Thread(target=self._pump, args=(self._proc.stdout, self._lines), daemon=True).start()
        return self._proc

    @staticmethod
    def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def grade(self, puzzle: str, path: str | Path, *, device: str, perf: bool = True) -> Report:
        path = str(Path(path).resolve())
        request: dict[str, Any] = {"puzzle": puzzle, "path": path, "device": device, "perf": perf}
        with self._lock:
            proc = self._start()
            try:
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
                line = self._lines.get(timeout=self.timeout_s)
            except queue.Empty:
                line = ""
                problem = f"The check did not finish within {self.timeout_s:g} s: the kernel may never terminate."
            except (BrokenPipeError, OSError):
                line = None
            if line:
                report = from_json(Report, json.loads(line))
                if report.failure == "runtime-error":
                    self._kill()
                return report
            if line is None:
                problem = "The grading process died while running the kernel (a crash in compiled code)."
            self._kill()
        return Report(puzzle=puzzle, path=path, device=device, passed=False, failure="runtime-error", summary=problem)


def main() -> None:
    """Serve requests on stdin; replies go to a private copy of stdout, everything printed to stderr."""
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    serve(sys.stdin, replies)


if __name__ == "__main__":
    main()
