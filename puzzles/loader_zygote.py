"""The warm loader: imports TileLang once and forks a fresh loader (``builder``) for every check.

Importing TileLang and torch is most of a loader's cost (about 2.4 s of CPU of a CPU check's 4); a child
forked from a process that has them starts at once. The zygote runs no learner code and holds nothing of
any learner's: it is started sealed like any loader (``seal``), and each child it forks is put in a
Landlock domain of its own before anything else runs (``landlock.confine``): it writes only its own fresh
folder (its working directory, ``HOME`` and ``TMPDIR``), cannot signal, trace or read the memory of the
zygote or of any other child, and reads what a fresh loader reads. The grader ends each child's whole tree
(the zygote kills the child, the supervisor sweeps what it left) before the next fork, which first removes
every earlier child's folder; so nothing one check's code leaves can reach the next.

The zygote only relays bytes, through one fixed buffer that it clears after each use: a learner's source
on its way in, its replies and stderr on their way out. It never makes Python objects of them, so a child
(a copy of the zygote's memory) finds no earlier learner's file or output in it.

Protocol, on a private copy of stdout and on stdin (``loader_fork`` is the grader's side): the zygote says
``R <pid>`` once ready (``B <why>`` if it cannot fork safely). The grader sends ``F <n>`` (fork child
``n``), ``T <n> <length>`` and that many bytes (for child ``n``'s stdin), ``K <n>`` (kill it, answered
``K <n>``). The zygote sends ``S <n>`` (started), ``O <n> <length>`` and ``E <n> <length>`` with child
``n``'s stdout and stderr bytes, and ``X <n> <code>`` once it has ended (``Popen``'s code: ``-9`` for SIGKILL),
or ``N <n> <threads>`` when it could not fork (another thread was running).
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import shutil
import signal
import sys
import time
from typing import NoReturn

from tilescope.core.sandbox.frames import write_all

CHUNK = 1 << 16
_ZEROS = bytes(CHUNK)
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""Set before anything is imported: numpy's OpenBLAS and OpenMP would otherwise start thread pools, and a
process must hold one thread when it forks (a lock held by another thread stays held in the child)."""
_UNSET = [name for name in ONE_THREAD if name not in os.environ]
"""The thread settings the zygote makes for itself (read as this module is imported, before ``main`` sets
them), undone in each child: a fresh loader has none."""
_HEADER_MAX = 64
CHILD_PREFIX = "check-"
EOF_GRACE_S = 5.0
"""How long a child that closed its stdout may go on before it is killed (a fresh loader's ``Child`` waits
as long for its exit status)."""


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0  # cannot be counted here: not forked


class Relay:
    """The zygote's one child at a time and the bytes between it and the grader, in one cleared buffer."""

    def __init__(self, control: int, replies: int, folder: str) -> None:
        self.control = control
        self.replies = replies
        self.folder = folder
        self.buffer = bytearray(CHUNK)
        self.n = -1
        self.pid = 0
        self.stdin = self.stdout = self.stderr = -1
        self.eof_at: float | None = None

    def send(self, header: str, payload: int = 0) -> None:
        """A header line, then the first ``payload`` bytes of the buffer, which are then cleared."""
        write_all(self.replies, header.encode() + b"\n")
        if payload:
            write_all(self.replies, memoryview(self.buffer)[:payload])  # a view: no copy of the learner's bytes
            self.buffer[:payload] = _ZEROS[:payload]

    def serve(self) -> None:
        """Relay until the grader closes the control channel, then end the child."""
        while True:
            readable = [self.control] + [fd for fd in (self.stdout, self.stderr) if fd >= 0]
            ready = select.select(readable, [], [], 0.05 if self.pid else None)[0]
            if self.control in ready:
                if not self.command():
                    break
                continue  # a fork may have reused the numbers of the pipes just found readable: look again
            for fd, tag in ((self.stdout, "O"), (self.stderr, "E")):
                if fd >= 0 and fd in ready:
                    self.forward(fd, tag)
            self.watch()
        self.kill()

    def command(self) -> bool:
        """Read one header from the grader (a byte at a time: what follows may be a learner's bytes, which
        only ever go into ``buffer``) and act on it; False once the grader is gone."""
        line = b""
        while not line.endswith(b"\n"):
            byte = os.read(self.control, 1)
            if not byte or len(line) > _HEADER_MAX:
                return False
            line += byte
        words = line.decode("ascii", errors="replace").split()
        if len(words) == 2 and words[0] == "F":
            self.fork(int(words[1]))
        elif len(words) == 3 and words[0] == "T":
            self.relay_in(int(words[1]), int(words[2]))
        elif len(words) == 2 and words[0] == "K":
            if int(words[1]) == self.n:
                self.kill()
            self.send(f"K {words[1]}")
        return True

    def relay_in(self, n: int, length: int) -> None:
        """``length`` bytes from the grader for child ``n``'s stdin (dropped if it is not the current child)."""
        left = length
        view = memoryview(self.buffer)
        while left:
            got = os.readv(self.control, [view[: min(left, CHUNK)]])
            if not got:
                raise OSError("the grader closed the control channel inside a payload")
            if n == self.n and self.stdin >= 0:
                try:
                    write_all(self.stdin, view[:got])
                except OSError:
                    self._close("stdin")  # the child is gone: its exit is reported by ``watch``
            self.buffer[:got] = _ZEROS[:got]
            left -= got

    def forward(self, fd: int, tag: str) -> None:
        got = os.readv(fd, [self.buffer])
        if got:
            self.send(f"{tag} {self.n} {got}", got)
            return
        self._close("stdout" if tag == "O" else "stderr")
        if tag == "O":
            self.eof_at = time.monotonic()

    def watch(self) -> None:
        """Report the child's end once it has exited (or kill it a while after it closed its stdout)."""
        if not self.pid:
            return
        if self.eof_at is not None and time.monotonic() - self.eof_at > EOF_GRACE_S:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self.ended(status)

    def ended(self, status: int) -> None:
        """The child has exited: what it wrote before is forwarded, then its code."""
        for fd, tag in ((self.stdout, "O"), (self.stderr, "E")):
            while fd >= 0 and select.select([fd], [], [], 0)[0]:
                got = os.readv(fd, [self.buffer])
                if not got:
                    break
                self.send(f"{tag} {self.n} {got}", got)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        self.send(f"X {self.n} {code}")
        self.pid = 0
        for name in ("stdin", "stdout", "stderr"):
            self._close(name)

    def kill(self) -> None:
        """End the current child now (what it started is the supervisor's sweep's, at the grader's word)."""
        if not self.pid:
            return
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        self.ended(status)

    def _close(self, name: str) -> None:
        fd = getattr(self, name)
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
            setattr(self, name, -1)

    def fork(self, n: int) -> None:
        """A fresh child for check ``n``, in a fresh folder; every earlier child's folder is removed first."""
        self.kill()
        for entry in os.listdir(self.folder):
            if entry.startswith(CHILD_PREFIX):
                shutil.rmtree(os.path.join(self.folder, entry), ignore_errors=True)
        threads = _threads()
        if threads != 1:
            self.send(f"N {n} {threads}")  # never fork beside another thread: it may hold a lock forever
            return
        own = os.path.join(self.folder, f"{CHILD_PREFIX}{n}")
        os.makedirs(os.path.join(own, "home"), mode=0o700)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        gc.collect(1)
        gc.freeze()  # a child's collections never write to the pages it shares with the zygote
        pid = os.fork()
        if pid == 0:
            _child(own, in_r, out_w, err_w, (self.control, self.replies, in_w, out_r, err_r))
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        self.n, self.pid, self.eof_at = n, pid, None
        self.stdin, self.stdout, self.stderr = in_w, out_r, err_r
        self.send(f"S {n}")


def _child(own: str, stdin: int, stdout: int, stderr: int, closed: tuple[int, ...]) -> NoReturn:
    """In the forked child: confined to ``own`` before anything else, then a loader's life (``builder.serve``)."""
    code = 1
    try:
        for fd in closed:
            os.close(fd)
        os.dup2(stdin, 0)
        os.dup2(stderr, 1)
        os.dup2(stderr, 2)
        for fd in (stdin, stderr):
            os.close(fd)
        from tilescope.core.sandbox import landlock
        from tilescope.core.worker.child import dumpable

        landlock.confine(own)
        dumpable(True)  # its own processes stay findable by their tree's token (``supervise``'s sweep)
        os.chdir(own)
        for name in ("TMPDIR", "TEMP", "TMP"):
            os.environ[name] = own
        os.environ["HOME"] = os.path.join(own, "home")
        os.environ["TILELANG_CACHE_DIR"] = os.path.join(own, "tilelang-cache")
        for name in _UNSET:
            os.environ.pop(name, None)
        import tempfile

        tempfile.tempdir = None
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        from tilescope.puzzles import builder

        sys.stdin = open(0, closefd=False)  # noqa: SIM115  (the process's own, for its life)
        builder.serve(sys.stdin, os.fdopen(stdout, "w"))
        code = 0
    except SystemExit as done:  # what the file's sys.exit() says, as a fresh loader would exit
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if done.code is not None and not isinstance(done.code, int):
            print(done.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def main() -> None:
    for name, value in ONE_THREAD.items():
        os.environ.setdefault(name, value)
    from tilescope.core.worker.child import dumpable
    from tilescope.puzzles import builder
    from tilescope.puzzles.children import reply_channel

    replies = reply_channel()
    dumpable(False)  # no child reads this process's memory or descriptors (``confine`` keeps them apart too)
    builder.prepare()
    control = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    relay = Relay(control, replies.fileno(), os.getcwd())
    threads = _threads()
    relay.send(f"R {os.getpid()}" if threads == 1 else f"B holds {threads} threads")
    relay.serve()


if __name__ == "__main__":
    main()
