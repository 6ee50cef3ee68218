"""``textDocument/signatureHelp``: the signature of the ``T.*`` call being typed, with the active
parameter (from ``tilescope.core.static.complete``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.core.static.complete import signature_help as find_signature
from tilescope.lsp.completion import text_before

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def register(server: TilescopeServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_SIGNATURE_HELP, types.SignatureHelpOptions(trigger_characters=["(", ","]))
    def signature_help(ls: TilescopeServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        uri = params.text_document.uri
        aliases = ls.facts(uri).static.aliases
        found = find_signature(text_before(ls, uri, params.position), aliases)
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
