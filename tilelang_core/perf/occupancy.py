"""Blocks per SM by CUDA's occupancy rules, from threads, registers and shared memory. Pure data, no TVM.

The rules are those of CUDA's occupancy calculator (``cuda_occupancy.h``, the arithmetic behind
``cudaOccupancyMaxActiveBlocksPerMultiprocessor``): warps are allocated whole; registers per warp
round up to 256 and are allocated within each of the SM's four sub-partitions; shared memory per
block adds 1 KiB the system reserves and rounds up to 128 bytes, against the SM's largest carveout
(the default when a kernel states no preference). The per-SM figures are the compute-capability
table of the CUDA programming guide.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilescope.core.model import Occupancy

WARP = 32
SUB_PARTITIONS = 4
REG_UNIT = 256
SMEM_UNIT = 128
SMEM_RESERVED = 1024


@dataclass(frozen=True)
class SMLimits:
    """What one SM of a compute capability holds."""

    max_threads: int
    max_blocks: int
    registers: int
    max_registers_per_thread: int
    shared: int
    """Bytes of the largest shared-memory carveout."""
    shared_per_block: int
    """Bytes one block may opt in to."""


SM = {
    "sm_80": SMLimits(2048, 32, 65536, 255, 167936, 166912),
    "sm_86": SMLimits(1536, 16, 65536, 255, 102400, 101376),
    "sm_87": SMLimits(2048, 32, 65536, 255, 167936, 166912),
    "sm_89": SMLimits(1536, 24, 65536, 255, 102400, 101376),
    "sm_90": SMLimits(2048, 32, 65536, 255, 233472, 232448),
    "sm_100": SMLimits(2048, 32, 65536, 255, 233472, 232448),
}


def limits_for(arch: str) -> SMLimits | None:
    return SM.get(arch.removesuffix("a"))


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def blocks_by_threads(sm: SMLimits, threads: int) -> int:
    warps = -(-threads // WARP)
    return (sm.max_threads // WARP) // warps if warps else sm.max_blocks


def blocks_by_registers(sm: SMLimits, threads: int, registers: int) -> int:
    if registers > sm.max_registers_per_thread:
        return 0
    if registers <= 0:
        return sm.max_blocks
    per_warp = _round_up(registers * WARP, REG_UNIT)
    warps_per_partition = (sm.registers // SUB_PARTITIONS) // per_warp
    return (warps_per_partition * SUB_PARTITIONS) // -(-threads // WARP)


def shared_per_block(shared_bytes: int) -> int:
    """Bytes one block takes from the SM: its own plus the reserved kilobyte, rounded to the allocation unit."""
    return _round_up(shared_bytes + SMEM_RESERVED, SMEM_UNIT)


def blocks_by_shared(sm: SMLimits, shared_bytes: int) -> int:
    if shared_bytes > sm.shared_per_block:
        return 0
    return sm.shared // shared_per_block(shared_bytes)


def occupancy(arch: str, threads: int, registers: int | None, shared_bytes: int) -> Occupancy | None:
    """Blocks per SM of a kernel of ``threads`` per block, ``registers`` per thread and ``shared_bytes`` per block.

    With ``registers`` unknown (no ptxas) the answer is a bound: what threads and shared memory allow,
    naming no limit, since registers alone can hold a kernel to fewer blocks."""
    sm = limits_for(arch)
    if sm is None or threads <= 0:
        return None
    limits = {
        "blocks": sm.max_blocks,
        "threads": blocks_by_threads(sm, threads),
        "shared": blocks_by_shared(sm, shared_bytes),
    }
    if registers is not None:
        limits["registers"] = blocks_by_registers(sm, threads, registers)
    blocks = min(limits.values())
    warps = blocks * -(-threads // WARP)
    known = registers is not None
    return Occupancy(
        arch,
        threads,
        registers,
        shared_bytes,
        blocks_per_sm=blocks,
        warps_per_sm=warps,
        occupancy=round(warps / (sm.max_threads // WARP), 4),
        limits=limits,
        limited_by=[k for k, v in limits.items() if v == blocks] if known else [],
        what_if=what_if(sm, threads, registers, shared_bytes, blocks) if known else [],
        upper_bound=not known,
    )


def what_if(sm: SMLimits, threads: int, registers: int | None, shared_bytes: int, blocks: int) -> list[str]:
    """For each resource, the figure that would fit one more block per SM (when that resource alone allows it)."""
    if blocks >= sm.max_blocks:
        return []
    goal = blocks + 1
    found = []
    if registers is not None and blocks_by_registers(sm, threads, registers) < goal:
        fewer = next((r for r in range(registers - 1, 0, -1) if blocks_by_registers(sm, threads, r) >= goal), None)
        if fewer is not None:
            found.append(f"registers: {goal} blocks per SM at {fewer} registers per thread or fewer ({registers} now)")
    if blocks_by_shared(sm, shared_bytes) < goal:
        room = (sm.shared // goal) // SMEM_UNIT * SMEM_UNIT - SMEM_RESERVED
        if room >= 0:
            found.append(
                f"shared: {goal} blocks per SM at {room} bytes of shared memory per block or less ({shared_bytes} now)"
            )
    if blocks_by_threads(sm, threads) < goal:
        most = (sm.max_threads // WARP) // goal * WARP
        if most >= WARP:
            found.append(f"threads: {goal} blocks per SM at {most} threads per block or fewer ({threads} now)")
    return found
