"""Text no kernel contains (huge numbers, expressions too deep for Python, characters that split
lines elsewhere, a few KB that once built gigabytes) gets an answer at once through the protocol,
and the rest of the file keeps its hints."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, SERVER, open_file, start, until, whole_file, within
from tests.static.oversized import ATTACKS
from tests.static.test_budget import KERNEL

pytestmark = pytest.mark.asyncio(loop_scope="module")

GEMM = (EXAMPLES / "gemm.py").read_text().split('if __name__ == "__main__":')[0]
SOFTMAX = (EXAMPLES / "softmax.py").read_text()


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=False)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.parametrize(
    "value",
    ["10**10**8", "10**5000", "1 << 10**9", "+".join(["1"] * 20000), "'\u2028\x0c\x1c'", "1\x00"],
    ids=["power-tower", "huge-power", "huge-shift", "deep-sum", "line-separators", "nul"],
)
async def test_answers_at_once_and_the_next_kernel_keeps_its_hints(client: LanguageClient, value: str) -> None:
    text = GEMM.replace("block_M=128", f"block_M={value}") + "\n\n" + SOFTMAX
    uri = open_file(client, EXAMPLES / f"hostile_{abs(hash(value))}.py", text=text)
    began = time.perf_counter()
    await until(lambda: uri in client.diagnostics, what="diagnostics")
    found = await within(
        client.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=uri), range=whole_file())
        )
    )
    assert time.perf_counter() - began < 2.0
    softmax_start = GEMM.count("\n") + 2
    assert any(h.position.line > softmax_start and h.label == "64×256 · float16 · shared.dyn" for h in found)


async def test_a_change_of_a_document_never_opened_and_negative_positions_are_no_error(
    client: LanguageClient,
) -> None:
    nowhere = types.VersionedTextDocumentIdentifier(uri="file:///never/opened.py", version=3)
    at = types.Position(line=0, character=0)
    change = types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text="x")
    client.text_document_did_change(types.DidChangeTextDocumentParams(text_document=nowhere, content_changes=[change]))
    uri = open_file(client, EXAMPLES / "negative_positions.py", text=GEMM)
    negative = {"start": {"line": -1, "character": -5}, "end": {"line": 0, "character": 0}}
    params = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": negative, "text": "#"}]}
    body = json.dumps({"jsonrpc": "2.0", "method": types.TEXT_DOCUMENT_DID_CHANGE, "params": params}).encode()
    writer = client.protocol.writer
    assert writer is not None
    written = writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    if asyncio.iscoroutine(written) or isinstance(written, asyncio.Future):
        await written
    hover = await within(
        client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at)
        )
    )
    assert hover is None or hover.contents is not None
    assert not [m for m in client.messages if m.type == types.MessageType.Error]
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]
    assert client.error is None


@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_a_hover_on_a_file_that_once_built_gigabytes_answers_at_once(client: LanguageClient, name: str) -> None:
    text = KERNEL + ATTACKS[name] + "matmul(1024, 1024, 1024)\n"
    uri = open_file(client, EXAMPLES / f"oversized_{name}.py", text=text)
    line = next(i for i, row in enumerate(text.splitlines()) if row.startswith("def matmul"))
    where = types.Position(line=line, character=text.splitlines()[line].index("block_M"))
    began = time.perf_counter()
    hover = await within(
        client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=where)
        )
    )
    assert time.perf_counter() - began < 2.0
    assert hover is not None and "128" in str(hover.contents)
    said = [m.message for m in client.log_messages if "failed" in m.message or "gave up" in m.message]
    assert said == []
