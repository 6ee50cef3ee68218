"""Kernel timing on a CUDA GPU: CUDA events, the L2 flushed before every run, warm-up, medians.

One method for every figure Tilescope measures (``tilescope profile`` and the puzzles' grader), so
two tools timing the same kernel agree. Needs torch with CUDA; imported only where a GPU is used.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch

_flush_buffer: torch.Tensor | None = None


def flush_l2() -> None:
    """Overwrite a buffer larger than any L2 so the next kernel starts cold."""
    global _flush_buffer
    if _flush_buffer is None:
        _flush_buffer = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    _flush_buffer.zero_()


def time_cuda(fn: Callable[[], object], warmup: int = 3, runs: int = 20) -> float:
    """Median microseconds of ``fn`` over ``runs`` launches, each after an L2 flush."""
    return statistics.median(time_cuda_runs(fn, warmup, runs))


def time_cuda_runs(fn: Callable[[], object], warmup: int = 3, runs: int = 20) -> list[float]:
    """Microseconds of each of ``runs`` launches of ``fn``, each after an L2 flush."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        flush_l2()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return times
