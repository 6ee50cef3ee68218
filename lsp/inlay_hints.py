"""``textDocument/inlayHint``: shapes, dtypes, scopes, launch geometry, layouts and stages inline.

The labels come from ``tilescope.core.ide.hints``; this module only places them.
"""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import inlay_hints
from tilescope.lsp.convert import position
from tilescope.lsp.server import TilescopeServer

_KIND = {
    "buffers": types.InlayHintKind.Type,
    "parameters": types.InlayHintKind.Type,
    "layouts": types.InlayHintKind.Type,
    "launch": types.InlayHintKind.Parameter,
    "pipelines": types.InlayHintKind.Parameter,
}
OPTIONS = types.InlayHintOptions(resolve_provider=False)


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """Identity, not equality: the records are large, and unchanged ones are the same objects."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def inlay_hint(ls: TilescopeServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    uri = params.text_document.uri
    start, end = params.range.start, params.range.end
    facts = ls.facts(uri)
    sources = (facts.static, *facts.models.values())
    request = (ls.settings.hints, start, end, ls.workspace.position_encoding)
    cached = ls.hint_answers.get(uri)
    if cached is not None and _same(cached[0], sources) and cached[1] == request:
        return cached[2]
    found = inlay_hints(facts, ls.settings.hints, start.line + 1, end.line + 1)
    text = ls.text(uri)
    placed = [(position(text, hint.line, hint.column), hint) for hint in found]
    result = [
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
    ls.hint_answers[uri] = (sources, request, result)
    return result
