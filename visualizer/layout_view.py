"""What a layout drawing shows, computed once and shared by the image and terminal renderers.

Everything here comes from the model's layout expressions through :mod:`tilescope.core.layout_eval`
and :mod:`tilescope.core.bank_conflicts`; the renderers only decide how it looks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tilescope.core.bank_conflicts import AccessReport, analyze, tile_offsets
from tilescope.core.dtypes import require_bits
from tilescope.core.layout_eval import FragmentMap, fragment_map, shared_map
from tilescope.core.model import Buffer, Layout

WRAP = 16
"""1-D buffers longer than this are drawn wrapped into rows of this many elements."""


def wraps(shape: list[int] | tuple[int, ...]) -> bool:
    return len(shape) == 1 and shape[0] > WRAP and shape[0] % WRAP == 0


def as_grid(values: np.ndarray) -> np.ndarray:
    """A 2-D view of a tile: 1-D wraps into rows of ``WRAP``, leading dimensions stack as rows."""
    if values.ndim == 1:
        return values.reshape(-1, WRAP) if wraps(values.shape) else values.reshape(1, values.size)
    return values.reshape(-1, values.shape[-1])


def _shape_text(shape: list[int] | tuple[int, ...]) -> str:
    return "×".join(str(x) for x in shape)


@dataclass(frozen=True)
class FragmentView:
    """A fragment as a grid: the owning thread and register of every cell."""

    layout: Layout
    dtype: str
    fmap: FragmentMap
    threads: np.ndarray
    """(rows, cols): the thread of replica 0 of each cell."""
    registers: np.ndarray
    """(rows, cols): the register index of each cell in its thread."""

    @property
    def title(self) -> str:
        f = self.fmap
        rep = f", each element on {f.replicate} threads" if f.replicate > 1 else ""
        return (
            f"{self.layout.buffer}: {_shape_text(f.shape)} {self.dtype} fragment → "
            f"{f.thread_extent} threads × {f.elements_per_thread} registers{rep}"
        )

    @property
    def subtitle(self) -> str:
        wrapped = f"   ·   drawn {WRAP} per row: element = {WRAP}·row + column" if wraps(self.fmap.shape) else ""
        return f"thread = {self.layout.thread}{wrapped}"

    @property
    def warps(self) -> int:
        return -(-self.fmap.thread_extent // 32)

    def labels(self, rows: int, cols: int) -> list[list[tuple[str, str]]]:
        """``("T<thread>", "r<register>")`` for the top-left ``rows × cols`` cells.

        A replicated cell shows its lowest thread and how many others hold a copy (``T0+63``).
        """
        replicas = np.sort(np.stack([as_grid(t) for t in self.fmap.thread])[:, :rows, :cols], axis=0)
        others = (np.diff(replicas, axis=0) != 0).sum(axis=0)
        return [
            [
                (f"T{replicas[0, r, c]}" + (f"+{others[r, c]}" if others[r, c] else ""), f"r{self.registers[r, c]}")
                for c in range(replicas.shape[2])
            ]
            for r in range(replicas.shape[1])
        ]


@dataclass(frozen=True)
class SharedView:
    """A shared buffer: where each logical element lands, and how the key accesses conflict."""

    layout: Layout
    dtype: str
    offsets: np.ndarray
    """(rows, cols): physical element offset of each logical element (first pipeline stage)."""
    reports: list[AccessReport]

    @property
    def bits(self) -> int:
        return require_bits(self.dtype)

    @property
    def slots(self) -> np.ndarray:
        """Which 16-byte slot (four banks) of its 128-byte line each element lands in: the swizzle."""
        return (self.offsets * self.bits // 8) % 128 // 16

    @property
    def vector(self) -> int:
        """Elements per 16-byte vector."""
        return max(1, 128 // self.bits)

    @property
    def title(self) -> str:
        stages = self.layout.input_shape[:-2]
        staged = f" ({_shape_text(stages)} stages, first shown)" if stages else ""
        swizzle = f" ({self.layout.swizzle})" if self.layout.swizzle else ""
        return (
            f"{self.layout.buffer}: {_shape_text(self.layout.input_shape[-2:])} {self.dtype} shared{staged} → "
            f"physical {_shape_text(self.layout.output_shape)}{swizzle}"
        )


def build(layout: Layout, buffer: Buffer | None) -> FragmentView | SharedView:
    """Evaluate ``layout`` for drawing; ``buffer`` supplies the dtype (float32 when unknown)."""
    dtype = buffer.dtype if buffer else "float32"
    if layout.kind == "fragment":
        fmap = fragment_map(layout)
        return FragmentView(layout, dtype, fmap, as_grid(fmap.thread[0]), as_grid(fmap.local))
    smap = shared_map(layout)
    return SharedView(layout, dtype, tile_offsets(smap), analyze(smap, dtype))
