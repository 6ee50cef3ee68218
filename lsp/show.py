"""Code-lens commands the server carries out itself, so lenses work in any editor.

``tilescope.show.passes`` ``[uri, kernel]``, ``tilescope.show.layout`` ``[uri, kernel, buffer]`` and
``tilescope.show.cuda`` ``[uri, kernel]`` and ``tilescope.show.autotune`` ``[uri, kernel]`` write
what they show (the pass list with the catalogue's descriptions, the buffer's layout as hover
shows it, the generated CUDA, every autotune config with its verdict) to a file in a private
folder (``tilescope.core.private_files``) and ask the client to open it with ``window/showDocument``; the answer is
``{"uri": ...}`` for clients that would rather open it themselves. The VS Code extension maps these
lens commands to its own views instead.
"""

from __future__ import annotations

from lsprotocol import types
from tilescope.core import pass_catalog
from tilescope.core.ide.autotune_view import configs_markdown
from tilescope.core.ide.describe import buffer_markdown
from tilescope.core.model import KernelModel
from tilescope.core.private_files import PrivateFolder
from tilescope.lsp.server import TilescopeServer

SHOW_PASSES = "tilescope.show.passes"
SHOW_LAYOUT = "tilescope.show.layout"
SHOW_CUDA = "tilescope.show.cuda"
SHOW_AUTOTUNE = "tilescope.show.autotune"
FOLDER = PrivateFolder()


class ShowError(Exception):
    """The message reaches the editor as the command's error response."""


async def _model(ls: TilescopeServer, uri: str, kernel: str | None) -> KernelModel:
    if not ls.settings.trusted:
        raise ShowError("Tilescope: the workspace is not trusted, so the compiler tier is off")
    snapshot = await ls.compiler.current(uri)
    model = snapshot.analysis.kernel(kernel) if snapshot is not None else None
    if model is None:
        raise ShowError(f"Tilescope: no compiled model for kernel {kernel!r} yet")
    return model


async def _open(ls: TilescopeServer, name: str, text: str) -> dict[str, str]:
    uri = FOLDER.write(name, text).as_uri()
    window = ls.client_capabilities.window
    if window and window.show_document and window.show_document.support:
        await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    return {"uri": uri}


async def show_passes(ls: TilescopeServer, uri: str, kernel: str | None = None) -> dict[str, str]:
    model = await _model(ls, uri, kernel)
    rows = [f"# Passes of `{model.kernel}`", "", "| # | pass | changed | ms | what it does |", "|---|---|---|---|---|"]
    for record, info in zip(model.passes, pass_catalog.resolve([p.name for p in model.passes]), strict=True):
        what = info.what.replace("|", "\\|") if info is not None else ""
        changed = "yes" if record.changed else ""
        rows.append(f"| {record.index} | `{record.name}` | {changed} | {record.duration_ms:.1f} | {what} |")
    return await _open(ls, f"{model.kernel}.passes.md", "\n".join(rows) + "\n")


async def show_layout(ls: TilescopeServer, uri: str, kernel: str, buffer: str) -> dict[str, str]:
    model = await _model(ls, uri, kernel)
    static = next((k for k in ls.facts(uri).static.kernels if k.ref.name == model.kernel), None)
    decl = static.buffer(buffer) if static is not None else None
    if decl is None:
        raise ShowError(f"Tilescope: no buffer {buffer!r} in kernel {model.kernel!r}")
    text = f"# `{buffer}` in `{model.kernel}`\n\n" + buffer_markdown(decl, static, model) + "\n"
    return await _open(ls, f"{model.kernel}.{buffer}.layout.md", text)


async def show_cuda(ls: TilescopeServer, uri: str, kernel: str | None = None) -> dict[str, str]:
    model = await _model(ls, uri, kernel)
    if model.device_source is None:
        raise ShowError(f"Tilescope: no device source for kernel {model.kernel!r}")
    return await _open(ls, f"{model.kernel}.cu", model.device_source)


async def show_autotune(ls: TilescopeServer, uri: str, kernel: str | None = None) -> dict[str, str]:
    model = await _model(ls, uri, kernel)
    if model.autotune is None:
        raise ShowError(f"Tilescope: kernel {model.kernel!r} is not autotuned")
    return await _open(ls, f"{model.kernel}.autotune.md", configs_markdown(model.kernel, model.autotune) + "\n")
