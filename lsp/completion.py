"""``textDocument/completion``: ``T.`` members and the keyword arguments of the ``T.*`` call the
cursor is in (items from ``tilescope.core.ide.complete``)."""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import complete
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


def completion(ls: TilescopeServer, params: types.CompletionParams) -> types.CompletionList:
    uri = params.text_document.uri
    static = ls.facts(uri).static
    items = [
        types.CompletionItem(
            label=item.label,
            kind=_KIND.get(item.kind, types.CompletionItemKind.Text),
            detail=item.detail,
            documentation=item.documentation or None,
            sort_text=item.sort_text,
        )
        for item in complete(ls.text(uri).before(params.position, CONTEXT_LINES), static.aliases, static.dialect)
    ]
    return types.CompletionList(is_incomplete=False, items=items)
