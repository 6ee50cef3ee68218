"""Target names Tilescope accepts and what each allows per thread block. Pure data, no TVM.

Shared-memory budgets are the opt-in maximum per block from NVIDIA's CUDA programming guide
(compute capability table); the static tier and the compiler tier check against the same figures.
"""

from __future__ import annotations

import re

TARGET_NAME = re.compile(r"sm_\d{2,3}a?|gfx\d{3,4}[a-z]?|metal|c")

_SHARED_KB = {
    "sm_70": 96,
    "sm_75": 64,
    "sm_80": 163,
    "sm_86": 99,
    "sm_87": 163,
    "sm_89": 99,
    "sm_90": 227,
    "sm_100": 227,
    "sm_120": 99,
}


def target_error(name: str) -> str | None:
    """Why ``name`` is not a target we can lower for, or ``None`` when it is."""
    if TARGET_NAME.fullmatch(name):
        return None
    return f"unknown target {name!r}: use sm_XX (CUDA, e.g. sm_90), gfxNNN (HIP, e.g. gfx942), metal or c"


def shared_memory_budget(name: str) -> int | None:
    """Bytes of shared memory one block may use on ``name``, when known."""
    kb = _SHARED_KB.get(name.removesuffix("a"))
    return kb * 1024 if kb is not None else None
