"""Core positions and diagnostics to LSP ones and back.

The core speaks Python's ``ast`` coordinates: 1-based lines, columns in UTF-8 bytes. LSP speaks
0-based lines and columns in the negotiated position encoding; ``text.Text`` does the counting
with pygls's codec, so every position returned lies inside the document.
"""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.model import Diagnostic, Span
from tilescope.lsp.text import Text

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def position(text: Text, line: int, column: int) -> types.Position:
    return text.position(line, column)


def span_range(text: Text, span: Span) -> types.Range:
    """A core span as an LSP range; a span without an end covers the rest of its line."""
    return text.span_range(span.line, span.column, span.end_line, span.end_column)


def core_position(text: Text, pos: types.Position) -> tuple[int, int]:
    """An LSP position as the core's (1-based line, byte column)."""
    return text.core_position(pos)


def diagnostic(text: Text, found: Diagnostic, uri: str | None = None) -> types.Diagnostic:
    """The LSP form; with the document's ``uri``, the other lines it names as ``relatedInformation``."""
    related: list[types.DiagnosticRelatedInformation] = []
    if uri is not None:
        document: str = uri
        related = [
            types.DiagnosticRelatedInformation(types.Location(document, span_range(text, r.span)), r.message)
            for r in found.related
        ]
    return types.Diagnostic(
        range=span_range(text, found.span),
        message=found.message,
        severity=_SEVERITY.get(found.severity, types.DiagnosticSeverity.Error),
        code=found.code,
        source=found.source,
        related_information=related if related and uri is not None else None,
    )
