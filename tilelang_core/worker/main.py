"""The worker process: a warm zygote that owns TileLang and forks one child per request.

It is started by ``tilescope.core.compiler.service.Analyzer`` behind ``tilescope.core.sandbox.supervise``. Requests
arrive as JSON lines on a private copy of stdin; answers leave as frames (``tilescope.core.sandbox.frames``)
on a private copy of stdout. Fd 0 is then pointed at ``/dev/null`` and fd 1 at stderr.

The zygote imports TileLang and what a child's analysis imports, says it is ready, takes its warm-up steps
(kernels of its own, analysed) while no request waits, and never runs user code: for each request a child
forked from it closes the zygote's channels, reads the request, loads the user's file, answers over a pipe of
its own and is ended. The child is forked ahead of its request, once the previous child is ended and its
answer confirmed (the caller's sweep of the process tree has run by then, so it never meets a spare): the fork
is not on the path of a request that comes after a pause, as an edit's does. A spare is a copy of the zygote
as much as a child forked on demand is: the zygote runs no user code between the two. Whatever user code
changes (patched modules, globals, import hooks, threads) dies with the child, so one analysis can never shape
the next one's answer, and the next request starts from the warm zygote instead of a fresh interpreter. The
zygote holds no thread but its main one when it forks (``thread_count``): a native pool started before a fork
would be half-copied into the child.

Towards the child the zygote plays the part the caller once played towards the whole worker: a
child's answer stands only once the child confirms it with a secret drawn after the fork, and only
when the child reported nothing left running (``leftovers``); the zygote ends the child at the
request's deadline (``deadline_s``, the caller's wall clock) and says which phase it had reached.
Signals user code sends its parent (the zygote) are recorded and reported, not obeyed; the zygote is
not dumpable and each child is put in a Landlock domain of its own (``landlock.apart``), so a child
cannot read or write the zygote's memory or descriptors through ``/proc`` or ptrace, even as root.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import select
import signal
import sys
import threading
import time
from collections import OrderedDict
from typing import Any, BinaryIO, NamedTuple

from tilescope.core.compat import releases
from tilescope.core.protocol import COLD_VARIABLE
from tilescope.core.sandbox.frames import CHANNEL_DAMAGED_EXIT, confirmation, encode, write_all
from tilescope.core.worker.child import RECORDED, child, dumpable
from tilescope.core.worker.handler import Worker
from tilescope.core.worker.watch import Watch

FIRST_REQUEST_S = 0.05
"""How long the zygote looks for a request the caller held for its hello before it warms up instead."""
_CACHE_SIZE = 32
"""Answers to ``pass_ir`` the zygote keeps (the bytes a child sent): a diff asked for again is not lowered again."""
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""Set before anything is imported: OpenBLAS (numpy) and OpenMP (a lowering) would otherwise start pools
in the zygote, which must hold one thread when it forks."""


def _channels() -> tuple[BinaryIO, int]:
    """Private copies of stdin and stdout for the protocol; fds 0 and 1 are left to user code."""
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull)  # noqa: SIM115  (lives as long as the process)
    sys.stdout = sys.stderr
    return requests, replies


def thread_count() -> int:
    """Threads of this process, native ones included (``threading`` sees only Python's)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def thread_names() -> list[str]:
    """The names of this process's threads (``cuda00001400006`` for the CUDA driver's), to say which one is extra."""
    names = []
    with contextlib.suppress(OSError):
        for task in sorted(os.listdir("/proc/self/task")):
            with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/comm") as comm:
                names.append(comm.read().strip())
    return names


def _start() -> tuple[Worker | None, dict[str, Any]]:
    """The worker, or why it cannot run here: checked before TileLang is imported, which may fail."""
    version = releases.installed_version()
    problem = releases.problem(version)
    if problem:
        return None, {"ready": False, "code": "tilelang-version", "error": problem}
    try:
        worker = Worker()
    except Exception as err:
        error = f"{type(err).__name__}: {err}"
        return None, {"ready": False, "code": "tilelang-import", "error": error, "version": version}
    return worker, {"ready": True, "pid": os.getpid(), "tilelang": version, "threads": thread_count()}


class Spare(NamedTuple):
    """A child forked ahead of its request, waiting for it on ``down``; the zygote's ends of its pipes."""

    pid: int
    down: int
    up: int
    err: int


class Zygote:
    """The warm parent: keeps a spare child forked, hands it a request, watches it, answers for it and ends
    it."""

    def __init__(self, worker: Worker, requests: BinaryIO, replies: int) -> None:
        self.worker = worker
        self.requests = requests
        self.replies = replies
        self.signals: list[str] = []
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._spare: Spare | None = None
        self._ending: int | None = None
        """The last child, killed but not yet reaped (``_kill``)."""
        for name in RECORDED:
            signal.signal(getattr(signal, name), self._record)

    def _record(self, number: int, _frame: object) -> None:
        name = signal.Signals(number).name
        if name not in self.signals:
            self.signals.append(name)

    def serve(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (``id``, ``ok``, ``result`` or ``error``, and what the child did)."""
        ident = request.get("id")
        if request.get("op") == "ping":
            self.retire()
            if request.get("warm"):
                self.worker.warm(lambda: False)
            return {"id": ident, "ok": True, "result": {"pid": os.getpid(), "threads": thread_count()}}
        deadline = time.monotonic() + float(request.pop("deadline_s", 3600.0))
        key = _cache_key(request) if request.get("op") == "pass_ir" else None
        if key is not None and key in self._cache:
            self._cache.move_to_end(key)
            self.retire()
            return {**json.loads(self._cache[key]), "id": ident}
        self.signals.clear()
        answer = self._fork(request, deadline)
        answer["signals"] = list(self.signals)
        if key is not None and answer.get("ok") and not answer.get("notes") and not self.signals:
            self._cache[key] = json.dumps({k: answer[k] for k in ("ok", "result")}).encode()
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return {**answer, "id": ident}

    def _fork(self, request: dict[str, Any], deadline: float) -> dict[str, Any]:
        spare, self._spare = self._spare or self.spawn(), None
        if spare is None:
            # Never fork with another thread alive: it could hold a lock the child then waits on forever.
            held = f"{thread_count()} threads ({', '.join(thread_names())})"
            return {"ok": False, "error": f"the compiler worker holds {held}, so it cannot fork"}
        ident = request.get("id")

        def forward(partial: dict[str, Any]) -> None:
            """An analysis so far that the child confirmed, passed on and confirmed to the caller in turn."""
            frame = encode(ident, {"partial": partial})
            try:
                write_all(self.replies, frame)
            except OSError:
                os._exit(CHANNEL_DAMAGED_EXIT)
            _confirm(self.requests, self.replies, ident, frame)

        try:
            with contextlib.suppress(OSError):  # a spare that died unasked: the watch says how it ended
                write_all(spare.down, (json.dumps(request) + "\n").encode())
            answer = Watch(spare.pid, ident, spare.up, spare.down, spare.err, deadline, forward).answer()
        finally:
            self._ending = _kill(spare)
        # Killed, it can no longer act; the kernel takes 15-25 ms to tear its address space down, which happens
        # while the answer travels: the caller's sweep leaves this child (and only it) to the zygote, which
        # reaps it before it forks again. Set here, over anything the child's own frame said.
        return {**answer, "ending": spare.pid}

    def spawn(self) -> Spare | None:
        """A child forked now that waits for its request; None while the zygote holds more than one thread."""
        if thread_count() != 1:
            return None
        self._reap()
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        err_r, err_w = os.pipe()
        # The zygote's objects leave the collector's generations: a child's collection never walks them, which
        # would write to every page it shares with the zygote (copying them: 60-100 ms of a GEMM's analysis).
        # The young generations are collected first, so the zygote's own garbage is not kept forever.
        gc.collect(1)
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            os.dup2(err_w, 2)
            closed = (self.requests.fileno(), self.replies, down_w, up_r, err_r, err_w)
            child(self.worker, down_r, up_w, closed)
        os.close(down_r)
        os.close(up_w)
        os.close(err_w)
        return Spare(pid, down_w, up_r, err_r)

    def retire(self) -> None:
        """End the spare before an answer no child gave: the caller's sweep after it must find no process
        but the zygote (it would end the spare and count it as left behind by user code)."""
        self._reap()
        if self._spare is not None:
            _kill(self._spare)
            _reap(self._spare.pid)
            self._spare = None

    def _reap(self) -> None:
        """Wait for the last child killed (gone by now, mostly: its answer has been read and confirmed since)."""
        if self._ending is not None:
            _reap(self._ending)
            self._ending = None

    def warm(self, first: bool = False) -> None:
        """The worker's warm-up steps, while no request waits. Right after the hello the caller may be about to
        send the request it held for it (an editor's first file), so the first look waits a moment for it. (A
        request the reader already buffered with the last confirmation waits for the steps: the pipe shows
        nothing.)"""
        wait = FIRST_REQUEST_S if first else 0.0
        fd = self.requests.fileno()

        def waiting() -> bool:
            nonlocal wait
            found = bool(select.select([fd], [], [], wait)[0])
            wait = 0.0
            return found

        self.worker.warm(waiting)

    def ready(self) -> None:
        """Between requests, once the last answer is confirmed: a spare forked for the next request."""
        if self._spare is None:
            self._spare = self.spawn()


def _kill(child: Spare) -> int:
    """Close the zygote's ends of a child's pipes and kill it; its pid, for ``_reap``."""
    for fd in (child.up, child.down, child.err):
        os.close(fd)
    with contextlib.suppress(OSError):
        os.kill(child.pid, signal.SIGKILL)
    return child.pid


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _cache_key(request: dict[str, Any]) -> str:
    parts = {k: v for k, v in request.items() if k != "id"}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def main() -> None:
    cold = os.environ.pop(COLD_VARIABLE, "") == "1"
    for name, value in ONE_THREAD.items():
        os.environ[name] = value
    dumpable(False)
    requests, replies = _channels()
    worker, hello = _start()
    write_all(replies, encode(None, hello))
    if worker is None:
        return
    if cold:
        worker.skip_warm_up()
    zygote = Zygote(worker, requests, replies)
    zygote.warm(first=True)
    zygote.ready()
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError:
            continue  # a secret the caller sent for an answer this worker did not confirm
        if not isinstance(request, dict):
            continue
        answer = zygote.serve(request)
        frame = encode(request.get("id"), answer)
        try:
            write_all(replies, frame)
        except OSError:
            os._exit(CHANNEL_DAMAGED_EXIT)
        _confirm(requests, replies, request.get("id"), frame)
        zygote.warm()
        zygote.ready()


def _confirm(requests: BinaryIO, replies: int, request_id: int | None, frame: bytes) -> None:
    """Read the caller's secret for this answer (sent only now) and confirm the answer with it."""
    secret = requests.readline().decode(errors="replace").strip()
    try:
        write_all(replies, confirmation(request_id, frame, secret))
    except OSError:
        os._exit(CHANNEL_DAMAGED_EXIT)


if __name__ == "__main__":
    main()
