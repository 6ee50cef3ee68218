"""A tile op's operand as the static tier reads it; shared by the reader and the checks."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from tilescope.core.model import Dim
from tilescope.core.static.evaluate import evaluate
from tilescope.core.static.records import BufferDecl
from tilescope.core.static.symbolic import Sym, Value, is_known_int


@dataclass(frozen=True)
class Operand:
    """A tile op operand: the buffer it names and the extents of the region it covers."""

    buffer: BufferDecl
    node: ast.expr
    shape: list[Value] | None
    """Region extents; ``None`` when the region is a start point whose extent the op infers."""


def operand_of(
    node: ast.expr, buffers: Mapping[str, BufferDecl], env: Mapping[str, Value], aliases: frozenset[str]
) -> Operand | None:
    """The operand ``node`` names (a buffer, or a region of one with its extents), or ``None``."""
    if isinstance(node, ast.Name) and node.id in buffers:
        decl = buffers[node.id]
        return Operand(decl, node, list(values(decl.buffer.shape)))
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in buffers:
        decl = buffers[node.value.id]
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not any(isinstance(i, ast.Slice) for i in items):
            return Operand(decl, node, None)
        extents: list[Value] = []
        for item in items:
            if isinstance(item, ast.Slice):
                lower = evaluate(item.lower, env, aliases) if item.lower is not None else 0
                upper = (
                    evaluate(item.upper, env, aliases)
                    if item.upper is not None
                    else values([decl.buffer.shape[len(extents)]])[0]
                    if len(extents) < len(decl.buffer.shape)
                    else Sym("?")
                )
                extents.append(upper - lower if is_known_int(upper) and is_known_int(lower) else Sym("?"))
            else:
                extents.append(1)
        return Operand(decl, node, extents)
    return None


def values(dims: list[Dim]) -> list[Value]:
    return [d if isinstance(d, int) else Sym(d) for d in dims]
