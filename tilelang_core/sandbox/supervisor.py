"""The supervisor process: started by ``supervise.Supervised`` as a script (``python -I supervisor.py``,
standard library only, no package imported), it starts the command in a session of its own with
resource limits, its file sandbox and its network cut applied in the child between ``fork`` and
``exec``, and stays its parent: it records the signals user code sends it, ends the tree on request
and when the caller goes away.

Control protocol (one line each way): the caller writes ``sweep`` (or ``sweep <pid>``: that child of the
command, which the command has killed and reaps itself, is left to it); the supervisor answers
``swept <ended> <signal names or ->``. Closing the control pipe means: end everything and exit.
The supervisor first writes ``pid <child pid>``, last ``exit <code>`` (the child's own code as
``Popen`` gives it: ``-n`` when signal ``n`` ended it, so a status 139 and a SIGSEGV stay apart),
and exits with the child's code (``128 + n`` for a child ended by signal ``n``). Its options are
what ``supervise.Limits.arguments`` writes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilescope.core.sandbox.landlock import Sandbox

_KILL_ROUNDS = 200
_RECORDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGPIPE", "SIGTSTP")
"""Signals user code may send the supervisor: recorded and reported by ``sweep``, never obeyed."""


def become_subreaper() -> None:
    """Orphans of this process's tree are re-parented to it rather than to init (Linux only): the supervisor's,
    and the caller's of ``Supervised``, which finds a killed supervisor's orphans by their token."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def kill_until_gone(alive: Callable[[], list[int]], reap: Callable[[set[int]], None]) -> int:
    """SIGKILL what ``alive()`` lists, round after round, reaping after each, until it lists nothing;
    returns how many processes were ended."""
    ended: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        victims = alive()
        if not victims:
            break
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            ended.add(pid)
        time.sleep(0.005)
        reap(ended)
    return len(ended)


@functools.cache
def _landlock() -> ModuleType:
    """The core's ``landlock`` module, loaded from beside this file (run as a script, no package is imported)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_tilescope_landlock", os.path.join(os.path.dirname(__file__), "landlock.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _sandbox(sandbox: Sandbox) -> None:
    """In the child before ``exec``: seal it, or end it (exit 126) when the sandbox asked for cannot be made."""
    try:
        _landlock().hide(sandbox)
        _landlock().apply(sandbox)
    except OSError as err:
        os.write(2, f"supervise: the file sandbox could not be applied ({err})\n".encode())
        os._exit(126)


def _offline() -> None:
    """In the child before ``exec`` and before its file sandbox (a user namespace writes ``/proc/self``): cut
    its network, or end it (exit 126) when that cannot be done."""
    try:
        _landlock().cut_network()
    except OSError as err:
        os.write(2, f"supervise: the network could not be cut ({err})\n".encode())
        os._exit(126)


def _stat(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first, then the parent); None once the
    process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def _parent(pid: int) -> int | None:
    """The parent of ``pid``; None once it is gone."""
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def _tree(root: int) -> list[int]:
    """Live (non-zombie) descendants of ``root``, read from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat(entry)
        if not fields or fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    frontier = [root]
    while frontier:
        below = children.get(frontier.pop(), [])
        found.extend(below)
        frontier.extend(below)
    return found


class _Supervisor:
    def __init__(self, control: int, reply: int) -> None:
        self.control = control
        self.reply = reply
        self.signals: list[str] = []
        self.child = 0
        self.code: int | None = None

    def record(self, number: int, _frame: object) -> None:
        name = signal.Signals(number).name
        if name not in self.signals:
            self.signals.append(name)

    def start(self, argv: list[str], memory_mb: int, cpu_s: int, sandbox: Sandbox | None, offline: bool) -> None:
        import resource

        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.close(self.control)
                os.close(self.reply)
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
                if memory_mb > 0:
                    size = memory_mb * 1024 * 1024
                    resource.setrlimit(resource.RLIMIT_AS, (size, size))
                if cpu_s > 0:
                    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
                for name in _RECORDED:
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
                if offline:
                    _offline()
                if sandbox is not None:
                    _sandbox(sandbox)
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        self.child = pid
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)
        self.answer(f"pid {pid}")

    def answer(self, line: str) -> None:
        with contextlib.suppress(OSError):
            os.write(self.reply, (line + "\n").encode())

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.child:
                self.code = os.waitstatus_to_exitcode(status)

    def end(self, keep: int | None, ending: int | None = None) -> int:
        """SIGKILL the tree (but ``keep``, and ``ending`` if it is ``keep``'s own child) until nothing of it is
        left; returns how many were ended."""
        kept = {keep} if keep is not None else set()
        if ending is not None and keep is not None and _parent(ending) == keep:
            kept.add(ending)
        return kill_until_gone(lambda: [pid for pid in _tree(os.getpid()) if pid not in kept], lambda _: self.reap())

    def run(self) -> int:
        waiter = os.pidfd_open(self.child) if hasattr(os, "pidfd_open") else None
        buffer = b""
        while self.code is None:
            watched = [self.control] + ([waiter] if waiter is not None else [])
            readable, _, _ = select.select(watched, [], [], 0.5)
            self.reap()
            if self.control not in readable:
                continue
            chunk = os.read(self.control, 4096)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                command, _, buffer = buffer.partition(b"\n")
                words = command.split()
                if words[:1] == [b"sweep"] and len(words) <= 2 and all(w.isdigit() for w in words[1:]):
                    ending = int(words[1]) if len(words) == 2 else None
                    ended = self.end(keep=self.child if self.code is None else None, ending=ending)
                    self.answer(f"swept {ended} {','.join(self.signals) or '-'}")
                    self.signals.clear()
        self.end(keep=None)
        self.reap()
        if self.code is None:
            return 137
        self.answer(f"exit {self.code}")
        return self.code if self.code >= 0 else 128 - self.code


def main(arguments: list[str]) -> int:
    split = arguments.index("--")
    options = dict(zip(arguments[:split:2], arguments[1:split:2], strict=True))
    argv = arguments[split + 1 :]
    supervisor = _Supervisor(int(options["--control"]), int(options["--reply"]))
    for name in _RECORDED:
        signal.signal(getattr(signal, name), supervisor.record)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {getattr(signal, n) for n in _RECORDED})  # blocked by guard_signals
    become_subreaper()
    sandbox = _landlock().Sandbox.from_json(options["--sandbox"]) if "--sandbox" in options else None
    memory_mb, cpu_s = int(options.get("--memory-mb", 0)), int(options.get("--cpu-s", 0))
    supervisor.start(argv, memory_mb, cpu_s, sandbox, "--offline" in options)
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
