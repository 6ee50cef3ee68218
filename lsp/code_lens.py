"""``textDocument/codeLens``: "Trace passes", "Plot layouts" and "Show CUDA" above each kernel,
each bound to a command the server carries out itself (``lsp.show``), so they work in any client.
Shown only in a trusted workspace, since the commands run the compiler."""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.model import Span
from tilescope.lsp.convert import span_range
from tilescope.lsp.server import TilescopeServer
from tilescope.lsp.show import SHOW_CUDA, SHOW_LAYOUT, SHOW_PASSES

_PLOT_ORDER = ("local.fragment", "shared.dyn", "shared")


def code_lens(ls: TilescopeServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    if not ls.settings.trusted:
        return []
    uri = params.text_document.uri
    text = ls.text(uri)
    lenses: list[types.CodeLens] = []
    for kernel in ls.facts(uri).static.kernels:
        where = span_range(text, Span(kernel.span.line, kernel.span.column, kernel.span.line))
        name = kernel.ref.name
        lenses.append(_lens(where, "Trace passes", SHOW_PASSES, [uri, name]))
        plotted = sorted(
            (d for d in kernel.buffers if d.buffer.scope in _PLOT_ORDER),
            key=lambda d: _PLOT_ORDER.index(d.buffer.scope),
        )
        if plotted:
            lenses.append(_lens(where, "Plot layouts", SHOW_LAYOUT, [uri, name, plotted[0].buffer.name]))
        lenses.append(_lens(where, "Show CUDA", SHOW_CUDA, [uri, name]))
    return lenses


def _lens(where: types.Range, title: str, command: str, arguments: list[object]) -> types.CodeLens:
    return types.CodeLens(range=where, command=types.Command(title=title, command=command, arguments=arguments))
