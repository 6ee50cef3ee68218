"""``workspace/executeCommand``: the core's JSON for editors to render.

- ``tilescope.tracePasses`` ``[uri, kernel|null]`` → ``{"kernel", "passes": [PassRecord...], "catalog"}``
- ``tilescope.passIR`` ``[uri, kernel, index]`` → ``{"before", "after", "before_lines", "after_lines"}``
- ``tilescope.plotLayout`` ``[uri, kernel, buffer]`` → ``{"layout": Layout, "grid": {...} | null,
  "conflicts": [{"pattern", "description", "degree", "wavefronts", "ideal"}]}`` (shared buffers)
- ``tilescope.showCuda`` ``[uri, kernel]`` → ``{"source"}``
- ``tilescope.kernelModel`` ``[uri]`` → ``FileAnalysis``

Each needs the compiler tier, so each fails with a clear message in an untrusted workspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from pygls.lsp.server import LanguageServer
from tilescope.core import pass_catalog
from tilescope.core.model import FileAnalysis, KernelModel, to_json
from tilescope.core.static.layout_grid import layout_conflicts, layout_grid

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer

TRACE_PASSES = "tilescope.tracePasses"
PASS_IR = "tilescope.passIR"
PLOT_LAYOUT = "tilescope.plotLayout"
SHOW_CUDA = "tilescope.showCuda"
KERNEL_MODEL = "tilescope.kernelModel"


class CommandError(Exception):
    """A command that cannot answer; the message reaches the editor as the error response."""


async def _analysis(ls: TilescopeServer, uri: str) -> FileAnalysis:
    if not ls.settings.trusted:
        raise CommandError("Tilescope: the workspace is not trusted, so the compiler tier is off")
    snapshot = await ls.compiler.current(uri)
    if snapshot is None:
        raise CommandError("Tilescope: the compiler tier has no result for this document yet")
    return snapshot.analysis


async def _kernel(ls: TilescopeServer, uri: str, name: str | None) -> KernelModel:
    analysis = await _analysis(ls, uri)
    model = analysis.kernel(name)
    if model is None:
        problems = "; ".join(d.message for d in analysis.all_diagnostics() if d.severity == "error")
        wanted = f"kernel {name!r}" if name else "a kernel"
        raise CommandError(f"Tilescope: no compiled model for {wanted}" + (f": {problems}" if problems else ""))
    return model


def register(server: TilescopeServer) -> None:
    @server.command(TRACE_PASSES)
    async def trace_passes(server: LanguageServer, uri: str, kernel: str | None = None) -> dict[str, Any]:
        ls = cast("TilescopeServer", server)
        model = await _kernel(ls, uri, kernel)
        infos = pass_catalog.resolve([p.name for p in model.passes])
        passes = []
        catalog: dict[str, str] = {}
        for record, info in zip(model.passes, infos, strict=True):
            entry = to_json(record)
            if info is not None:
                entry["resolved_name"] = info.name
                entry["description"] = info.what
                catalog[info.name] = info.what
                if record.name != pass_catalog.ANONYMOUS:
                    catalog[record.name] = info.what
            passes.append(entry)
        return {"kernel": model.kernel, "passes": passes, "catalog": catalog}

    @server.command(PASS_IR)
    async def pass_ir(server: LanguageServer, uri: str, kernel: str, index: int) -> dict[str, Any]:
        ls = cast("TilescopeServer", server)
        model = await _kernel(ls, uri, kernel)
        if not -1 <= index < len(model.passes):
            raise CommandError(f"Tilescope: pass index {index} is outside 0..{len(model.passes) - 1}")
        before = await ls.compiler.pass_ir(uri, model.kernel, index - 1)
        after = await ls.compiler.pass_ir(uri, model.kernel, index)
        return {
            "before": before.text,
            "after": after.text,
            "before_lines": before.source_lines,
            "after_lines": after.source_lines,
        }

    @server.command(PLOT_LAYOUT)
    async def plot_layout(server: LanguageServer, uri: str, kernel: str, buffer: str | None = None) -> dict[str, Any]:
        ls = cast("TilescopeServer", server)
        model = await _kernel(ls, uri, kernel)
        layout = model.layout(buffer) if buffer else next(iter(model.layouts), None)
        if layout is None:
            known = ", ".join(x.buffer for x in model.layouts) or "none"
            raise CommandError(f"Tilescope: no inferred layout for {buffer!r} (layouts: {known})")
        declared = model.buffer(layout.buffer)
        conflicts = layout_conflicts(layout, declared.dtype) if declared is not None else []
        return {"layout": to_json(layout), "grid": layout_grid(layout), "conflicts": conflicts}

    @server.command(SHOW_CUDA)
    async def show_cuda(server: LanguageServer, uri: str, kernel: str | None = None) -> dict[str, Any]:
        ls = cast("TilescopeServer", server)
        model = await _kernel(ls, uri, kernel)
        if model.device_source is None:
            raise CommandError(f"Tilescope: no device source for kernel {model.kernel!r}")
        return {"source": model.device_source}

    @server.command(KERNEL_MODEL)
    async def kernel_model(server: LanguageServer, uri: str) -> Any:
        ls = cast("TilescopeServer", server)
        return to_json(await _analysis(ls, uri))
