"""``textDocument/signatureHelp``: the signature of the ``T.*`` call being typed, with the active
parameter (from ``tilescope.core.ide.complete``)."""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import signature_at
from tilescope.lsp.completion import CONTEXT_LINES
from tilescope.lsp.server import TilescopeServer


def _utf16(text: str) -> int:
    """Parameter label offsets are UTF-16 code units whatever the position encoding (LSP 3.17)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def signature_help(ls: TilescopeServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
    uri = params.text_document.uri
    static = ls.facts(uri).static
    found = signature_at(ls.text(uri).before(params.position, CONTEXT_LINES), static.aliases, static.dialect)
    if found is None:
        return None
    parameters = [
        types.ParameterInformation(label=(_utf16(found.label[:start]), _utf16(found.label[:end])))
        for start, end in found.parameters
    ]
    signature = types.SignatureInformation(
        label=found.label,
        documentation=found.documentation or None,
        parameters=parameters,
        active_parameter=found.active,
    )
    return types.SignatureHelp(signatures=[signature], active_signature=0, active_parameter=found.active)
