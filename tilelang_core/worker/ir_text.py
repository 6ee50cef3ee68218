"""Print a pass's IR on demand, with the Python line behind each statement where TileLang kept it.

TVM's script printer can annotate chosen objects with a trailing comment; we annotate every
statement that carries a span in the user's file, then strip the comments back out into a
per-line list, so viewers get clean IR text plus a parallel column of source lines.
"""

from __future__ import annotations

import re
from typing import Any

from tilescope.core.compat import spans
from tilescope.core.model import IRText
from tvm import tirx

_MARK = "tilescope-py:"
_ANNOTATION = re.compile(rf"\s*#\s*{_MARK}(\d+)\s*$")


def _annotations(mod: Any, path: str) -> dict[Any, str]:
    marks: dict[Any, str] = {}

    def visit(node: Any) -> None:
        if isinstance(node, tirx.Stmt):
            location = spans.location(spans.stmt_span(node))
            if location and location[0] == path:
                marks[node] = f"{_MARK}{location[1]}"

    for func in mod.functions.values():
        if isinstance(func, tirx.PrimFunc):
            tirx.stmt_functor.post_order_visit(func.body, visit)
    return marks


def render(mod: Any, path: str) -> IRText:
    """The module's TVMScript with a source-line column."""
    text = mod.script(obj_to_annotate=_annotations(mod, path))
    lines: list[str] = []
    source_lines: list[int | None] = []
    pending: int | None = None
    for raw in text.splitlines():
        match = _ANNOTATION.search(raw)
        code = raw[: match.start()] if match else raw
        line = int(match.group(1)) if match else None
        if match and not code.strip():
            pending = line  # the printer put the note on a line of its own, above the statement
            continue
        lines.append(code)
        source_lines.append(line if line is not None else pending)
        pending = None
    return IRText(text="\n".join(lines), source_lines=source_lines)
