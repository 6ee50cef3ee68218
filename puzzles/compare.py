"""Judging a kernel's output against the reference, element by element.

Pure torch on whichever device holds the reference: the grader compares bytes it owns (see
``buffers``), and CI tests the logic directly on CPU tensors.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from tilescope.puzzles.measures import Comparison

HEATMAP_ROWS = 8
HEATMAP_COLS = 32


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
    exp = expected.detach().to(torch.float64)
    out = got.detach().to(exp.device, torch.float64)
    close = torch.isclose(out, exp, atol=atol, rtol=rtol, equal_nan=True)
    wrong_mask = ~close
    diff = (out - exp).abs()
    diff = torch.where(torch.isnan(exp) & torch.isnan(out), torch.zeros_like(diff), diff)
    missing = torch.isnan(out) & ~torch.isnan(exp)
    diff = torch.where(torch.isnan(diff) & ~missing, torch.full_like(diff, math.inf), diff)
    diff = torch.where(missing, torch.zeros_like(diff), diff)  # counted in ``nan``, not as an error size
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
        nan=int(missing.sum()),
    )
