"""Quick fixes for the diagnostics an editor shows: the edits, as plain data in core coordinates.

The static checks attach a ``QuickFix`` where the fix is certain (``transpose_B=True`` for a B tile
of the other orientation, ``T.clear(C)`` before a gemm that reads its accumulator first). An editor
asks for a range; only fixes whose diagnostic is still shown (not replaced by the compiler's) and
which touch that range are offered. The compiler's ``bank-conflict`` warning names the padding that
makes an access conflict-free (tried on its own worst request); its fix writes that padding into
the buffer's ``T.alloc_shared`` shape.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from tilescope.core.model import Diagnostic, Span
from tilescope.core.static.records import QuickFix, StaticFile, TextEdit

_PADDING = re.compile(r"of '(?P<buffer>\w+)'.*allocate it as \((?P<shape>[^()]*) \+ (?P<pad>\d+)\)")


def quick_fixes(
    static: StaticFile,
    shown: Iterable[Diagnostic],
    first_line: int,
    last_line: int,
    lines: Sequence[str] | None = None,
) -> list[QuickFix]:
    """The fixes for diagnostics in ``shown`` whose lines meet ``first_line..last_line`` (1-based).

    ``lines`` (the document's text) lets compiler diagnostics whose fix is an edit of the source
    offer it too.
    """
    visible = list(shown)
    found: list[QuickFix] = []
    for fix in static.fixes:
        span = fix.diagnostic.span
        end = span.end_line or span.line
        if fix.diagnostic in visible and span.line <= last_line and end >= first_line:
            found.append(fix)
    for diagnostic in visible:
        if diagnostic.code == "bank-conflict" and first_line <= diagnostic.span.line <= last_line and lines:
            padding = _padding_fix(static, diagnostic, lines)
            if padding is not None:
                found.append(padding)
    return found


def _padding_fix(static: StaticFile, diagnostic: Diagnostic, lines: Sequence[str]) -> QuickFix | None:
    """Add the padding a ``bank-conflict`` warning names to the last extent of the buffer's allocation."""
    wanted = _PADDING.search(diagnostic.message)
    kernel = next((k for k in static.kernels if k.ref.name == diagnostic.kernel), None)
    decl = kernel.buffer(wanted.group("buffer")) if wanted and kernel else None
    if wanted is None or decl is None or not decl.allocator.startswith("alloc_shared"):
        return None
    anchor = decl.anchor
    if anchor.end_line != anchor.line or anchor.end_column is None:
        return None  # an allocation over several lines: left to the user
    text = lines[anchor.line - 1][anchor.column : anchor.end_column]
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    shape = call.args[0] if isinstance(call, ast.Call) and call.args else None
    if not isinstance(shape, ast.Tuple | ast.List) or not shape.elts:
        return None
    last = shape.elts[-1]
    written = ast.get_source_segment(text, last)
    if written is None:
        return None
    start, end = anchor.column + last.col_offset, anchor.column + (last.end_col_offset or last.col_offset)
    edit = TextEdit(Span(anchor.line, start, anchor.line, end), f"{written} + {wanted.group('pad')}")
    return QuickFix(diagnostic, f"Pad '{decl.buffer.name}' by {wanted.group('pad')} on its last dimension", [edit])
