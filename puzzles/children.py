"""Every process the grader starts, started and watched here: one place, so that a shared
supervisor can replace it.

A child speaks JSON lines: requests on its stdin, replies on a private copy of its stdout (whatever
the code it loads prints goes to stderr, of which the last lines are kept). Resource limits are
applied by the child itself at start (``apply_limits``), never through ``preexec_fn``. When a
child exits, is killed or hangs, ``ChildGone`` says how, with its exit status or signal and the
tail of its stderr, so the report can name the real reason.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from tilescope.core.spawn import module_command

LIMITS_ENV = "TILESCOPE_CHILD_LIMITS"
STDERR_LINES = 20


class ChildGone(Exception):
    """The child did not answer: it exited, was killed, or ran past its time limit."""

    def __init__(self, role: str, reason: str, status: int | None, signal_name: str | None, stderr: list[str]):
        super().__init__(reason)
        self.role = role
        self.reason = reason
        self.status = status
        self.signal_name = signal_name
        self.stderr = stderr

    @property
    def timed_out(self) -> bool:
        return self.status is None and self.signal_name is None


def apply_limits() -> None:
    """In the child, at start: the limits its parent asked for in ``TILESCOPE_CHILD_LIMITS``."""
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    spec = json.loads(os.environ.get(LIMITS_ENV) or "{}")
    if "address_space" in spec:
        limit = int(spec["address_space"])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def reply_channel() -> IO[str]:
    """In the child: a private copy of stdout for replies; fd 1 then points at stderr."""
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return replies


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


class Child:
    """One child process running ``python -m MODULE``."""

    def __init__(
        self,
        role: str,
        module: str,
        *,
        prefix: list[str] | None = None,
        limits: dict[str, int] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.role = role
        child_env = {**os.environ, **(env or {}), LIMITS_ENV: json.dumps(limits or {}), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [*(prefix or []), *module_command(sys.executable, module)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=str(Path(__file__).resolve().parent / "content"),  # no module there can shadow an import
            env=child_env,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.stderr_all: list[str] | None = [] if prefix else None
        threading.Thread(target=self._pump_out, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line.rstrip("\n"))
            if self.stderr_all is not None:
                self.stderr_all.append(line.rstrip("\n"))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict[str, Any]) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._gone(None) from None

    def receive(self, timeout_s: float) -> dict[str, Any] | str:
        """The next reply as a dict, or the raw line when it is not a JSON object."""
        try:
            line = self._lines.get(timeout=max(0.0, timeout_s))
        except queue.Empty:
            raise self._gone(timeout_s) from None
        if line is None:
            raise self._gone(None)
        try:
            value = json.loads(line)
        except ValueError:
            return line.rstrip("\n")
        return value if isinstance(value, dict) else line.rstrip("\n")

    def _gone(self, timeout_s: float | None) -> ChildGone:
        if timeout_s is not None:
            self.kill()
            tail = list(self._stderr)
            return ChildGone(self.role, f"did not answer within {timeout_s:g} s", None, None, tail)
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        time.sleep(0.05)  # let the stderr pump drain the last lines
        tail = list(self._stderr)
        if code is not None and code < 0:
            name = _signal_name(code)
            why = f"was killed by {name}"
            if name == "SIGKILL":
                why += " (often the system's out-of-memory killer)"
            elif name in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE"):
                why += " (a crash in compiled code)"
            return ChildGone(self.role, why, None, name, tail)
        return ChildGone(self.role, f"exited with status {code}", code, None, tail)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def close(self, wait_s: float = 3.0) -> None:
        """Ask the child to stop (end of input), then kill it if it lingers."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=wait_s)
            except (subprocess.TimeoutExpired, OSError):
                pass
        self.kill()
