"""Core positions to LSP positions and back.

The core speaks Python's ``ast`` coordinates: 1-based lines, columns in UTF-8 bytes. LSP speaks
0-based lines and UTF-16 code units. Lines that are pure ASCII (nearly all kernel code) need no
work beyond the line shift.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from tilescope.core.model import Diagnostic, Span

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def _line(lines: Sequence[str], line: int) -> str:
    return lines[line - 1] if 0 < line <= len(lines) else ""


def to_utf16(text: str, byte_column: int) -> int:
    if text.isascii():
        return byte_column
    prefix = text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore")
    return len(prefix.encode("utf-16-le")) // 2


def from_utf16(text: str, utf16_column: int) -> int:
    if text.isascii():
        return utf16_column
    units = text.encode("utf-16-le")[: utf16_column * 2].decode("utf-16-le", errors="ignore")
    return len(units.encode("utf-8"))


def position(lines: Sequence[str], line: int, column: int) -> types.Position:
    return types.Position(line=max(line - 1, 0), character=to_utf16(_line(lines, line), column))


def span_range(lines: Sequence[str], span: Span) -> types.Range:
    """A core span as an LSP range; a span without an end covers the rest of its line."""
    start = position(lines, span.line, span.column)
    end_line = span.end_line or span.line
    if span.end_column is None:
        text = _line(lines, end_line).rstrip("\r\n")
        end = types.Position(line=end_line - 1, character=len(text.encode("utf-16-le")) // 2)
    else:
        end = position(lines, end_line, span.end_column)
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return types.Range(start=start, end=end)


def core_position(lines: Sequence[str], pos: types.Position) -> tuple[int, int]:
    """An LSP position as the core's (1-based line, byte column)."""
    line = pos.line + 1
    return line, from_utf16(_line(lines, line), pos.character)


def diagnostic(lines: Sequence[str], found: Diagnostic) -> types.Diagnostic:
    return types.Diagnostic(
        range=span_range(lines, found.span),
        message=found.message,
        severity=_SEVERITY.get(found.severity, types.DiagnosticSeverity.Error),
        code=found.code,
        source=found.source,
    )
