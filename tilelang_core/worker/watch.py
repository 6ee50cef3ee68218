"""The zygote's side of one forked child: its frames, its deadline, its confirmation, its end.

Runs in the zygote (``worker.main``). The child's answer stands only once the child confirms it with
a secret drawn after the fork; a child that misses its deadline is ended, one that dies is described
by its exit and the last lines it printed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import signal
import time
from collections.abc import Callable
from typing import Any, cast

from tilescope.core.sandbox.frames import CHANNEL_DAMAGED_EXIT, UNCONFIRMED, FrameReader, digest, write_all

_PRINTED_BYTES = 4096
"""How much of a child's last stderr output the zygote keeps, to say what a child that died printed."""
_CONFIRM_S = 10.0
"""How long a child may take to confirm its answer (it reads a line and writes a frame)."""


class Watch:
    """The zygote's side of one child: its frames, its deadline, its confirmation, its end."""

    def __init__(
        self,
        pid: int,
        ident: Any,
        up: int,
        down: int,
        err: int,
        deadline: float,
        on_partial: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """``on_partial`` hears each analysis so far the child sent and confirmed (a request with ``stream``)."""
        self.pid = pid
        self.on_partial = on_partial
        self.ident = ident
        self.up = up
        self.down = down
        self.err = err
        """The child's stderr: passed on to the zygote's (the caller shows it), its last lines kept for a crash."""
        self.printed = b""
        self.err_open = True
        self.deadline = deadline
        self.frames = FrameReader()
        self.phases: list[tuple[str, float]] = []
        self.started = time.monotonic()
        self.exit: int | None = None

    def answer(self) -> dict[str, Any]:
        while True:
            answer = self._read(UNCONFIRMED, self.deadline)
            if isinstance(answer, str):
                return self._failed(answer)
            if "partial" not in answer:
                break
            confirmed = self._confirmed(self.frames.body)
            if confirmed is not True:
                return self._failed("eof") if confirmed is None else self._forged()
            if self.on_partial is not None and isinstance(answer["partial"], dict):
                self.on_partial(cast(dict[str, Any], answer["partial"]))
        if not answer.get("left") and not answer.get("fatal"):
            confirmed = self._confirmed(self.frames.body)
            if confirmed is not True:
                return self._failed("eof") if confirmed is None else self._forged()
        notes = []
        noise = self.frames.take_noise()
        held = self.frames.pending()
        if held:
            noise = f"{noise} and " if noise else ""
            noise += f"an unfinished frame ({held} bytes)"
        if noise:
            notes.append(f"user code wrote into the compiler's private reply channel: {noise} were discarded")
        return {**answer, "notes": notes, "phases": self.phases}

    def _confirmed(self, body: bytes) -> bool | None:
        """Whether the child confirms the frame it sent last (``body``) with a secret drawn now, after the fork
        (the child's memory never held it); None when the child's request channel is gone."""
        secret = secrets.token_hex(16)
        try:
            write_all(self.down, (secret + "\n").encode())
        except OSError:
            return None
        confirmed = self._read(secret, min(self.deadline, time.monotonic() + _CONFIRM_S))
        return not isinstance(confirmed, str) and confirmed.get("confirm") == digest(body)

    def _forged(self) -> dict[str, Any]:
        self.frames.take_noise()
        forged = "the answer read was not the child's: frames on its reply channel were forged"
        return {"ok": False, "fatal": forged, "phases": self.phases}

    def _read(self, tag: str, until: float) -> dict[str, Any] | str:
        """The child's frame with ``tag`` (phase frames noted on the way), else ``"timeout"`` or ``"eof"``."""
        while True:
            while (frame := self.frames.next(self.ident, tag)) is not None:
                if "phase" in frame:
                    self.phases.append((str(frame["phase"]), round(time.monotonic() - self.started, 4)))
                    continue
                return frame
            remaining = until - time.monotonic()
            if remaining <= 0:
                return "timeout"
            watched = [self.up, self.err] if self.err_open else [self.up]
            readable, _, _ = select.select(watched, [], [], remaining)
            if self.err in readable:
                self.err_open = self._stderr()
            if self.up not in readable:
                continue
            chunk = os.read(self.up, 1 << 20)
            if not chunk:
                return "eof"
            self.frames.feed(chunk)

    def _stderr(self) -> bool:
        """Pass on what the child printed; whether there was anything (not the end of its stderr)."""
        chunk = os.read(self.err, 1 << 16)
        if chunk:
            with contextlib.suppress(OSError):
                write_all(2, chunk)
            self.printed = (self.printed + chunk)[-_PRINTED_BYTES:]
        return bool(chunk)

    def _captured(self) -> None:
        """What the child had captured of fd 2 when it ended (``compiler_warnings.captured_stderr``, which a
        child that calls ``os._exit`` never finishes): passed on and kept, as if printed."""
        from tilescope.core.worker.compiler_warnings import capture_path

        path = capture_path(self.pid)
        try:
            with open(path, "rb") as held:
                chunk = held.read()[-_PRINTED_BYTES:]
            os.remove(path)
        except OSError:
            return
        if chunk:
            with contextlib.suppress(OSError):
                write_all(2, chunk)
            self.printed = (self.printed + chunk)[-_PRINTED_BYTES:]

    def _failed(self, why: str) -> dict[str, Any]:
        """No answer: the deadline passed (the child is ended), or the child closed its channel or died."""
        phase = self.phases[-1][0] if self.phases else "started"
        if why == "timeout":
            self._captured()  # the child is ended at the deadline, perhaps inside a capture
            return {"ok": False, "timeout": True, "phase": phase, "phases": self.phases}
        code = _exit_code(self.pid, self.deadline)
        for _ in range(64):  # what it printed last; a process it left could print forever
            if not self.err_open or not select.select([self.err], [], [], 0)[0]:
                break
            self.err_open = self._stderr()
        self._captured()
        lines = [ln for ln in self.printed.decode(errors="replace").splitlines() if ln.strip()][-3:]
        crash = _exit_description(code) + (f" after printing: {' / '.join(lines)}" if lines else "")
        return {"ok": False, "crash": crash, "phase": phase, "phases": self.phases}


def _exit_code(pid: int, deadline: float) -> int | None:
    """The child's exit code (``-n``: signal ``n``) once it has exited, waiting at most until ``deadline``."""
    limit = max(min(deadline, time.monotonic() + 5), time.monotonic() + 0.5)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= limit:
            return None
        time.sleep(0.01)


def _exit_description(code: int | None) -> str:
    if code is None:
        return "closed its reply channel"
    if code == CHANNEL_DAMAGED_EXIT:
        return "stopped: user code closed or replaced its private protocol descriptors"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was ended by {signal.Signals(-code).name}"
    return f"exited with code {code}"
