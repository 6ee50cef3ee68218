"""Target names Tilescope accepts, what each allows per thread block, and its usual part. Pure data, no TVM.

Shared-memory budgets are the opt-in maximum per block from NVIDIA's CUDA programming guide
(compute capability table); the static tier and the compiler tier check against the same figures.
"""

from __future__ import annotations

import re
from typing import Any

TARGET_NAME = re.compile(r"sm_\d{2,3}a?|gfx\d{3,4}[a-z]?|metal|c|ascend")

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


CUDA_ARCHS = frozenset(
    f"sm_{n}" for n in (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121)
)
"""Compute capabilities nvcc knows (``sm_90a`` and the like are these with an ``a`` or ``f``)."""


def target_error(name: str) -> str | None:
    """Why ``name`` is not a target we can lower for, or ``None`` when it is."""
    if TARGET_NAME.fullmatch(name) and (not name.startswith("sm_") or name.rstrip("af") in CUDA_ARCHS):
        return None
    return f"unknown target {name!r}: use sm_XX (CUDA, e.g. sm_90), gfxNNN (HIP, e.g. gfx942), ascend, metal or c"


def shared_memory_budget(name: str) -> int | None:
    """Bytes of shared memory one block may use on ``name``, when known."""
    kb = _SHARED_KB.get(name.removesuffix("a"))
    return kb * 1024 if kb is not None else None


_ARCH = re.compile(r"sm_\d{2,3}a?|gfx\d{3,4}[a-z]?")


def decorator_target(value: object, requested: str) -> str:
    """The target a ``@tilelang.jit(target=...)`` asks for, as a short name.

    ``None``, ``"auto"`` and a bare ``"cuda"`` mean "the machine's GPU", which analysis stands in
    for with ``requested``; a named architecture (``"cuda -arch=sm_80"``, ``{"arch": "sm_80"}``) or
    another backend (``"hip"``, ``"metal"``, ``"c"``, ``"ascend"``) is honoured.
    """
    if value is None:
        return requested
    if isinstance(value, dict):
        value = value.get("arch") or value.get("mcpu") or value.get("kind") or ""
    text = str(value)
    arch = _ARCH.search(text)
    if arch:
        return arch.group(0)
    kind = text.split()[0].lower() if text.strip() else "auto"
    if kind in ("hip", "rocm"):
        return requested if requested.startswith("gfx") else "gfx942"
    if kind in ("metal", "c", "ascend"):
        return kind
    if kind == "llvm":
        return "c"
    return requested


_GIB = 1 << 30
PARTS: dict[str, dict[str, Any]] = {
    "sm_90": {
        "name": "NVIDIA H100 80GB HBM3",
        "major": 9,
        "minor": 0,
        "multi_processor_count": 132,
        "total_memory": 80 * _GIB,
        "shared_memory_per_block": 49152,
        "shared_memory_per_block_optin": 232448,
        "regs_per_multiprocessor": 65536,
        "max_threads_per_multi_processor": 2048,
        "warp_size": 32,
        "L2_cache_size": 50 * (1 << 20),
    },
    "sm_80": {
        "name": "NVIDIA A100-SXM4-80GB",
        "major": 8,
        "minor": 0,
        "multi_processor_count": 108,
        "total_memory": 80 * _GIB,
        "shared_memory_per_block": 49152,
        "shared_memory_per_block_optin": 166912,
        "regs_per_multiprocessor": 65536,
        "max_threads_per_multi_processor": 2048,
        "warp_size": 32,
        "L2_cache_size": 40 * (1 << 20),
    },
    "sm_100": {
        "name": "NVIDIA B200",
        "major": 10,
        "minor": 0,
        "multi_processor_count": 148,
        "total_memory": 180 * _GIB,
        "shared_memory_per_block": 49152,
        "shared_memory_per_block_optin": 232448,
        "regs_per_multiprocessor": 65536,
        "max_threads_per_multi_processor": 2048,
        "warp_size": 32,
    },
    "gfx942": {
        "name": "AMD Instinct MI300X",
        "major": 9,
        "minor": 4,
        "multi_processor_count": 304,
        "total_memory": 192 * _GIB,
        "shared_memory_per_block": 65536,
        "shared_memory_per_block_optin": 65536,
        "warp_size": 64,
    },
}
"""The usual part of each target (H100 for sm_90, A100 for sm_80, B200 for sm_100, MI300X for gfx942) and
its properties as ``torch.cuda.get_device_properties`` gives them: what a build's device queries and the
dry run's fake device answer where no recorded GPU says otherwise."""
ASCEND = {
    "name": "Ascend 910B",
    "major": 0,
    "minor": 0,
    "multi_processor_count": 24,
    "total_memory": 64 * _GIB,
    "shared_memory_per_block": 196608,
    "shared_memory_per_block_optin": 196608,
}
"""The NPU faked for a program that uses ``torch_npu`` (its AI cores as ``multi_processor_count``)."""


def part(target: str) -> dict[str, Any] | None:
    """The properties of ``target``'s usual part (``sm_90a`` is ``sm_90``'s), or ``None`` (metal, c)."""
    family = target.rstrip("af") if target.startswith("sm_") else target
    known = PARTS.get(family)
    return dict(known) if known is not None else None


ASCEND_TARGET = "ascend"
"""TileLang 0.1.15's Ascend 950 backend (``tvm.target.Target("ascend")``)."""

ASCEND_LEVELS: dict[str, int] = {
    "UB": 248 * 1024,
    "L1": 512 * 1024,
    "L0A": 64 * 1024,
    "L0B": 64 * 1024,
    "L0C": 256 * 1024,
}
"""Bytes of each on-chip memory level of one Ascend 950 core, as TileLang's scheduler counts them
(``src/ascend/transform/auto_schedule.cc`` in the 0.1.15 wheel)."""
ASCEND_UB_WITH_SIMT = 216 * 1024
"""The Unified Buffer left when a kernel has a SimtVF region: the SIMT thread context takes the rest."""

_ASCEND_SCOPES = {
    "global": "GM",
    "shared.l1": "L1",
    "shared.l1.dyn": "L1",
    "shared.l0a": "L0A",
    "shared.l0b": "L0B",
    "shared.l0c": "L0C",
    "shared": "UB",
    "shared.dyn": "UB",
}


def is_ascend(target: str) -> bool:
    return target == ASCEND_TARGET


def ascend_level(scope: str) -> str | None:
    """The Ascend memory level of a TVM storage scope (``shared.l1`` is L1, ``shared.dyn`` the UB), or
    ``None`` for registers and scalars (``local``, ``local.var``)."""
    if scope in _ASCEND_SCOPES:
        return _ASCEND_SCOPES[scope]
    for prefix, level in (("shared.l0a", "L0A"), ("shared.l0b", "L0B"), ("shared.l1", "L1")):
        if scope.startswith(prefix):
            return level
    return None
