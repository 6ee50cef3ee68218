"""The compiler tier in a trusted workspace: results replace static ones, stale versions are never
published, a hanging kernel becomes a diagnostic, and the commands return the core's JSON."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient
from tilescope.core import pass_catalog
from tilescope.core.ide.layout_view import choose
from tilescope.core.model import SCHEMA_VERSION, FileAnalysis, from_json, to_json

from tests.lsp.conftest import (
    EXAMPLES,
    FIXTURES,
    SERVER,
    execute,
    open_file,
    record_publishes,
    replace_all,
    start,
    until,
    whole_file,
    within,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
COMPILE_WAIT = 180.0
"""Generous: the first analysis starts the worker, which imports TileLang."""
GEMM = EXAMPLES / "gemm.py"
AUTOTUNED = FIXTURES.parent.parent / "core" / "fixtures" / "autotuned.py"


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    """One trusted session (one warm compiler worker) for the whole module."""
    lsp_client.statuses = []  # type: ignore[attr-defined]

    @lsp_client.feature("tilescope/status")
    def _status(params: Any) -> None:
        lsp_client.statuses.append((params.uri, params.state))  # type: ignore[attr-defined]

    await start(lsp_client, workspaceTrust=True, timeout=60)
    yield
    await lsp_client.shutdown_session()


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


async def hint_labels(client: LanguageClient, uri: str) -> list[tuple[int, int, str]]:
    found = await within(
        client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc(uri), range=whole_file()))
    )
    return [(h.position.line, h.position.character, h.label) for h in found]


def compiler_diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri, ()) if d.source == "tilescope"]


async def test_compiled_facts_replace_static_hints(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    found: list[tuple[int, int, str]] = []

    async def compiled() -> bool:
        found[:] = await hint_labels(client, uri)
        return any(label.endswith("/thread") for _, _, label in found)

    deadline = time.monotonic() + COMPILE_WAIT
    while not await compiled():
        assert time.monotonic() < deadline, f"no compiled hints after {COMPILE_WAIT} s: {found}"
        await asyncio.sleep(0.2)
    assert found == [
        (10, 34, "1024×1024 · float16"),
        (11, 34, "1024×1024 · float16"),
        (12, 34, "1024×1024 · float16"),
        (14, 93, "grid 8×8 · 128 threads (256 with producers) · 48 KB shared"),
        (15, 64, "128×32 · float16 · shared.dyn"),
        (15, 64, "layout 64B swizzle"),
        (16, 64, "32×128 · float16 · shared.dyn"),
        (16, 64, "layout 128B swizzle"),
        (17, 71, "128×128 · float32 · local.fragment"),
        (17, 71, "128 threads × 128/thread"),
    ]
    hover = await within(
        client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(17, 14)))
    )
    text = hover.contents.value
    assert "(compiled facts)" in text

    def states() -> list[str]:
        return [state for status_uri, state in client.statuses if status_uri == uri]  # type: ignore[attr-defined]

    await until(lambda: "ready" in states(), timeout=COMPILE_WAIT, what="the analysis's end")  # its hazard check
    assert states()[:1] == ["analysing"]
    assert "- thread(_i, _j) = `_i % 64 // 16 * 32 + _i % 8 * 4 + _j % 8 // 2`" in text
    assert "```text\n 0  0  1  1  2  2  3  3\n 4  4  5  5  6  6  7  7\n" in text


async def test_editing_one_line_falls_back_to_static_for_that_kernel(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    await until(lambda: uri in client.diagnostics, what="diagnostics")
    edited = GEMM.read_text().replace("block_N=128", "block_N=64")
    replace_all(client, uri, edited, 2)
    labels = [label for _, _, label in await hint_labels(client, uri)]
    assert "32×64 · float16 · shared.dyn" in labels
    assert not any(label.endswith("/thread") for label in labels)


async def test_compiler_diagnostic_at_the_gemm_line(client: LanguageClient) -> None:
    uri = open_file(client, FIXTURES / "wrong_gemm.py")
    await until(lambda: bool(compiler_diagnostics(client, uri)), timeout=COMPILE_WAIT, what="compiler diagnostics")
    (compiled,) = compiler_diagnostics(client, uri)
    assert compiled.range.start.line == 17
    assert compiled.code == "build-error"
    assert compiled.message == "Building kernel 'matmul' failed: T.gemm K shape check failed: K_A = 32, K_B = 128"
    static = [d.code for d in client.diagnostics[uri] if d.source == "tilescope-static"]
    assert static == [], "the compiler's error replaces the static one on its line"
    lines = (FIXTURES / "wrong_gemm.py").read_text().splitlines()
    line = next(i for i, text in enumerate(lines) if "A_shared = " in text)
    hover = await within(
        client.text_document_hover_async(
            types.HoverParams(text_document=doc(uri), position=at(line, lines[line].index("A_shared")))
        )
    )
    text = hover.contents.value
    assert "(static facts)" in text and "- the compiler's build failed (line 18: Building kernel 'matmul'" in text


async def test_results_for_an_older_version_are_never_published(client: LanguageClient) -> None:
    seen = record_publishes(client)
    path = FIXTURES / "wrong_gemm.py"
    uri = open_file(client, path, text=path.read_text() + "\n", version=10)
    fixed = (
        path.read_text()
        .replace("T.gemm(A_shared, B_shared, C_local)", "T.gemm(A_shared, B_shared, C_local, transpose_B=True)")
        .replace(
            'C_local = T.alloc_fragment((block_M, block_N), "float16")',
            'C_local = T.alloc_fragment((block_M, block_N), "float32")',
        )
    )
    replace_all(client, uri, fixed, 11)
    result = await within(execute(client, "tilescope.kernelModel", uri), timeout=COMPILE_WAIT)
    assert [k["kernel"] for k in result["kernels"]] == ["matmul"]
    assert result["kernels"][0]["diagnostics"] == []
    mine = [p for p in seen if p.uri == uri]
    assert mine and all(p.version == 11 for p in mine[1:])
    assert not any(d.source == "tilescope" for p in mine for d in p.diagnostics)


async def test_a_kernel_that_hangs_leaves_the_server_answering(client: LanguageClient) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilescope": {"timeout": 4}})
    )
    uri = open_file(client, FIXTURES / "hang.py")
    await asyncio.sleep(0.5)
    began = time.monotonic()
    hover = await within(
        client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(12, 14)))
    )
    assert time.monotonic() - began < 1.0
    assert hover.contents.value.startswith("```text\nA_local: 128 float32 local.fragment")
    await until(lambda: bool(compiler_diagnostics(client, uri)), timeout=COMPILE_WAIT, what="timeout diagnostic")
    (timeout,) = compiler_diagnostics(client, uri)
    assert (timeout.code, timeout.range.start.line) == ("timeout", 5)
    # 4 s of the user's clock: spent building, or still starting the worker when the tests start here.
    assert "'spin'" in timeout.message and "within 4 s" in timeout.message, timeout.message
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc(uri)))  # not rebuilt at 60 s
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilescope": {"timeout": 60}})
    )


async def test_code_lenses_on_each_kernel(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    lenses = await within(client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri))))
    assert [
        (lens.range.start.line, lens.command.title, lens.command.command, list(lens.command.arguments))
        for lens in lenses
        if lens.command.command != "tilescope.show.speed"  # once compiled: the next test's
    ] == [
        (7, "Trace passes", "tilescope.show.passes", [uri, "matmul"]),
        (7, "Plot layouts", "tilescope.show.layout", [uri, "matmul", "C_local"]),
        (7, "Show CUDA", "tilescope.show.cuda", [uri, "matmul"]),
        (7, "Run on CPU", "tilescope.run.cpu", [uri, "matmul"]),
    ]


async def test_lens_commands_open_a_document_in_any_client(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    lenses = await within(client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri))))
    opened = []
    for lens in [lens for lens in lenses if lens.command.command != "tilescope.show.speed"]:
        answer = await within(execute(client, lens.command.command, *lens.command.arguments), timeout=COMPILE_WAIT)
        opened.append(answer["uri"])
    assert [d.uri for d in client.shown_documents[-4:]] == opened
    passes, layout, cuda, run = (Path(urlparse(u).path).read_text() for u in opened)
    assert "interpreted grid 8×8" in run and "tilescope run ok: matmul" in run
    assert passes.startswith("# Passes of `matmul`") and "| `tl.LayoutInference` |" in passes
    assert "C_local: 128×128 float32 local.fragment" in layout and "- layout: 128 threads" in layout
    assert "__global__" in cuda


async def test_commands_return_the_core_views(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    trace = await within(execute(client, "tilescope.tracePasses", uri, None), timeout=COMPILE_WAIT)
    assert trace["kernel"] == "matmul" and trace["title"].startswith("matmul(M=1024")
    names = [p["name"] for p in trace["passes"]]
    assert len(names) > 50 and "tl.LayoutInference" in names
    assert [p["index"] for p in trace["passes"]] == list(range(len(names)))
    inference = trace["passes"][names.index("tl.LayoutInference")]
    assert inference["what"] == pass_catalog.describe("tl.LayoutInference").what
    assert trace["passes"][0]["label"] == "pass_fn (tl.NestedLoopChecker)"

    index = names.index("tl.LayoutInference")
    ir = await within(execute(client, "tilescope.passIR", uri, "matmul", index), timeout=COMPILE_WAIT)
    assert (ir["kernel"], ir["index"]) == ("matmul", index)
    rows = ir["diff"]["rows"]
    assert rows[0]["kind"] == "hunk" and ir["diff"]["added"] > 0
    assert any(r["kind"] == "add" and "layout_map" in r["text"] for r in rows)
    assert ir["diff"]["added"] == sum(r["kind"] == "add" for r in rows)

    plot = await within(execute(client, "tilescope.plotLayout", uri, "matmul", "C_local"))
    assert (plot["kernel"], plot["buffer"], plot["buffers"]) == (
        "matmul",
        "C_local",
        ["C_local", "A_shared", "B_shared"],
    )
    view = plot["view"]
    assert (view["rows"], view["cols"], view["kind"]) == (128, 128, "fragment")
    threads, registers = view["panels"]
    assert threads["values"][0][:8] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert registers["values"][0][:4] == [0, 1, 0, 1]
    assert (threads["values"][0][8], registers["values"][0][8]) == (0, 4)
    assert view["conflicts"] == []

    shared = await within(execute(client, "tilescope.plotLayout", uri, "matmul", "A_shared"))
    assert (shared["view"]["rows"], shared["view"]["cols"], shared["view"]["stages"]) == (128, 32, 3)
    by_pattern = {c["pattern"]: c for c in shared["view"]["conflicts"]}
    # The compiler's swizzle makes ldmatrix-style reads conflict-free.
    assert by_pattern["ldmatrix"]["worst"] == 1 and by_pattern["row-16B"]["worst"] == 1

    cuda = await within(execute(client, "tilescope.showCuda", uri, None))
    assert cuda["kernel"] == "matmul" and "__global__" in cuda["source"]

    model = await within(execute(client, "tilescope.kernelModel", uri))
    assert model["schema_version"] == SCHEMA_VERSION and model["kernels"][0]["launch"]["grid"] == [8, 8]

    # One view: the server's default answer is the core's view (and first buffer) of the model it holds.
    first = await within(execute(client, "tilescope.plotLayout", uri, None, None))
    kernel = from_json(FileAnalysis, model).kernel("matmul")
    assert kernel is not None and first == to_json(choose(kernel))


async def test_a_kernel_that_kills_its_process_becomes_a_diagnostic(client: LanguageClient) -> None:
    uri = open_file(client, FIXTURES / "exits.py")
    await until(lambda: bool(compiler_diagnostics(client, uri)), timeout=COMPILE_WAIT, what="crash diagnostic")
    (crash,) = compiler_diagnostics(client, uri)
    assert (crash.code, crash.range.start.line) == ("worker-crash", 7)
    assert crash.message.startswith("The compiler worker died while building kernel 'quit_early'")
    hover = await within(
        client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(14, 33)))
    )
    assert hover.contents.value.startswith("```text\nA_local: 128 float32 local.fragment")
    gemm = open_file(client, GEMM)
    model = await within(execute(client, "tilescope.kernelModel", gemm), timeout=COMPILE_WAIT)
    assert model["kernels"][0]["kernel"] == "matmul"


async def test_a_compiled_kernel_gets_its_roofline_bound_as_a_lens(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    deadline = time.monotonic() + COMPILE_WAIT
    while True:
        lenses = await within(client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri))))
        speed = [lens for lens in lenses if lens.command.command == "tilescope.show.speed"]
        if speed:
            break
        assert time.monotonic() < deadline, f"no speed lens after {COMPILE_WAIT} s"
        await asyncio.sleep(0.5)
    assert [(lens.range.start.line, lens.command.title) for lens in speed] == [
        (7, "at best 2.17 µs on H200, compute-bound")
    ]
    shown = await within(execute(client, speed[0].command.command, *speed[0].command.arguments))
    page = Path(urlparse(shown["uri"]).path).read_text()
    assert page.startswith("# Speed of `matmul` (sm_90)") and "roofline 2.15e+09 FLOP" in page
    assert "Not profiled yet" in page


async def test_an_autotuned_kernel_gets_a_lens_with_its_configs_summary(client: LanguageClient) -> None:
    uri = open_file(client, AUTOTUNED)
    deadline = time.monotonic() + COMPILE_WAIT
    while True:
        lenses = await within(client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri))))
        summaries = [(lens.range.start.line, lens.command.title) for lens in lenses if "configs" in lens.command.title]
        if summaries:
            break
        assert time.monotonic() < deadline, f"no autotune lens after {COMPILE_WAIT} s"
        await asyncio.sleep(0.5)
    assert (15, "3 configs: 1 fits, 1 exceeds shared memory, 1 not lowered") in summaries
    lens = next(lens for lens in lenses if "configs" in lens.command.title)
    assert (lens.command.command, list(lens.command.arguments)) == ("tilescope.show.autotune", [uri, "tuned_gemm"])
    shown = await within(execute(client, lens.command.command, *lens.command.arguments))
    assert "| 0 | block_M=256" in Path(urlparse(shown["uri"]).path).read_text()
    model = await within(execute(client, "tilescope.kernelModel", uri))
    configs = next(k for k in model["kernels"] if k["kernel"] == "tuned_gemm")["autotune"]
    assert [(c["index"], c["status"]) for c in configs["configs"]] == [
        (0, "exceeds-shared-memory"),
        (1, "fits"),
        (2, "not-lowered"),
    ]
    assert configs["configs"][0]["line"] == 22 and configs["chosen"] == 1
    hover = await within(
        client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(15, 3)))
    )
    assert hover is not None
    text = hover.contents.value  # type: ignore[union-attr]
    assert "analysed with config 1 (the first that fits). The autotuner never runs." in text
    assert "| 0 | block_M=256, block_N=256, block_K=128, num_stages=4 | exceeds-shared-memory | 524288 | 256 |" in text


async def test_the_lowering_is_shown_while_the_hazard_check_runs(client: LanguageClient) -> None:
    path = FIXTURES / "slow_hazard_check.py"  # lowers at once; its hazard check runs out its 2 s budget
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines) if "def main(" in text)
    column = lines[line].index("B: T.Tensor")
    uri = open_file(client, path)

    def states() -> list[str]:
        return [state for status_uri, state in client.statuses if status_uri == uri]  # type: ignore[attr-defined]

    text = ""
    deadline = time.monotonic() + COMPILE_WAIT
    while "(compiled facts)" not in text:
        assert time.monotonic() < deadline and "ready" not in states(), (states(), text)
        hover = await within(
            client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(line, column)))
        )
        text = hover.contents.value if hover is not None else ""
        await asyncio.sleep(0.05)
    assert states()[-1] == "analysing", "the compiled facts arrived before the analysis ended"
    whole = await within(execute(client, "tilescope.kernelModel", uri), timeout=COMPILE_WAIT)
    assert "ready" in states(), "a command waits for the whole analysis, not the part shown"
    (kernel,) = whole["kernels"]
    assert kernel["hazard_check"]["stopped"].startswith("stopped after 2 s")
