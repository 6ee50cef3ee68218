"""Thousands of random edits of the examples through the running server: nothing crashes, every
request is answered, and the server's text stays the editor's text."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, open_file, whole_file, within

SEED = 20260530
EDITS = 2000
BATCH = 20
"""Edits sent before waiting for their answers, as a fast typist's editor would."""
RESET_EVERY = 60
TOKENS = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "=",
    "\\",
    '"',
    "'''",
    "#",
    "\t",
    "    ",
    "\n",
    "T.",
    "T.gemm(",
    "T.copy(A, ",
    "T.alloc_shared((",
    "T.Kernel(",
    "T.Pipelined(",
    "T.Parallel(",
    "def ",
    "@T.prim_func\n",
    "with ",
    "for i in ",
    "return ",
    "lambda",
    "0",
    "-1",
    "1e9",
    "None",
    "×",
    "é",
    "block_M",
    "A_shared",
    "dtype",
    "num_stages=",
    "transpose_B=True",
]


def position_of(text: str, offset: int) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    column = offset - (before.rfind("\n") + 1)
    return types.Position(line=line, character=len(before[offset - column :].encode("utf-16-le")) // 2)


def random_edit(rng: random.Random, text: str) -> tuple[int, int, str]:
    """(start offset, end offset, replacement) for one truncation, line edit or token insertion."""
    lines = text.splitlines(keepends=True)
    kind = rng.choice(["truncate", "delete-line", "duplicate-line", "insert", "insert", "insert", "unbalance"])
    if kind == "truncate" or not lines:
        cut = rng.randrange(len(text) + 1)
        return cut, len(text), ""
    index = rng.randrange(len(lines))
    start = sum(len(line) for line in lines[:index])
    if kind == "delete-line":
        return start, start + len(lines[index]), ""
    if kind == "duplicate-line":
        return start, start, lines[index] if lines[index].endswith("\n") else lines[index] + "\n"
    offset = rng.randrange(len(text) + 1)
    if kind == "unbalance":
        return offset, offset, rng.choice("([{)]}") * rng.randint(1, 3)
    return offset, offset, rng.choice(TOKENS)


async def test_random_edits_never_break_the_server(client: LanguageClient) -> None:
    rng = random.Random(SEED)
    sources = {path: path.read_text() for path in sorted(EXAMPLES.glob("*.py"))}
    paths = list(sources)
    path = paths[0]
    uri = open_file(client, path)
    text = sources[path]
    version = 1
    answered = 0
    pending: list[Awaitable[Any]] = []
    for edit in range(EDITS):
        if edit % RESET_EVERY == 0 and edit:
            answered += len(await within(asyncio.gather(*pending), timeout=60))
            pending.clear()
            path = rng.choice(paths)
            text = sources[path]
            version += 1
            uri = open_file(client, path, text=text, version=version)
        start, end, replacement = random_edit(rng, text)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=position_of(text, start), end=position_of(text, end)), text=replacement
        )
        text = text[:start] + replacement + text[end:]
        version += 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
            )
        )
        requests = [
            client.text_document_inlay_hint_async(types.InlayHintParams(text_document=_doc(uri), range=whole_file()))
        ]
        where = position_of(text, rng.randrange(len(text) + 1))
        if edit % 3 == 0:
            requests.append(
                client.text_document_hover_async(types.HoverParams(text_document=_doc(uri), position=where))
            )
        if edit % 5 == 0:
            requests.append(
                client.text_document_completion_async(types.CompletionParams(text_document=_doc(uri), position=where))
            )
            requests.append(
                client.text_document_signature_help_async(
                    types.SignatureHelpParams(text_document=_doc(uri), position=where)
                )
            )
        if edit % 7 == 0:
            requests.append(
                client.text_document_definition_async(types.DefinitionParams(text_document=_doc(uri), position=where))
            )
            requests.append(
                client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=_doc(uri)))
            )
        pending.extend(requests)
        if len(pending) >= BATCH or edit == EDITS - 1:
            answered += len(await within(asyncio.gather(*pending), timeout=60))
            pending.clear()
    assert answered > EDITS
    assert client.error is None
    assert not [m for m in client.messages if m.type == types.MessageType.Error]
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]
    await _same_text_same_answers(client, uri, text, version, Path(uri).name)


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def _same_text_same_answers(client: LanguageClient, uri: str, text: str, version: int, name: str) -> None:
    """The incrementally edited document answers exactly as a fresh copy of the mirrored text does."""
    edited = await within(
        client.text_document_inlay_hint_async(types.InlayHintParams(text_document=_doc(uri), range=whole_file()))
    )
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
