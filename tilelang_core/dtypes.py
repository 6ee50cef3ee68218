"""Bits per element of a TVM dtype name, read one way by every tier (sizes, budgets, banks)."""

from __future__ import annotations

import re

_WIDTH = re.compile(r"^[a-z]+?(\d+)")


def dtype_bits(dtype: str) -> int | None:
    """``float16`` → 16, ``float8_e4m3`` → 8, ``int4`` → 4, ``bool`` → 8; ``None`` without a width."""
    if dtype == "bool":
        return 8
    match = _WIDTH.match(dtype)
    return int(match.group(1)) if match else None


def require_bits(dtype: str) -> int:
    """``dtype_bits`` for arithmetic that cannot proceed without a width."""
    bits = dtype_bits(dtype)
    if bits is None:
        raise ValueError(f"no bit width in dtype {dtype!r}")
    return bits
