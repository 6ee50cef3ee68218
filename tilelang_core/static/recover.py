"""Error-tolerant parsing: Python's own ``ast``, one top-level statement at a time, repaired line by line.

``ast.parse`` gives up on the first syntax error, yet a kernel file being edited is broken most of
the time. The file is cut into top-level blocks by ``split_blocks``, a lexer that follows Python's
own rules for strings, brackets, comments, continuation lines and decorators (a decorator, however
many lines it spans, stays with its ``def``), and each block is parsed on its own, so one broken
function leaves the others intact. A broken block is repaired by neutralising the offending line
(``pass``, ``if True:`` for a block header, or a one-line suite) until it parses.

Blocks are cached by their text, immutable, with the line numbers of the place they were first
parsed at: a block that moves (a line inserted above it) is found again as it is, and only the
records derived from it are moved, by ``shifted``. For 1,000 lines, whole-file ``ast.parse`` takes
14 ms, ``tokenize`` 33 ms and parso 115 ms (68 ms incremental); this splitter 3 ms
(``benchmarks/bench_corpus.py`` prints the figures).
"""

from __future__ import annotations

import ast
import re
import types
import typing
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field, fields, is_dataclass

from tilescope.core.model import Diagnostic, Span

_HEADER = re.compile(r"(async\s+)?(for|while|if|elif|else|with|def|try|except|finally|class|match|case)\b")
_CONTINUATION = re.compile(r"(else|elif|except|finally)\b")
_RESTART = re.compile(r"(def|class)\s|async\s+def\s|@[A-Za-z_][\w.]*\s*(\(|$)")
"""A line at column 0 that starts a definition: inside an unclosed bracket, the bracket was a typo."""
_INDENTED_AFTER = re.compile(r"expected an indented block after .* on line (\d+)")
_TOKEN = re.compile(
    r"""\"\"\"|'''|"(?:[^"\\\r\n]|\\.)*("|\\?(?=[\r\n]|$))|'(?:[^'\\\r\n]|\\.)*('|\\?(?=[\r\n]|$))|\#|[()\[\]{}]"""
)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_MAX_REPAIRS = 40
_CACHE_SIZE = 2048


def source_lines(source: str) -> list[str]:
    """Lines as Python and LSP count them (ends ``\\n``, ``\\r\\n``, ``\\r`` only), ends kept.

    ``str.splitlines`` also splits on form feeds, ``\\x1c``-``\\x1e``, ``\\x85`` and U+2028, which
    Python reads as ordinary characters: a string holding one would shift every line after it.
    """
    return _LINE.findall(source)


@dataclass(frozen=True)
class ParsedBlock:
    """One top-level block, parsed at file lines ``base + 1`` onwards; never changed once built."""

    base: int
    line_count: int
    statements: list[ast.stmt]
    error: Diagnostic | None
    """The first syntax error of the block as written; ``None`` when it parsed unrepaired."""
    repaired_lines: frozenset[int]
    memo: dict[object, object] = field(default_factory=dict, compare=False, repr=False)
    """Facts derived from this block alone (at its ``base``), kept as long as the block is cached."""

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node of the block, walked once."""
        found = self.memo.get("nodes")
        if found is None:
            found = _walk(self.statements)
            self.memo["nodes"] = found
        return found  # type: ignore[return-value]


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
        if found is not None and found[0] == delta and found[1] is value:  # type: ignore[index]
            return found[2]  # type: ignore[index]
        moved = shifted(value, delta)
        self.block.memo[memo_key] = (delta, value, moved)
        return moved

    @property
    def start_line(self) -> int:
        return self.offset + 1

    @property
    def end_line(self) -> int:
        return self.offset + self.block.line_count


_cache: OrderedDict[str, ParsedBlock] = OrderedDict()
_LINE_FIELDS = ("line", "end_line")


def shifted(value: object, delta: int) -> object:
    """A copy of a record (or a list, tuple or dict of them) ``delta`` lines further down.

    Every ``line``/``end_line`` field of the frozen records is moved; whatever holds no line is
    returned as is (the same object), so unchanged parts are shared, never copied.
    """
    return _shift(value, delta) if delta else value


def _shift(value: object, delta: int) -> object:
    kind = type(value)
    if kind is list or kind is tuple:
        items = [_shift(v, delta) for v in value]  # type: ignore[attr-defined]
        if all(a is b for a, b in zip(items, value, strict=True)):  # type: ignore[call-overload]
            return value
        return items if kind is list else tuple(items)
    if kind is dict:
        return {k: _shift(v, delta) for k, v in value.items()}  # type: ignore[attr-defined]
    plan = _plans.get(kind, _UNPLANNED)
    if plan is _UNPLANNED:
        plan = _plan(kind)
    if plan is None:
        return value
    lines, nested = plan  # type: ignore[misc]
    state = value.__dict__
    changes: dict[str, object] = {}
    for name in lines:
        if state[name] is not None:
            changes[name] = state[name] + delta
    for name in nested:
        current = state[name]
        moved = _shift(current, delta)
        if moved is not current:
            changes[name] = moved
    if not changes:
        return value
    copy = object.__new__(kind)
    copy.__dict__.update(state)
    copy.__dict__.update(changes)
    return copy


_UNPLANNED = object()
_plans: dict[type, object] = {}


def _plan(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """For a dataclass: its line fields and the fields whose type may hold records; ``None`` else.

    Fields typed as plain data (``str``, ``int | str``, ``list[str]``...) are never walked.
    """
    if not is_dataclass(cls):
        _plans[cls] = None
        return None
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):
        hints = {}
    names = [f.name for f in fields(cls)]
    lines = tuple(n for n in names if n in _LINE_FIELDS)
    nested = tuple(n for n in names if n not in lines and _may_hold_records(hints.get(n, object)))
    plan = (lines, nested)
    _plans[cls] = plan
    return plan


_PLAIN = (str, int, float, bool, type(None), bytes)


def _may_hold_records(kind: object) -> bool:
    if kind in _PLAIN:
        return False
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return False
    if origin in (typing.Union, types.UnionType, list, tuple, dict, set, frozenset):
        return any(_may_hold_records(arg) for arg in typing.get_args(kind) if arg is not Ellipsis)
    return True


def clear_cache() -> None:
    """Forget every parsed block (for measuring cold parses, and for tests)."""
    _cache.clear()


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


_State = tuple[int, "str | None", bool, bool]
"""The lexer between two lines: bracket depth, open string, backslash continuation, decorator seen."""
_START: _State = (0, None, False, False)


@dataclass(frozen=True)
class _Lexed:
    lines: list[str]
    states: list[_State]
    """The state before each line, and one more after the last."""
    starts: list[bool]


_lexed: OrderedDict[int, _Lexed] = OrderedDict()
_LEXED_KEPT = 8


def split_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Cut a file into top-level blocks: (first line, last line), 1-based and inclusive.

    A block starts where a logical line starts at column 0 outside brackets and strings, unless
    it continues a compound statement (``else:``) or follows a decorator (which may span lines).
    The lexer's state after every line is kept for the last few texts: an edited text is lexed
    only from its first changed line until the state matches the old text's again.
    """
    lexed = _lex(lines)
    starts = [number for number, start in enumerate(lexed.starts, start=1) if start]
    if not starts or starts[0] != 1:
        starts.insert(0, 1)
    ends = [s - 1 for s in starts[1:]] + [len(lines)]
    return [(s, e) for s, e in zip(starts, ends, strict=True) if e >= s]


def _lex(lines: list[str]) -> _Lexed:
    best: tuple[int, int, _Lexed] | None = None
    for old in _lexed.values():
        prefix = _common_prefix(old.lines, lines)
        suffix = _common_suffix(old.lines, lines, prefix)
        if best is None or prefix + suffix > best[0] + best[1]:
            best = (prefix, suffix, old)
    states: list[_State] = [_START]
    starts: list[bool] = []
    begin = 0
    old: _Lexed | None = None
    suffix = 0
    if best is not None:
        prefix, suffix, old = best
        states = old.states[: prefix + 1]
        starts = old.starts[:prefix]
        begin = prefix
    shift = len(lines) - len(old.lines) if old is not None else 0
    reuse_from = len(lines) - suffix
    index = begin
    state = states[-1]
    while index < len(lines):
        if old is not None and index >= reuse_from and old.states[index - shift] == state:
            states.extend(old.states[index - shift + 1 :])
            starts.extend(old.starts[index - shift :])
            break
        start, state = _step(lines[index], state)
        starts.append(start)
        states.append(state)
        index += 1
    result = _Lexed(lines, states, starts)
    _lexed[id(result)] = result
    while len(_lexed) > _LEXED_KEPT:
        _lexed.popitem(last=False)
    return result


def _common_prefix(old: list[str], new: list[str]) -> int:
    """Lines both start with, found by bisection over slice comparisons (which run in C)."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if old[:middle] == new[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(old: list[str], new: list[str], prefix: int) -> int:
    """Lines both end with, not overlapping the common prefix."""
    low, high = 0, min(len(old), len(new)) - prefix
    while low < high:
        middle = (low + high + 1) // 2
        if old[len(old) - middle :] == new[len(new) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low


def _step(line: str, state: _State) -> tuple[bool, _State]:
    """Whether ``line`` starts a block, and the lexer's state after it."""
    depth, quote, continued, decorated = state
    first = line[:1]
    starts = False
    if quote is None and not continued and depth > 0 and _RESTART.match(line):
        depth = 0
    if quote is None and not continued and depth == 0 and first not in " \t\f\r\n#" and line.strip():
        starts = not _CONTINUATION.match(line) and not decorated
        decorated = first == "@"
    depth, quote, continued = _scan(line, depth, quote)
    return starts, (depth, quote, continued, decorated)


def _scan(line: str, depth: int, quote: str | None) -> tuple[int, str | None, bool]:
    """Bracket depth, the string left open and whether a backslash continues the line."""
    position = 0
    if quote is not None:
        position, quote = _close(line, 0, quote)
        if quote is not None:
            return depth, quote, False
    while True:
        match = _TOKEN.search(line, position)
        if match is None:
            break
        token = match.group()
        if token in ('"""', "'''"):
            position, quote = _close(line, match.end(), token)
            if quote is not None:
                return depth, quote, False
            continue
        position = match.end()
        if token == "#":
            return depth, None, False
        if token[0] in "\"'":
            if token.endswith("\\") and len(token) > 1:
                return depth, token[0], False
        elif token in "([{":
            depth += 1
        elif token in ")]}":
            depth = max(0, depth - 1)
    return depth, None, line.rstrip("\r\n").endswith("\\")


def _close(line: str, start: int, quote: str) -> tuple[int, str | None]:
    """Where the string opened by ``quote`` ends on this line (past escapes), or that it stays open."""
    index = start
    while True:
        found = line.find(quote, index)
        backslash = line.find("\\", index)
        if 0 <= backslash < found or (found < 0 <= backslash):
            if len(quote) == 1 and backslash >= len(line.rstrip("\r\n")) - 1:
                return len(line), quote
            index = backslash + 2
            continue
        if found < 0:
            return len(line), quote if len(quote) == 3 else None
        return found + len(quote), None


def parse_block(text: str, offset: int) -> ParsedBlock:
    """The block of this text, from the cache when seen before (at any offset)."""
    cached = _cache.get(text)
    if cached is not None:
        _cache.move_to_end(text)
        return cached
    block = _parse(text, offset)
    _cache[text] = block
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return block


def _parse(text: str, base: int) -> ParsedBlock:
    block_lines = source_lines(text)
    work = [line if line.endswith(("\n", "\r")) else line + "\n" for line in block_lines]
    padding = "\n" * base
    end = len(block_lines)
    first_error: Diagnostic | None = None
    repaired: set[int] = set()
    attempts: dict[int, int] = {}
    for _ in range(_MAX_REPAIRS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(padding + "".join(work))
        except SyntaxError as err:
            if first_error is None:
                first_error = _diagnostic(err, base, block_lines)
            index = _repair(work, err, base, attempts)
            if index is None:
                break
            repaired.add(base + 1 + index)
            continue
        except (ValueError, MemoryError, RecursionError) as err:
            note = Diagnostic(
                "information",
                f"not analysed: Python cannot parse this block ({type(err).__name__})",
                Span(base + 1, 0, base + 1, len(block_lines[0].rstrip("\r\n")) if block_lines else 0),
                "not-analysed",
            )
            return ParsedBlock(base, end, [], first_error or note, frozenset(range(base + 1, base + end + 1)))
        return ParsedBlock(base, end, tree.body, first_error, frozenset(repaired))
    return ParsedBlock(base, end, [], first_error, frozenset(range(base + 1, base + end + 1)))


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
    return Diagnostic(
        severity="error",
        message=err.msg or "invalid syntax",
        span=Span(line, column, end_line, end_column),
        code="syntax-error",
    )


@dataclass(frozen=True)
class ParsedFile:
    blocks: list[PlacedBlock]
    errors: list[Diagnostic]
    """Syntax errors (and blocks too large to parse), in file lines."""
    repaired_lines: frozenset[int]
    lines: list[str]


def parse_tolerant(source: str) -> ParsedFile:
    """Every top-level block that could be recovered, plus the syntax errors as written."""
    lines = source_lines(source)
    blocks: list[PlacedBlock] = []
    errors: list[Diagnostic] = []
    repaired: set[int] = set()
    for start, end in split_blocks(lines):
        block = parse_block("".join(lines[start - 1 : end]), start - 1)
        placed = PlacedBlock(start - 1, block)
        blocks.append(placed)
        if block.error is not None:
            errors.append(shifted(block.error, placed.delta))  # type: ignore[arg-type]
        repaired.update(line + placed.delta for line in block.repaired_lines)
    return ParsedFile(blocks, errors, frozenset(repaired), lines)
