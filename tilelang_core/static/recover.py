"""Error-tolerant parsing: Python's own ``ast``, one top-level block at a time, repaired line by line.

``ast.parse`` gives up on the first syntax error, yet a kernel file being edited is broken most of
the time. The file is cut into top-level blocks (a ``def`` with its decorators, an assignment, an
``if __name__`` block...), each parsed on its own, so one broken function leaves the others intact.
A broken block is repaired by neutralising the offending line (``pass``, ``if True:`` for a block
header, or a one-line suite) until it parses, so even the broken function keeps most of its hints.
Parsed blocks are cached by (first line, text): typing inside one function re-parses only it.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field, fields, is_dataclass

from tilescope.core.lines import source_lines
from tilescope.core.model import Diagnostic, Span

_HEADER = re.compile(r"(async\s+)?(for|while|if|elif|else|with|def|try|except|finally|class)\b")
_CONTINUATION = re.compile(r"(else|elif|except|finally)\b")
_INDENTED_AFTER = re.compile(r"expected an indented block after .* on line (\d+)")
_TOKEN = re.compile(r"""\"\"\"|'''|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|\#.*|[()\[\]{}]""")
_MAX_REPAIRS = 40
_CACHE_SIZE = 2048


@dataclass(frozen=True)
class ParsedBlock:
    start_line: int
    end_line: int
    statements: list[ast.stmt]
    error: Diagnostic | None
    """The first syntax error of the block as written; ``None`` when it parsed unrepaired."""
    repaired_lines: frozenset[int]
    memo: dict[object, object] = field(default_factory=dict, compare=False, repr=False)
    """Facts derived from this block alone, kept as long as the block is cached."""

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node of the block, walked once."""
        found = self.memo.get("nodes")
        if found is None:
            found = _walk(self.statements)
            self.memo["nodes"] = found
        return found  # type: ignore[return-value]


_cache: OrderedDict[str, ParsedBlock] = OrderedDict()
_LINE_FREE = ("nodes", "calls", "argparse", "env")
"""Memo entries that hold no line numbers (AST nodes are moved in place)."""
_LINE_FIELDS = ("line", "end_line")


def shifted(value: object, delta: int) -> object:
    """A copy of a record (or a list, tuple or dict of them) ``delta`` lines further down.

    Every ``line``/``end_line`` field of the frozen model records is moved; AST nodes are left
    alone, since ``_moved`` shifts them in place. Whatever holds no line is returned as is.
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
    """For a dataclass: its line fields and its other fields; ``None`` for anything else."""
    if not is_dataclass(cls):
        _plans[cls] = None
        return None
    names = [f.name for f in fields(cls)]
    lines = tuple(n for n in names if n in _LINE_FIELDS)
    plan = (lines, tuple(n for n in names if n not in lines))
    _plans[cls] = plan
    return plan


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


def _line_free(key: object) -> bool:
    return (key[0] if isinstance(key, tuple) else key) in _LINE_FREE


def _moved(block: ParsedBlock, start: int) -> ParsedBlock:
    """The same parsed block ``start - block.start_line`` lines further down, shifted in place."""
    delta = start - block.start_line
    for node in block.nodes:
        if getattr(node, "lineno", None) is not None:
            node.lineno += delta  # type: ignore[attr-defined]
            if node.end_lineno is not None:  # type: ignore[attr-defined]
                node.end_lineno += delta  # type: ignore[attr-defined]
    error = shifted(block.error, delta)
    memo = {k: v if _line_free(k) else shifted(v, delta) for k, v in block.memo.items()}
    repaired = frozenset(line + delta for line in block.repaired_lines)
    return ParsedBlock(start, block.end_line + delta, block.statements, error, repaired, memo)  # type: ignore[arg-type]


def split_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Cut a file into top-level blocks: (first line, last line), 1-based and inclusive."""
    starts: list[int] = []
    depth = 0
    quote: str | None = None
    continued = False
    decorator_pending = False
    for number, line in enumerate(lines, start=1):
        first = line[:1]
        stripped = line.strip()
        at_top = quote is None and not continued and bool(stripped) and not first.isspace() and first != "#"
        if at_top and re.match(r"(def|class|async|@)\W?", line):
            depth = 0
        if at_top and depth == 0 and first not in ")]}" and not _CONTINUATION.match(line):
            if not decorator_pending:
                starts.append(number)
            decorator_pending = first == "@"
        elif stripped and not stripped.startswith("#"):
            decorator_pending = decorator_pending and first == "@"
        depth, quote = _scan(line, depth, quote)
        continued = quote is None and line.rstrip("\r\n").endswith("\\")
    if not starts or starts[0] != 1:
        starts.insert(0, 1)
    ends = [s - 1 for s in starts[1:]] + [len(lines)]
    return [(s, e) for s, e in zip(starts, ends, strict=True) if e >= s]


def _scan(line: str, depth: int, quote: str | None) -> tuple[int, str | None]:
    """Track bracket depth and open triple-quoted strings across one line."""
    position = 0
    if quote is not None:
        close = line.find(quote)
        if close < 0:
            return depth, quote
        position, quote = close + 3, None
    for match in _TOKEN.finditer(line, position):
        token = match.group()
        if token in ('"""', "'''"):
            close = line.find(token, match.end())
            if close < 0:
                return depth, token
            return _scan(line[close + 3 :], depth, None)
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth = max(0, depth - 1)
    return depth, quote


def parse_block(lines: list[str], start: int, end: int, claimed: set[int] | None = None) -> ParsedBlock:
    """Parse lines ``start..end`` (1-based) with their real line numbers, repairing if needed.

    A block whose text was parsed before is reused, moved to its new lines, unless ``claimed``
    says this parse already used it (the same text twice in one file).
    """
    text = "".join(lines[start - 1 : end])
    cached = _cache.get(text)
    if cached is not None and (claimed is None or id(cached) not in claimed):
        block = cached if cached.start_line == start else _moved(cached, start)
        _cache[text] = block
        _cache.move_to_end(text)
    else:
        block = _parse(lines[start - 1 : end], start, end)
        if cached is None:
            _cache[text] = block
            if len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    if claimed is not None:
        claimed.add(id(block))
    return block


def _parse(block_lines: list[str], start: int, end: int) -> ParsedBlock:
    work = [line if line.endswith("\n") else line + "\n" for line in block_lines]
    padding = "\n" * (start - 1)
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
                first_error = _diagnostic(err, start, end, block_lines)
            index = _repair(work, err, start, attempts)
            if index is None:
                break
            repaired.add(start + index)
            continue
        return ParsedBlock(start, end, tree.body, first_error, frozenset(repaired))
    return ParsedBlock(start, end, [], first_error, frozenset(range(start, end + 1)))


def _repair(work: list[str], err: SyntaxError, start: int, attempts: dict[int, int]) -> int | None:
    """Neutralise one line of the block; the index of the line changed, ``None`` when out of moves."""
    match = _INDENTED_AFTER.search(err.msg or "")
    if match:
        index = int(match.group(1)) - start
        if 0 <= index < len(work) and attempts.get(index, 0) == 0:
            attempts[index] = 1
            work[index] = work[index].rstrip("\r\n") + " pass\n"
            return index
    lineno = err.lineno if err.lineno is not None else start + len(work) - 1
    index = min(max(lineno - start, 0), len(work) - 1)
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


def _diagnostic(err: SyntaxError, start: int, end: int, block_lines: list[str]) -> Diagnostic:
    line = err.lineno if err.lineno is not None else end
    line = min(max(line, start), end)
    text = block_lines[line - start] if line - start < len(block_lines) else ""
    column = max((err.offset or 1) - 1, 0)
    column = min(column, len(text.rstrip("\r\n")))
    end_line = err.end_lineno if err.end_lineno and err.end_lineno == line else line
    end_column = (err.end_offset - 1) if err.end_offset and end_line == line else len(text.rstrip("\r\n"))
    end_column = max(end_column, column)
    return Diagnostic(
        severity="error",
        message=err.msg or "invalid syntax",
        span=Span(line, column, end_line, end_column),
        code="syntax-error",
    )


@dataclass(frozen=True)
class ParsedFile:
    blocks: list[ParsedBlock]
    statements: list[ast.stmt]
    errors: list[Diagnostic]
    repaired_lines: frozenset[int]


def parse_tolerant(source: str) -> ParsedFile:
    """Every top-level statement that could be recovered, plus the syntax errors as written."""
    lines = source_lines(source, keepends=True)
    blocks: list[ParsedBlock] = []
    statements: list[ast.stmt] = []
    errors: list[Diagnostic] = []
    repaired: set[int] = set()
    claimed: set[int] = set()
    for start, end in split_blocks(lines):
        block = parse_block(lines, start, end, claimed)
        blocks.append(block)
        statements.extend(block.statements)
        if block.error is not None:
            errors.append(block.error)
        repaired.update(block.repaired_lines)
    return ParsedFile(blocks, statements, errors, frozenset(repaired))
