"""``textDocument/hover``: a buffer's shape, dtype, scope, bytes, layout and users, or a ``T.*``
primitive's signature and docstring (text from ``tilescope.core.ide.describe``), or on an
``@autotune`` decorator every config and its verdict (``tilescope.core.ide.autotune_view``)."""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import autotune_hover, describe_at, identifier_at
from tilescope.lsp.convert import core_position, span_range
from tilescope.lsp.server import TilescopeServer


def hover(ls: TilescopeServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    text = ls.text(uri)
    line, column = core_position(text, params.position)
    facts = ls.facts(uri)
    word, name = identifier_at(text.line(line), line, column)
    found = describe_at(facts, line, column, word, name) or autotune_hover(facts, line)
    if found is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=found.markdown),
        range=span_range(text, found.span),
    )
