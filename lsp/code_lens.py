"""``textDocument/codeLens``: "Trace passes", "Plot layouts" and "Show CUDA" above each kernel,
each bound to a ``workspace/executeCommand`` command of ``lsp.commands``, and above an autotuned
kernel the core's summary of its configs ("24 configs: 18 fit, 6 exceed shared memory"). Shown only
in a trusted workspace, since the commands run the compiler."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from tilescope.core.ide.layout_view import plot_order
from tilescope.core.model import Span
from tilescope.lsp.commands import AUTOTUNE_CONFIGS, PLOT_LAYOUT, SHOW_CUDA, TRACE_PASSES
from tilescope.lsp.convert import span_range

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer


def register(server: TilescopeServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: TilescopeServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        if not ls.settings.trusted:
            return []
        uri = params.text_document.uri
        lines = ls.lines(uri)
        lenses: list[types.CodeLens] = []
        facts = ls.facts(uri)
        for kernel in facts.static.kernels:
            where = span_range(lines, Span(kernel.span.line, kernel.span.column, kernel.span.line))
            name = kernel.ref.name
            lenses.append(_lens(where, "Trace passes", TRACE_PASSES, [uri, name]))
            plotted = plot_order((d.buffer.name, d.buffer.scope) for d in kernel.buffers)
            if plotted:
                lenses.append(_lens(where, "Plot layouts", PLOT_LAYOUT, [uri, name, plotted[0]]))
            lenses.append(_lens(where, "Show CUDA", SHOW_CUDA, [uri, name]))
            model = facts.model(kernel)
            if model is not None and model.autotune is not None:
                tuned = span_range(lines, Span(model.autotune.line, 0, model.autotune.line))
                lenses.append(_lens(tuned, model.autotune.summary, AUTOTUNE_CONFIGS, [uri, name]))
        return lenses


def _lens(where: types.Range, title: str, command: str, arguments: list[object]) -> types.CodeLens:
    return types.CodeLens(range=where, command=types.Command(title=title, command=command, arguments=arguments))
