"""A random-edit fuzzer for the running server, shared by ``test_fuzz.py`` and ``benchmarks/soak_lsp.py``.

The client mirrors the document itself, counting lines and columns as LSP does (an oracle written
here independently of the server's code), so each answer can be checked: every position inside
the document, every request answered without an error and within ``SLOW_S``, and the server's
text equal to the mirror's (a fresh copy of the mirrored text answers exactly as the edited one).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient
from pytest_lsp.checks import check_result_against_client_capabilities

SLOW_S = 2.0
TOKENS = [
    *"()[]{}:,=\\#",
    '"',
    "'''",
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
    "block_M",
    "A_shared",
    "dtype",
    "num_stages=",
    "transpose_B=True",
]
CHARACTERS = [
    "\r",
    "\r\n",
    "\f",
    "\v",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x85",
    "\u2028",
    "\u2029",
    "\x00",
    "\ufeff",
    "×",
    "é",
    "𝄞",
    "😀",
    "\ud800",
    "\udbff",
]
"""Line breaks LSP does and does not count, astral characters, lone surrogates, NUL and BOM.

Only high surrogates: a high one followed by a low one would travel as a valid pair in JSON and
arrive as one character, so the mirror and the server would hold different texts."""
_BREAK = re.compile(r"\r\n|\r|\n")
EXPENSIVE = [
    "xs = [m for m in range({n}) for n in range({n}) for k in range({n}) if m * n * k < 0]\n",
    "def rec(n, k):\n    return 1 if n <= 0 else rec(n - 1, k) + rec(n - 1, k + 1)\n\n\nr = rec({n}, 0)\n",
    's = ("ab" * {n}) * {n}\nls = len("x" * {n} * {n})\n',
    "t = sum(sum(range(j)) for j in range({n}) for i in range({n}))\n",
    'j = "".join("".join(c for c in "a" * {n}) for d in "b" * {n})\n',
    "acc = 0\nfor i in range({n}):\n    for k in range({n}):\n        acc += i * k\n",
    "def main():\n    ys = [a for a in range({n}) for b in range({n}) if a == -1]\n    return ys\n\n\nmain()\n",
    'if __name__ == "__main__":\n    zs = sorted(a * b for a in range({n}) for b in range({n}) for c in range({n}))\n',
]
"""Valid Python that is expensive to evaluate: comprehensions whose filters pass nothing, branching
recursion, big ranges, string multiplication, nested loops (``{n}`` is a size, up to 4096)."""


def lsp_lines(text: str) -> list[str]:
    """The document's lines without their breaks, as LSP counts them (one more than breaks)."""
    return _BREAK.split(text)


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def position_of(text: str, offset: int, encoding: str) -> types.Position:
    before = text[:offset]
    lines = lsp_lines(before)
    return types.Position(line=len(lines) - 1, character=units(lines[-1], encoding))


def inside(lines: Sequence[str], position: types.Position, encoding: str) -> bool:
    return 0 <= position.line < len(lines) and 0 <= position.character <= units(lines[position.line], encoding)


def safe_offset(text: str, offset: int) -> int:
    """Not between the two characters of a ``\\r\\n`` (no LSP position points there)."""
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        return offset - 1
    return offset


def expensive_edit(rng: random.Random, text: str) -> tuple[int, int, str]:
    """An insertion of one ``EXPENSIVE`` program at the start of a top-level line (or the end)."""
    starts = [0] + [m.end() for m in _BREAK.finditer(text) if not text[m.end() : m.end() + 1].isspace()]
    offset = rng.choice(starts) if text else 0
    snippet = rng.choice(EXPENSIVE).format(n=rng.choice([40, 400, 4096]))
    if offset and text[offset - 1] not in "\r\n":
        snippet = "\n" + snippet
    return offset, offset, snippet


def random_edit(rng: random.Random, text: str, expensive: bool = False) -> tuple[int, int, str]:
    """(start offset, end offset, replacement) for one truncation, line edit or insertion; with
    ``expensive``, one edit in five inserts an ``EXPENSIVE`` program."""
    if expensive and rng.random() < 0.2:
        return expensive_edit(rng, text)
    kind = rng.choice(["truncate", "delete-line", "duplicate-line", "insert", "insert", "char", "char", "unbalance"])
    if kind == "truncate" or not text:
        return safe_offset(text, rng.randrange(len(text) + 1)), len(text), ""
    breaks = [0] + [m.end() for m in _BREAK.finditer(text)]
    index = rng.randrange(len(breaks))
    start = breaks[index]
    end = breaks[index + 1] if index + 1 < len(breaks) else len(text)
    if kind == "delete-line":
        return start, end, ""
    if kind == "duplicate-line":
        line = text[start:end]
        return start, start, line if _BREAK.search(line) else line + "\n"
    offset = safe_offset(text, rng.randrange(len(text) + 1))
    if kind == "unbalance":
        return offset, offset, rng.choice("([{)]}") * rng.randint(1, 3)
    if kind == "char":
        return offset, offset, rng.choice(CHARACTERS)
    return offset, offset, rng.choice(TOKENS)


@dataclass
class Report:
    edits: int = 0
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    slow: list[tuple[str, float]] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def problems(self) -> list[str]:
        return self.errors[:5] + [f"{m} took {s:.2f} s" for m, s in self.slow[:5]] + self.outside[:5]


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def _positions(answer: Any) -> list[types.Position]:
    """Every position in an answer (ranges, locations, hints, symbols), found by walking it."""
    found: list[types.Position] = []
    stack = [answer]
    while stack:
        item = stack.pop()
        if isinstance(item, types.Position):
            found.append(item)
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif hasattr(item, "__attrs_attrs__"):
            stack.extend(getattr(item, a.name) for a in item.__attrs_attrs__)
    return found


class Fuzzer:
    """Drives one client through random edits of ``sources``, checking every answer."""

    def __init__(
        self,
        client: LanguageClient,
        sources: dict[Path, str],
        encoding: str,
        seed: int,
        *,
        expensive: bool = False,
        slow_s: float = SLOW_S,
    ) -> None:
        self.client = client
        self.expensive = expensive
        self.slow_s = slow_s
        self.sources = sources
        self.encoding = encoding
        self.rng = random.Random(seed)
        self.report = Report()
        self.version = 0

    def _open(self, path: Path, text: str) -> str:
        uri = path.resolve().as_uri()
        self.version += 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=self.version, text=text)
            )
        )
        return uri

    async def _timed(self, method: str, request: Awaitable[Any], lines: list[str]) -> None:
        start = time.perf_counter()
        try:
            answer = await request
            check_result_against_client_capabilities(self.client.capabilities, method, answer)
        except Exception as err:
            self.report.errors.append(f"{method}: {type(err).__name__}: {err}")
            return
        finally:
            elapsed = time.perf_counter() - start
            self.report.latencies.append(elapsed)
            if elapsed > self.slow_s:
                self.report.slow.append((method, elapsed))
        self.report.requests += 1
        for where in _positions(answer):
            if not inside(lines, where, self.encoding):
                line = lines[where.line] if where.line < len(lines) else None
                self.report.outside.append(f"{method}: {where} outside a {len(lines)}-line document (line {line!r})")

    def _requests(self, uri: str, text: str, edit: int) -> list[Awaitable[None]]:
        """Requests sent now, right after their edit (pytest-lsp's ``*_async`` methods send only
        when awaited, i.e. after all later edits; its result checks are run on each answer)."""
        lines = lsp_lines(text)
        where = position_of(text, safe_offset(text, self.rng.randrange(len(text) + 1)), self.encoding)
        document = _doc(uri)
        calls: list[tuple[str, Any]] = [
            (types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintParams(text_document=document, range=_whole()))
        ]
        if edit % 2 == 0:
            calls.append((types.TEXT_DOCUMENT_HOVER, types.HoverParams(text_document=document, position=where)))
        if edit % 5 == 0:
            calls.append(
                (types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(text_document=document, position=where))
            )
            signature = types.SignatureHelpParams(text_document=document, position=where)
            calls.append((types.TEXT_DOCUMENT_SIGNATURE_HELP, signature))
        if edit % 7 == 0:
            calls.append(
                (types.TEXT_DOCUMENT_DEFINITION, types.DefinitionParams(text_document=document, position=where))
            )
            references = types.ReferenceParams(
                text_document=document, position=where, context=types.ReferenceContext(include_declaration=True)
            )
            calls.append((types.TEXT_DOCUMENT_REFERENCES, references))
            calls.append((types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, types.DocumentSymbolParams(text_document=document)))
            calls.append((types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensParams(text_document=document)))
        protocol = self.client.protocol
        return [
            self._timed(method, asyncio.wrap_future(protocol.send_request(method, params)), lines)
            for method, params in calls
        ]

    async def run(self, edits: int, batch: int, reset_every: int) -> tuple[str, str]:
        """Run ``edits`` edits; returns the last document's uri and mirrored text."""
        paths = list(self.sources)
        path = paths[0]
        text = self.sources[path]
        uri = self._open(path, text)
        pending: list[Awaitable[None]] = []
        for edit in range(edits):
            if edit % reset_every == 0 and edit:
                await asyncio.gather(*pending)
                pending.clear()
                self.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=_doc(uri)))
                path = self.rng.choice(paths)
                text = self.sources[path]
                uri = self._open(path, text)
            start, end, replacement = random_edit(self.rng, text, self.expensive)
            change = types.TextDocumentContentChangePartial(
                range=types.Range(
                    start=position_of(text, start, self.encoding), end=position_of(text, end, self.encoding)
                ),
                text=replacement,
            )
            text = text[:start] + replacement + text[end:]
            self.version += 1
            self.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
                    content_changes=[change],
                )
            )
            self.report.edits += 1
            pending.extend(self._requests(uri, text, edit))
            if len(pending) >= batch or edit == edits - 1:
                await asyncio.gather(*pending)
                pending.clear()
        return uri, text

    def check_diagnostics(self, uri: str, text: str) -> None:
        """The last diagnostics published for the document's current version lie inside it."""
        published = self.client.diagnostics.get(uri, [])
        lines = lsp_lines(text)
        for diagnostic in published:
            for where in (diagnostic.range.start, diagnostic.range.end):
                if not inside(lines, where, self.encoding):
                    self.report.outside.append(f"diagnostic {diagnostic.code}: {where} outside the document")


def _whole() -> types.Range:
    return types.Range(start=types.Position(line=0, character=0), end=types.Position(line=100_000, character=0))


async def noise(client: LanguageClient) -> None:
    """Protocol noise an editor or a broken plugin might send: bytes that are not JSON, JSON that
    is not JSON-RPC, a request for an unopened document, a cancel for no request."""
    writer = client.protocol.writer
    assert writer is not None
    for body in (b'{"bad": 1', b'{"jsonrpc": "2.0"}', b"[]", b'{"jsonrpc": "2.0", "method": 7}', "é".encode()):
        written = writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        if asyncio.iscoroutine(written) or isinstance(written, asyncio.Future):
            await written
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=987654))
    nowhere = types.HoverParams(
        text_document=_doc("file:///never/opened.py"), position=types.Position(line=3, character=1)
    )
    assert await asyncio.wait_for(client.text_document_hover_async(nowhere), SLOW_S) is None
