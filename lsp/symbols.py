"""``textDocument/documentSymbol``: each kernel with its buffers (from ``navigate.outline``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.core.static.navigate import OutlineNode, outline
from tilescope.lsp.convert import span_range

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer

_KIND = {"kernel": types.SymbolKind.Function, "buffer": types.SymbolKind.Variable}


def _symbol(lines: list[str], node: OutlineNode) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=node.name,
        kind=_KIND[node.kind],
        detail=node.detail,
        range=span_range(lines, node.span),
        selection_range=span_range(lines, node.selection),
        children=[_symbol(lines, child) for child in node.children],
    )


def register(server: TilescopeServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: TilescopeServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        uri = params.text_document.uri
        lines = ls.lines(uri)
        return [_symbol(lines, node) for node in outline(ls.facts(uri))]
