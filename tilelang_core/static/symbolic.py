"""The values the static tier computes with, and the bounds that keep computing them cheap.

A value is a number, a string, a tuple, ``Sym`` (known only by its source text) or ``Shaped`` (a
tensor the file makes, known by its shape). Every module that folds or reads values shares these
types, the dtype names TileLang accepts, and the limits: a number beyond ``2**40`` (no tile or
tensor extent comes near) is too large to be a size, and a symbolic text is shortened for display.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any, TypeGuard

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


def short_sym(text: str) -> Sym:
    """``Sym`` of a text built from values, shortened as source text is."""
    return Sym(text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…")


def wrapped(value: Value) -> str:
    """The value's text, in parentheses when it is a symbolic expression with spaces."""
    text = str(value)
    return f"({text})" if isinstance(value, Sym) and " " in text else text
