"""``textDocument/publishDiagnostics``: static findings at once, compiler findings when current.

Compiler diagnostics are published only together with the document version they were computed
for; ``tilescope.core.ide.merged_diagnostics`` decides which static estimates they replace.
"""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import merged_diagnostics
from tilescope.lsp.convert import diagnostic
from tilescope.lsp.server import TilescopeServer


def publish(ls: TilescopeServer, uri: str) -> None:
    if not ls.documents.is_open(uri):
        return
    state = ls.documents.state(uri, ls.settings.target)
    snapshot = ls.documents.current_compiled(uri, ls.settings.target) if ls.settings.trusted else None
    found = merged_diagnostics(state.static, snapshot.analysis if snapshot else None)
    text = ls.text(uri)
    converted: list[types.Diagnostic] = []
    for d in found:
        item = diagnostic(text, d)
        if all(_key(item) != _key(seen) for seen in converted):
            converted.append(item)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=state.version, diagnostics=converted)
    )


def _key(item: types.Diagnostic) -> tuple[object, ...]:
    r = item.range
    return (r.start.line, r.start.character, r.end.line, r.end.character, item.severity, item.code, item.message)
