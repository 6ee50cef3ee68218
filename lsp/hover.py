"""``textDocument/hover``: a buffer's shape, dtype, scope, bytes, layout and users, or a ``T.*``
primitive's signature and docstring (text from ``tilescope.core.static.describe``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.core.static.describe import hover as describe
from tilescope.lsp.convert import core_position, span_range

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer


def register(server: TilescopeServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TilescopeServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        lines = ls.lines(uri)
        line, column = core_position(lines, params.position)
        found = describe(ls.facts(uri), line, column)
        if found is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=found.markdown),
            range=span_range(lines, found.span),
        )
