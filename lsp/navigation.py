"""``textDocument/definition`` and ``textDocument/references`` for buffers, within their kernel."""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import definition, references
from tilescope.lsp.convert import core_position, span_range
from tilescope.lsp.server import TilescopeServer


def goto_definition(ls: TilescopeServer, params: types.DefinitionParams) -> types.Location | None:
    uri = params.text_document.uri
    text = ls.text(uri)
    line, column = core_position(text, params.position)
    span = definition(ls.facts(uri).static, line, column)
    return None if span is None else types.Location(uri=uri, range=span_range(text, span))


def find_references(ls: TilescopeServer, params: types.ReferenceParams) -> list[types.Location]:
    uri = params.text_document.uri
    text = ls.text(uri)
    line, column = core_position(text, params.position)
    spans = references(ls.facts(uri).static, line, column, params.context.include_declaration)
    return [types.Location(uri=uri, range=span_range(text, span)) for span in spans]
