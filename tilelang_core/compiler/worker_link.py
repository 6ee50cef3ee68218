"""One supervised worker process, its pipes and its framed replies, for ``service.Analyzer``.

The worker (``worker.main``) is a warm zygote that forks a child per request and answers for it:
what user code did (a timeout at the deadline, a crash, leftovers, a broken channel, signals sent
to its parent) arrives as fields of the answer, and the zygote, which never runs user code, stays
warm for the next request. Replies are read as frames (``frames``) naming the request they answer;
after each answer the supervisor ends what the build left running and reports signals sent to it,
which come back as notes for the caller to show at the kernel.

Time is the caller's wall clock: a request carries its deadline, the zygote ends the child there,
and the caller waits a few seconds more for the zygote itself before it ends the whole worker.
An answer stands only once the worker confirms it with a secret sent after it. A worker whose own
state is in doubt (it stopped answering, was stopped, started threads, or bytes not its own reached
its reply channel) is retired: the next request starts a fresh one.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from tilescope.core.codes import CodeName
from tilescope.core.protocol import COLD_VARIABLE
from tilescope.core.sandbox.clean_env import clean_env, tilelang_cache
from tilescope.core.sandbox.clean_env import sandbox as confinement
from tilescope.core.sandbox.frames import CHANNEL_DAMAGED_EXIT, FrameReader, digest
from tilescope.core.sandbox.landlock import Sandbox, network_can_be_cut
from tilescope.core.sandbox.private_files import private_prefix
from tilescope.core.sandbox.spawn import NO_DRIVER, NO_GPU, worker_command
from tilescope.core.sandbox.supervise import Limits, Supervised, SupervisorLost
from tilescope.core.static import catalog

START_TIMEOUT_S = 120.0
"""The longest a worker may take to import TileLang and warm up, whatever a request's deadline."""
ZYGOTE_GRACE_S = 3.0
"""How long after a request's deadline the zygote may take to end its child and say so."""
_STOPPED_POLL_S = 0.5
_STDERR_LINES = 60
CONFIRM_TIMEOUT_S = 10.0
"""How long the worker may take to confirm an answer (it only reads a line and writes a frame)."""


class WorkerError(Exception):
    """The worker could not answer; ``code`` names why for the diagnostic, ``form`` and ``fields`` fill its
    message where the code's message is not the usual one about a kernel's build. ``kept``: only the
    request's child was lost, the warm worker answered for it and serves the next request. ``phase``: the
    last step of the analysis the child finished (``loaded``, ``built``...), ``started`` before any."""

    def __init__(
        self,
        code: CodeName,
        message: str,
        form: str | None = None,
        *,
        kept: bool = False,
        phase: str | None = None,
        **fields: object,
    ) -> None:
        super().__init__(message)
        self.code: CodeName = code
        self.form = form
        self.fields = fields
        self.kept = kept
        self.phase = phase


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
        warm_up: bool = True,
    ) -> None:
        """``sandbox`` seals the worker (``landlock``); ``workdir`` is its working directory, ``TMPDIR`` and
        TileLang's cache folder (which TileLang makes on import: outside ``workdir`` a sealed worker could not);
        ``gpu`` lets it see the machine's GPUs (``profile``'s timing worker only); without ``warm_up`` its zygote
        takes no warm-up steps (``protocol.COLD_VARIABLE``).

        Every worker runs the file's own code, which may be an agent's: its environment is ``clean_env``'s
        (never this process's secrets), its ``HOME`` and ``TMPDIR`` an empty private folder, it has no network
        where it can be cut, and without ``sandbox`` it gets ``clean_env.sandbox``: it writes only that folder
        (``sealed``: code no one vouches for) or where the user may, and reads neither the places of secrets
        nor another process's ``/proc`` entries."""
        self._own = None if workdir is not None else tempfile.mkdtemp(prefix=private_prefix("worker"))
        private = workdir or self._own
        assert private is not None
        hidden = NO_DRIVER if gpu else NO_GPU
        env = {**clean_env(private), "PYTHONUNBUFFERED": "1", "TILELANG_ENABLE_IR_SPAN": "1", **hidden}
        sealed = sealed or workdir is not None
        env["TILELANG_CACHE_DIR"] = os.path.join(private, "tilelang-cache") if sealed else tilelang_cache()
        env["TILESCOPE_CACHE_DIR"] = str(catalog.seed(python, Path(private) / "tilescope-cache"))
        if not warm_up:
            env[COLD_VARIABLE] = "1"
        if sandbox is None:
            sandbox = confinement(private, write_everywhere=not sealed)
        else:
            sandbox = dataclasses.replace(sandbox, write=(*sandbox.write, private))
        self.python = python
        self.memory_mb = memory_mb
        self._started = time.monotonic()
        self.ready = False
        self.phases: list[tuple[str, float]] = []
        """The steps the last request's child finished, with seconds since the zygote forked it."""
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

    def wait_ready(self, deadline: float | None = None) -> None:
        """Wait for the worker's first frame (it imports TileLang and warms up first: seconds).

        Past ``deadline`` (the caller's) a ``timeout`` error is raised but the worker goes on starting,
        so the next request finds it further along; past ``START_TIMEOUT_S`` it has failed to start."""
        if self.ready:
            return
        until = self._started + START_TIMEOUT_S
        try:
            ready = self.read(None, min(until, deadline) if deadline is not None else until)
        except WorkerError as err:
            if err.code == "timeout" and deadline is not None and deadline < until:
                starting = "the compiler worker was still starting"
                raise WorkerError("timeout", starting, kept=True, phase="worker-start") from None
            tail = self.last_words(wait_s=2)
            if tail:
                printed = " / ".join(tail)
                raise WorkerError(
                    "worker-start", str(err), form="printed", python=self.python, error=err, printed=printed
                ) from None
            raise WorkerError("worker-start", str(err), python=self.python, error=err) from None
        if not ready.get("ready"):
            self.kill()
            said = {k: v for k, v in ready.items() if k not in ("ready", "code")}
            code = ready.get("code", "worker-start")
            form = "refused" if code == "worker-start" else None
            raise WorkerError(code, str(ready.get("error")), form=form, python=self.python, **said)
        self._frames.take_noise()
        self._threads = self._thread_count() or 0
        self.ready = True

    def read(self, request_id: int | None, until: float, tag: str = "-") -> dict[str, Any]:
        """The frame answering ``request_id`` with ``tag``, or a ``timeout`` error at ``until`` (monotonic
        seconds: the user's wall clock, however busy the machine), or a ``supervisor-lost`` error as soon as
        user code has stopped the worker (``SIGSTOP``: it would never answer)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while (answer := self._frames.next(request_id, tag)) is None:
            wait = until - time.monotonic()
            if wait <= 0:
                raise WorkerError("timeout", "no answer by the deadline")
            if not self._selector.select(min(wait, _STOPPED_POLL_S)):
                if self._stopped():
                    raise WorkerError("supervisor-lost", "user code stopped the compiler worker (SIGSTOP)")
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorkerError("worker-crash", f"the worker process {self._exit_description()}")
            self._frames.feed(chunk)
        return answer

    def _stopped(self) -> bool:
        """Whether the worker is stopped by a signal (state ``T`` in ``/proc``)."""
        try:
            with open(f"/proc/{self.process.pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            return False
        return stat[stat.rfind(b")") + 2 :][:1] in (b"T", b"t")

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

    def request(
        self,
        payload: dict[str, Any],
        deadline: float,
        on_partial: Callable[[dict[str, Any]], None] | None = None,
    ) -> tuple[dict[str, Any], list[str]]:
        """The confirmed answer to ``payload`` by ``deadline`` (monotonic seconds), and notes on what user
        code did meanwhile; a ``WorkerError`` when the request's child could not answer. ``on_partial`` hears
        each analysis so far the worker sends and confirms before its answer (a request with ``stream``)."""
        assert self.process.stdin is not None
        self._next_id += 1
        ident = self._next_id
        self._send(json.dumps({**payload, "id": ident, "deadline_s": max(deadline - time.monotonic(), 0.0)}))
        while True:
            try:
                answer = self.read(ident, deadline + ZYGOTE_GRACE_S)
            except WorkerError as err:
                if err.code == "timeout":  # the zygote did not answer for its child: it is not trusted to
                    self.kill()
                raise
            if "partial" not in answer:
                break
            self._confirm(ident, self._frames.body)
            clean = not self._frames.foreign_bytes and not self._frames.stray_frames  # else the answer says so
            if on_partial is not None and clean and isinstance(answer["partial"], dict):
                on_partial(cast(dict[str, Any], answer["partial"]))
        body = self._frames.body
        notes: list[str] = []
        try:
            ending = answer.get("ending")  # the zygote's child, killed: the zygote reaps it
            # processes the child started, before the secret is sent
            sweep = self.process.sweep(ending=ending if isinstance(ending, int) else None)
        except SupervisorLost as err:
            raise WorkerError("supervisor-lost", str(err)) from None
        if sweep.ended:
            notes.append(f"{sweep.ended} process(es) started while building were still running and were ended")
        signals = sorted({*sweep.signals, *(str(s) for s in answer.get("signals") or [])})
        if signals:
            notes.append(f"user code sent {', '.join(signals)} to the process that started it (ignored)")
        notes.extend(str(note) for note in answer.get("notes") or [])
        threads = self._thread_count()
        retire = threads is not None and threads > self._threads  # the zygote must hold one thread to fork
        self._confirm(ident, body)
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
        self.phases = [(str(name), float(at)) for name, at in answer.get("phases") or []]
        _raise_for_child(answer)
        return answer, notes

    def _confirm(self, ident: int, body: bytes) -> None:
        """Have the worker confirm the frame it sent last (``body``) with a secret sent only now; a forged one
        ends the worker."""
        secret = secrets.token_hex(16)
        self._send(secret)
        confirmed = self.read(ident, time.monotonic() + CONFIRM_TIMEOUT_S, tag=secret)
        if confirmed.get("confirm") != digest(body):
            self.kill()
            forged = "the answer read was not the worker's: frames on its reply channel were forged"
            raise WorkerError("worker-channel", forged)

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


def _raise_for_child(answer: dict[str, Any]) -> None:
    """A ``kept`` error when the zygote reports that its child could not answer; the zygote stays warm."""
    phase = answer.get("phase")
    if answer.get("timeout"):
        raise WorkerError("timeout", "no answer by the deadline", kept=True, phase=phase)
    if answer.get("crash"):
        raise WorkerError("worker-crash", f"the worker process {answer['crash']}", kept=True, phase=phase)
    if answer.get("fatal"):
        raise WorkerError("worker-channel", str(answer["fatal"]), kept=True, phase=phase)
    left = [str(item) for item in answer.get("left") or []]
    if left:
        raise WorkerError("worker-leftovers", f"it left {'; '.join(left)}, so its answer cannot be trusted", kept=True)
