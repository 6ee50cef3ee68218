"""The grader's children (loader, kernel process, sanitizer runs) and the line protocol they speak.

Each child runs behind the core's supervisor (``tilescope.core.sandbox.supervise``), as the compiler worker
does: in a session of its own, with its resource limits applied between ``fork`` and ``exec``, its
whole process tree ended when it is killed, and its own exit status or signal reported apart. A
child speaks JSON lines: requests on its stdin, replies on a private copy of its stdout (whatever
the code it loads prints goes to stderr, of which the last lines are kept). When a child exits, is
killed or hangs, ``ChildGone`` says how, with its exit status or signal and the tail of its stderr,
so the report can name the real reason.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any, Protocol

from tilescope.core.sandbox import landlock
from tilescope.core.sandbox.clean_env import clean_env
from tilescope.core.sandbox.spawn import module_command
from tilescope.core.sandbox.supervise import Limits, Supervised, SupervisorLost
from tilescope.puzzles import seal
from tilescope.puzzles.report import Role

ADDRESS_SPACE = 16 << 30
"""The loader's memory limit: far above what building any kernel needs, far below the machine."""

STDERR_LINES = 20


class ChildGone(Exception):
    """The child did not answer: it exited, was killed, or ran past its time limit."""

    def __init__(self, role: Role, reason: str, status: int | None, signal_name: str | None, stderr: list[str]):
        super().__init__(reason)
        self.role: Role = role
        self.reason = reason
        self.status = status
        self.signal_name = signal_name
        self.stderr = stderr

    @property
    def timed_out(self) -> bool:
        return self.status is None and self.signal_name is None


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


def ended(role: Role, code: int | None, tail: list[str]) -> ChildGone:
    """How a child that stopped answering ended, from its exit code (``Popen``'s: ``-n`` for signal ``n``)."""
    if code is not None and code < 0:
        name = _signal_name(code)
        why = f"was killed by {name}"
        if name == "SIGKILL":
            why += " (often the system's out-of-memory killer)"
        elif name in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE"):
            why += " (a crash in compiled code)"
        return ChildGone(role, why, None, name, tail)
    return ChildGone(role, f"exited with status {code}", code, None, tail)


def next_reply(
    lines: queue.Queue[str | None], timeout_s: float, gone: Callable[[float | None], ChildGone]
) -> dict[str, Any] | str:
    """A child's next reply line from ``lines`` (``None``: it ended) as a dict, or the raw line when it is not a
    JSON object; ``gone(timeout_s)`` past the time, ``gone(None)`` once it ended (and at every later call)."""
    try:
        line = lines.get(timeout=max(0.0, timeout_s))
    except queue.Empty:
        raise gone(timeout_s) from None
    if line is None:
        lines.put(None)
        raise gone(None)
    line = line.rstrip("\n")
    try:
        value = json.loads(line)
    except ValueError:
        return line
    return value if isinstance(value, dict) else line


class Loader(Protocol):
    """A process that runs one check's learner code (``builder``): a ``Child`` of its own, or one forked
    from the warm loader (``loader_fork.ForkedLoader``)."""

    role: Role
    sealed: bool

    def send(self, message: Mapping[str, Any]) -> None: ...

    def receive(self, timeout_s: float) -> dict[str, Any] | str: ...

    def kill(self) -> None: ...


class Child:
    """One supervised child running ``python -m MODULE`` (behind ``prefix``, a tool that wraps it)."""

    def __init__(
        self,
        role: Role,
        module: str,
        *,
        prefix: list[str] | None = None,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
        unset: tuple[str, ...] = (),
        sealed: bool = False,
    ) -> None:
        """``unset``: variables of this process's environment the child does not inherit. ``sealed``: the
        child runs learner code and gets the file sandbox of ``seal`` (where the kernel
        has one). Every child works in a private, empty folder of its own (no module there can shadow
        an import), removed when it ends, which is its ``HOME`` and ``TMPDIR`` too; its environment holds only
        the allowed variables of this one (``clean_env``), never a server's secrets; and it has no network
        (where it is cut here), except one behind a ``prefix`` (compute-sanitizer, whose tool speaks to the
        process it watches), which runs no Python of the learner's either."""
        self.role: Role = role
        self.private = seal.private_folder(role)
        sandbox = seal.sandbox(self.private) if sealed else None
        self.sealed = sandbox is not None
        limits = limits or Limits()
        if sandbox is not None:
            limits = dataclasses.replace(limits, sandbox=sandbox)
        if prefix is None and landlock.network_can_be_cut():
            limits = dataclasses.replace(limits, offline=True)
        inherited = clean_env(self.private, {k: v for k, v in os.environ.items() if k not in unset})
        private = seal.private_env(self.private, sealed)
        child_env = {**inherited, **private, **(env or {}), "PYTHONUNBUFFERED": "1"}
        try:
            self.process = Supervised(
                [*(prefix or []), *module_command(sys.executable, module)],
                limits=limits,
                env=child_env,
                cwd=self.private,
                stderr_lines=STDERR_LINES,
            )
        except SupervisorLost as lost:
            seal.release(self.private)
            raise ChildGone(role, f"could not be started ({lost})", None, None, []) from None
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump_out, daemon=True).start()

    def _pump_out(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.decode(errors="replace"))
        self._lines.put(None)

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, message: Mapping[str, Any]) -> None:
        try:
            assert self.process.stdin is not None
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._gone(None) from None

    def receive(self, timeout_s: float) -> dict[str, Any] | str:
        """The next reply as a dict, or the raw line when it is not a JSON object."""
        return next_reply(self._lines, timeout_s, self._gone)

    def _gone(self, timeout_s: float | None) -> ChildGone:
        if timeout_s is not None:
            self.kill()
            return ChildGone(self.role, f"did not answer within {timeout_s:g} s", None, None, self.stderr_tail())
        code = self.process.exit_code(timeout=5)
        if code is None:
            self.kill()
            code = self.process.exit_code(timeout=0)
        return ended(self.role, code, self.stderr_tail())

    def stderr_tail(self) -> list[str]:
        return self.process.stderr_tail()

    def kill(self) -> None:
        """End the child and every process it started, and remove its private folder."""
        self.process.kill()
        seal.release(self.private)

    def close(self, wait_s: float = 3.0) -> None:
        """Ask the child to stop (end of input), then end its whole tree if it lingers."""
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
                self.process.wait(timeout=wait_s)
            except (subprocess.TimeoutExpired, OSError, ValueError):
                pass
        self.kill()
