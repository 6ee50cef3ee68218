"""Documents whose lines are the lines LSP counts, and positions in the negotiated encoding.

LSP (and Python's tokenizer) break lines at ``\\n``, ``\\r\\n`` and ``\\r`` only; ``str.splitlines``,
which pygls's ``TextDocument.lines`` uses, also breaks at form feed, vertical tab, NEL, U+2028 and
others, so every position below such a character would be a line off and incremental edits would
land on the wrong line. ``LspTextDocument`` counts lines as LSP does; ``TilescopeProtocol`` makes
pygls's workspace create such documents. Columns use pygls's ``PositionCodec`` for the encoding
negotiated at ``initialize`` (UTF-8, UTF-16 or UTF-32); the core's columns are UTF-8 bytes, with
lone surrogates counted as their three ``surrogatepass`` bytes so any text converts.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition
from tilescope.core.ide import source_lines

SYNC_KIND = types.TextDocumentSyncKind.Incremental


def split_lines(text: str) -> list[str]:
    """``text`` as LSP lines, each with its line break."""
    return source_lines(text)


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class LspTextDocument(TextDocument):
    """pygls's document with LSP's lines, split once per text, and an edit applied by slicing the
    text and the lines it changed (pygls rebuilds the whole text line by line in Python: tens of
    milliseconds of the event loop per keystroke in a file of a megabyte)."""

    _split: tuple[str, tuple[str, ...]] | None = None

    @property
    def lines(self) -> Sequence[str]:
        return self._lines()

    def _lines(self) -> tuple[str, ...]:
        source = self.source
        split = self._split
        if split is None or split[0] is not source:
            split = (source, tuple(split_lines(source)))
            self._split = split
        return split[1]

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = self._lines()
        where = self._position_codec.range_from_client_units(lines, change.range)
        start, end = where.start, where.end
        spliced = _spliced(self.source, lines, (start.line, start.character), (end.line, end.character), change.text)
        if spliced is None:  # an edit at the very end, or a range no editor sends: as pygls applies it
            super()._apply_incremental_change(change)
            return
        self._source, edited = spliced
        self._split = (self._source, edited)


def _spliced(
    source: str, lines: tuple[str, ...], start: tuple[int, int], end: tuple[int, int], text: str
) -> tuple[str, tuple[str, ...]] | None:
    """The text and lines after replacing ``start``..``end`` (line, column of the lines) with ``text``;
    ``None`` unless the range is ordered and lies within the lines."""
    (first, column), (last, end_column) = start, end
    if min(first, column, end_column) < 0 or last >= len(lines) or end < start:
        return None
    if column > len(lines[first]) or end_column > len(lines[last]):
        return None
    begin = sum(map(len, lines[:first]))
    stop = begin + sum(map(len, lines[first:last]))
    edited = source[: begin + column] + text + source[stop + end_column :]
    middle = lines[first][:column] + text + lines[last][end_column:]
    while last + 1 < len(lines) and (  # the edited text runs on into the next line, or a \r meets its \n
        not middle.endswith(("\n", "\r")) or (middle.endswith("\r") and lines[last + 1].startswith("\n"))
    ):
        last += 1
        middle += lines[last]
    if first > 0 and middle.startswith("\n") and lines[first - 1].endswith("\r"):
        first -= 1
        middle = lines[first] + middle
    return edited, lines[:first] + tuple(split_lines(middle)) + lines[last + 1 :]


class LspWorkspace(Workspace):
    def update_text_document(self, text_doc: Any, change: Any) -> None:
        """A change of a document never opened (or already closed) is dropped, not an error."""
        if text_doc.uri not in self.text_documents:
            return
        super().update_text_document(text_doc, change)

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self.position_codec,
        )


class TilescopeProtocol(LanguageServerProtocol):
    """pygls's protocol, with the workspace it builds at ``initialize`` replaced by an ``LspWorkspace``
    (same root, folders and negotiated encoding) before any document is opened, and negative
    positions (which a client should never send) read as 0 rather than refused with an error."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        if isinstance(data.get("params"), dict):
            _clamp_positions(data["params"])
        return super().structure_message(data)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        steps = super().lsp_initialize(params)
        value: Any = None
        while True:
            try:
                step = steps.send(value)
            except StopIteration as done:
                self._adopt_workspace()
                return done.value
            self._adopt_workspace()
            value = yield step

    def _adopt_workspace(self) -> None:
        built = self._workspace
        if built is not None and not isinstance(built, LspWorkspace):
            folders = list(built.folders.values())
            self._workspace = LspWorkspace(built.root_uri, SYNC_KIND, folders, built.position_encoding)


def _nested(value: object) -> bool:
    return isinstance(value, dict | list)


def _clamp_positions(value: Any) -> None:
    """Negative ``line``/``character`` numbers inside ``value`` (JSON params) set to 0, in place."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            params = cast(dict[str, object], item)  # JSON: string keys
            if {"line", "character"} <= params.keys():
                for key in ("line", "character"):
                    position = params[key]
                    if isinstance(position, int) and position < 0:
                        params[key] = 0
            stack.extend(filter(_nested, params.values()))
        elif isinstance(item, list):
            stack.extend(filter(_nested, cast(list[object], item)))


@dataclass(frozen=True)
class Text:
    """One document's lines with the codec for the client's position encoding."""

    lines: Sequence[str]
    codec: PositionCodec

    def line(self, line: int) -> str:
        """Line ``line`` (1-based) without its line break; "" past the end."""
        if 0 < line <= len(self.lines):
            return self.lines[line - 1].rstrip("\r\n")
        return ""

    @property
    def last(self) -> types.Position:
        """The document's end: LSP counts an empty last line after a final line break."""
        if not self.lines:
            return types.Position(line=0, character=0)
        tail = self.lines[-1]
        if tail.endswith(("\n", "\r")):
            return types.Position(line=len(self.lines), character=0)
        return types.Position(line=len(self.lines) - 1, character=self.codec.client_num_units(tail))

    def position(self, line: int, column: int) -> types.Position:
        """The core's (1-based line, UTF-8 byte column) as an LSP position inside the document."""
        end = self.last
        index = min(max(line - 1, 0), end.line)
        text = self.line(index + 1)
        prefix = text.encode("utf-8", "surrogatepass")[: max(column, 0)].decode("utf-8", "ignore")
        return types.Position(line=index, character=self.codec.client_num_units(prefix))

    def span_range(self, line: int, column: int, end_line: int | None, end_column: int | None) -> types.Range:
        """A core span as an LSP range; a span without an end covers the rest of its line."""
        start = self.position(line, column)
        last = end_line or line
        end = self.position(last, utf8_length(self.line(last)) if end_column is None else end_column)
        if (end.line, end.character) < (start.line, start.character):
            end = start
        return types.Range(start=start, end=end)

    def code_points(self, pos: types.Position) -> ServerTextPosition:
        """An LSP position as (0-based line, code point column), clamped to the document."""
        if pos.line >= len(self.lines):
            return ServerTextPosition(max(len(self.lines), 0), 0)
        text = self.lines[pos.line].rstrip("\r\n")
        column = 0
        units = 0
        for char in text:
            if units >= pos.character:
                break
            units += self.codec.impl.code_units_for_char(char)
            column += 1
        return ServerTextPosition(pos.line, column)

    def core_position(self, pos: types.Position) -> tuple[int, int]:
        """An LSP position as the core's (1-based line, UTF-8 byte column)."""
        found = self.code_points(pos)
        text = self.line(found.line + 1)
        return found.line + 1, utf8_length(text[: found.character])

    def before(self, pos: types.Position, context_lines: int) -> str:
        """The text from ``context_lines`` lines above ``pos`` up to it (for completion contexts)."""
        found = self.code_points(pos)
        head = self.line(found.line + 1)[: found.character]
        return "".join(self.lines[max(0, found.line - context_lines) : found.line]) + head
