"""The worker's reply framing: every answer is a frame that names the request it answers.

A frame is ``\\x1etilescope <id> <length>\\n`` followed by ``length`` bytes of JSON and ``\\n``.
The reader finds frames by that marker, so bytes that user code writes into the reply channel
(a stray ``print`` to a leaked descriptor, half a line without a newline) are skipped and counted,
never parsed as an answer, and a frame for another request (a stale or forged reply) is set aside
instead of being taken as this request's answer. Either way the caller learns about it and can
report it at the file being analysed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

MARKER = b"\x1etilescope "
CHANNEL_DAMAGED_EXIT = 70
"""The worker's exit code when user code closed or replaced its protocol descriptors."""
_HEADER_MAX = 128
UNCONFIRMED = "-"
"""The tag of an answer frame before its confirmation."""


def encode(request_id: int | None, payload: dict[str, Any], tag: str = UNCONFIRMED) -> bytes:
    body = json.dumps(payload).encode()
    ident = request_id if request_id is not None else "-"
    return MARKER + f"{ident} {len(body)} {tag}\n".encode() + body + b"\n"


def digest(body: bytes) -> str:
    """What a confirmation names: the answer frame's body."""
    return hashlib.sha256(body).hexdigest()


def confirmation(request_id: int | None, frame: bytes, secret: str) -> bytes:
    """The frame that confirms ``frame`` (an answer, or an analysis so far) with the secret its reader sent."""
    body = frame[frame.index(b"\n") + 1 : -1]
    return encode(request_id, {"confirm": digest(body)}, tag=secret or "?")


def write_all(fd: int, data: bytes | memoryview) -> None:
    """``os.write`` until everything is written (a pipe may take a large frame in parts)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@dataclass
class FrameReader:
    """Frames out of a byte stream, with the foreign bytes and unexpected frames in between."""

    buffer: bytes = b""
    foreign_bytes: int = 0
    foreign_sample: bytes = b""
    stray_frames: list[str] = field(default_factory=list)
    """Ids of well-formed frames that answered some other request (or carried another tag) than awaited."""
    body: bytes = b""
    """The body of the last frame ``next`` returned (what a confirmation's digest names)."""

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk

    def _foreign(self, data: bytes) -> None:
        self.foreign_bytes += len(data)
        if len(self.foreign_sample) < 80:
            self.foreign_sample += data[: 80 - len(self.foreign_sample)]

    def next(self, expected: int | None, tag: str = UNCONFIRMED) -> dict[str, Any] | None:
        """The frame answering ``expected`` with ``tag`` if the buffer holds it; anything before it is
        set aside."""
        while True:
            start = self.buffer.find(MARKER)
            if start < 0:
                keep = _partial_marker(self.buffer)
                self._foreign(self.buffer[: len(self.buffer) - keep])
                self.buffer = self.buffer[len(self.buffer) - keep :]
                return None
            if start:
                self._foreign(self.buffer[:start])
                self.buffer = self.buffer[start:]
            end = self.buffer.find(b"\n", len(MARKER))
            if end < 0:
                if len(self.buffer) > len(MARKER) + _HEADER_MAX:
                    self._skip_marker()
                    continue
                return None
            header = self.buffer[len(MARKER) : end].split()
            if len(header) != 3 or not header[1].isdigit():
                self._skip_marker()
                continue
            length = int(header[1])
            body_end = end + 1 + length
            if MARKER in self.buffer[end + 1 : body_end]:
                self._skip_marker()  # a body never holds a raw marker (JSON escapes it): a forged length
                continue
            if len(self.buffer) < body_end + 1:
                return None  # the rest of the frame is still to come (``pending`` says how much is held)
            body = self.buffer[end + 1 : body_end]
            try:
                payload = json.loads(body)
            except ValueError:
                payload = None
            if not isinstance(payload, dict) or self.buffer[body_end : body_end + 1] != b"\n":
                self._skip_marker()
                continue
            self.buffer = self.buffer[body_end + 1 :]
            ident = header[0].decode(errors="replace")
            if ident != (str(expected) if expected is not None else "-") or header[2].decode(errors="replace") != tag:
                self.stray_frames.append(ident)
                continue
            self.body = body
            return payload

    def pending(self) -> int:
        """Bytes held that are not yet a whole frame (an unfinished frame, or its start)."""
        return len(self.buffer)

    def _skip_marker(self) -> None:
        self._foreign(self.buffer[:1])
        self.buffer = self.buffer[1:]

    def take_noise(self) -> str | None:
        """A sentence about what was set aside since the last call, or ``None``; then forgets it."""
        parts = []
        if self.foreign_bytes:
            parts.append(f"{self.foreign_bytes} foreign bytes ({self.foreign_sample[:40]!r})")
        if self.stray_frames:
            parts.append(f"{len(self.stray_frames)} reply frame(s) not from the worker's answer")
        self.foreign_bytes, self.foreign_sample, self.stray_frames = 0, b"", []
        return " and ".join(parts) if parts else None


def _partial_marker(buffer: bytes) -> int:
    """How many trailing bytes could be the start of a marker still arriving."""
    for size in range(min(len(MARKER) - 1, len(buffer)), 0, -1):
        if MARKER.startswith(buffer[-size:]):
            return size
    return 0


def channel_fingerprint(fds: tuple[int, ...]) -> tuple[tuple[int, int] | None, ...]:
    """What each protocol descriptor refers to (device, inode), to notice user code replacing it."""
    found: list[tuple[int, int] | None] = []
    for fd in fds:
        try:
            info = os.fstat(fd)
        except OSError:
            found.append(None)
            continue
        found.append((info.st_dev, info.st_ino))
    return tuple(found)


def channel_damage(fds: tuple[int, ...], before: tuple[tuple[int, int] | None, ...]) -> str | None:
    """Why the protocol channels can no longer be trusted, or ``None`` if they are as they were."""
    now = channel_fingerprint(fds)
    names = ("request", "reply")
    for name, was, is_now in zip(names, before, now, strict=False):
        if is_now is None:
            return f"user code closed the worker's private {name} channel"
        if is_now != was:
            return f"user code replaced the worker's private {name} channel"
    return None
