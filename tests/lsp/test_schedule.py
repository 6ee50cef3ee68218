"""The schedule of an Ascend kernel in the editor: a code lens above it, a command answering the core's
``ScheduleView`` and one writing its text for any client; the corpus's mixed GEMM through a real client."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient
from tilescope.core.ide import CompiledSnapshot, fingerprints, schedule_view
from tilescope.core.model import FileAnalysis, to_json
from tilescope.core.static import analyze_source
from tilescope.lsp import code_lens, commands
from tilescope.lsp.server import TilescopeServer

from tests.core.view_fixtures import ascend_model
from tests.lsp.conftest import EXAMPLES, ROOT, SERVER, execute, open_file, start, within
from tests.lsp.direct import doc, initialized, open_text

ASCEND = ROOT / "tests" / "ascend" / "fixtures" / "gemm_relu.py"
CORPUS = Path(os.environ.get("TILESCOPE_ASCEND_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-ascend-examples"))
CORPUS_GEMM = CORPUS / "examples" / "ascend" / "example_gemm.py"
COMPILE_WAIT = 240.0


def _trusted(path: Path, compiled: bool) -> tuple[TilescopeServer, str]:
    """A trusted server with ``path`` open and, when ``compiled``, the fixture's Ascend model as its kernel's."""
    server = initialized()
    server.settings = replace(server.settings, trusted=True)
    text = path.read_text()
    uri = open_text(server, text, path.as_uri())
    if compiled:
        static = analyze_source(text, str(path))
        kernel = replace(ascend_model(), kernel=static.kernels[0].ref.name)
        analysis = FileAnalysis(str(path), server.settings.target, [kernel], [], [])
        server.documents.compiled[uri] = CompiledSnapshot(analysis, fingerprints(static, text), 1)
    return server, uri


def _schedule_lenses(server: TilescopeServer, uri: str) -> list[tuple[int, str, str, list[object]]]:
    lenses = code_lens.code_lens(server, types.CodeLensParams(text_document=doc(uri)))
    return [
        (lens.range.start.line, lens.command.title, lens.command.command, list(lens.command.arguments or []))
        for lens in lenses
        if lens.command is not None and lens.command.title.startswith("Schedule")
    ]


def test_an_ascend_kernel_gets_a_schedule_lens_before_and_after_compiling():
    server, uri = _trusted(ASCEND, compiled=False)
    assert _schedule_lenses(server, uri) == [(8, "Schedule", "tilescope.show.schedule", [uri, "matmul_relu"])]
    server, uri = _trusted(ASCEND, compiled=True)
    assert _schedule_lenses(server, uri) == [
        (8, "Schedule · Cube + Vector · 17 flags", "tilescope.show.schedule", [uri, "matmul_relu"])
    ]


def test_a_gpu_kernel_gets_no_schedule_lens():
    server, uri = _trusted(EXAMPLES / "gemm.py", compiled=False)
    assert _schedule_lenses(server, uri) == []


async def test_the_schedule_command_answers_the_core_view():
    server, uri = _trusted(ASCEND, compiled=True)
    answer = await commands.schedule(server, uri, "matmul_relu")
    assert to_json(answer) == to_json(schedule_view(replace(ascend_model(), kernel="matmul_relu")))
    assert to_json(await commands.schedule(server, uri, None)) == to_json(answer)  # the first kernel


async def test_the_schedule_command_says_why_a_gpu_kernel_has_none():
    server, uri = _trusted(ASCEND, compiled=True)
    gpu = replace(ascend_model(), kernel="matmul_relu", target="sm_90", ascend=None)
    snapshot = server.documents.compiled[uri]
    server.documents.compiled[uri] = replace(snapshot, analysis=replace(snapshot.analysis, kernels=[gpu]))
    with pytest.raises(commands.CommandError, match="'matmul_relu' has no Ascend schedule \\(target sm_90\\)"):
        await commands.schedule(server, uri, "matmul_relu")


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=True, timeout=120)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS_GEMM.is_file(), reason="../shared/corpus/tilelang-ascend-examples is absent")
async def test_the_corpus_gemm_schedule_through_a_client(client: LanguageClient) -> None:
    """The lens a user clicks and the view VS Code draws: both cores' statements and the flags between."""
    uri = open_file(client, CORPUS_GEMM)
    deadline = time.monotonic() + COMPILE_WAIT
    while True:
        lenses = await within(client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri))))
        titles = [lens.command.title for lens in lenses if lens.command.title.startswith("Schedule ·")]
        if titles:
            break
        assert time.monotonic() < deadline, f"no compiled schedule lens after {COMPILE_WAIT} s"
        await asyncio.sleep(0.5)
    assert titles == ["Schedule · Cube + Vector · 17 flags"]  # at the sizes of the file's own run: 8192³
    view = await within(execute(client, "tilescope.schedule", uri, "gemm"), timeout=COMPILE_WAIT)
    rows = view["rows"]
    assert {r["lane"] for r in rows} == {"cube", "vector", "both"}
    assert ("cube", "gemm(x_l1, w_l1, res)", 79) in [(r["lane"], r["text"], r["line"]) for r in rows]
    assert ("vector", "copy temp → C", 82) in [(r["lane"], r["text"], r["line"]) for r in rows]
    across = [a["text"] for a in view["arrows"] if a["across"]]
    assert "Cube (AIC) arrive FIX flag 1 → Vector (AIV) wait MTE3 flag 1 (AIV 0)" in across
    assert "Cube (AIC) arrive FIX flag 17 → Vector (AIV) wait MTE3 flag 1 (AIV 1)" in across
    shown = await within(execute(client, "tilescope.show.schedule", uri, "gemm"))
    text = Path(urlparse(shown["uri"]).path).read_text()
    assert "Cube (AIC)" in text and "Vector (AIV)" in text and "──────▶" in text
