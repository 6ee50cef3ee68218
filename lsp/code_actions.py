"""``textDocument/codeAction``: the quick fixes the core computed for the diagnostics shown.

The fixes and their edits come from ``tilescope.core.ide.code_actions``; this module only turns
core spans into LSP ranges (in the negotiated position encoding) and each fix into a ``quickfix``
code action.
"""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import merged_diagnostics, quick_fixes
from tilescope.lsp.convert import diagnostic, span_range
from tilescope.lsp.server import TilescopeServer

OPTIONS = types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])


def code_actions(ls: TilescopeServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    state = ls.documents.state(uri, ls.settings.target)
    snapshot = ls.documents.current_compiled(uri, ls.settings.target) if ls.settings.trusted else None
    shown = merged_diagnostics(state.static, snapshot.analysis if snapshot else None)
    text = ls.text(uri)
    first, last = params.range.start.line + 1, params.range.end.line + 1
    actions: list[types.CodeAction] = []
    for fix in quick_fixes(state.static, shown, first, last):
        edits = [types.TextEdit(range=span_range(text, e.span), new_text=e.new_text) for e in fix.edits]
        actions.append(
            types.CodeAction(
                title=fix.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic(text, fix.diagnostic)],
                is_preferred=True,
                edit=types.WorkspaceEdit(changes={uri: edits}),
            )
        )
    return actions
