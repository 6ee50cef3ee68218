"""A tile op's operand as the static tier reads it; shared by the reader and the checks."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tilescope.core.static.evaluate import Value
from tilescope.core.static.records import BufferDecl


@dataclass(frozen=True)
class Operand:
    """A tile op operand: the buffer it names and the extents of the region it covers."""

    buffer: BufferDecl
    node: ast.expr
    shape: list[Value] | None
    """Region extents; ``None`` when the region is a start point whose extent the op infers."""
