"""The editor's ``timeout`` setting is the user's wall clock: a file whose top level never finishes
gets its timeout diagnostic within the timeout plus a few seconds of being opened, on a quiet machine
and with both cores busy (a CPU-time limit stretched to 2-3x under that load)."""

from __future__ import annotations

import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import TOP_LEVEL_FOREVER, busy_cores
from tests.lsp.conftest import SERVER, open_file, start, until

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
TIMEOUT_S = 20
WITHIN_S = 30


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=True, timeout=TIMEOUT_S, idle=0)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.parametrize("busy", [0, 2], ids=["quiet", "two-cores-busy"])
async def test_a_module_that_never_loads_is_answered_within_its_timeout(client: LanguageClient, busy: int) -> None:
    text = TOP_LEVEL_FOREVER.read_text() + f"# busy {busy}\n"
    with busy_cores(busy):
        started = time.monotonic()
        uri = open_file(client, TOP_LEVEL_FOREVER, text=text)

        def timed_out() -> bool:
            return any(d.code == "timeout" for d in client.diagnostics.get(uri, ()) if d.source == "tilescope")

        await until(timed_out, timeout=120, what="the timeout diagnostic")
        took = time.monotonic() - started
    assert took < WITHIN_S, took
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
