"""Quick fixes for the diagnostics an editor shows: the edits, as plain data in core coordinates.

The static checks attach a ``QuickFix`` where the fix is certain (``transpose_B=True`` for a B tile
of the other orientation, ``T.clear(C)`` before a gemm that reads its accumulator first). An editor
asks for a range; only fixes whose diagnostic is still shown (not replaced by the compiler's) and
which touch that range are offered.
"""

from __future__ import annotations

from collections.abc import Iterable

from tilescope.core.model import Diagnostic
from tilescope.core.static.records import QuickFix, StaticFile


def quick_fixes(static: StaticFile, shown: Iterable[Diagnostic], first_line: int, last_line: int) -> list[QuickFix]:
    """The fixes for diagnostics in ``shown`` whose lines meet ``first_line..last_line`` (1-based)."""
    visible = set(shown)
    found: list[QuickFix] = []
    for fix in static.fixes:
        span = fix.diagnostic.span
        end = span.end_line or span.line
        if fix.diagnostic in visible and span.line <= last_line and end >= first_line:
            found.append(fix)
    return found
