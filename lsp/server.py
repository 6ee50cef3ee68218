"""The language server object: settings, documents, the compiler tier, and feature registration.

Each LSP feature lives in its own module with a ``register(server)`` function; this module only
wires them together and owns the shared state they read.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from tilescope.core.static.merge import CompiledSnapshot, Facts
from tilescope.lsp import (
    code_actions,
    code_lens,
    commands,
    completion,
    configuration,
    diagnostics,
    hover,
    inlay_hints,
    navigation,
    signature_help,
    symbols,
    sync,
)
from tilescope.lsp.compiler_tier import CompilerTier
from tilescope.lsp.documents import Documents
from tilescope.lsp.settings import Settings

NAME = "tilescope"
VERSION = "0.1.0"
UNTRUSTED_NOTICE = (
    "Tilescope: this workspace is not trusted, so only the static tier runs (kernel code is never "
    "executed). Set tilescope.trusted to true for compiler-backed layouts, passes and diagnostics."
)


class TilescopeServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, VERSION, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = Settings()
        self.documents = Documents(lambda: self.workspace)
        self.compiler = CompilerTier(self)
        self.untrusted_notice_sent = False

    def facts(self, uri: str) -> Facts:
        return self.documents.facts(uri, self.settings.target)

    def lines(self, uri: str) -> list[str]:
        return self.documents.lines(uri)

    def notify_untrusted_once(self) -> None:
        if self.settings.trusted or self.untrusted_notice_sent:
            return
        self.untrusted_notice_sent = True
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=UNTRUSTED_NOTICE))

    def compiled_ready(self, uri: str, snapshot: CompiledSnapshot) -> None:
        """A compiler-tier result arrived: keep it, and publish it if the document has not moved on."""
        self.documents.compiled[uri] = snapshot
        state = self.documents.state(uri, self.settings.target)
        if snapshot.version != state.version:
            return
        diagnostics.publish(self, uri)
        capabilities = self.client_capabilities.workspace
        if capabilities and capabilities.inlay_hint and capabilities.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)
        if capabilities and capabilities.code_lens and capabilities.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)


def create_server() -> TilescopeServer:
    server = TilescopeServer()
    for feature in (
        configuration,
        sync,
        inlay_hints,
        hover,
        completion,
        signature_help,
        navigation,
        symbols,
        code_lens,
        commands,
        code_actions,
    ):
        feature.register(server)
    return server
