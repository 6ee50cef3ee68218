"""``textDocument/inlayHint``: shapes, dtypes, scopes, launch geometry, layouts and stages inline.

The labels come from ``tilelang_core.static.hints``; this module only places them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from lsp.convert import position
from tilelang_core.static.hints import inlay_hints

if TYPE_CHECKING:
    from lsp.server import TilescopeServer

_KIND = {
    "buffers": types.InlayHintKind.Type,
    "parameters": types.InlayHintKind.Type,
    "layouts": types.InlayHintKind.Type,
    "launch": types.InlayHintKind.Parameter,
    "pipelines": types.InlayHintKind.Parameter,
}


def register(server: TilescopeServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    def inlay_hint(ls: TilescopeServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        uri = params.text_document.uri
        found = inlay_hints(ls.facts(uri), ls.settings.hints, params.range.start.line + 1, params.range.end.line + 1)
        lines = ls.lines(uri)
        start, end = params.range.start, params.range.end
        placed = [(position(lines, hint.line, hint.column), hint) for hint in found]
        return [
            types.InlayHint(
                position=where,
                label=hint.label,
                kind=_KIND[hint.kind],
                padding_left=True,
                tooltip=hint.tooltip,
            )
            for where, hint in placed
            if (start.line, start.character) <= (where.line, where.character) <= (end.line, end.character)
        ]
