"""Kernel timing on a CUDA GPU and the roofline a time is judged against.

Times are CUDA-event medians after warm-up, with the L2 cache flushed before every run so a
memory-bound kernel cannot be timed out of cache (``tilescope.core.worker.gpu_timing``, which
``tilescope profile`` times with too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from tilescope.core.worker.gpu_timing import time_cuda, time_cuda_runs


@dataclass(frozen=True)
class Roofline:
    gpu: str
    bandwidth: float
    """Bytes per second of device memory."""
    tensor_flops: float
    """Dense fp16 tensor-core FLOP/s."""
    source: str
    """``datasheet`` or ``measured``."""


DATASHEET = {
    "H200": (4.8e12, 989e12),
    "H100 80GB HBM3": (3.35e12, 989e12),
    "H100": (3.35e12, 989e12),
    "A100": (2.039e12, 312e12),
    "L40S": (0.864e12, 362e12),
    "RTX 4090": (1.008e12, 165e12),
}


def datasheet_roofline(name: str) -> Roofline | None:
    """The datasheet peaks for a GPU known by name."""
    for key, (bw, flops) in DATASHEET.items():
        if key in name:
            return Roofline(name, bw, flops, "datasheet")
    return None


def roofline(device: int = 0) -> Roofline:
    """The datasheet peaks for a known GPU; otherwise peaks measured with torch now."""
    name = torch.cuda.get_device_name(device)
    return datasheet_roofline(name) or Roofline(name, measured_bandwidth(), measured_tensor_flops(), "measured")


def measured_bandwidth(n_bytes: int = 1 << 30) -> float:
    """Device-to-device copy bandwidth, counting bytes read and written."""
    src = torch.empty(n_bytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    t = time_cuda(lambda: dst.copy_(src), runs=10)
    return 2 * n_bytes / (t * 1e-6)


def measured_tensor_flops(n: int = 8192) -> float:
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    t = time_cuda(lambda: a @ b, runs=10)
    return 2 * n**3 / (t * 1e-6)


def torch_baseline(expr: str) -> Callable[..., object]:
    """A puzzle's torch baseline (``perf.torch`` in its ``puzzle.json``: trusted content, never a learner's)
    as a function of the puzzle's tensors in order, inputs then outputs."""
    import torch.nn.functional as F

    fn = eval(expr, {"__builtins__": {}, "torch": torch, "F": F})
    if not callable(fn):
        raise TypeError(f"a torch baseline must be a lambda over the puzzle's tensors, not {expr!r}")
    return fn


def time_torch_runs(expr: str, tensors: list[torch.Tensor], warmup: int = 3, runs: int = 20) -> list[float]:
    """Microseconds of each run of the torch baseline, timed as ``time_cuda_runs`` times a kernel, as a user
    calls it: attention with SDPA's own choice of backend, a composed expression whole (dequantising too)."""
    fn = torch_baseline(expr)
    return time_cuda_runs(lambda: fn(*tensors), warmup, runs)


def stars(score: float) -> int:
    """Stars for a correct solution: ``score`` is achieved over target (1.0 meets the target)."""
    if score >= 1.0:
        return 3
    if score >= 0.5:
        return 2
    return 1
