"""What the whole file contributes to each kernel: the names of ``tilelang.language`` (or of a backend
dialect, ``tilelang.ascend.language``), module constants, ``argparse`` defaults, and the placed blocks
that later steps search for calls."""

from __future__ import annotations

import ast
import functools
import re
from collections import ChainMap
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from tilescope.core.static.catalog import Catalog
from tilescope.core.static.discover import tilelang_names
from tilescope.core.static.evaluate import evaluate
from tilescope.core.static.recover import ParsedBlock, PlacedBlock
from tilescope.core.static.symbolic import Sym, Value


@dataclass
class ModuleContext:
    aliases: frozenset[str]
    env: dict[str, Value]
    lines: list[str]
    target: str
    blocks: list[PlacedBlock] = field(default_factory=list)
    tilelang: dict[str, str] = field(default_factory=dict)
    """Local names bound to TileLang objects (``discover.tilelang_names``)."""
    memo: dict[str, Any] = field(default_factory=dict[str, Any])
    """Indexes over the whole file, built once per analysis."""
    dialects: dict[str, str] = field(default_factory=dict[str, str])
    """Each alias's dialect: ``""`` for ``tilelang.language``, ``"ascend"`` for ``tilelang.ascend.language``."""
    scopes: dict[str, str] = field(default_factory=dict[str, str])
    """The scope of each allocator of the file's dialect its catalog gives (``alloc_l1``: ``shared.l1``)."""

    @property
    def dialect(self) -> str | None:
        """The backend dialect the file writes its kernels in (``ascend``), ``None`` for ``tilelang.language``."""
        return next((d for d in sorted(self.dialects.values()) if d), None)

    @functools.cached_property
    def env_key(self) -> tuple[object, ...]:
        """The module env as a hashable cache key."""
        return (self.aliases, tuple(sorted(self.env.items(), key=_item_key)))


def _item_key(item: tuple[str, Value]) -> str:
    return item[0]


LANGUAGE = re.compile(r"tilelang(?:\.(\w+))?\.language")
"""A language module: ``tilelang.language``, or a backend dialect's (``tilelang.ascend.language``: group 1
``ascend``)."""


def language_aliases(statements: list[ast.stmt]) -> dict[str, str]:
    """Names the statements bind to ``tilelang.language`` (dialect ``""``) or to a backend dialect's
    language module (``import tilelang.ascend.language as T``: ``{"T": "ascend"}``)."""
    found: dict[str, str] = {}
    for stmt in statements:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                match = LANGUAGE.fullmatch(alias.name)
                if match:
                    found[alias.asname or alias.name] = match.group(1) or ""
        elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
            match = LANGUAGE.fullmatch(f"{stmt.module}.language")
            for alias in stmt.names:
                if match and alias.name == "language":
                    found[alias.asname or alias.name] = match.group(1) or ""
    return found


def module_context(
    blocks: list[PlacedBlock], lines: list[str], target: str, table: Catalog | None = None
) -> ModuleContext:
    """``table``: the release's catalog, whose dialect (where the file imports one) names its allocators."""
    dialects: dict[str, str] = {}
    for placed in blocks:
        dialects.update(language_aliases(placed.block.statements))
    frozen_aliases = frozenset(dialects or {"T"})
    env: dict[str, Value] = {}
    for placed in blocks:
        env.update(argparse_defaults(placed.block, frozen_aliases))
    for placed in blocks:
        _bind_block(placed.block, env, frozen_aliases)
    names = tilelang_names([s for p in blocks for s in p.block.statements])
    context = ModuleContext(frozen_aliases, env, lines, target, blocks, names, dialects=dialects)
    if table is not None and context.dialect is not None:
        context.scopes = table.dialect(context.dialect).scopes
    return context


_ABSENT = object()


def _bind_block(block: ParsedBlock, env: dict[str, Value], aliases: frozenset[str]) -> None:
    """``bind_assignment`` for each top-level statement of the block, memoised on the values of the
    names the block reads: an edit elsewhere in a long file re-evaluates no other block."""
    reads = block.memo.get("reads")
    if reads is None:
        reads = tuple(sorted(_names_read(block.statements)))
        block.keep("reads", reads)
    key: tuple[object, ...] | None = ("module-delta", aliases, tuple(env.get(n, _ABSENT) for n in reads))
    try:
        hash(key)
    except TypeError:
        key = None
    delta = block.memo.get(key) if key is not None else None
    if delta is None:
        scratch: ChainMap[str, Value] = ChainMap({}, env)
        for stmt in block.statements:
            bind_assignment(stmt, scratch, aliases)
        delta = scratch.maps[0]
        if key is not None:
            block.keep(key, delta)
    env.update(delta)


def _names_read(statements: list[ast.stmt]) -> set[str]:
    """Names (and ``a.b`` attributes) the values of the top-level assignments read."""
    found: set[str] = set()
    for stmt in statements:
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
            continue
        for node in ast.walk(stmt.value):
            if isinstance(node, ast.Name):
                found.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                found.add(f"{node.value.id}.{node.attr}")
    return found


def argparse_defaults(block: ParsedBlock, aliases: frozenset[str]) -> dict[str, Value]:
    """``args.M`` → default, from ``parser.add_argument("--M", default=...)`` calls."""
    found = block.memo.get("argparse")
    if found is None:
        found = {}
        for node in block.nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "add_argument":
                continue
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            keywords = {k.arg: k.value for k in node.keywords}
            action = keywords.get("action")
            flag = action.value if isinstance(action, ast.Constant) else None
            if flags and "default" not in keywords and flag in ("store_true", "store_false"):
                keywords["default"] = ast.Constant(flag == "store_false")
            if not flags or "default" not in keywords:
                continue
            dest = keywords.get("dest")
            name = dest.value if isinstance(dest, ast.Constant) else flags[-1].lstrip("-").replace("-", "_")
            value = evaluate(keywords["default"], {}, aliases)
            if not isinstance(value, Sym) and isinstance(name, str):
                for prefix in ("args", "opts", "options", "cfg", "config"):
                    found[f"{prefix}.{name}"] = value
        block.keep("argparse", found)
    return found


def bind_assignment(stmt: ast.stmt, env: MutableMapping[str, Value], aliases: frozenset[str]) -> None:
    """Record ``NAME = value`` (and tuple unpacking) when the value is known."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        env[stmt.target.id] = evaluate(stmt.value, env, aliases)
        return
    if not isinstance(stmt, ast.Assign):
        return
    value = evaluate(stmt.value, env, aliases)
    for target in stmt.targets:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(value) == len(target.elts):
            for element, item in zip(target.elts, value, strict=True):
                if isinstance(element, ast.Name):
                    env[element.id] = item
        elif isinstance(target, ast.Tuple):
            for element in target.elts:
                if isinstance(element, ast.Name):
                    env[element.id] = Sym(element.id)
