"""``textDocument/documentSymbol``: each kernel with its buffers (from ``navigate.outline``)."""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import OutlineKind, OutlineNode, outline
from tilescope.lsp.convert import span_range
from tilescope.lsp.server import TilescopeServer
from tilescope.lsp.text import Text

_KIND: dict[OutlineKind, types.SymbolKind] = {"kernel": types.SymbolKind.Function, "buffer": types.SymbolKind.Variable}


def _symbol(text: Text, node: OutlineNode) -> types.DocumentSymbol:
    whole = span_range(text, node.span)
    selection = span_range(text, node.selection)
    if not (_le(whole.start, selection.start) and _le(selection.end, whole.end)):
        selection = types.Range(start=whole.start, end=whole.start)
    return types.DocumentSymbol(
        name=node.name or "?",
        kind=_KIND[node.kind],
        detail=node.detail,
        range=whole,
        selection_range=selection,
        children=[_symbol(text, child) for child in node.children],
    )


def _le(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) <= (b.line, b.character)


def document_symbol(ls: TilescopeServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
    uri = params.text_document.uri
    text = ls.text(uri)
    return [_symbol(text, node) for node in outline(ls.facts(uri))]
