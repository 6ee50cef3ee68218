"""``workspace/executeCommand``: the core's editor views, as editors render them.

Data commands, answered with the JSON of a ``tilescope.core.ide`` view (the VS Code extension
draws them):

- ``tilescope.tracePasses`` ``[uri, kernel|null]`` → ``TraceView`` (passes joined with the catalogue)
- ``tilescope.passIR`` ``[uri, kernel, index]`` → ``PassDiff`` (the IR diff of pass ``index``, rows as drawn)
- ``tilescope.plotLayout`` ``[uri, kernel|null, buffer|null]`` → ``KernelLayout`` (the kernel's layout
  buffers in plot order and the view of the chosen one, the first when none is named)
- ``tilescope.showCuda`` ``[uri, kernel|null]`` → ``CudaSource``
- ``tilescope.kernelModel`` ``[uri]`` → ``FileAnalysis`` (which kernels compiled, and everything known of them)
- ``tilescope.schedule`` ``[uri, kernel|null]`` → ``ScheduleView`` (an Ascend kernel's Cube and Vector rows, the
  flags between them as arrows, its memory plan)

Code-lens commands, carried out by the server itself so that lenses work in any editor:
``tilescope.show.passes`` ``[uri, kernel]``, ``tilescope.show.layout`` ``[uri, kernel, buffer]``,
``tilescope.show.cuda`` ``[uri, kernel]``, ``tilescope.show.autotune`` ``[uri, kernel]``,
``tilescope.show.speed`` ``[uri, kernel]`` and ``tilescope.show.schedule`` ``[uri, kernel]`` write the
Markdown or text of the same views (the pass table, the buffer's hover, the generated CUDA, every
autotune config with its verdict, the bank conflicts, occupancy, roofline and last profile, the
Ascend schedule as ``tilescope schedule`` draws it), and ``tilescope.run.cpu`` ``[uri, kernel]`` the report of
``tilescope run`` (the kernel interpreted on the CPU), to a file in a private folder
(``private_files``) and ask the client to open it with ``window/showDocument``; the answer is
``{"uri": ...}`` for clients that would rather open it themselves. The VS Code extension maps these
lens commands to its own views instead.

Every command needs the compiler tier, so each fails with a clear message in an untrusted workspace.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from tilescope.core.ide import (
    KernelLayout,
    NoLayout,
    NoSchedule,
    PassDiff,
    ScheduleView,
    TraceView,
    buffer_markdown,
    choose,
    configs_markdown,
    passes_markdown,
    run_failed,
    run_text,
    schedule_view,
    schedule_view_text,
    speed_markdown,
    trace_view,
    unified,
)
from tilescope.core.model import FileAnalysis, KernelModel
from tilescope.core.sandbox.private_files import PrivateFolder
from tilescope.lsp.server import TilescopeServer

TRACE_PASSES = "tilescope.tracePasses"
PASS_IR = "tilescope.passIR"
PLOT_LAYOUT = "tilescope.plotLayout"
SHOW_CUDA_SOURCE = "tilescope.showCuda"
KERNEL_MODEL = "tilescope.kernelModel"
SHOW_PASSES = "tilescope.show.passes"
SHOW_LAYOUT = "tilescope.show.layout"
SHOW_CUDA = "tilescope.show.cuda"
SHOW_AUTOTUNE = "tilescope.show.autotune"
RUN_ON_CPU = "tilescope.run.cpu"
SHOW_SPEED = "tilescope.show.speed"
SCHEDULE = "tilescope.schedule"
SHOW_SCHEDULE = "tilescope.show.schedule"
FOLDER = PrivateFolder()


class CommandError(JsonRpcException):
    """A command that cannot answer; the message reaches the editor as the error response (LSP's
    RequestFailed: a plain message, never a traceback)."""

    CODE = -32803


@dataclass(frozen=True)
class CudaSource:
    kernel: str
    source: str


async def _analysis(ls: TilescopeServer, uri: str) -> FileAnalysis:
    """The compiled analysis of the document's current text: the one trust check of every command."""
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


def _cuda(model: KernelModel) -> CudaSource:
    if model.device_source is None:
        raise CommandError(f"Tilescope: no device source for kernel {model.kernel!r}")
    return CudaSource(model.kernel, model.device_source)


async def trace_passes(ls: TilescopeServer, uri: str, kernel: str | None = None) -> TraceView:
    return trace_view(await _kernel(ls, uri, kernel))


async def pass_ir(ls: TilescopeServer, uri: str, kernel: str, index: int) -> PassDiff:
    model = await _kernel(ls, uri, kernel)
    if not 0 <= index < len(model.passes):
        raise CommandError(f"Tilescope: pass index {index} is outside 0..{len(model.passes) - 1}")
    before, after = await ls.compiler.pass_irs(uri, model.kernel, [index - 1, index])
    return PassDiff(model.kernel, index, unified(before, after))


async def plot_layout(
    ls: TilescopeServer, uri: str, kernel: str | None = None, buffer: str | None = None
) -> KernelLayout:
    model = await _kernel(ls, uri, kernel)
    try:
        return choose(model, buffer)
    except NoLayout as error:
        raise CommandError(f"Tilescope: {error}") from error


async def cuda_source(ls: TilescopeServer, uri: str, kernel: str | None = None) -> CudaSource:
    return _cuda(await _kernel(ls, uri, kernel))


async def kernel_model(ls: TilescopeServer, uri: str) -> FileAnalysis:
    return await _analysis(ls, uri)


async def schedule(ls: TilescopeServer, uri: str, kernel: str | None = None) -> ScheduleView:
    return _schedule_of(await _kernel(ls, uri, kernel))


def _schedule_of(model: KernelModel) -> ScheduleView:
    try:
        return schedule_view(model)
    except NoSchedule as error:
        raise CommandError(f"Tilescope: {error}") from error


async def _open(ls: TilescopeServer, name: str, text: str) -> dict[str, str]:
    uri = FOLDER.write(name, text).as_uri()
    window = ls.client_capabilities.window
    if window and window.show_document and window.show_document.support:
        await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    return {"uri": uri}


async def show_passes(ls: TilescopeServer, uri: str, kernel: str | None = None) -> dict[str, str]:
    model = await _kernel(ls, uri, kernel)
    return await _open(ls, f"{model.kernel}.passes.md", passes_markdown(trace_view(model)))


async def show_layout(ls: TilescopeServer, uri: str, kernel: str, buffer: str) -> dict[str, str]:
    model = await _kernel(ls, uri, kernel)
    static = next((k for k in ls.facts(uri).static.kernels if k.ref.name == model.kernel), None)
    decl = static.buffer(buffer) if static is not None else None
    if static is None or decl is None:
        raise CommandError(f"Tilescope: no buffer {buffer!r} in kernel {model.kernel!r}")
    text = (
        f"# `{buffer}` in `{model.kernel}`\n\n"
        + buffer_markdown(decl, static, model, ls.facts(uri).static.dialect)
        + "\n"
    )
    return await _open(ls, f"{model.kernel}.{buffer}.layout.md", text)


async def show_cuda(ls: TilescopeServer, uri: str, kernel: str | None = None) -> dict[str, str]:
    cuda = _cuda(await _kernel(ls, uri, kernel))
    return await _open(ls, f"{cuda.kernel}.cu", cuda.source)


async def show_autotune(ls: TilescopeServer, uri: str, kernel: str | None = None) -> dict[str, str]:
    model = await _kernel(ls, uri, kernel)
    if model.autotune is None:
        raise CommandError(f"Tilescope: kernel {model.kernel!r} is not autotuned")
    return await _open(ls, f"{model.kernel}.autotune.md", configs_markdown(model.kernel, model.autotune) + "\n")


async def run_on_cpu(ls: TilescopeServer, uri: str, kernel: str) -> dict[str, str]:
    if not ls.settings.trusted:
        raise CommandError("Tilescope: the workspace is not trusted, so kernels are not run")
    report = await ls.compiler.run_kernel(uri, kernel)
    status = "FAILED" if run_failed(report) else "ok"
    text = run_text(ls.documents.path(uri), report) + f"\ntilescope run {status}: {report.kernel or kernel}\n"
    return await _open(ls, f"{kernel}.run.txt", text)


async def show_speed(ls: TilescopeServer, uri: str, kernel: str | None = None) -> dict[str, str]:
    model = await _kernel(ls, uri, kernel)
    return await _open(ls, f"{model.kernel}.speed.md", speed_markdown(model, ls.documents.path(uri)))


async def show_schedule(ls: TilescopeServer, uri: str, kernel: str | None = None) -> dict[str, str]:
    view = _schedule_of(await _kernel(ls, uri, kernel))
    return await _open(ls, f"{view.kernel}.schedule.txt", schedule_view_text(view) + "\n")
