"""One supervisor for every child process that runs user code.

``Supervised(argv)`` starts a small supervisor process (``supervisor.py``, run as a script, standard
library only), which starts ``argv`` in a session of its own with resource limits applied in the child
between ``fork`` and ``exec``. So:

- user code's parent is the supervisor, not the caller: ``os.kill(os.getppid(), SIGTERM)`` reaches a
  process that records the signal and carries on, and the caller's process group and session are
  out of reach of ``killpg(0, ...)``;
- the supervisor is a child subreaper, so processes the child starts stay in its tree even after a
  double fork or ``setsid``; ``sweep()`` ends all of them but the child, and ``kill()`` ends the
  whole tree (the caller going away ends it too: the control pipe closes);
- no ``preexec_fn`` runs in the caller, which may have threads;
- the caller is a child subreaper too, and every process of a tree carries the tree's token in its
  environment (``TOKEN_VARIABLE``), so when user code kills the supervisor, what it started (in a
  session of its own or not) is re-parented to the caller, not to init, and ``kill()`` still finds
  and ends it: nothing of the tree outlives ``kill()``;
- ``guard_signals()`` (for a long-lived caller such as the language server) makes the caller ignore
  termination signals sent from inside its own process tree: a kernel that walks up to its
  grandparent cannot end the server, while the editor's signals act as before.

The supervisor itself, and the control protocol between it and ``Supervised``, is ``supervisor.py``.
"""

from __future__ import annotations

import collections
import contextlib
import os
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from tilescope.core.sandbox.supervisor import become_subreaper, kill_until_gone

if TYPE_CHECKING:
    from tilescope.core.sandbox.landlock import Sandbox

_EXIT_GRACE_S = 3.0
TOKEN_VARIABLE = "TILESCOPE_SUPERVISED"
"""The environment variable naming the tree a process belongs to."""
_GUARDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT")
_live: set[int] = set()
"""Supervisor pids of the trees running in this process (for ``guard_signals``)."""
_SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervisor.py")
"""The supervisor, run as a script: no package is imported in it."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for the supervised child (0: none)."""

    memory_mb: int = 0
    """Address space (``RLIMIT_AS``): allocations beyond it fail in the child instead of swapping."""
    cpu_s: int = 0
    """CPU seconds (``RLIMIT_CPU``): the kernel ends the child with SIGXCPU past it."""
    sandbox: Sandbox | None = None
    """The only paths the child may read or write (``landlock``); None: no file sandbox."""
    offline: bool = False
    """No network for the child (``landlock.cut_network``); where it cannot be cut, the child is not started."""

    def arguments(self) -> list[str]:
        sandbox = [] if self.sandbox is None else ["--sandbox", self.sandbox.to_json()]
        offline = ["--offline", "1"] if self.offline else []
        return ["--memory-mb", str(self.memory_mb), "--cpu-s", str(self.cpu_s), *offline, *sandbox]


@dataclass(frozen=True)
class Sweep:
    """What ``sweep()`` found: processes ended, and signals user code sent to the supervisor."""

    ended: int
    signals: tuple[str, ...]


class SupervisorLost(Exception):
    """The supervisor stopped answering (user code stopped or killed it); ``kill()`` still cleans up."""


class Supervised:
    """A command running behind the supervisor; ``stdin``/``stdout``/``stderr`` are the command's."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        limits: Limits = Limits(),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stdin: int | IO[bytes] | None = subprocess.PIPE,
        stdout: int | IO[bytes] | None = subprocess.PIPE,
        stderr: int | IO[bytes] | None = subprocess.PIPE,
        start_timeout_s: float = 30.0,
        stderr_lines: int = 0,
    ) -> None:
        self._closing = threading.Lock()
        self._exit: int | None = None
        self._tail: collections.deque[str] = collections.deque(maxlen=max(stderr_lines, 1))
        self._tail_reader: threading.Thread | None = None
        become_subreaper()
        self.token = secrets.token_hex(8)
        control_read, self._control = os.pipe()
        self._replies, reply_write = os.pipe()
        command = [sys.executable, "-I", _SUPERVISOR, "--control", str(control_read), "--reply", str(reply_write)]
        try:
            self.process = subprocess.Popen(
                [*command, *limits.arguments(), "--", *argv],
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                env={**(os.environ if env is None else env), TOKEN_VARIABLE: self.token},
                cwd=cwd,
                pass_fds=(control_read, reply_write),
                start_new_session=True,
            )
        finally:
            os.close(control_read)
            os.close(reply_write)
        self._buffer = b""
        first = self._line(start_timeout_s)
        if not first.startswith("pid "):
            self.kill()
            raise SupervisorLost(f"the supervisor did not start the command ({first or 'no answer'})")
        self.pid = int(first.split()[1])
        _live.add(self.process.pid)
        """The supervised command's pid (also its process group and session id)."""
        if stderr_lines > 0 and stderr == subprocess.PIPE:
            self._tail_reader = threading.Thread(target=self._read_stderr, daemon=True)
            self._tail_reader.start()

    @property
    def stdin(self) -> IO[bytes] | None:
        return self.process.stdin

    @property
    def stdout(self) -> IO[bytes] | None:
        return self.process.stdout

    @property
    def stderr(self) -> IO[bytes] | None:
        return self.process.stderr

    def poll(self) -> int | None:
        """The command's exit code once it and the supervisor are gone, else ``None``."""
        return self.process.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.process.wait(timeout)

    def exit_code(self, timeout: float | None = None) -> int | None:
        """The command's own exit code once the supervisor is gone, ``Popen``-style (``-n``: ended by signal
        ``n``); ``None`` while it still runs after ``timeout``, or when the supervisor was lost before saying."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        with self._closing:
            self._drain()
        return self._exit

    def stderr_tail(self, wait_s: float = 0.5) -> list[str]:
        """The last ``stderr_lines`` lines the command wrote to stderr (when started with ``stderr_lines``);
        once it has exited, waits up to ``wait_s`` for the lines still in the pipe."""
        if self._tail_reader is not None and self.process.poll() is not None:
            self._tail_reader.join(wait_s)
        return list(self._tail)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._tail.append(line.decode(errors="replace").rstrip("\n"))

    def sweep(self, timeout: float = 5.0, ending: int | None = None) -> Sweep:
        """End every process of the tree except the command itself; report signals sent upwards.

        ``ending``: a child the command has already killed and reaps itself (the compiler worker's child, whose
        address space takes the kernel 15-25 ms to tear down): left to the command, and not counted, when it
        is the command's own child; its descendants are ended like every other process."""
        command = b"sweep\n" if ending is None else f"sweep {int(ending)}\n".encode()
        try:
            os.write(self._control, command)
        except OSError as err:
            raise SupervisorLost(f"the supervisor is gone ({err})") from err
        answer = self._line(timeout).split()
        if len(answer) != 3 or answer[0] != "swept":
            raise SupervisorLost("the supervisor stopped answering")
        return Sweep(int(answer[1]), tuple(answer[2].split(",")) if answer[2] != "-" else ())

    def kill(self) -> int | None:
        """End the whole tree and wait for it; safe to call more than once, from any thread."""
        with self._closing:
            return self._kill()

    def _kill(self) -> int | None:
        if self._control >= 0:
            with contextlib.suppress(OSError):
                os.close(self._control)
            self._control = -1
        try:
            code: int | None = self.process.wait(_EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            code = None
        if code is None or _alive(getattr(self, "pid", 0)):
            with contextlib.suppress(OSError):
                self.process.kill()
            with contextlib.suppress(OSError):
                os.killpg(getattr(self, "pid", 0) or self.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.process.wait(_EXIT_GRACE_S)
        if self._replies >= 0:
            if code is not None:
                self._drain()
            os.close(self._replies)
            self._replies = -1
        end_marked(self.token)
        _live.discard(self.process.pid)
        return code

    def _drain(self) -> None:
        """Read what the supervisor wrote before it exited (its ``exit`` line)."""
        while self._replies >= 0 and self._line(0.5):
            pass

    def _line(self, timeout: float) -> str:
        """The next reply line but ``exit``, which is kept for ``exit_code``; "" on timeout or end."""
        while True:
            line = self._raw_line(timeout)
            if not line.startswith("exit "):
                return line
            with contextlib.suppress(ValueError):
                self._exit = int(line.split()[1])

    def _raw_line(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._replies < 0:
                return ""
            try:
                readable, _, _ = select.select([self._replies], [], [], remaining)
                chunk = os.read(self._replies, 4096) if readable else None
            except (OSError, ValueError):
                return ""
            if chunk is None:
                continue
            if not chunk:
                return ""
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace").strip()


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _marked(token: str) -> list[int]:
    """Live processes whose environment names the tree ``token``."""
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as handle:
                if handle.read().rsplit(b")", 1)[-1][:3].strip() == b"Z":
                    continue
        except OSError:
            continue
        found.append(int(entry))
    return found


def end_marked(token: str) -> int:
    """SIGKILL every process of the tree ``token`` still alive (orphans of a supervisor user code
    killed, re-parented to this subreaper), and reap those that became this process's children."""

    def reap(ended: set[int]) -> None:
        for pid in ended:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)

    return kill_until_gone(lambda: [pid for pid in _marked(token) if pid != os.getpid()], reap)


def _below(pid: int, root: int) -> bool:
    """Whether ``pid`` descends from ``root`` (its parents read from ``/proc``)."""
    for _ in range(64):
        if pid == root:
            return True
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                pid = int(handle.read().rsplit(b")", 1)[-1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def guard_signals(on_ignored: Callable[[str, int], None] | None = None) -> None:
    """Ignore termination signals sent to this process by its own descendants (user code in a
    supervised tree); from anyone else, such a signal ends the process as it would have.

    Call it from the main thread early: the signals are blocked in it and in the threads started
    after, and taken by one that asks the kernel who sent each (``sigwaitinfo``). A thread that
    runs with them unblocked (some native libraries start one) can still take one, without its
    sender: such a signal is ignored while a supervised tree is running, and acts otherwise."""
    numbers = {getattr(signal, name) for name in _GUARDED}
    signal.pthread_sigmask(signal.SIG_BLOCK, numbers)

    def unattributed(number: int, _frame: object) -> None:
        if _live:
            if on_ignored is not None:
                on_ignored(signal.Signals(number).name, 0)
            return
        signal.signal(number, signal.SIG_DFL)
        os._exit(128 + number)

    for number in numbers:
        signal.signal(number, unattributed)

    def watch() -> None:
        while True:
            info = signal.sigwaitinfo(numbers)
            if info.si_pid != os.getpid() and _below(info.si_pid, os.getpid()):
                if on_ignored is not None:
                    on_ignored(signal.Signals(info.si_signo).name, info.si_pid)
                continue
            signal.signal(info.si_signo, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {info.si_signo})
            os.kill(os.getpid(), info.si_signo)
            os._exit(128 + info.si_signo)

    threading.Thread(target=watch, name="tilescope-signals", daemon=True).start()


def become_undumpable() -> None:
    """Make this process's ``/proc`` entries (``environ``, ``cmdline``, ``mem``) its owner's alone and refuse
    ptrace, for a process holding secrets (a server's database password, a grader's hidden seed); Linux only."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
