"""``initialize`` options and ``workspace/didChangeConfiguration``: trust, target, hints, timeout,
interpreter. A change notification without settings makes the server pull the ``tilescope``
section with ``workspace/configuration``; a change re-analyses every open document. Revoking
trust stops the compiler worker at once; ``shutdown`` stops it too."""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.static import use_interpreter
from tilescope.lsp import diagnostics
from tilescope.lsp.server import TilescopeServer
from tilescope.lsp.settings import SECTION, Settings, merged


def initialize(ls: TilescopeServer, params: types.InitializeParams) -> None:
    ls.settings = merged(ls.settings, params.initialization_options)
    # Names, signatures and checks of the release the code runs with; an untrusted interpreter is not run.
    use_interpreter(ls.settings.python, run=ls.settings.trusted)


def initialized(ls: TilescopeServer, params: types.InitializedParams) -> None:
    ls.compiler.warm()


def shutdown(ls: TilescopeServer, params: None) -> None:
    ls.compiler.close()


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
    if (settings.python, settings.trusted) != (before.python, before.trusted):
        use_interpreter(settings.python, run=settings.trusted)
        ls.documents.reread()
    if before.trusted and not settings.trusted:
        ls.compiler.stop()
        ls.documents.compiled.clear()
        ls.hint_answers.clear()
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
    if capabilities and capabilities.code_lens and capabilities.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)
