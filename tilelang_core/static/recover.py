"""Error-tolerant parsing: Python's own ``ast``, one top-level statement at a time, repaired line by line.

``ast.parse`` gives up on the first syntax error, yet a kernel file being edited is broken most of
the time. The file is cut into top-level blocks by ``split.split_blocks`` (a decorator, however
many lines it spans, stays with its ``def``), and each block is parsed on its own, so one broken
function leaves the others intact. A broken block is repaired by neutralising the offending line
(``pass``, ``if True:`` for a block header, or a one-line suite) until it parses.

Blocks are cached by their text, immutable, with the line numbers of the place they were first
parsed at: a block that moves (a line inserted above it) is found again as it is, and only the
records derived from it are moved, by ``shift.shifted``. A cache (``BlockCache``) holds at least
twice the blocks of the largest document parsed with it, so a large file never thrashes it; an
editor keeps one per open document, so documents never evict each other's blocks.
"""

from __future__ import annotations

import ast
import re
import warnings
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.model import Diagnostic, Span
from tilescope.core.static.shift import shifted
from tilescope.core.static.split import Lexed, block_spans, forget_lexed, lex, source_lines

_HEADER = re.compile(r"(async\s+)?(for|while|if|elif|else|with|def|try|except|finally|class|match|case)\b")
_INDENTED_AFTER = re.compile(r"expected an indented block after .* on line (\d+)")
_MAX_REPAIRS = 40
_GROUP_LINES = 64
"""The most one-line statements read as one block."""
_CACHE_SIZE = 2048
_MEMO_SIZE = 64


@dataclass(frozen=True)
class ParsedBlock:
    """One top-level block, parsed at file lines ``base + 1`` onwards; never changed once built."""

    base: int
    line_count: int
    statements: list[ast.stmt]
    error: Diagnostic | None
    """The first syntax error of the block as written; ``None`` when it parsed unrepaired."""
    repaired_lines: frozenset[int]
    memo: dict[object, Any] = field(default_factory=dict[object, Any], compare=False, repr=False)
    """Facts derived from this block alone (at its ``base``), kept as long as the block is cached; each
    key's one reader knows the type of its value."""

    def keep(self, key: object, value: object) -> None:
        """Remember a derived fact; past ``_MEMO_SIZE`` entries (one per module env or placement
        seen while editing) the facts are forgotten, the walked nodes kept."""
        if len(self.memo) >= _MEMO_SIZE:
            nodes = self.memo.get("nodes")
            self.memo.clear()
            if nodes is not None:
                self.memo["nodes"] = nodes
        self.memo[key] = value

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node of the block, walked once."""
        found = self.memo.get("nodes")
        if found is None:
            found = _walk(self.statements)
            self.memo["nodes"] = found
        return found


@dataclass(frozen=True)
class PlacedBlock:
    """A parsed block at its place in the file: its first line is file line ``offset + 1``."""

    offset: int
    block: ParsedBlock

    @property
    def delta(self) -> int:
        """What to add to the block's line numbers to get file lines here."""
        return self.offset - self.block.base

    def place(self, key: object, value: object) -> object:
        """``value`` (derived from this block and memoised under ``key``) moved to this place.

        The last placement is kept, so typing inside a line, which moves no block, copies nothing.
        """
        delta = self.delta
        if not delta:
            return value
        memo_key = ("placed", key)
        found = self.block.memo.get(memo_key)
        if found is not None and found[0] == delta and found[1] is value:
            return found[2]
        moved = shifted(value, delta)
        self.block.keep(memo_key, (delta, value, moved))
        return moved

    @property
    def start_line(self) -> int:
        return self.offset + 1

    @property
    def end_line(self) -> int:
        return self.offset + self.block.line_count


class BlockCache:
    """Parsed blocks by text, least recently used first out, sized by the documents parsed with it."""

    def __init__(self, size: int = _CACHE_SIZE) -> None:
        self.size = size
        self._blocks: OrderedDict[str, ParsedBlock] = OrderedDict()

    def get(self, text: str) -> ParsedBlock | None:
        found = self._blocks.get(text)
        if found is not None:
            self._blocks.move_to_end(text)
        return found

    def put(self, text: str, block: ParsedBlock) -> None:
        self._blocks[text] = block
        while len(self._blocks) > self.size:
            self._blocks.popitem(last=False)

    def fit(self, blocks: int) -> None:
        """Room for twice a document of ``blocks`` blocks: its blocks and those of its last edits."""
        self.size = max(self.size, 2 * blocks + 64)

    def clear(self) -> None:
        self._blocks.clear()

    def __len__(self) -> int:
        return len(self._blocks)


_cache = BlockCache()


def clear_cache() -> None:
    """Forget every parsed block and lexed text (for measuring cold parses, and for tests)."""
    _cache.clear()
    forget_lexed()


def _walk(statements: list[ast.stmt]) -> list[ast.AST]:
    """All nodes under ``statements``; ``ast.walk`` without its per-node generators."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(statements))
    while stack:
        node = stack.pop()
        found.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST))
    return found


def parse_block(text: str, offset: int, cache: BlockCache | None = None) -> ParsedBlock:
    """The block of this text, from the cache when seen before (at any offset)."""
    cache = cache if cache is not None else _cache
    cached = cache.get(text)
    if cached is not None:
        return cached
    block = _parse(text, offset)
    cache.put(text, block)
    return block


def _parse(text: str, base: int) -> ParsedBlock:
    block_lines = source_lines(text)
    work = [line if line.endswith(("\n", "\r")) else line + "\n" for line in block_lines]
    end = len(block_lines)
    first_error: Diagnostic | None = None
    repaired: set[int] = set()
    attempts: dict[int, int] = {}
    for index, line in enumerate(work):
        if "\x00" in line:  # Python refuses the whole text; say where, and read the rest without it
            column = len(line[: line.index("\x00")].encode("utf-8", "surrogatepass"))
            span = Span(base + 1 + index, column, base + 1 + index, column + 1)
            first_error = first_error or diagnostic("syntax-error", span, msg="source code cannot contain null bytes")
            work[index] = line.replace("\x00", " ")
            repaired.add(base + 1 + index)
    for _ in range(_MAX_REPAIRS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse("".join(work))
        except SyntaxError as err:
            _to_file_lines(err, base)
            if first_error is None:
                first_error = _diagnostic(err, base, block_lines)
            index = _repair(work, err, base, attempts)
            if index is None:
                break
            repaired.add(base + 1 + index)
            continue
        except (ValueError, MemoryError, RecursionError) as err:
            first = Span(base + 1, 0, base + 1, len(block_lines[0].rstrip("\r\n")) if block_lines else 0)
            note = diagnostic("not-analysed", first, error=type(err).__name__)
            return ParsedBlock(base, end, [], first_error or note, frozenset(range(base + 1, base + end + 1)))
        if base:
            ast.increment_lineno(tree, base)  # parsed alone (padding with ``base`` lines costs a file per block)
        return ParsedBlock(base, end, tree.body, first_error, frozenset(repaired))
    return ParsedBlock(base, end, [], first_error, frozenset(range(base + 1, base + end + 1)))


_ON_LINE = re.compile(r"(\bline )(\d+)\b")


def _to_file_lines(err: SyntaxError, base: int) -> None:
    """A syntax error of the block parsed alone, in file lines (its line numbers and its message's)."""
    if not base:
        return
    if err.lineno is not None:
        err.lineno += base
    if err.end_lineno is not None:
        err.end_lineno += base
    if err.msg:
        err.msg = _ON_LINE.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + base}", err.msg)


def _repair(work: list[str], err: SyntaxError, base: int, attempts: dict[int, int]) -> int | None:
    """Neutralise one line of the block; the index of the line changed, ``None`` when out of moves."""
    match = _INDENTED_AFTER.search(err.msg or "")
    if match:
        index = int(match.group(1)) - 1 - base
        if 0 <= index < len(work) and attempts.get(index, 0) == 0:
            attempts[index] = 1
            work[index] = work[index].rstrip("\r\n") + " pass\n"
            return index
    lineno = err.lineno if err.lineno is not None else base + len(work)
    index = min(max(lineno - 1 - base, 0), len(work) - 1)
    while index >= 0 and attempts.get(index, 0) >= 3:
        index -= 1
    if index < 0:
        return None
    attempt = attempts.get(index, 0)
    attempts[index] = attempt + 1
    line = work[index]
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    is_header = bool(_HEADER.match(body))
    if attempt == 0 and is_header and not body.endswith(":"):
        work[index] = line.rstrip("\r\n") + ":\n"
    elif attempt <= 1 and is_header:
        work[index] = f"{indent}if True:\n"
    elif attempt <= 1:
        work[index] = f"{indent}pass\n"
    else:
        work[index] = "\n"
    return index


def _diagnostic(err: SyntaxError, base: int, block_lines: list[str]) -> Diagnostic:
    end = base + len(block_lines)
    line = err.lineno if err.lineno is not None else end
    line = min(max(line, base + 1), end)
    text = block_lines[line - base - 1].rstrip("\r\n") if line - base - 1 < len(block_lines) else ""
    column = min(max((err.offset or 1) - 1, 0), len(text))
    end_line = err.end_lineno if err.end_lineno and err.end_lineno == line else line
    end_column = (err.end_offset - 1) if err.end_offset and end_line == line else len(text)
    end_column = min(max(end_column, column), len(text))
    return diagnostic("syntax-error", Span(line, column, end_line, end_column), msg=err.msg or "invalid syntax")


@dataclass(frozen=True)
class Group:
    """Lines ``first``..``last`` parsed as one block, or as one block per statement when that one
    has a syntax error (so each statement's error is reported)."""

    first: int
    last: int
    blocks: list[PlacedBlock]


@dataclass(frozen=True)
class ParsedFile:
    blocks: list[PlacedBlock]
    errors: list[Diagnostic]
    """Syntax errors (and blocks too large to parse), in file lines."""
    repaired_lines: frozenset[int]
    lines: list[str]
    lexed: Lexed | None = None
    """The lexer's states over ``lines``."""
    starts: list[bool] = field(default_factory=list[bool])
    """For each block, whether it starts a group (``grouped``): where a new split may start."""
    kept: tuple[int, int] = (0, 0)
    """Made from an older parse (``splice``): how many of the first and of the last blocks are the
    older parse's (the last ones moved by the lines the edit added)."""
    edited: tuple[int, int] = (0, 0)
    """Made from an older parse: the lines (0-based, end excluded) that replaced the older ones."""


def parse_tolerant(source: str, cache: BlockCache | None = None) -> ParsedFile:
    """Every top-level block that could be recovered, plus the syntax errors as written."""
    lines = source_lines(source)
    lexed = lex(lines)
    spans = block_spans(lexed)
    cache = cache if cache is not None else _cache
    cache.fit(len(spans))
    groups = [place_group(lines, group, cache) for group in grouped(lines, spans)]
    blocks = [placed for group in groups for placed in group.blocks]
    starts = [index == 0 for group in groups for index in range(len(group.blocks))]
    errors = [shifted(p.block.error, p.delta) for p in blocks if p.block.error is not None]
    repaired = {line + p.delta for p in blocks if p.block.repaired_lines for line in p.block.repaired_lines}
    return ParsedFile(blocks, errors, frozenset(repaired), lines, lexed, starts)


def place_group(lines: list[str], group: list[tuple[int, int]], cache: BlockCache) -> Group:
    """The group's lines parsed (from the cache when seen before), at their place in the file."""
    first, last = group[0][0], group[-1][1]
    block = parse_block("".join(lines[first - 1 : last]), first - 1, cache)
    if block.error is None or len(group) == 1:
        return Group(first, last, [PlacedBlock(first - 1, block)])
    parts = [PlacedBlock(s - 1, parse_block("".join(lines[s - 1 : e]), s - 1, cache)) for s, e in group]
    return Group(first, last, parts)


def grouped(lines: list[str], spans: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The blocks to parse: runs of one-line simple statements (``value_1 = 2``) together, up to
    ``_GROUP_LINES``, cut after a line whose text's checksum says so, so that an edit moves no cut
    but its own line's; everything else one block each. A file of 100,000 assignments is then a
    few thousand blocks, not 100,000."""
    grouper = Grouper(lines)
    groups = [group for start, end in spans for group in grouper.add(start, end)]
    return groups + grouper.flush()


class Grouper:
    """``grouped``, one span at a time: the run of simple statements still open is its only state."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.run: list[tuple[int, int]] = []

    def add(self, start: int, end: int) -> list[list[tuple[int, int]]]:
        """The groups this span closes."""
        text = self.lines[start - 1]
        simple = end == start and text[:1].isalpha() and not _HEADER.match(text)
        if not simple:
            return [*self.flush(), [(start, end)]]
        self.run.append((start, end))
        if len(self.run) >= _GROUP_LINES or zlib.crc32(text.encode("utf-8", "surrogatepass")) % 16 == 0:
            return self.flush()
        return []

    def flush(self) -> list[list[tuple[int, int]]]:
        run, self.run = self.run, []
        return [run] if run else []
