"""Completion and signature help for ``T.`` members and their keyword arguments.

Works on the raw text before the cursor, because the line being typed rarely parses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from tilescope.core.static import catalog

_MEMBER = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\.([A-Za-z_0-9]*)$")
_MODULE_MEMBER = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\.([A-Za-z_][A-Za-z_0-9]*)\.([A-Za-z_0-9]*)$")
"""``T.simd.``: a member of a module the dialect exports by name."""
_CALLEE = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\.((?:[A-Za-z_][A-Za-z_0-9]*\.)?[A-Za-z_][A-Za-z_0-9]*)\s*$")
_LOOKBACK = 4000


@dataclass(frozen=True)
class Completion:
    """One item; what it inserts is its ``label``."""

    label: str
    kind: catalog.PrimitiveKind | Literal["keyword"]
    """A catalog name's kind, or ``keyword`` for an argument name."""
    detail: str
    documentation: str
    sort_text: str
    """The order editors list items in: common tile operations first, rarely used TVM exports last;
    keyword arguments in the signature's order."""


@dataclass(frozen=True)
class CallContext:
    """The ``T.<name>(`` call the cursor is inside of."""

    name: str
    active: int
    """Index of the argument being typed."""
    keywords: tuple[str, ...]
    """Keyword arguments already given."""
    current_keyword: str | None
    current_text: str


def complete(text_before: str, aliases: Iterable[str], dialect: str | None = None) -> list[Completion]:
    """Items for the cursor at the end of ``text_before``, from the language module the file imports
    (``dialect``: ``ascend`` for ``tilelang.ascend.language``)."""
    aliases = set(aliases)
    root = catalog.default()
    table = root.dialect(dialect)
    nested = _MODULE_MEMBER.search(text_before[-200:])
    owner = table.lookup(nested.group(2)) if nested and nested.group(1) in aliases else None
    if owner is not None and owner.members is not None:
        return sorted((_member(p) for p in owner.members), key=lambda c: c.sort_text)
    member = _MEMBER.search(text_before[-200:])
    if member and member.group(1) in aliases:
        own = frozenset(table.table) - frozenset(root.table)
        return sorted((_member(p, p.name in own) for p in table.table.values()), key=lambda c: c.sort_text)
    context = call_context(text_before, aliases)
    if context is None or context.current_keyword is not None:
        return []
    if not re.fullmatch(r"\s*[A-Za-z_0-9]*", context.current_text):
        return []
    primitive = table.lookup(context.name)
    if primitive is None or primitive.params is None:
        return []
    return [
        Completion(f"{p.name}=", "keyword", f"T.{context.name}", "", f"{index:03d}")
        for index, p in enumerate(primitive.params)
        if p.kind in ("positional_or_keyword", "keyword_only") and p.name not in context.keywords
    ]


COMMON = (
    "copy",
    "alloc_fragment",
    "alloc_shared",
    "Parallel",
    "Kernel",
    "gemm",
    "Pipelined",
    "clear",
    "fill",
    "Tensor",
    "ceildiv",
    "if_then_else",
    "serial",
    "reduce_sum",
    "reduce_max",
    "alloc_local",
    "alloc_var",
    "alloc_barrier",
    "exp2",
    "max",
    "min",
    "infinity",
    "prim_func",
    "const",
    "unroll",
    "atomic_add",
    "use_swizzle",
    "annotate_layout",
    "cast",
    "log2",
    "exp",
    "vectorized",
    "reduce_min",
    "reduce_abssum",
    "cumsum",
    "sync_threads",
    "get_thread_binding",
    "GemmWarpPolicy",
    "float32",
    "float16",
    "bfloat16",
    "int32",
)
"""The tile operations and allocators kernels use most, in the order of how often TileLang's own examples
call them (``T.copy`` about 1,500 times across 285 files), then the commonest dtypes."""
_RANK = {name: index for index, name in enumerate(COMMON)}


def rank(primitive: catalog.Primitive, own: bool = False) -> str:
    """``sort_text``: the common names in ``COMMON``'s order, then the functions a backend dialect adds
    (``own``: ``alloc_l1``, ``SimtVF``, ``dual_copy`` in an Ascend file); then TileLang's other functions;
    then dtypes and values; last the capitalised classes and constants TileLang re-exports from TVM
    (``Add``, ``And``, ``Any``...) and private-looking names."""
    name = primitive.name
    if name in _RANK:
        tier = 0
    elif own and primitive.kind == "function":
        return f"0{len(COMMON):03d}{name.lower()}"
    elif name.startswith("_") or name.isupper() or name[:1].isupper():
        tier = 4
    elif primitive.kind == "function":
        tier = 1
    elif primitive.kind == "dtype":
        tier = 3
    else:
        tier = 2
    return f"{tier}{_RANK.get(name, 0):03d}{name.lower()}"


def _member(primitive: catalog.Primitive, own: bool = False) -> Completion:
    detail = primitive.signature or primitive.kind
    return Completion(primitive.name, primitive.kind, detail, primitive.summary, rank(primitive, own))


def call_context(text_before: str, aliases: Iterable[str]) -> CallContext | None:
    """Find the innermost unclosed ``T.<name>(`` before the cursor, and the argument being typed."""
    text = text_before[-_LOOKBACK:]
    depth = 0
    commas = 0
    keywords: list[str] = []
    segment_end = len(text)
    index = len(text) - 1
    while index >= 0:
        ch = text[index]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return None
                segment = text[index + 1 : segment_end]
                keyword = _keyword_of(segment)
                if keyword:
                    keywords.append(keyword)
                callee = _CALLEE.search(text[:index])
                if callee is None or callee.group(1) not in set(aliases):
                    return None
                first = text[index + 1 :]
                last = first.rsplit(",", 1)[-1] if commas else first
                return CallContext(
                    name=callee.group(2),
                    active=commas,
                    keywords=tuple(keywords),
                    current_keyword=_keyword_of(last) if "=" in last else None,
                    current_text=last,
                )
            depth -= 1
        elif ch == "," and depth == 0:
            segment = text[index + 1 : segment_end]
            keyword = _keyword_of(segment)
            if keyword:
                keywords.append(keyword)
            segment_end = index
            commas += 1
        index -= 1
    return None


def _keyword_of(segment: str) -> str | None:
    match = re.match(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*=(?!=)", segment)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Signature:
    label: str
    documentation: str
    parameters: list[tuple[int, int]]
    """Each parameter's [start, end) offsets within ``label``."""
    active: int


def signature_at(text_before: str, aliases: Iterable[str], dialect: str | None = None) -> Signature | None:
    context = call_context(text_before, aliases)
    if context is None:
        return None
    primitive = catalog.default().dialect(dialect).lookup(context.name)
    if primitive is None or primitive.params is None or primitive.signature is None:
        return None
    owner = context.name.rpartition(".")[0]
    label = f"T.{owner}.{primitive.signature}" if owner else f"T.{primitive.signature}"
    offsets: list[tuple[int, int]] = []
    cursor = label.index("(") + 1
    names = [p.name for p in primitive.params]
    for param in primitive.params:
        prefix = {"var_positional": "*", "var_keyword": "**"}.get(param.kind, "")
        start = label.find(prefix + param.name, cursor)
        if start < 0:
            start = cursor
        end = start + len(prefix + param.name)
        offsets.append((start, end))
        cursor = end
    active = context.active
    if context.current_keyword in names:
        active = names.index(context.current_keyword)
    else:
        positional = [i for i, p in enumerate(primitive.params) if p.kind != "keyword_only"]
        variadic = next((i for i, p in enumerate(primitive.params) if p.kind == "var_positional"), None)
        if variadic is not None and active >= variadic:
            active = variadic
        elif positional:
            active = positional[min(active, len(positional) - 1)]
    return Signature(label, primitive.summary, offsets, active)
