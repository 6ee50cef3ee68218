"""``textDocument/didOpen``, ``didChange``, ``didSave``, ``didClose``: keep the analyses current.

Every change re-runs the static tier and publishes its diagnostics at once, then (re)arms the
compiler tier's idle timer; a save analyses with the compiler right away.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.lsp import diagnostics

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer


def register(server: TilescopeServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TilescopeServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.notify_untrusted_once()
        diagnostics.publish(ls, params.text_document.uri)
        ls.compiler.schedule(params.text_document.uri, delay=0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TilescopeServer, params: types.DidChangeTextDocumentParams) -> None:
        diagnostics.publish(ls, params.text_document.uri)
        ls.compiler.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TilescopeServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.compiler.schedule(params.text_document.uri, delay=0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TilescopeServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.compiler.cancel(uri)
        ls.documents.forget(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
