"""An untrusted workspace never runs kernel code and says so once; settings change what is shown."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, FIXTURES, execute, open_file, until, whole_file, within


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def labels(client: LanguageClient, uri: str) -> list[str]:
    found = await within(
        client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc(uri), range=whole_file()))
    )
    return [h.label for h in found]


async def test_untrusted_workspace_runs_the_static_tier_only_and_says_so_once(client: LanguageClient) -> None:
    first = open_file(client, FIXTURES / "wrong_gemm.py")
    second = open_file(client, FIXTURES / "hang.py")
    await until(lambda: first in client.diagnostics and second in client.diagnostics, what="diagnostics")
    await asyncio.sleep(1.0)
    assert [m.message for m in client.messages] == [
        "Tilescope: this workspace is not trusted, so only the static tier runs (kernel code is never "
        "executed). For compiler-backed layouts, passes and diagnostics, trust the workspace in VS Code, "
        "or run `tilescope trust DIR` for its folder and restart the server."
    ]
    assert {d.source for d in client.diagnostics[first]} == {"tilescope-static"}
    assert list(client.diagnostics[second]) == []
    lenses = await within(client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(first))))
    assert list(lenses) == []
    with pytest.raises(JsonRpcException, match="the workspace is not trusted"):
        await within(execute(client, "tilescope.kernelModel", first))


async def test_hint_kinds_can_be_switched_off(client: LanguageClient) -> None:
    uri = open_file(client, EXAMPLES / "gemm.py")
    assert len(await labels(client, uri)) == 7
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilescope": {"hints": {"buffers": False, "parameters": False}}})
    )
    assert await labels(client, uri) == ["grid 8×8 · 128 threads · 48 KB shared"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilescope": {"hints": {"launch": False, "pipelines": False}}})
    )
    assert await labels(client, uri) == []


async def test_target_setting_changes_the_shared_memory_budget(client: LanguageClient) -> None:
    path = FIXTURES / "budgets.py"
    uri = open_file(client, path, text=path.read_text().replace("stages=4", "stages=3"))
    await until(lambda: uri in client.diagnostics, what="diagnostics")
    assert "shared-memory" not in [d.code for d in client.diagnostics[uri]]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilescope": {"target": "sm_80"}})
    )
    await until(lambda: "shared-memory" in [d.code for d in client.diagnostics[uri]], what="the sm_80 budget to apply")
    (warning,) = [d for d in client.diagnostics[uri] if d.code == "shared-memory"]
    assert warning.message == (
        "shared memory of at least 192 KB per block (live together from line 16: A_shared 32 KB × 3 stages, "
        "B_shared 32 KB × 3 stages) exceeds the sm_80 limit of 163 KB"
    )
    assert warning.range.start.line == 10


async def test_an_empty_change_notification_pulls_the_tilescope_section(client: LanguageClient) -> None:
    uri = open_file(client, EXAMPLES / "dequant_gemm.py")
    client.set_configuration({"hints": {"buffers": False, "parameters": False, "launch": False}}, section="tilescope")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    for _ in range(100):
        if await labels(client, uri) == ["2 stages"]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"hints still {await labels(client, uri)}")
