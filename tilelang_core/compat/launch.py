"""Block and thread bindings of a PrimFunc, in each release's form.

``T.Kernel`` becomes ``thread_extent`` attributes on 0.1.10 to 0.1.13, ``For`` loops bound to
``blockIdx``/``threadIdx`` on 0.1.14, and on 0.1.15 ``blockIdx`` loops plus a block annotated
with ``tl.launch_threads``. This reads all three.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tilelang  # noqa: F401  (puts the tvm TileLang bundles on the import path)
from tvm import tirx


@dataclass
class Bindings:
    grid: dict[str, int] = field(default_factory=dict)
    """``blockIdx.x`` → extent."""
    threads: dict[str, int] = field(default_factory=dict)
    """``threadIdx.x`` → extent."""
    first_block: Any | None = None
    """The statement that binds the first ``blockIdx`` (its span is the ``T.Kernel`` line)."""


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def bindings(func: Any) -> Bindings:
    found = Bindings()

    def bind(tag: str, extent: Any, node: Any) -> None:
        if tag.startswith("blockIdx"):
            found.grid[tag] = _int(extent)
            found.first_block = found.first_block or node
        elif tag.startswith("threadIdx"):
            found.threads[tag] = _int(extent)

    def visit(node: Any) -> None:
        if isinstance(node, tirx.For) and node.thread_binding is not None:
            bind(str(node.thread_binding.thread_tag), node.extent, node)
        elif isinstance(node, tirx.AttrStmt) and str(node.attr_key) == "thread_extent":
            bind(str(node.node.thread_tag), node.value, node)
        elif isinstance(node, tirx.SBlock) and "tl.launch_threads" in node.annotations:
            for axis, extent in zip("xyz", node.annotations["tl.launch_threads"], strict=False):
                found.threads[f"threadIdx.{axis}"] = _int(extent)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return found
