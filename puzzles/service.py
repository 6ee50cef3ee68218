"""A per-user warm grading service, so that ``puzzles check`` from the shell pays for no imports.

The service is an ``IsolatedGrader`` behind a Unix socket in the user's data folder (mode 0600): it
is the grader process (verdicts are made there, never in a child), keeps the kernel process warm
and a spare loader ready, answers one check at a time, and exits after ``IDLE_S`` without one.
``check`` connects, starting the service first when none answers; the report comes back as JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

IDLE_S = 600.0
START_S = 120.0


def socket_path() -> Path:
    from tilescope.puzzles.progress import data_dir

    return data_dir() / "grader.sock"


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        return sock
    except OSError:
        sock.close()
        return None


def _start(path: Path) -> None:
    from tilescope.core.spawn import module_command

    path.parent.mkdir(parents=True, exist_ok=True)
    log = open(path.with_suffix(".log"), "ab")  # noqa: SIM115  (handed to the service, which outlives us)
    subprocess.Popen(
        module_command(sys.executable, "tilescope.puzzles.service"),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    log.close()


def request(message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """Send one request to the service (starting it if needed) and return its JSON answer."""
    path = socket_path()
    sock = _connect(path)
    if sock is None:
        _start(path)
        deadline = time.monotonic() + START_S
        while sock is None and time.monotonic() < deadline:
            time.sleep(0.1)
            sock = _connect(path)
        if sock is None:
            raise RuntimeError(f"the grading service did not start; see {path.with_suffix('.log')}")
    with sock, sock.makefile("rw") as stream:
        sock.settimeout(timeout_s)
        stream.write(json.dumps(message) + "\n")
        stream.flush()
        line = stream.readline()
    if not line:
        raise RuntimeError("the grading service closed the connection without an answer")
    answer: dict[str, Any] = json.loads(line)
    return answer


def check(
    puzzle: str, path: str, *, device: str | None, perf: bool, seed: int | None, sanitize: bool, timeout_s: float
) -> Any:
    """A ``Report`` from the service."""
    from tilescope.core.model import from_json
    from tilescope.puzzles.report import Report

    message = {
        "op": "check",
        "puzzle": puzzle,
        "path": str(Path(path).resolve()),
        "device": device,
        "perf": perf,
        "seed": seed,
        "sanitize": sanitize,
        "timeout_s": timeout_s,
    }
    answer = request(message, timeout_s=3600.0)
    if "error" in answer:
        raise RuntimeError(answer["error"])
    return from_json(Report, answer["report"])


def stop() -> bool:
    """Ask a running service to exit; False when none answered."""
    sock = _connect(socket_path())
    if sock is None:
        return False
    with sock, sock.makefile("rw") as stream:
        stream.write(json.dumps({"op": "stop"}) + "\n")
        stream.flush()
        stream.readline()
    return True


def _answer(grader: Any, message: dict[str, Any]) -> dict[str, Any]:
    from tilescope.core.model import to_json

    grader.timeout_s = float(message.get("timeout_s") or 60.0)
    report = grader.grade(
        str(message["puzzle"]),
        str(message["path"]),
        device=message.get("device"),
        perf=bool(message.get("perf", True)),
        seed=message.get("seed"),
        sanitize=bool(message.get("sanitize", False)),
    )
    return {"report": to_json(report), "pid": os.getpid()}


def serve(path: Path, idle_s: float = IDLE_S) -> None:
    """Answer checks on ``path`` until ``idle_s`` pass without one, or a ``stop`` arrives."""
    from tilescope.puzzles.isolated import IsolatedGrader

    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        server.bind(str(path))
    finally:
        os.umask(old)
    server.listen(4)
    server.settimeout(idle_s)
    grader = IsolatedGrader()
    try:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                return
            with conn, conn.makefile("rw") as stream:
                line = stream.readline()
                try:
                    message = json.loads(line)
                    if message.get("op") == "stop":
                        stream.write(json.dumps({"stopped": True}) + "\n")
                        return
                    if message.get("op") != "check":
                        raise ValueError(f"unknown request {message.get('op')!r}")
                    answer = _answer(grader, message)
                except Exception as err:  # a bad request must not take the service down
                    answer = {"error": f"{type(err).__name__}: {err}"}
                with contextlib.suppress(OSError):
                    stream.write(json.dumps(answer) + "\n")
                    stream.flush()
    finally:
        grader.close()
        server.close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


if __name__ == "__main__":
    serve(socket_path(), float(os.environ.get("TILESCOPE_GRADER_IDLE_S", IDLE_S)))
