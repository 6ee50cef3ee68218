"""TileLang's own warnings (buffers read before initialisation, its safety checks) as diagnostics.

The compiler prints them from C++ straight to file descriptor 2, with a ``--> file:line:col``
pointer into the user's source. The worker captures that descriptor around each kernel's build
and lowering, forwards the text unchanged, and turns every pointer into the user's file into a
warning at that line.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator

from tilescope.core.codes import diagnostic
from tilescope.core.model import Diagnostic, Span

_WARNING = re.compile(r"^(?:\[[\d:.]+\]\s*:\s*)?Warning:\s*(?P<title>.+?)\s*$")
_ITEM = re.compile(r"^\s*\[\d+\]\s*(?P<text>.+?)\s*$")
_LOCATION = re.compile(r"^\s*-->\s*(?P<file>.+?):(?P<line>\d+)(?::(?P<column>\d+))?\s*$")


def capture_path(pid: int) -> str:
    """Where process ``pid`` keeps what it is capturing of fd 2: a child that ends inside the capture
    (``os._exit`` after printing "no GPU") leaves it there for the zygote that forked it to read."""
    return os.path.join(tempfile.gettempdir(), f"tilescope-stderr-{pid}")


@contextlib.contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Capture what native code writes to fd 2 while the block runs; the text is still forwarded."""
    sys.stderr.flush()
    saved = os.dup(2)
    captured: list[str] = []
    path = capture_path(os.getpid())
    sink = open(path, "w+b")  # noqa: SIM115  (closed and removed below, or read by the zygote after a crash)
    try:
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            data = sink.read()
            if data:
                os.write(2, data)
            captured.append(data.decode(errors="replace"))
    finally:
        sink.close()
        with contextlib.suppress(OSError):
            os.remove(path)


def parse(text: str, path: str, kernel: str) -> list[Diagnostic]:
    """One warning per ``-->`` pointer into ``path``, worded with the warning's title and item."""
    diagnostics: list[Diagnostic] = []
    title: str | None = None
    item: str | None = None
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if warning := _WARNING.match(line):
            title, item = warning.group("title"), None
        elif title and (match := _ITEM.match(line)):
            item = match.group("text")
        elif title and (location := _LOCATION.match(line)):
            if os.path.abspath(location.group("file")) != os.path.abspath(path):
                continue
            advice = lines[index + 1].strip() if index + 1 < len(lines) else ""
            advice = "" if _WARNING.match(advice) or _ITEM.match(advice) else advice
            message = " ".join(part for part in (f"{item or title}.", advice) if part).replace("..", ".")
            span = Span(line=int(location.group("line")), column=max(int(location.group("column") or 1) - 1, 0))
            warning = message.replace("`", "'")
            diagnostics.append(diagnostic("tilelang-warning", span, kernel=kernel, warning=warning, detail=title))
    return diagnostics
