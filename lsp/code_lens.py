"""``textDocument/codeLens``: "Trace passes", "Plot layouts", "Show CUDA" and "Run on CPU" above each kernel, and
above an autotuned kernel the core's summary of its configs ("24 configs: 18 fit, 6 exceed shared
memory"), the roofline bound and the last profile of each compiled kernel ("at best 41 µs on
H200, memory-bound"), and above an Ascend kernel its schedule ("Schedule · Cube + Vector · 17 flags"
once compiled, "Schedule" before), each bound to a command the server carries out itself
(``lsp.commands``), so they work in any client. Shown only in a trusted workspace, since the commands
run the compiler."""

from __future__ import annotations

from lsprotocol import types
from tilescope.core.ide import plot_order, schedule_lens, speed_lenses
from tilescope.core.model import Span
from tilescope.lsp.commands import (
    RUN_ON_CPU,
    SHOW_AUTOTUNE,
    SHOW_CUDA,
    SHOW_LAYOUT,
    SHOW_PASSES,
    SHOW_SCHEDULE,
    SHOW_SPEED,
)
from tilescope.lsp.convert import span_range
from tilescope.lsp.server import TilescopeServer


def code_lens(ls: TilescopeServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    if not ls.settings.trusted:
        return []
    uri = params.text_document.uri
    text = ls.text(uri)
    lenses: list[types.CodeLens] = []
    facts = ls.facts(uri)
    for kernel in facts.static.kernels:
        where = span_range(text, Span(kernel.span.line, kernel.span.column, kernel.span.line))
        name = kernel.ref.name
        lenses.append(_lens(where, "Trace passes", SHOW_PASSES, [uri, name]))
        plotted = plot_order((d.buffer.name, d.buffer.scope) for d in kernel.buffers)
        if plotted:
            lenses.append(_lens(where, "Plot layouts", SHOW_LAYOUT, [uri, name, plotted[0]]))
        lenses.append(_lens(where, "Show CUDA", SHOW_CUDA, [uri, name]))
        lenses.append(_lens(where, "Run on CPU", RUN_ON_CPU, [uri, name]))
        model = facts.model(kernel)
        scheduled = schedule_lens(model) if model is not None else None
        if scheduled is not None or (model is None and facts.static.dialect == "ascend"):
            lenses.append(_lens(where, scheduled or "Schedule", SHOW_SCHEDULE, [uri, name]))
        if model is not None and model.autotune is not None:
            tuned = span_range(text, Span(model.autotune.line, 0, model.autotune.line))
            lenses.append(_lens(tuned, model.autotune.summary, SHOW_AUTOTUNE, [uri, name]))
        if model is not None:
            path = ls.documents.path(uri)
            lenses.extend(_lens(where, title, SHOW_SPEED, [uri, name]) for title in speed_lenses(model, path))
    return lenses


def _lens(where: types.Range, title: str, command: str, arguments: list[object]) -> types.CodeLens:
    return types.CodeLens(range=where, command=types.Command(title=title, command=command, arguments=arguments))
