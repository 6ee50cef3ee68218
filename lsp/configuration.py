"""``initialize`` options and ``workspace/didChangeConfiguration``: trust, target, hints, timeout,
interpreter. A change of trust or target re-analyses every open document."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from lsp import diagnostics
from lsp.settings import merged

if TYPE_CHECKING:
    from lsp.server import TilescopeServer


def register(server: TilescopeServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: TilescopeServer, params: types.InitializeParams) -> None:
        ls.settings = merged(ls.settings, params.initialization_options)

    @server.feature(types.INITIALIZED)
    def initialized(ls: TilescopeServer, params: types.InitializedParams) -> None:
        ls.compiler.warm()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: TilescopeServer, params: types.DidChangeConfigurationParams) -> None:
        before = ls.settings
        ls.settings = merged(before, params.settings)
        if ls.settings == before:
            return
        for uri in list(ls.workspace.text_documents):
            diagnostics.publish(ls, uri)
            if ls.settings.trusted:
                ls.compiler.schedule(uri, delay=0)
        if ls.settings.trusted and not before.trusted:
            ls.compiler.warm()
        ls.notify_untrusted_once()
        capabilities = ls.client_capabilities.workspace
        if capabilities and capabilities.inlay_hint and capabilities.inlay_hint.refresh_support:
            ls.workspace_inlay_hint_refresh(None)
