"""``workspace/executeCommand``: the core's editor views, as editors render them.

- ``tilescope.tracePasses`` ``[uri, kernel|null]`` → ``TraceView`` (passes joined with the catalogue)
- ``tilescope.passIR`` ``[uri, kernel, index]`` → ``PassDiff`` (the IR diff of pass ``index``, rows as drawn)
- ``tilescope.plotLayout`` ``[uri, kernel|null, buffer|null]`` → ``KernelLayout`` (the kernel's layout
  buffers in plot order and the view of the chosen one, the first when none is named)
- ``tilescope.showCuda`` ``[uri, kernel|null]`` → ``CudaSource``
- ``tilescope.kernelModel`` ``[uri]`` → ``FileAnalysis``
- ``tilescope.autotuneConfigs`` ``[uri, kernel|null]`` → ``Autotune`` (every config and its verdict)

The views are the dataclasses of ``tilescope.core.ide``, sent as their JSON. Each needs the compiler
tier, so each fails with a clear message in an untrusted workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from tilescope.core.ide.ir_diff import unified
from tilescope.core.ide.layout_view import KernelLayout, NoLayout, choose
from tilescope.core.ide.trace_view import PassDiff, TraceView, trace_view
from tilescope.core.model import Autotune, FileAnalysis, KernelModel
from tilescope.lsp.compiler_tier import CompilerTier
from tilescope.lsp.settings import Settings

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer

TRACE_PASSES = "tilescope.tracePasses"
PASS_IR = "tilescope.passIR"
PLOT_LAYOUT = "tilescope.plotLayout"
SHOW_CUDA = "tilescope.showCuda"
KERNEL_MODEL = "tilescope.kernelModel"
AUTOTUNE_CONFIGS = "tilescope.autotuneConfigs"


class CommandError(JsonRpcException):
    """A command that cannot answer; the message reaches the editor as the error response (LSP's
    RequestFailed: a plain message, never a traceback)."""

    CODE = -32803


@dataclass(frozen=True)
class CudaSource:
    kernel: str
    source: str


@runtime_checkable
class _State(Protocol):
    """What the commands read from the server: trust and the compiler tier."""

    settings: Settings
    compiler: CompilerTier


def _state(server: LanguageServer) -> _State:
    """The server as the state the commands need (pygls resolves handler annotations at call time,
    so they name ``LanguageServer``, which imports without this package)."""
    if not isinstance(server, _State):
        raise CommandError(f"Tilescope: commands need the Tilescope server, not {type(server).__name__}")
    return server


async def _analysis(ls: _State, uri: str) -> FileAnalysis:
    if not ls.settings.trusted:
        raise CommandError("Tilescope: the workspace is not trusted, so the compiler tier is off")
    snapshot = await ls.compiler.current(uri)
    if snapshot is None:
        raise CommandError("Tilescope: the compiler tier has no result for this document yet")
    return snapshot.analysis


async def _kernel(ls: _State, uri: str, name: str | None) -> KernelModel:
    analysis = await _analysis(ls, uri)
    model = analysis.kernel(name)
    if model is None:
        problems = "; ".join(d.message for d in analysis.all_diagnostics() if d.severity == "error")
        wanted = f"kernel {name!r}" if name else "a kernel"
        raise CommandError(f"Tilescope: no compiled model for {wanted}" + (f": {problems}" if problems else ""))
    return model


def register(server: TilescopeServer) -> None:
    @server.command(TRACE_PASSES)
    async def trace_passes(server: LanguageServer, uri: str, kernel: str | None = None) -> TraceView:
        return trace_view(await _kernel(_state(server), uri, kernel))

    @server.command(PASS_IR)
    async def pass_ir(server: LanguageServer, uri: str, kernel: str, index: int) -> PassDiff:
        ls = _state(server)
        model = await _kernel(ls, uri, kernel)
        if not 0 <= index < len(model.passes):
            raise CommandError(f"Tilescope: pass index {index} is outside 0..{len(model.passes) - 1}")
        before = await ls.compiler.pass_ir(uri, model.kernel, index - 1)
        after = await ls.compiler.pass_ir(uri, model.kernel, index)
        return PassDiff(model.kernel, index, unified(before, after))

    @server.command(PLOT_LAYOUT)
    async def plot_layout(
        server: LanguageServer, uri: str, kernel: str | None = None, buffer: str | None = None
    ) -> KernelLayout:
        model = await _kernel(_state(server), uri, kernel)
        try:
            return choose(model, buffer)
        except NoLayout as error:
            raise CommandError(f"Tilescope: {error}") from error

    @server.command(SHOW_CUDA)
    async def show_cuda(server: LanguageServer, uri: str, kernel: str | None = None) -> CudaSource:
        model = await _kernel(_state(server), uri, kernel)
        if model.device_source is None:
            raise CommandError(f"Tilescope: no device source for kernel {model.kernel!r}")
        return CudaSource(model.kernel, model.device_source)

    @server.command(KERNEL_MODEL)
    async def kernel_model(server: LanguageServer, uri: str) -> FileAnalysis:
        return await _analysis(_state(server), uri)

    @server.command(AUTOTUNE_CONFIGS)
    async def autotune_configs(server: LanguageServer, uri: str, kernel: str | None = None) -> Autotune:
        model = await _kernel(_state(server), uri, kernel)
        if model.autotune is None:
            raise CommandError(f"Tilescope: kernel {model.kernel!r} is not autotuned")
        return model.autotune
