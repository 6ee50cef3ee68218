"""The per-user warm grading service that the app and ``puzzles check`` share, so a check pays for no imports.

The service is an ``IsolatedGrader`` behind a Unix socket in the user's data folder (mode 0600): it
is the grader process (verdicts are made there, never in a child), keeps the kernel process warm
and a spare loader ready, answers one check at a time, and exits after ``IDLE_S`` without one. Its
socket is named for the interpreter, the installed package and its version, so that a checkout or
an upgrade never talks to a service running other code; a lock file keeps it to one per name.
``Client.check`` connects, starting the service first when none answers; the report comes back as JSON.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tilescope.puzzles.session import DEFAULT_OPTIONS, DEFAULT_TIMEOUT_S, CheckOptions

if TYPE_CHECKING:
    from tilescope.puzzles.isolated import IsolatedGrader
    from tilescope.puzzles.report import Report

IDLE_S = 600.0
START_S = 120.0


def socket_path() -> Path:
    from importlib.metadata import PackageNotFoundError, version

    from tilescope.puzzles.progress import data_dir

    try:
        own = version("tilescope")
    except PackageNotFoundError:
        own = "?"
    code = "\0".join((sys.executable, str(Path(__file__).resolve().parent), own))
    return data_dir() / f"grader-{hashlib.sha256(code.encode()).hexdigest()[:12]}.sock"


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        return sock
    except OSError:
        sock.close()
        return None


def _start(path: Path) -> None:
    from tilescope.core.sandbox.spawn import module_command

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


def _open() -> socket.socket:
    """A connection to the service, started first when none answers."""
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
    return sock


def _exchange(sock: socket.socket, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    with sock, sock.makefile("rw") as stream:
        sock.settimeout(timeout_s)
        stream.write(json.dumps(message) + "\n")
        stream.flush()
        line = stream.readline()
    if not line:
        raise RuntimeError("the grading service closed the connection without an answer")
    answer: dict[str, Any] = json.loads(line)
    return answer


def request(message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """Send one request to the service (starting it if needed) and return its JSON answer."""
    return _exchange(_open(), message, timeout_s)


class Client:
    """Checks through the service; ``cancel()``, from any thread, drops the check in flight (the service
    finishes it; its answer is dropped)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._cancelled = False

    def check(self, puzzle: str, path: str | Path, options: CheckOptions = DEFAULT_OPTIONS) -> Report:
        """A ``Report`` from the service; ``timeout_s`` counts the file's own time, not the service's start.
        Raises RuntimeError when the service fails or is cancelled."""
        from tilescope.core.model import from_json
        from tilescope.puzzles.report import Report

        sock = _open()
        with self._lock:
            if self._cancelled:
                sock.close()
                raise RuntimeError("the check was cancelled")
            self._sock = sock
        message = {
            "op": "check",
            "puzzle": puzzle,
            "path": str(Path(path).resolve()),
            **dataclasses.asdict(options),
        }
        try:
            answer = _exchange(sock, message, timeout_s=3600.0)
        except (OSError, ValueError) as err:
            raise RuntimeError(f"the grading service did not answer ({err})") from None
        finally:
            with self._lock:
                self._sock = None
        if "error" in answer:
            raise RuntimeError(answer["error"])
        report: Report = from_json(Report, answer["report"])
        return report

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._sock is not None:
                with contextlib.suppress(OSError):
                    self._sock.shutdown(socket.SHUT_RDWR)


def check(puzzle: str, path: str | Path, options: CheckOptions = DEFAULT_OPTIONS) -> Report:
    """One check through the service."""
    return Client().check(puzzle, path, options)


def status() -> dict[str, Any] | None:
    """The running service's pid and how many checks it has answered; None when none answers."""
    sock = _connect(socket_path())
    return None if sock is None else _exchange(sock, {"op": "status"}, 30.0)


def stop() -> bool:
    """Ask a running service to exit; False when none answered."""
    sock = _connect(socket_path())
    if sock is None:
        return False
    _exchange(sock, {"op": "stop"}, 30.0)
    return True


def _answer(grader: IsolatedGrader, message: dict[str, Any]) -> dict[str, Any]:
    from tilescope.core.model import to_json

    options = CheckOptions(
        device=message.get("device"),
        perf=bool(message.get("perf", True)),
        seed=message.get("seed"),
        sanitize=bool(message.get("sanitize", False)),
        timeout_s=float(message.get("timeout_s") or DEFAULT_TIMEOUT_S),
    )
    report = grader.check(str(message["puzzle"]), str(message["path"]), options)
    return {"report": to_json(report), "pid": os.getpid()}


def _sole(path: Path) -> Any:
    """The service's lock file, held for its life; None when another service holds it."""
    import fcntl

    lock = open(path.with_suffix(".lock"), "a")  # noqa: SIM115  (held until the service exits)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None
    return lock


def serve(path: Path, idle_s: float = IDLE_S) -> None:
    """Answer checks on ``path`` until ``idle_s`` pass without one, or a ``stop`` arrives."""
    from tilescope.puzzles.isolated import IsolatedGrader

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = _sole(path)
    if lock is None:  # another service started first: clients reach that one
        return
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
    checks = 0
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
                    if message.get("op") == "status":
                        answer = {"pid": os.getpid(), "checks": checks}
                    elif message.get("op") == "check":
                        checks += 1
                        answer = _answer(grader, message)
                    else:
                        raise ValueError(f"unknown request {message.get('op')!r}")
                except Exception as err:  # a bad request must not take the service down
                    answer = {"error": f"{type(err).__name__}: {err}"}
                with contextlib.suppress(OSError):
                    stream.write(json.dumps(answer) + "\n")
                    stream.flush()
    finally:  # gone for clients first, then the helpers end
        server.close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        lock.close()
        grader.close()


if __name__ == "__main__":
    serve(socket_path(), float(os.environ.get("TILESCOPE_GRADER_IDLE_S", IDLE_S)))
