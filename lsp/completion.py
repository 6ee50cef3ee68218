"""``textDocument/completion``: ``T.`` members and the keyword arguments of the ``T.*`` call the
cursor is in (items from ``tilescope.core.static.complete``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.core.static.complete import complete

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer

_KIND = {
    "function": types.CompletionItemKind.Function,
    "class": types.CompletionItemKind.Class,
    "module": types.CompletionItemKind.Module,
    "dtype": types.CompletionItemKind.TypeParameter,
    "value": types.CompletionItemKind.Constant,
    "keyword": types.CompletionItemKind.Property,
}
CONTEXT_LINES = 40
"""Lines before the cursor searched for the enclosing call."""


def text_before(ls: TilescopeServer, uri: str, position: types.Position) -> str:
    lines = ls.lines(uri)
    line = min(position.line, len(lines))
    current = lines[line] if line < len(lines) else ""
    head = current.encode("utf-16-le")[: position.character * 2].decode("utf-16-le", errors="ignore")
    return "".join(lines[max(0, line - CONTEXT_LINES) : line]) + head


def register(server: TilescopeServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[".", "(", ","]))
    def completion(ls: TilescopeServer, params: types.CompletionParams) -> types.CompletionList:
        uri = params.text_document.uri
        aliases = ls.facts(uri).static.aliases
        items = [
            types.CompletionItem(
                label=item.label,
                kind=_KIND.get(item.kind, types.CompletionItemKind.Text),
                detail=item.detail,
                documentation=item.documentation or None,
                insert_text=item.insert_text,
            )
            for item in complete(text_before(ls, uri, params.position), aliases)
        ]
        return types.CompletionList(is_incomplete=False, items=items)
