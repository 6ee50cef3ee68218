"""Shared-memory bank conflicts of the accesses that matter, from a layout's physical offsets.

Shared memory has 32 banks, each 4 bytes wide. A warp's request is served in phases (all 32
threads for accesses up to 4 bytes, 16 threads for 8-byte, 8 threads for 16-byte vectors), and a
phase takes as many wavefronts as the busiest bank has *distinct* 4-byte words to deliver (threads
reading the same word share it). The conflict degree of a phase is that count: 1 is conflict-free,
8 means eight serialised wavefronts. ``ldmatrix`` is one phase per 8×8 matrix: eight row addresses
of 16 bytes each. This module measures those patterns over a layout evaluated by
:mod:`tilescope.core.layout_eval`; it knows nothing of TVM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tilescope.core.dtypes import require_bits
from tilescope.core.layout_eval import SharedMap

BANKS = 32
BANK_BYTES = 4
PHASE_BYTES = BANKS * BANK_BYTES


def phase_degrees(words: np.ndarray) -> np.ndarray:
    """Conflict degree of each phase: ``words[p]`` lists the 4-byte word addresses phase ``p`` touches.

    Duplicate words in a phase are one broadcast, so they count once.
    """
    words = np.sort(np.asarray(words, dtype=np.int64).reshape(len(words), -1), axis=1)
    fresh = np.ones(words.shape, dtype=bool)
    fresh[:, 1:] = words[:, 1:] != words[:, :-1]
    phase = np.broadcast_to(np.arange(len(words))[:, None], words.shape)
    slots = phase[fresh] * BANKS + words[fresh] % BANKS
    per_bank = np.bincount(slots, minlength=len(words) * BANKS).reshape(len(words), BANKS)
    return per_bank.max(axis=1)


@dataclass(frozen=True)
class AccessReport:
    """One access pattern over a whole tile.

    ``degree[r, c]`` is the conflict degree of the phase that reads element ``(r, c)``;
    ``wavefronts / ideal`` is how much slower the whole tile reads than conflict-free.
    """

    pattern: str
    description: str
    degree: np.ndarray
    wavefronts: int
    ideal: int

    @property
    def max_degree(self) -> int:
        return int(self.degree.max())

    @property
    def slowdown(self) -> float:
        return self.wavefronts / self.ideal


def _words(offset: np.ndarray, bits: int) -> np.ndarray:
    """Word addresses of each element (elements narrower than a word share it)."""
    return offset * bits // (BANK_BYTES * 8)


def _phased(
    order: np.ndarray, offset: np.ndarray, bits: int, per_phase: int, pattern: str, description: str
) -> AccessReport:
    """Split ``order`` (flat cell indices in issue order) into phases of ``per_phase`` elements.

    A short last phase is padded with its own last element, which adds no word and so no conflict.
    """
    cells = np.pad(order, (0, -order.size % per_phase), mode="edge").reshape(-1, per_phase)
    flat = offset.reshape(-1)
    degrees = phase_degrees(_words(flat[cells], bits))
    degree = np.zeros(offset.size, dtype=np.int64)
    degree[cells] = degrees[:, None]
    return AccessReport(pattern, description, degree.reshape(offset.shape), int(degrees.sum()), len(cells))


def row_vectors(offset: np.ndarray, bits: int, vector_bytes: int = 16) -> AccessReport:
    """A warp reading ``vector_bytes`` per thread along rows, consecutive threads on consecutive vectors.

    This is how a coalesced ``T.copy`` between global and shared memory walks a tile.
    """
    vector = vector_bytes * 8 // bits
    threads_per_phase = PHASE_BYTES // vector_bytes
    if offset.shape[-1] % vector:
        raise ValueError(f"rows of {offset.shape[-1]} elements do not split into {vector_bytes}-byte vectors")
    order = np.arange(offset.size)
    return _phased(
        order,
        offset,
        bits,
        threads_per_phase * vector,
        f"row-{vector_bytes}B",
        f"each thread reads {vector_bytes} bytes along a row; {threads_per_phase} threads per phase",
    )


def ldmatrix_tiles(offset: np.ndarray, bits: int) -> AccessReport:
    """``ldmatrix``: each 8-row × 16-byte tile is one phase of eight 16-byte row reads."""
    rows, cols = offset.shape
    width = 128 // bits
    if rows % 8 or cols % width:
        raise ValueError(f"a {rows}×{cols} tile does not split into 8×{width} ldmatrix tiles")
    grid = np.arange(offset.size).reshape(rows // 8, 8, cols // width, width)
    order = grid.transpose(0, 2, 1, 3).reshape(-1)
    return _phased(order, offset, bits, 8 * width, "ldmatrix", f"ldmatrix 8×8 (8 rows × {width} elements) per phase")


def column_reads(offset: np.ndarray, bits: int) -> AccessReport:
    """A warp reading one element per thread down a column (a transposed access)."""
    per_phase = min(BANKS, PHASE_BYTES * 8 // max(bits, BANK_BYTES * 8))
    order = np.arange(offset.size).reshape(offset.shape).T.reshape(-1)
    return _phased(order, offset, bits, per_phase, "column", "each thread reads one element down a column")


def tile_offsets(smap: SharedMap) -> np.ndarray:
    """The physical offsets of the last two logical dimensions, first index of any leading (stage) dims."""
    offset = smap.offset
    while offset.ndim > 2:
        offset = offset[0]
    return offset.reshape(1, -1) if offset.ndim == 1 else offset


def analyze(smap: SharedMap, dtype: str) -> list[AccessReport]:
    """Every access pattern that fits the tile, in a fixed order."""
    offset = tile_offsets(smap)
    bits = require_bits(dtype)
    reports = []
    for measure in (row_vectors, ldmatrix_tiles, column_reads):
        try:
            reports.append(measure(offset, bits))
        except ValueError:
            continue
    return reports
