"""``T.<name>`` uses checked against the catalog of the TileLang release in use.

A name or an argument the catalog does not know is an information note, never an error: the
catalog describes one release, and the user's TileLang (or a wrapper that accepts ``**kwargs``)
may well know it.
"""

from __future__ import annotations

import ast

from tilescope.core.model import Diagnostic, Span
from tilescope.core.static import catalog
from tilescope.core.static.records import PrimitiveUse
from tilescope.core.static.recover import ParsedBlock
from tilescope.core.static.syntax import span_of


def check_primitives(
    block: ParsedBlock, aliases: frozenset[str], table: catalog.Catalog
) -> tuple[list[PrimitiveUse], list[Diagnostic]]:
    """Every ``T.<name>`` in a block (block lines), and notes for unknown names and arguments."""
    key = ("primitives", aliases, table.version)
    cached = block.memo.get(key)
    if cached is None:
        cached = _check_primitives(block.nodes, aliases, table)
        block.keep(key, cached)
    return cached


def _check_primitives(
    nodes: list[ast.AST], aliases: frozenset[str], table: catalog.Catalog
) -> tuple[list[PrimitiveUse], list[Diagnostic]]:
    uses: list[PrimitiveUse] = []
    found: list[Diagnostic] = []
    calls: dict[int, ast.Call] = {}
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            calls[id(node.func)] = node
    for node in nodes:
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases):
            continue
        end = node.end_col_offset or 0
        span = Span(node.end_lineno or node.lineno, end - len(node.attr), node.end_lineno, end)
        call = calls.get(id(node))
        uses.append(PrimitiveUse(node.attr, span, call is not None))
        primitive = table.lookup(node.attr)
        if primitive is None:
            guess = table.closest(node.attr)
            hint = f"; did you mean T.{guess}?" if guess else ""
            message = f"T.{node.attr} is not in the catalog of tilelang.language {table.version}{hint}"
            found.append(Diagnostic("information", message, span, "unknown-primitive"))
        elif call is not None and primitive.kind == "function" and primitive.params is not None:
            message = _argument_problem(primitive, call)
            if message:
                message += f" (TileLang {table.version})"
                found.append(Diagnostic("information", message, span_of(call), "wrong-arguments"))
    uses.sort(key=lambda u: (u.span.line, u.span.column))
    return uses, found


def _as_called(primitive: catalog.Primitive, call: ast.Call) -> tuple[list[ast.expr], list[ast.keyword]]:
    """The arguments the wrapped function receives: TileLang's wrapper may move a keyword to the front
    of the positional ones, or drop it, before the call."""
    args, keywords = list(call.args), list(call.keywords)
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg == primitive.keyword_first:
            keywords.remove(keyword)
            args.insert(0, keyword.value)
        elif keyword.arg is not None and keyword.arg == primitive.keyword_ignored:
            keywords.remove(keyword)
    return args, keywords


def _argument_problem(primitive: catalog.Primitive, call: ast.Call) -> str | None:
    params = primitive.params or ()
    args, keywords = _as_called(primitive, call)
    kinds = {p.kind for p in params}
    positional = [p for p in params if p.kind in ("positional_only", "positional_or_keyword")]
    by_keyword = {p.name for p in params if p.kind in ("positional_or_keyword", "keyword_only")}
    starred = any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in keywords)
    if "var_positional" not in kinds and not starred and len(args) > len(positional):
        return f"T.{primitive.name} takes {len(positional)} positional arguments but {len(args)} were given"
    if "var_keyword" not in kinds:
        for keyword in keywords:
            if keyword.arg is not None and keyword.arg not in by_keyword:
                close = [n for n in by_keyword if n.lower() == keyword.arg.lower()]
                hint = f"; did you mean {close[0]}?" if close else ""
                return f"T.{primitive.name} has no argument {keyword.arg!r}{hint}"
    if starred:
        return None
    by_position = {p.name for p in positional[: len(args)]}
    for keyword in keywords:
        if keyword.arg in by_position:
            return f"T.{primitive.name} got multiple values for argument {keyword.arg!r}"
    given = by_position | {k.arg for k in keywords if k.arg}
    missing = [
        p.name
        for p in params
        if p.default is None
        and p.kind in ("positional_only", "positional_or_keyword", "keyword_only")
        and p.name not in given
    ]
    if missing:
        return f"T.{primitive.name} is missing {', '.join(missing)}"
    return None
