"""How facts are written for people: shapes, sizes, dtypes and stage counts, in one style.

Every front end (diagnostic messages, hovers, hints, the CLI, graphs, the layout view) writes these
through this module, so that ``128×32``, ``48 KB`` and ``2 stages`` read the same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable


def dims_text(dims: Iterable[object]) -> str:
    """``8×8``: extents joined, as written when symbolic (``M×K``); ``""`` for none."""
    return "×".join(str(d) for d in dims)


def shape_text(shape: Iterable[object]) -> str:
    """A buffer's shape: ``128×32``, or ``scalar`` for a zero-dimensional one."""
    return dims_text(shape) or "scalar"


def buffer_text(shape: Iterable[object], dtype: str, scope: str | None = None, sep: str = " · ") -> str:
    """``128×32 · float16 · shared.dyn``: a buffer as hints, hovers and graphs name it."""
    parts = [shape_text(shape), dtype]
    if scope is not None:
        parts.append(scope)
    return sep.join(parts)


def kib(size: int) -> str:
    """``48 KB``, ``1.5 KB``, ``2 MB``: sizes as people read them (1 KB = 1024 bytes)."""
    if size >= 1024 * 1024:
        value, unit = size / (1024 * 1024), "MB"
    else:
        value, unit = size / 1024, "KB"
    return f"{value:.0f} {unit}" if value.is_integer() else f"{value:.1f} {unit}"


def stages_text(count: object) -> str:
    """``1 stage``, ``3 stages``, ``S stages`` for a symbolic count."""
    return "1 stage" if count == 1 else f"{count} stages"
