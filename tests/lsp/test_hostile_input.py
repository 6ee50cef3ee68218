"""Text no kernel contains (huge numbers, expressions too deep for Python, characters that split
lines elsewhere) gets an answer at once through the protocol, and the rest of the file keeps its
hints."""

from __future__ import annotations

import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, SERVER, open_file, start, until, whole_file, within

pytestmark = pytest.mark.asyncio(loop_scope="module")

GEMM = (EXAMPLES / "gemm.py").read_text().split('if __name__ == "__main__":')[0]
SOFTMAX = (EXAMPLES / "softmax.py").read_text()


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    await start(lsp_client, trusted=False)
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
