"""Thousands of random edits through the running server, with every line-break character LSP does
and does not count, astral characters and lone surrogates, in UTF-16 and UTF-8 sessions, plus
protocol noise: nothing crashes, every request is answered without error within 2 s, every
position lies inside the document, and the server's text stays the editor's text.

``benchmarks/soak_lsp.py`` runs the same fuzzer for 10,000 edits over the whole corpus."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, SERVER, start, whole_file, within
from tests.lsp.fuzzing import Fuzzer, noise

SEED = 20260530
EDITS = 1200
BATCH = 12
"""Requests sent before waiting for their answers, as a fast typist's editor would."""
RESET_EVERY = 60
CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "tilelang-examples" / "examples"


def _sources() -> dict[Path, str]:
    paths = sorted(EXAMPLES.glob("*.py"))
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.py"))[::25]
    return {path: path.read_text() for path in paths}


@pytest_lsp.fixture(config=SERVER)
async def neovim(lsp_client: LanguageClient):
    """An untrusted session with Neovim's capabilities: it offers UTF-8 positions first."""
    await start(lsp_client, editor="neovim", workspaceTrust=False)
    yield
    await lsp_client.shutdown_session()


async def _fuzz(
    client: LanguageClient, encoding: str, seed: int, *, expensive: bool = False, edits: int = EDITS
) -> None:
    fuzzer = Fuzzer(client, _sources(), encoding, seed, expensive=expensive, slow_s=1.0 if expensive else 2.0)
    uri, text = await fuzzer.run(edits, 1 if expensive else BATCH, RESET_EVERY)
    fuzzer.check_diagnostics(uri, text)
    report = fuzzer.report
    assert report.problems() == []
    assert report.requests > edits
    assert client.error is None
    assert not [m for m in client.messages if m.type == types.MessageType.Error]
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]
    await _same_text_same_answers(client, uri, text, fuzzer.version)


async def test_random_edits_never_break_a_utf16_session(client: LanguageClient) -> None:
    await _fuzz(client, "utf-16", SEED)


async def test_random_edits_never_break_a_utf8_session(neovim: LanguageClient) -> None:
    await _fuzz(neovim, "utf-8", SEED + 1)


async def test_expensive_python_is_answered_within_a_second(client: LanguageClient) -> None:
    """Edits that insert valid but expensive programs (``fuzzing.EXPENSIVE``): each answer within 1 s."""
    await _fuzz(client, "utf-16", SEED + 2, expensive=True, edits=300)


async def test_protocol_noise_is_survived(client: LanguageClient) -> None:
    await noise(client)
    uri = (EXAMPLES / "gemm.py").resolve().as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=(EXAMPLES / "gemm.py").read_text()
            )
        )
    )
    hover = await within(
        client.text_document_hover_async(
            types.HoverParams(text_document=_doc(uri), position=types.Position(line=17, character=13))
        ),
        timeout=2,
    )
    assert hover is not None and "C_local" in hover.contents.value
    assert client.error is None


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def _same_text_same_answers(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """The incrementally edited document answers exactly as a fresh copy of the mirrored text does."""
    edited = await within(
        client.text_document_inlay_hint_async(types.InlayHintParams(text_document=_doc(uri), range=whole_file()))
    )
    name = uri.rsplit("/", 1)[1]
    fresh_uri = uri.replace(name, f"fresh_{name}")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=fresh_uri, language_id="python", version=version, text=text)
        )
    )
    fresh = await within(
        client.text_document_inlay_hint_async(types.InlayHintParams(text_document=_doc(fresh_uri), range=whole_file()))
    )
    assert [(h.position, h.label) for h in edited] == [(h.position, h.label) for h in fresh]
