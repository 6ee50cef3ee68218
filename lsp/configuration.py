"""``initialize`` options and ``workspace/didChangeConfiguration``: trust, target, hints, timeout,
interpreter. A change notification without settings makes the server pull the ``tilescope``
section with ``workspace/configuration``; a change re-analyses every open document. ``shutdown``
stops the compiler worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.lsp import diagnostics
from tilescope.lsp.settings import SECTION, Settings, merged

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer


def register(server: TilescopeServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: TilescopeServer, params: types.InitializeParams) -> None:
        ls.settings = merged(ls.settings, params.initialization_options)

    @server.feature(types.INITIALIZED)
    def initialized(ls: TilescopeServer, params: types.InitializedParams) -> None:
        ls.compiler.warm()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: TilescopeServer, params: None) -> None:
        ls.compiler.close()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TilescopeServer, params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        capabilities = ls.client_capabilities.workspace
        if not raw and capabilities and capabilities.configuration:
            answer = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
            raw = answer[0] if answer else None
        apply(ls, merged(ls.settings, raw))


def apply(ls: TilescopeServer, settings: Settings) -> None:
    """Adopt new settings and bring every open document up to date with them."""
    before, ls.settings = ls.settings, settings
    if settings == before:
        return
    for uri in list(ls.workspace.text_documents):
        diagnostics.publish(ls, uri)
        if settings.trusted:
            ls.compiler.schedule(uri, delay=0)
    if settings.trusted and not before.trusted:
        ls.compiler.warm()
    ls.notify_untrusted_once()
    capabilities = ls.client_capabilities.workspace
    if capabilities and capabilities.inlay_hint and capabilities.inlay_hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)
