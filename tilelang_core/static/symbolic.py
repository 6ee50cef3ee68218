"""The values the static tier computes with, and the bounds that keep computing them cheap.

A value is a number, a string, a tuple, ``Sym`` (known only by its source text) or ``Shaped`` (a
tensor the file makes, known by its shape). Every module that folds or reads values shares these
types, the dtype names TileLang accepts, and the limits: a number beyond ``2**40`` (no tile or
tensor extent comes near) is too large to be a size, a value larger than ``budget.MAX_SIZE``
characters and items is not evaluated (``size``, ``admitted``), and a symbolic text is shortened
for display.
"""

from __future__ import annotations

import ast
import math
import re
import threading
from dataclasses import dataclass
from typing import Any, TypeGuard, cast

from tilescope.core.static.budget import MAX_SIZE, charge_size

DTYPE_ALIASES = {
    "float": "float32",
    "half": "float16",
    "double": "float64",
    "int": "int32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
}
_DTYPES = {
    "bool",
    "int4",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint4",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8_e4m3",
    "float8_e5m2",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
}
LIMIT = 2**40
"""The largest magnitude evaluated; anything larger is unknown."""
_TEXT_LIMIT = 80
_DTYPE_SHAPE = re.compile(r"bool|(u?int|float|bfloat)\d+(_[a-z0-9]+)?(x\d+)?")


@dataclass(frozen=True)
class Sym:
    """A value known only by its expression text (``M``, ``ceildiv(N, 128)``)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Shaped:
    """A tensor made in the file (``torch.randn(M, K)``), known by its shape only."""

    shape: tuple[Any, ...]
    dtype: str | None = None
    """The element type when the file says it (``dtype=torch.float16``, ``.half()``)."""
    data: tuple[Any, ...] | None = None
    """The numbers of a 1-D ``torch.tensor([2048, 6144])`` written in the file."""

    def __str__(self) -> str:
        return f"tensor{self.shape}"


Value = Any
"""int, float, bool, str, ``Sym``, ``Shaped``, or a tuple of values."""


def dtype_name(value: Value) -> str | None:
    """The canonical dtype a value denotes (``"float"`` → ``float32``), or ``None``."""
    if isinstance(value, str):
        name = DTYPE_ALIASES.get(value, value)
        return name if name in _DTYPES or _DTYPE_SHAPE.fullmatch(name) else None
    return None


def dotted_name(node: ast.AST) -> str:
    """The last name of ``tvm.DataType`` / ``DataType``."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def bounded(value: Value) -> Value:
    """``value``, or ``OverflowError`` for a number too large (or not finite) to be a size."""
    if isinstance(value, int) and not isinstance(value, bool) and not -LIMIT <= value <= LIMIT:
        raise OverflowError
    if isinstance(value, float) and not (math.isfinite(value) and abs(value) <= LIMIT):
        raise OverflowError
    return value


def is_known_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def numeric(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def as_dim(value: Value) -> int | str:
    """A shape extent for the model: an int when known, else its text."""
    if is_known_int(value):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return str(value)


def node_text(node: ast.AST) -> str:
    """The node's source text, shortened: a symbolic value is shown, never computed on."""
    if _size_over(node, 400):
        return "…"
    try:
        text = ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError, MemoryError):
        return "?"
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def _size_over(node: ast.AST, limit: int) -> bool:
    """Whether the tree has more than ``limit`` nodes (checked without recursion)."""
    stack = [node]
    count = 0
    while stack:
        count += 1
        if count > limit:
            return True
        current = stack.pop()
        stack.extend(ast.iter_child_nodes(current))
    return False


_NUMBERS = frozenset({int, float, bool, type(None)})
_TEXTS = frozenset({str, bytes})


def _parts(value: Value) -> tuple[Any, ...] | None:
    """What a value is made of: a tuple's items, a tensor's shape and data, and what a ``members()``
    method gives (the run-along's dicts, ``flow_values.Record``); ``None`` for a value counted by itself."""
    if isinstance(value, tuple):
        return cast("tuple[Any, ...]", value)
    if isinstance(value, Shaped):
        return (value.shape, value.data)
    members = getattr(value, "members", None)
    return cast("tuple[Any, ...]", members()) if callable(members) else None


def size(value: Value, limit: int = MAX_SIZE) -> int:
    """Characters of a value's strings plus items of its containers, a part shared in many places
    counted at each (as printing, hashing or comparing it walks it); ``limit + 1`` once past
    ``limit``. Each distinct part is walked once, so ``t = (t, t)`` forty times over is measured in
    forty steps, not 2**40."""
    done: dict[int, int] = {}
    stack: list[tuple[Value, tuple[Any, ...] | None]] = [(value, None)]
    while stack:
        item, parts = stack.pop()
        if parts is None:  # first visit: measure it, or come back once its parts are measured
            if type(item) in _NUMBERS:
                done[id(item)] = 1
                continue
            recent = _recent.sizes.get(id(item))
            if recent is not None and recent[0] is item:
                done[id(item)] = recent[1]
            elif type(item) in _TEXTS or isinstance(item, Sym):
                done[id(item)] = len(item) if not isinstance(item, Sym) else len(item.text)
            elif (found := _parts(item)) is None:
                done[id(item)] = 1
            elif (kinds := set(map(type, found))) <= _NUMBERS:  # the common flat tuples, at C speed
                done[id(item)] = 2 * len(found)
            elif kinds <= _TEXTS:
                done[id(item)] = len(found) + sum(map(len, found))
            else:
                stack.append((item, found))
                stack.extend((p, None) for p in found if type(p) not in _NUMBERS and id(p) not in done)
                continue
        else:
            total = len(parts)
            for part in parts:
                kind = type(part)
                total += 1 if kind in _NUMBERS else len(part) if kind in _TEXTS else done[id(part)]
            done[id(item)] = total
        if done[id(item)] > limit:
            return limit + 1
    return done[id(value)]


class _Recent(threading.local):
    """The last containers ``admitted`` measured in this thread, with their sizes (held, so their ids
    stay theirs): a value built from one just built (``((t,),)``, a loop's ``t = (t, t)``) is
    measured without walking it again."""

    def __init__(self) -> None:
        self.sizes: dict[int, tuple[Value, int]] = {}


_recent = _Recent()
_RECENT = 64


def admitted(value: Value) -> Value:
    """``value``, paid for by its size (``budget.charge_size``); past ``MAX_SIZE`` the budget ends
    (``OverBudget``) and the value is not evaluated."""
    if value is None or type(value) in _NUMBERS:
        return value
    measured = size(value)
    charge_size(measured)
    if _parts(value) is not None:
        kept = _recent.sizes
        if len(kept) >= _RECENT:
            del kept[next(iter(kept))]
        kept[id(value)] = (value, measured)
    return value


def short_sym(text: str) -> Sym:
    """``Sym`` of a text built from values, shortened as source text is."""
    return Sym(text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…")


_PRINTED = 1024
"""The largest value ``text_of`` prints (characters and items); shown texts are cut far shorter."""


def text_of(value: Value) -> str:
    """``str(value)``, or ``…`` for a value too large to print: a short text is all that is shown,
    and one nested many times over would print far longer than it measures."""
    return str(value) if size(value, _PRINTED) <= _PRINTED else "…"


def wrapped(value: Value) -> str:
    """The value's text, in parentheses when it is a symbolic expression with spaces."""
    text = text_of(value)
    return f"({text})" if isinstance(value, Sym) and " " in text else text
