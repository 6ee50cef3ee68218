"""Lines as Python's tokenizer and LSP count them: broken at ``\\n``, ``\\r\\n`` and ``\\r`` only.

``str.splitlines`` also breaks at form feed, vertical tab, ``\\x1c``-``\\x1e``, NEL, U+2028 and
U+2029, which shifts every line number below such a character away from ``ast``'s and the
editor's. Every tier splits source text with ``source_lines`` instead (the static tier's
``split`` module re-exports it).
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def source_lines(text: str) -> list[str]:
    """``text.splitlines(keepends=True)`` with only ``\\n``, ``\\r\\n`` and ``\\r`` as line breaks."""
    return _LINE.findall(text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> tuple[int, int, str] | None:
    """The first lone surrogate as (1-based line, UTF-8 byte column, ``U+XXXX``), if any.

    An editor buffer can hold one (a JSON ``\\ud800`` escape); no UTF-8 file can, so Python
    cannot compile such text.
    """
    found = _SURROGATE.search(text)
    if found is None:
        return None
    before = text[: found.start()]
    line_start = max(before.rfind("\n"), before.rfind("\r")) + 1
    column = len(before[line_start:].encode("utf-8", "surrogatepass"))
    return len(source_lines(before + "x")), column, f"U+{ord(found.group()):04X}"


def without_surrogates(text: str, replacement: str = "\ufffd") -> str:
    """``text`` with lone surrogates replaced by U+FFFD (or ``replacement``, another character of
    three UTF-8 bytes): the same code points and widths, so every position stays where it was."""
    return _SURROGATE.sub(replacement, text)


class SourceError(Exception):
    """A file that cannot be read or decoded; ``line`` is where decoding failed (1 when unknown)."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


def read_source(path: str | Path) -> str:
    """A Python file's text decoded as Python decodes it: UTF-8 unless a PEP 263 cookie (or a BOM) says
    otherwise. Raises ``SourceError`` saying why the file cannot be read, naming the line that fails."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise SourceError(f"Cannot read file: {err.strerror or err}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        raise SourceError(f"Cannot decode file: {err.msg}", err.lineno or 1) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise SourceError(
            f"Cannot decode file as {encoding}: byte 0x{data[err.start]:02x} at line {line} is not valid "
            f"{encoding} (declare the file's encoding with a '# -*- coding: NAME -*-' line, or save it as UTF-8)",
            line,
        ) from None
    return text.removeprefix("\ufeff")
