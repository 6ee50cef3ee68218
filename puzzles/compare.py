"""Judging a kernel's output against the reference, and catching writes outside the output.

Pure torch, no GPU needed: the same logic grades GPU results (copied back) and CPU results, and
CI tests it directly on CPU tensors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

GUARD_BYTES = 4096
"""Bytes of sentinel on each side of every output; a multiple of 256 keeps the output aligned."""

HEATMAP_ROWS = 8
HEATMAP_COLS = 32


@dataclass(frozen=True)
class Comparison:
    shape: list[int]
    total: int
    wrong: int
    atol: float
    rtol: float
    first_wrong: list[int] | None
    """The first wrong element's index, in row-major order."""
    expected: float | None
    got: float | None
    max_abs_error: float
    max_rel_error: float
    """Against |expected|, floored at ``atol`` so that near-zero expected values do not explode it."""
    heatmap: list[list[float]]
    """The fraction of wrong elements per cell of a coarse grid over the output (rows x columns)."""

    @property
    def ok(self) -> bool:
        return self.wrong == 0


def default_tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(atol, rtol) for outputs of this dtype, loose enough for reordered fp32 sums."""
    if dtype in (torch.float16, torch.bfloat16):
        return (2e-2, 1e-2) if dtype == torch.float16 else (5e-2, 2e-2)
    if dtype == torch.float32:
        return 1e-4, 1e-4
    if dtype == torch.float64:
        return 1e-8, 1e-8
    return 0.0, 0.0


def _as_grid(t: torch.Tensor) -> torch.Tensor:
    if t.dim() == 0:
        return t.reshape(1, 1)
    if t.dim() == 1:
        return t.reshape(1, -1)
    return t.reshape(-1, t.shape[-1])


def _heatmap(wrong: torch.Tensor) -> list[list[float]]:
    grid = _as_grid(wrong).float()
    rows, cols = min(grid.shape[0], HEATMAP_ROWS), min(grid.shape[1], HEATMAP_COLS)
    if grid.numel() == 0:
        return []
    pooled = F.adaptive_avg_pool2d(grid[None, None], (rows, cols))[0, 0]
    return [[round(float(v), 4) for v in row] for row in pooled]


def compare(expected: torch.Tensor, got: torch.Tensor, atol: float, rtol: float) -> Comparison:
    """Element-wise closeness as ``torch.isclose`` defines it, with NaN where a number was due counted wrong."""
    if tuple(expected.shape) != tuple(got.shape):
        raise ValueError(f"shapes differ: expected {tuple(expected.shape)}, got {tuple(got.shape)}")
    exp = expected.detach().to("cpu", torch.float64)
    out = got.detach().to("cpu", torch.float64)
    close = torch.isclose(out, exp, atol=atol, rtol=rtol, equal_nan=True)
    wrong_mask = ~close
    diff = (out - exp).abs()
    diff = torch.where(torch.isnan(exp) & torch.isnan(out), torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
    both_inf = torch.isinf(exp) & (exp == out)
    diff = torch.where(both_inf, torch.zeros_like(diff), diff)
    rel = diff / exp.abs().clamp_min(max(atol, 1e-12))
    rel = torch.where(diff == 0, torch.zeros_like(rel), rel)
    count = int(wrong_mask.sum())
    first = None
    expected_value = got_value = None
    if count:
        flat = int(torch.nonzero(wrong_mask.reshape(-1))[0])
        first = [int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(exp.shape))] if exp.dim() else []
        expected_value = float(exp.reshape(-1)[flat])
        got_value = float(out.reshape(-1)[flat])
    return Comparison(
        shape=list(exp.shape),
        total=exp.numel(),
        wrong=count,
        atol=atol,
        rtol=rtol,
        first_wrong=first,
        expected=expected_value,
        got=got_value,
        max_abs_error=float(diff.max()) if diff.numel() else 0.0,
        max_rel_error=float(rel.max()) if rel.numel() else 0.0,
        heatmap=_heatmap(wrong_mask) if count else [],
    )


@dataclass(frozen=True)
class GuardReport:
    """Elements written in the sentinel regions before and after one output."""

    before: int
    after: int
    first_after: int | None
    """How far past the end (in elements) the first stray write after the output landed."""
    first_before: int | None
    """How far before the start (in elements, counting back from 1) the nearest stray write landed."""

    @property
    def ok(self) -> bool:
        return self.before == 0 and self.after == 0


_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_NAN_PAYLOAD = {
    torch.float16: 0x7DA5,
    torch.bfloat16: 0x7FA5,
    torch.float32: 0x7FA5A5A5,
    torch.float64: 0x7FF4A5A5A5A5A5A5,
}


def _poison(dtype: torch.dtype) -> int:
    if dtype in _NAN_PAYLOAD:
        return _NAN_PAYLOAD[dtype]
    info = torch.iinfo(dtype)
    bits = torch.tensor([info.max], dtype=dtype).view(_BITS[torch.empty((), dtype=dtype).element_size()])
    return int(bits[0])


class GuardedOutput:
    """An output tensor that lives inside a larger allocation whose edges hold a seeded pattern.

    The kernel receives ``view``, a contiguous tensor of exactly the expected shape; anything it
    writes past either end changes the pattern and is reported, even when the values look right.
    Its own elements start as a NaN with a payload no arithmetic produces (the integer maximum for
    integer outputs), so an element never written stands out from one computed wrong.
    """

    def __init__(self, shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int = 0) -> None:
        itemsize = torch.empty((), dtype=dtype).element_size()
        self.nbytes = math.prod(shape) * itemsize
        self.itemsize = itemsize
        gen = torch.Generator().manual_seed(seed)
        self.pattern = torch.randint(0, 256, (2 * GUARD_BYTES,), generator=gen, dtype=torch.uint8)
        self.storage = torch.empty(2 * GUARD_BYTES + self.nbytes, dtype=torch.uint8, device=device)
        self.storage[:GUARD_BYTES] = self.pattern[:GUARD_BYTES].to(device)
        self.storage[GUARD_BYTES + self.nbytes :] = self.pattern[GUARD_BYTES:].to(device)
        self.view = self.storage[GUARD_BYTES : GUARD_BYTES + self.nbytes].view(dtype).view(shape)
        self._bits = _BITS.get(itemsize, torch.uint8)
        self.poison = _poison(dtype)
        self.view.view(self._bits).fill_(self.poison)

    def unwritten(self) -> torch.Tensor:
        """Elements that still hold the poison bit pattern: the kernel never stored to them."""
        return (self.view.view(self._bits) == self.poison).to("cpu")

    def check(self) -> GuardReport:
        raw = self.storage.to("cpu")
        head = torch.nonzero(raw[:GUARD_BYTES] != self.pattern[:GUARD_BYTES]).reshape(-1)
        tail = torch.nonzero(raw[GUARD_BYTES + self.nbytes :] != self.pattern[GUARD_BYTES:]).reshape(-1)
        before = {int(b) // self.itemsize for b in head}
        after = {int(b) // self.itemsize for b in tail}
        lead = GUARD_BYTES // self.itemsize
        return GuardReport(
            before=len(before),
            after=len(after),
            first_after=min(after) if after else None,
            first_before=lead - max(before) if before else None,
        )
