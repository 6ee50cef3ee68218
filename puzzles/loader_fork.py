"""The grader's side of the warm loader (``loader_zygote``): a loader per check, forked instead of started.

``LoaderZygote`` is the zygote's supervised process (a ``Child``, sealed like any loader, whose stdout
carries the zygote's frames instead of lines); ``ForkedLoader`` is one check's loader, which the grader
uses exactly as it would use a fresh ``Child``: its replies, its stderr's last lines, and, when it stops
answering, a ``ChildGone`` saying how it ended. Killing it ends its whole tree: the zygote kills the
child, then the supervisor ends whatever the child left running (``Supervised.sweep``), before the next
check's child is forked.
"""

from __future__ import annotations

import collections
import json
import queue
import threading
from collections.abc import Mapping
from typing import IO, Any

from tilescope.core.sandbox.spawn import NO_DRIVER
from tilescope.core.sandbox.supervise import Limits, SupervisorLost
from tilescope.puzzles.children import ADDRESS_SPACE, STDERR_LINES, Child, ChildGone, ended, next_reply
from tilescope.puzzles.report import Role

KILL_S = 5.0
"""How long the zygote may take to end a child and say so before the whole zygote is ended instead."""


def _exactly(stream: IO[bytes], length: int) -> bytes:
    data = stream.read(length)
    if len(data) != length:
        raise EOFError
    return data


class LoaderZygote(Child):
    """The warm loader's process: forks a ``ForkedLoader`` per check, once it has said it is ready."""

    def __init__(self) -> None:
        self._state = threading.Condition()
        self.ready: bool | None = None
        """True once it forks; False when it cannot (it holds another thread) or has ended."""
        self.why = ""
        self._children: dict[int, ForkedLoader] = {}
        self._acks: set[int] = set()
        self._count = 0
        self._write = threading.Lock()
        # Importing TileLang must not start the CUDA driver, whose thread would keep the zygote from forking
        # (``NO_DRIVER``); a file's code that asks for the GPU still finds it, in its own process.
        limits = Limits(memory_mb=ADDRESS_SPACE >> 20)
        super().__init__("loader", "tilescope.puzzles.loader_zygote", limits=limits, env=dict(NO_DRIVER), sealed=True)

    def _pump_out(self) -> None:
        """Frames from the zygote, each given to the child it names (``loader_zygote`` lists them)."""
        stream = self.process.stdout
        assert stream is not None
        try:
            while header := stream.readline():
                words = header.decode("ascii", errors="replace").split()
                tag, n = words[0], int(words[1]) if len(words) > 1 and words[1].lstrip("-").isdigit() else -1
                child = self._children.get(n)
                if tag in ("O", "E"):
                    data = _exactly(stream, int(words[2]))
                    if child is not None:
                        child.output(tag, data)
                elif tag == "X" and child is not None:
                    child.exited(int(words[2]))
                elif tag == "N" and child is not None:
                    child.not_forked(f"could not be forked (the warm loader holds {words[2]} threads)")
                elif tag in ("R", "B"):
                    self._settle(tag == "R", " ".join(words[1:]))
                elif tag == "K":
                    with self._state:
                        self._acks.add(n)
                        self._state.notify_all()
        except (EOFError, ValueError, IndexError, OSError):
            pass  # a frame cut short or garbled: the zygote is ended below
        self._settle(False, "it ended")
        for child in list(self._children.values()):
            child.exited(None)

    def _settle(self, ready: bool, why: str) -> None:
        with self._state:
            if self.ready is None or not ready:
                self.ready, self.why = ready, why
            self._state.notify_all()

    def wait_ready(self, timeout_s: float) -> bool:
        """Whether it forks, waiting at most ``timeout_s`` for it to say so."""
        with self._state:
            self._state.wait_for(lambda: self.ready is not None, timeout=timeout_s)
            return bool(self.ready)

    def failed_start(self, waited_s: float) -> ChildGone:
        """Why it never became ready (it is ended): it hung past ``waited_s``, or exited (its code and stderr)."""
        if self.alive():
            self.kill()
            return ChildGone(self.role, f"did not start within {waited_s:g} s", None, None, self.stderr_tail())
        return self._gone(None)

    def send_frame(self, header: str, payload: bytes = b"") -> None:
        """A header (and its payload) to the zygote; OSError when it is gone."""
        with self._write:
            stdin = self.process.stdin
            if stdin is None:
                raise OSError("the warm loader has no input")
            try:
                stdin.write(header.encode() + b"\n" + payload)
                stdin.flush()
            except ValueError as closed:
                raise OSError(str(closed)) from None

    def fork(self) -> ForkedLoader:
        """The loader of one check (forked at once; its first reply is its greeting)."""
        self._count += 1
        child = ForkedLoader(self, self._count)
        self._children[child.n] = child
        try:
            self.send_frame(f"F {child.n}")
        except OSError:
            child.exited(None)
        return child

    def end_child(self, n: int) -> bool:
        """Have the zygote kill child ``n`` and the supervisor end what it left; False if either failed."""
        try:
            self.send_frame(f"K {n}")
        except OSError:
            return False
        with self._state:
            acked = self._state.wait_for(lambda: n in self._acks, timeout=KILL_S)
            self._acks.discard(n)
        self._children.pop(n, None)
        if not acked:
            return False
        try:
            self.process.sweep(timeout=KILL_S)
        except SupervisorLost:
            return False
        return True


class ForkedLoader:
    """One check's loader, forked from the warm loader; used like a fresh loader's ``Child``."""

    role: Role = "loader"

    def __init__(self, zygote: LoaderZygote, n: int) -> None:
        self.zygote = zygote
        self.n = n
        self.sealed = zygote.sealed
        self.code: int | None = None
        self.problem = ""
        """Why it never ran, when it was not forked."""
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._partial = {"O": b"", "E": b""}
        self._tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._over = threading.Event()
        self._killed = False

    def output(self, tag: str, data: bytes) -> None:
        """Bytes the child wrote: whole lines of stdout become replies, stderr's are kept as its tail."""
        *lines, self._partial[tag] = (self._partial[tag] + data).split(b"\n")
        for line in lines:
            self._line(tag, line)

    def _line(self, tag: str, line: bytes) -> None:
        text = line.decode(errors="replace")
        if tag == "O":
            self._lines.put(text)
        else:
            self._tail.append(text.rstrip("\r"))

    def exited(self, code: int | None) -> None:
        """It has ended with ``code`` (None: the zygote ended first); a last line without its newline counts."""
        if self._over.is_set():
            return
        for tag in ("O", "E"):
            if self._partial[tag]:
                self._line(tag, self._partial[tag])
                self._partial[tag] = b""
        self.code = -9 if code is None else code
        self._over.set()
        self._lines.put(None)

    def not_forked(self, why: str) -> None:
        self.problem = why
        self.exited(None)

    def send(self, message: Mapping[str, Any]) -> None:
        payload = (json.dumps(message) + "\n").encode()
        try:
            self.zygote.send_frame(f"T {self.n} {len(payload)}", payload)
        except OSError:
            raise self._gone(None) from None

    def receive(self, timeout_s: float) -> dict[str, Any] | str:
        """The next reply as a dict, or the raw line when it is not a JSON object."""
        return next_reply(self._lines, timeout_s, self._gone)

    def _gone(self, timeout_s: float | None) -> ChildGone:
        if timeout_s is not None:
            self.kill()
            return ChildGone(self.role, f"did not answer within {timeout_s:g} s", None, None, self.stderr_tail())
        if self.problem:
            return ChildGone(self.role, self.problem, 1, None, [])
        self._over.wait(KILL_S)
        return ended(self.role, self.code, self.stderr_tail())

    def stderr_tail(self) -> list[str]:
        return list(self._tail)

    def alive(self) -> bool:
        return not self._over.is_set()

    def kill(self) -> None:
        """End the child and everything it started; the zygote is ended instead if it cannot do so at once."""
        if self._killed:
            return
        self._killed = True
        if not self.zygote.end_child(self.n):
            self.zygote.kill()
        self.exited(None)
