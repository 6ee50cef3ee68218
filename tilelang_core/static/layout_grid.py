"""A compiled layout as a 2-D grid of numbers an editor can draw: thread and register per cell.

Higher-rank tiles are folded into rows (all leading dimensions) by the last dimension; a 1-D tile
is one row. Shared layouts have no threads: their grid holds each element's physical offset.
"""

from __future__ import annotations

from typing import Any

from tilescope.core.model import Layout


def _rows(array: Any) -> Any:
    if array.ndim == 1:
        return array.reshape(1, -1)
    return array.reshape(-1, array.shape[-1])


def layout_grid(layout: Layout) -> dict[str, Any] | None:
    """``{"shape": [r, c], "thread": [[...]] | None, "index": [[...]]}``, ``None`` if unevaluable."""
    from tilescope.core import layout_eval

    try:
        if layout.kind == "fragment":
            fragment = layout_eval.fragment_map(layout)
            thread, index = _rows(fragment.thread[0]), _rows(fragment.local)
        else:
            shared = layout_eval.shared_map(layout)
            thread, index = None, _rows(shared.offset)
    except (ValueError, IndexError, KeyError, SyntaxError, TypeError):
        return None
    return {
        "shape": [int(index.shape[0]), int(index.shape[1])],
        "thread": None if thread is None else thread.astype(int).tolist(),
        "index": index.astype(int).tolist(),
    }


def layout_conflicts(layout: Layout, dtype: str) -> list[dict[str, Any]]:
    """Bank-conflict reports of a shared layout, one per access pattern, as JSON for editors.

    ``degree`` is per element of one stage's tile (the last two logical dimensions).
    """
    from tilescope.core import bank_conflicts, layout_eval

    if layout.kind != "layout":
        return []
    try:
        reports = bank_conflicts.analyze(layout_eval.shared_map(layout), dtype)
    except (ValueError, IndexError, KeyError, SyntaxError, TypeError):
        return []
    return [
        {
            "pattern": r.pattern,
            "description": r.description,
            "degree": r.degree.astype(int).tolist(),
            "wavefronts": int(r.wavefronts),
            "ideal": int(r.ideal),
        }
        for r in reports
    ]
