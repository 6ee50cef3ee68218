"""The editor's ``timeout`` setting is the user's wall clock: a file whose top level never finishes
gets its timeout diagnostic within the timeout plus a few seconds of being opened, on a quiet machine
and with the server's processes given a third of one CPU (as on a machine whose two cores are busy); a
CPU-time limit would never end it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import TOP_LEVEL_FOREVER, starved
from tests.lsp.conftest import SERVER, open_file, start, until

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
TIMEOUT_S = 20
WITHIN_S = 30


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=True, timeout=TIMEOUT_S, idle=0)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.parametrize("share", [1.0, 1 / 3], ids=["quiet", "a-third-of-a-cpu"])
async def test_a_module_that_never_loads_is_answered_within_its_timeout(
    client: LanguageClient, share: float, tmp_path: Path
) -> None:
    path = tmp_path / TOP_LEVEL_FOREVER.name  # a file of its own: no diagnostic of another test's is waiting
    path.write_text(TOP_LEVEL_FOREVER.read_text())
    with starved(share):
        started = time.monotonic()
        uri = open_file(client, path)

        def timed_out() -> bool:
            return any(d.code == "timeout" for d in client.diagnostics.get(uri, ()) if d.source == "tilescope")

        await until(timed_out, timeout=120, what="the timeout diagnostic")
        took = time.monotonic() - started
    assert took < WITHIN_S, took
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
