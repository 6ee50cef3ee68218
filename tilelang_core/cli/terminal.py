"""What the commands print to a terminal beyond plain text: colour, and a status line for slow work.

Colour follows rich's conventions (``NO_COLOR`` turns it off, ``FORCE_COLOR`` on, a pipe or
``TERM=dumb`` gets none), decided by rich itself. The status line goes to stderr, only on a
terminal, and only once the work has taken more than a second, so quick commands and logs stay clean.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TextIO

_CODES = {"error": "1;31", "warning": "1;33", "information": "1;34", "hint": "2", "ok": "1;32", "bold": "1", "dim": "2"}


def colour_enabled(stream: TextIO) -> bool:
    from rich.console import Console

    console = Console(file=stream)
    return console.color_system is not None and not console.no_color


def painter(stream: TextIO) -> Callable[[str, str], str]:
    """``paint(text, style)``: ``text`` in ``style`` (a key of ``_CODES``) when ``stream`` takes colour."""
    enabled = colour_enabled(stream)

    def paint(text: str, style: str) -> str:
        return f"\x1b[{_CODES[style]}m{text}\x1b[0m" if enabled and style in _CODES else text

    return paint


class Status:
    """``with Status("compiling gemm.py"):`` shows ``compiling gemm.py… 3 s`` on a terminal's stderr
    after the first second, updates it each second and erases it at the end."""

    def __init__(self, message: str, stream: TextIO | None = None, delay_s: float = 1.0) -> None:
        self.message = message
        self.stream = stream if stream is not None else sys.stderr
        self.delay_s = delay_s
        self._stop = threading.Event()
        self._shown = False
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Status:
        if _isatty(self.stream):
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def update(self, message: str) -> None:
        self.message = message

    def _tick(self) -> None:
        start = time.monotonic()
        if self._stop.wait(self.delay_s):
            return
        while not self._stop.is_set():
            line = f"{self.message}… {time.monotonic() - start:.0f} s"
            self.stream.write(f"\r\x1b[2K{line}")
            self.stream.flush()
            self._shown = True
            self._stop.wait(1.0)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def display_path(path: str | Path) -> str:
    """A path as the user would type it: relative to the working directory when it is below it."""
    text = str(path)
    if text.startswith("<"):
        return text
    try:
        return str(Path(text).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return text
