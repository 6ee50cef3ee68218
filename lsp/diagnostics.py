"""``textDocument/publishDiagnostics``: static findings at once, compiler findings when current.

Compiler diagnostics are published only together with the document version they were computed
for; ``tilescope.core.static.merge.diagnostics`` decides which static estimates they replace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.core.static.merge import diagnostics as merged_diagnostics
from tilescope.lsp.convert import diagnostic

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer


def publish(server: TilescopeServer, uri: str) -> None:
    state = server.documents.state(uri, server.settings.target)
    snapshot = server.documents.current_compiled(uri, server.settings.target)
    found = merged_diagnostics(state.static, snapshot.analysis if snapshot else None)
    lines = server.lines(uri)
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=uri, version=state.version, diagnostics=[diagnostic(lines, d) for d in found]
        )
    )


def register(server: TilescopeServer) -> None:
    """Diagnostics are pushed from ``sync`` and the compiler tier; nothing to register."""
