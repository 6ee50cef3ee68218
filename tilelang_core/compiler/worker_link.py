"""One supervised worker process, its pipes and its framed replies, for ``service.Analyzer``.

The worker runs behind ``supervise.Supervised``; replies are read as frames (``frames``) naming the
request they answer; after each answer the supervisor ends what the build left running and
reports signals sent to it, which come back as notes for the caller to show at the kernel.

An answer stands only once the worker confirms it with a secret sent after the build, when no
thread of the build is left (the worker's own list, and its thread count from ``/proc``); a build
that leaves threads is an error, its answer untrusted. After any build that left something (a
thread, a process, stdio changed, frames or bytes not from the worker, an unfinished frame) the
worker is retired: the next request starts a fresh one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import secrets
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any

from tilescope.core.codes import CodeName
from tilescope.core.sandbox.clean_env import clean_env, tilelang_cache
from tilescope.core.sandbox.clean_env import sandbox as confinement
from tilescope.core.sandbox.frames import CHANNEL_DAMAGED_EXIT, FrameReader, digest
from tilescope.core.sandbox.landlock import Sandbox, network_can_be_cut
from tilescope.core.sandbox.spawn import NO_GPU, worker_command
from tilescope.core.sandbox.supervise import Limits, Supervised, SupervisorLost

START_TIMEOUT_S = 120.0
WALL_FACTOR = 3.0
"""A request never waits longer than this many times its timeout, however little CPU the worker got."""
_BLOCKED_SHARE = 0.1
"""A worker that computed under this share of the wall time is waiting, not working."""
_STDERR_LINES = 60
CONFIRM_TIMEOUT_S = 10.0
"""How long the worker may take to confirm an answer (it only reads a line and writes a frame)."""
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class WorkerError(Exception):
    """The worker died or stopped answering; ``code`` names which for the diagnostic, ``form`` and
    ``fields`` fill its message where the code's message is not the usual one about a kernel's build."""

    def __init__(self, code: CodeName, message: str, form: str | None = None, **fields: object) -> None:
        super().__init__(message)
        self.code: CodeName = code
        self.form = form
        self.fields = fields


class WorkerLink:
    """One supervised worker process and its pipes; not thread-safe (``Analyzer`` serialises access)."""

    def __init__(
        self,
        python: str,
        memory_mb: int,
        sandbox: Sandbox | None = None,
        workdir: str | None = None,
        gpu: bool = False,
        sealed: bool = False,
    ) -> None:
        """``sandbox`` seals the worker (``landlock``); ``workdir`` is its working directory, ``TMPDIR`` and
        TileLang's cache folder (which TileLang makes on import: outside ``workdir`` a sealed worker could not);
        ``gpu`` lets it see the machine's GPUs (``profile``'s timing worker only).

        Every worker runs the file's own code, which may be an agent's: its environment is ``clean_env``'s
        (never this process's secrets), its ``HOME`` and ``TMPDIR`` an empty private folder, it has no network
        where it can be cut, and without ``sandbox`` it gets ``clean_env.sandbox``: it writes only that folder
        (``sealed``: code no one vouches for) or where the user may, and reads neither the places of secrets
        nor another process's ``/proc`` entries."""
        self._own = None if workdir is not None else tempfile.mkdtemp(prefix="tilescope-worker-")
        private = workdir or self._own
        assert private is not None
        hidden = {} if gpu else NO_GPU
        env = {**clean_env(private), "PYTHONUNBUFFERED": "1", "TILELANG_ENABLE_IR_SPAN": "1", **hidden}
        sealed = sealed or workdir is not None
        env["TILELANG_CACHE_DIR"] = os.path.join(private, "tilelang-cache") if sealed else tilelang_cache()
        if sandbox is None:
            sandbox = confinement(private, write_everywhere=not sealed)
        else:
            sandbox = dataclasses.replace(sandbox, write=(*sandbox.write, private))
        self.python = python
        try:
            self.process = Supervised(
                worker_command(python),
                limits=Limits(memory_mb=memory_mb, sandbox=sandbox, offline=network_can_be_cut()),
                env=env,
                cwd=workdir,
                stderr_lines=_STDERR_LINES,
            )
        except BaseException:
            self._remove_own()
            raise
        self._selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self._selector.register(self.process.stdout, selectors.EVENT_READ)
        self._frames = FrameReader()
        self._next_id = 0
        self._threads = 0
        """The worker's thread count when it was ready."""

    def wait_ready(self) -> None:
        """Wait for the worker's first frame (it imports TileLang first: seconds)."""
        try:
            ready = self.read(None, START_TIMEOUT_S)
        except WorkerError as err:
            tail = self.last_words(wait_s=2)
            printed = {"printed": " / ".join(tail)} if tail else {}
            raise WorkerError(
                "worker-start", str(err), form="printed" if tail else None, python=self.python, error=err, **printed
            ) from None
        if not ready.get("ready"):
            self.kill()
            said = {k: v for k, v in ready.items() if k not in ("ready", "code")}
            code = ready.get("code", "worker-start")
            form = "refused" if code == "worker-start" else None
            raise WorkerError(code, str(ready.get("error")), form=form, python=self.python, **said)
        self._frames.take_noise()
        self._threads = self._thread_count() or 0

    def read(self, request_id: int | None, timeout: float, tag: str = "-") -> dict[str, Any]:
        """The frame answering ``request_id`` with ``tag``, or a ``timeout`` error.

        ``timeout`` counts the seconds the worker computes, so a machine busy with other work does
        not turn a slow build into a "loops forever" diagnostic: past ``timeout`` seconds of wall
        time the worker is stopped once it has used ``timeout`` CPU seconds, or at once when it
        barely computes (it waits on something that will not come), and never later than
        ``WALL_FACTOR`` times ``timeout``.
        """
        start = time.monotonic()
        cpu_start = self._cpu()
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while (answer := self._frames.next(request_id, tag)) is None:
            wait = timeout - (time.monotonic() - start)
            if wait <= 0:
                wait = self._over_time(time.monotonic() - start, cpu_start, timeout)
            if not self._selector.select(wait):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorkerError("worker-crash", f"the worker process {self._exit_description()}")
            self._frames.feed(chunk)
        return answer

    def _over_time(self, wall: float, cpu_start: float | None, timeout: float) -> float:
        """Past the wall-time budget: raise if the worker is really out of time, else how long to wait on."""
        cpu = self._cpu()
        used = cpu - cpu_start if cpu is not None and cpu_start is not None else wall
        if used >= timeout or used < _BLOCKED_SHARE * wall or wall >= WALL_FACTOR * timeout:
            raise WorkerError("timeout", f"no answer within {timeout:g} s")
        return min(1.0, timeout - used, WALL_FACTOR * timeout - wall)

    def _cpu(self) -> float | None:
        """CPU seconds the worker (and children it waited for) used so far; ``None`` without ``/proc``."""
        try:
            with open(f"/proc/{self.process.pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            return None
        fields = stat[stat.rfind(b")") + 2 :].split()
        return sum(int(f) for f in fields[11:15]) / _CLOCK_TICKS

    def _thread_count(self) -> int | None:
        try:
            with open(f"/proc/{self.process.pid}/status") as handle:
                found = re.search(r"^Threads:\s+(\d+)", handle.read(), re.MULTILINE)
        except OSError:
            return None
        return int(found.group(1)) if found else None

    def _exit_description(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "closed its reply channel"
        if code == CHANNEL_DAMAGED_EXIT:
            return "stopped: user code closed or replaced its private protocol descriptors"
        if code > 128:
            with contextlib.suppress(ValueError):
                return f"was ended by {signal.Signals(code - 128).name}"
        return f"exited with code {code}"

    def request(self, payload: dict[str, Any], timeout: float) -> tuple[dict[str, Any], list[str]]:
        """The confirmed answer to ``payload``, and notes on what user code did to the process meanwhile."""
        assert self.process.stdin is not None
        self._next_id += 1
        ident = self._next_id
        self._send(json.dumps({**payload, "id": ident}))
        answer = self.read(ident, timeout)
        body = self._frames.body
        notes: list[str] = []
        try:
            sweep = self.process.sweep()  # before the secret: a process left behind could read it
        except SupervisorLost as err:
            raise WorkerError("supervisor-lost", str(err)) from None
        retire = bool(sweep.ended) or bool(answer.get("changed"))
        if sweep.ended:
            notes.append(f"{sweep.ended} process(es) started while building were still running and were ended")
        if sweep.signals:
            notes.append(f"user code sent {', '.join(sweep.signals)} to the process that started it (ignored)")
        if answer.get("fatal"):
            raise WorkerError("worker-channel", str(answer["fatal"]))
        left = [str(item) for item in answer.get("left") or []]
        if left:
            self.kill()
            raise WorkerError("worker-leftovers", f"it left {'; '.join(left)}, so its answer cannot be trusted")
        threads = self._thread_count()
        # A native thread and no Python one: a library's pool started by the build (TVM's, OpenMP's). It
        # runs no Python, so the answer stands; the worker is still replaced before the next request.
        retire = retire or (threads is not None and threads > self._threads)
        secret = secrets.token_hex(16)
        self._send(secret)
        confirmed = self.read(ident, CONFIRM_TIMEOUT_S, tag=secret)
        if confirmed.get("confirm") != digest(body):
            self.kill()
            forged = "the answer read was not the worker's: frames on its reply channel were forged"
            raise WorkerError("worker-channel", forged)
        noise = self._frames.take_noise()
        held = self._frames.pending()
        if held:
            noise = f"{noise} and " if noise else ""
            noise += f"an unfinished frame ({held} bytes)"
        if noise:
            notes.append(f"user code wrote into the compiler's private reply channel: {noise} were discarded")
            retire = True
        if retire:
            self.kill()  # the next request starts a fresh worker
        return answer, notes

    def _send(self, line: str) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((line + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            raise WorkerError("worker-crash", f"the worker process is gone ({err})") from err

    def last_words(self, wait_s: float = 1.0) -> list[str]:
        """End the worker and return the last three non-empty lines it wrote to stderr."""
        self.kill()
        return [ln for ln in self.process.stderr_tail(wait_s) if ln.strip()][-3:]

    def kill(self) -> None:
        self.process.kill()
        self._selector.close()
        self._remove_own()

    def _remove_own(self) -> None:
        if self._own is not None:
            shutil.rmtree(self._own, ignore_errors=True)
            self._own = None

    @property
    def alive(self) -> bool:
        return self.process.poll() is None
