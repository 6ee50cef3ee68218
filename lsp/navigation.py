"""``textDocument/definition`` and ``textDocument/references`` for buffers, within their kernel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.core.static.navigate import definition, references
from tilescope.lsp.convert import core_position, span_range

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer


def register(server: TilescopeServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def goto_definition(ls: TilescopeServer, params: types.DefinitionParams) -> types.Location | None:
        uri = params.text_document.uri
        lines = ls.lines(uri)
        line, column = core_position(lines, params.position)
        span = definition(ls.facts(uri).static, line, column)
        return None if span is None else types.Location(uri=uri, range=span_range(lines, span))

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def find_references(ls: TilescopeServer, params: types.ReferenceParams) -> list[types.Location]:
        uri = params.text_document.uri
        lines = ls.lines(uri)
        line, column = core_position(lines, params.position)
        spans = references(ls.facts(uri).static, line, column, params.context.include_declaration)
        return [types.Location(uri=uri, range=span_range(lines, span)) for span in spans]
