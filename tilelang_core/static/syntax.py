"""Small readers of ``ast`` nodes shared by the static tier: spans, dotted names, call arguments."""

from __future__ import annotations

import ast

from tilescope.core.model import Span


def span_of(node: ast.AST) -> Span:
    return Span(
        node.lineno,  # type: ignore[attr-defined]  # only nodes with a position reach here
        node.col_offset,  # type: ignore[attr-defined]  # as above
        getattr(node, "end_lineno", None),
        getattr(node, "end_col_offset", None),
    )


def arg_span(arg: ast.arg) -> Span:
    return Span(arg.lineno, arg.col_offset, arg.lineno, arg.col_offset + len(arg.arg))


def dotted(node: ast.AST) -> str:
    """``tilelang.jit`` for ``tilelang.jit`` or ``tilelang.jit(...)``; ``""`` for anything else."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        else:
            return ""


def primitive_name(node: ast.AST, aliases: frozenset[str]) -> str | None:
    """``gemm`` for ``T.gemm`` / ``T.gemm(...)``, else ``None``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
        return node.attr
    return None


def arguments(call: ast.Call, names: list[str]) -> dict[str, ast.expr]:
    """Map a call's arguments onto parameter names, positionally then by keyword."""
    found: dict[str, ast.expr] = {}
    for name, arg in zip(names, call.args, strict=False):
        if isinstance(arg, ast.Starred):
            break
        found[name] = arg
    for keyword in call.keywords:
        if keyword.arg is not None:
            found[keyword.arg] = keyword.value
    return found


def keyword(call: ast.Call, name: str, position: int | None = None) -> ast.expr | None:
    """The argument given as ``name=`` or at ``position``."""
    for item in call.keywords:
        if item.arg == name:
            return item.value
    if (
        position is not None
        and len(call.args) > position
        and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1])
    ):
        return call.args[position]
    return None


def source_text(node: ast.AST | None) -> str | None:
    """The node as source; ``"?"`` for a tree too deep to print."""
    if node is None:
        return None
    try:
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "?"
