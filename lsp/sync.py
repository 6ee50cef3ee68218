"""``textDocument/didOpen``, ``didChange``, ``didSave``, ``didClose`` and finished compiler results:
keep the analyses current.

Every change starts the static tier on the analysis thread (``Documents.schedule``) and publishes
its diagnostics when it is done and still current, then (re)arms the compiler tier's idle timer;
a save analyses with the compiler right away. Closing a document drops
everything kept for it; a compiler result for a closed document is dropped by the compiler tier.
"""

from __future__ import annotations

import asyncio

from lsprotocol import types
from tilescope.core.ide import CompiledSnapshot
from tilescope.lsp import diagnostics
from tilescope.lsp.server import TilescopeServer

_publishing: set[asyncio.Task[None]] = set()


def did_open(ls: TilescopeServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.notify_untrusted_once()
    _publish_when_ready(ls, params.text_document.uri)
    ls.compiler.schedule(params.text_document.uri, delay=0)


def did_change(ls: TilescopeServer, params: types.DidChangeTextDocumentParams) -> None:
    if not ls.documents.is_open(params.text_document.uri):
        return  # a change of a document never opened: nothing to analyse
    _publish_when_ready(ls, params.text_document.uri)
    ls.compiler.schedule(params.text_document.uri)


def _publish_when_ready(ls: TilescopeServer, uri: str) -> None:
    if not ls.documents.is_open(uri):
        return
    ls.documents.schedule(uri, ls.settings.target)
    task = asyncio.ensure_future(_publish(ls, uri))
    _publishing.add(task)
    task.add_done_callback(_publishing.discard)


async def _publish(ls: TilescopeServer, uri: str) -> None:
    try:
        if await ls.documents.ready(uri, ls.settings.target):
            diagnostics.publish(ls, uri)  # else a later change publishes its own
    except (MemoryError, RecursionError) as error:  # a task of its own: nothing above it would say so
        ls.gave_up(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, error)


def did_save(ls: TilescopeServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.compiler.schedule(params.text_document.uri, delay=0)


def did_close(ls: TilescopeServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.compiler.cancel(uri)
    ls.documents.forget(uri)
    ls.hint_answers.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def compiled_ready(ls: TilescopeServer, uri: str, snapshot: CompiledSnapshot) -> None:
    """A compiler-tier result arrived: keep it, and publish it if the document has not moved on."""
    if not ls.documents.is_open(uri):
        return
    ls.documents.compiled[uri] = snapshot
    state = ls.documents.state(uri, ls.settings.target)
    if snapshot.version != state.version:
        return
    diagnostics.publish(ls, uri)
    capabilities = ls.client_capabilities.workspace
    if capabilities and capabilities.inlay_hint and capabilities.inlay_hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)
    if capabilities and capabilities.code_lens and capabilities.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)
