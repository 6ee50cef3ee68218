"""An incremental edit applied by slicing (``LspTextDocument``) gives the text pygls's own line-by-line
rebuild gives, and the lines a fresh split of that text gives, over random edits of texts made of
the characters that matter (``\\r``, ``\\n``, ``\\r\\n``, a letter, a two-byte letter, an astral one)."""

from __future__ import annotations

import random

from lsprotocol import types
from pygls.workspace import TextDocument
from tilescope.lsp.text import LspTextDocument, split_lines

_PIECES = ("a", "\n", "\r", "\r\n", " ", "é", "😀")


def _change(start: tuple[int, int], end: tuple[int, int], text: str) -> types.TextDocumentContentChangePartial:
    where = types.Range(start=types.Position(*start), end=types.Position(*end))
    return types.TextDocumentContentChangePartial(range=where, text=text)


def test_sliced_edits_match_pygls() -> None:
    rng = random.Random(7)
    for _ in range(4000):
        source = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 14)))
        ours = LspTextDocument("file:///a.py", source)
        theirs = TextDocument("file:///a.py", source)
        for _ in range(3):
            lines = split_lines(ours.source) or [""]
            first = rng.randrange(len(lines) + 1)
            last = rng.randrange(first, len(lines) + 1)
            start = (first, rng.randrange(len(lines[first]) + 2) if first < len(lines) else 0)
            end = (last, rng.randrange(len(lines[last]) + 2) if last < len(lines) else 0)
            if end < start:
                start, end = end, start
            change = _change(start, end, "".join(rng.choice(_PIECES) for _ in range(rng.randrange(3))))
            ours.apply_change(change)
            theirs.apply_change(change)
            assert ours.source == theirs.source, (source, start, end, change.text)
            assert list(ours.lines) == split_lines(ours.source)
