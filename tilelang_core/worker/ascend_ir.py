"""Small readers of TileLang's Ascend IR shared by the schedule and the memory plan (``ascend``'s parts)."""

from __future__ import annotations

import re
from typing import Any

from tilescope.core.compat import spans
from tvm import tirx


def module_after(modules: list[Any], names: list[str], name: str) -> Any | None:
    index = next((i for i, n in enumerate(names) if n == name), None)
    return modules[index] if index is not None and index < len(modules) else None


def funcs(module: Any) -> list[Any]:
    return [f for f in module.functions.values() if isinstance(f, tirx.PrimFunc)]


def as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def line_of(node: Any, path: str) -> int | None:
    found = spans.location(spans.stmt_span(node))
    return found[1] if found is not None and found[0] == path else None


def base_name(name: str) -> str:
    """A buffer's name as the user wrote it: TVM's ``x_l1_1`` copies and ``.data`` vars name the same buffer."""
    return re.sub(r"(_\d+)+$", "", name)
