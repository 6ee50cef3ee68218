"""Positions to symbols and back: what is under the cursor, where a buffer is declared and used,
and the outline of kernels and their buffers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tilescope.core.ide.hints import buffer_facts, buffer_label
from tilescope.core.ide.merge import Facts
from tilescope.core.model import Span
from tilescope.core.static.records import StaticFile, StaticKernel

OutlineKind = Literal["kernel", "buffer"]


@dataclass(frozen=True)
class SymbolAt:
    """The buffer name or ``T.<name>`` under a position."""

    kind: Literal["buffer", "primitive"]
    name: str
    span: Span
    kernel: StaticKernel | None = None


def covers(span: Span, line: int, column: int) -> bool:
    """Whether a 1-based line / 0-based column falls in a one-line span, its end included."""
    end = span.end_column if span.end_column is not None else span.column
    return span.line == line and span.column <= column <= end


def symbol_at(static: StaticFile, line: int, column: int) -> SymbolAt | None:
    kernel = static.kernel_at(line)
    if kernel is not None:
        for occurrence in kernel.occurrences:
            if covers(occurrence.span, line, column):
                return SymbolAt("buffer", occurrence.name, occurrence.span, kernel)
    for use in static.primitives:
        if use.span.line == line and covers(use.span, line, column):
            return SymbolAt("primitive", use.name, use.span, kernel)
    return None


def definition(static: StaticFile, line: int, column: int) -> Span | None:
    """Where the buffer under the cursor is declared."""
    symbol = symbol_at(static, line, column)
    if symbol is None or symbol.kind != "buffer" or symbol.kernel is None:
        return None
    decl = symbol.kernel.buffer(symbol.name)
    return decl.name_span if decl else None


def references(static: StaticFile, line: int, column: int, include_declaration: bool = True) -> list[Span]:
    """Every mention of the buffer under the cursor within its kernel."""
    symbol = symbol_at(static, line, column)
    if symbol is None or symbol.kind != "buffer" or symbol.kernel is None:
        return []
    return [
        o.span
        for o in symbol.kernel.occurrences
        if o.name == symbol.name and (include_declaration or o.role != "definition")
    ]


@dataclass(frozen=True)
class OutlineNode:
    name: str
    kind: OutlineKind
    detail: str
    span: Span
    selection: Span
    children: list[OutlineNode] = field(default_factory=list["OutlineNode"])


def outline(facts: Facts) -> list[OutlineNode]:
    """Kernels with their buffers, for an editor's document symbols."""
    nodes: list[OutlineNode] = []
    for kernel in facts.static.kernels:
        model = facts.model(kernel)
        children = [
            OutlineNode(
                decl.buffer.name,
                "buffer",
                buffer_label(buffer_facts(decl, model), dialect=facts.static.dialect),
                decl.name_span,
                decl.name_span,
            )
            for decl in kernel.buffers
        ]
        name_span = kernel.name_span or kernel.span  # UTF-8 columns of the name as written
        nodes.append(OutlineNode(kernel.ref.name, "kernel", kernel.ref.style, kernel.span, name_span, children))
    return nodes
