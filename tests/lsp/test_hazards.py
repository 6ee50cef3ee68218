"""The hazard check in the editor: both lines of a race as ``relatedInformation``, the witness on hover."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import SERVER, open_file, start, until, within

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
FIXTURE = Path(__file__).resolve().parents[2] / "benchmarks" / "hazards" / "fixtures"


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=True, timeout=60)
    yield
    await lsp_client.shutdown_session()


async def test_a_race_names_both_lines_and_hover_shows_the_witness(client: LanguageClient) -> None:
    uri = open_file(client, FIXTURE / "race_global_overlap.py")

    def race() -> list[Any]:
        return [d for d in client.diagnostics.get(uri, ()) if d.code == "data-race"]

    await until(lambda: bool(race()), timeout=180.0, what="a data-race diagnostic")
    (d,) = race()
    assert d.severity == types.DiagnosticSeverity.Error and d.range.start.line == 17
    (related,) = d.related_information or []
    assert related.location.uri == uri and related.location.range.start.line == 17
    assert "block (0,)" in related.message and "Blocks (0,) and (1,)" in d.message
    hover = await within(
        client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(17, 20))
        )
    )
    assert hover is not None and "**data-race** (error)" in hover.contents.value
    assert "Interpreted on the CPU (blocks (0,), (1,), (2,), (3,) of the 4 grid)" in hover.contents.value
