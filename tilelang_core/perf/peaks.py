"""Datasheet peaks of the GPUs a roofline is drawn for, and the best time they allow. Pure data, no TVM.

Dense (not sparse) figures from each vendor's datasheet: NVIDIA H100 SXM5 and H200 SXM, A100 SXM4
80 GB, HGX B200 (per GPU), AMD Instinct MI300X. Tensor peaks are per operand type; ``vector`` is
FP32 on the CUDA/stream cores, the ceiling of arithmetic outside ``T.gemm``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilescope.core.model import Bottleneck, RooflineBound


@dataclass(frozen=True)
class Peaks:
    bandwidth: float
    """Bytes per second of device memory."""
    fp16: float
    """Dense FP16/BF16 tensor FLOP/s."""
    fp8: float
    tf32: float
    vector: float
    """FP32 FLOP/s outside the tensor cores."""


PEAKS = {
    "H100": Peaks(3.35e12, 989e12, 1979e12, 494e12, 67e12),
    "H200": Peaks(4.8e12, 989e12, 1979e12, 494e12, 67e12),
    "A100": Peaks(2.039e12, 312e12, 624e12, 156e12, 19.5e12),
    "B200": Peaks(8.0e12, 2250e12, 4500e12, 1100e12, 75e12),
    "MI300X": Peaks(5.3e12, 1307.4e12, 2614.9e12, 653.7e12, 163.4e12),
}


def tensor_peak(peaks: Peaks, dtype: str) -> float:
    """The tensor-core peak for operands of ``dtype``."""
    if "float8" in dtype or dtype.startswith(("int8", "uint8", "int4")):
        return peaks.fp8
    if dtype == "float32":
        return peaks.tf32
    return peaks.fp16


def bounds(vector_flops: int, tensor_flops: int, compulsory_bytes: int, dtype: str) -> list[RooflineBound]:
    """For each GPU: the memory and compute times at peak, the larger of the two being the bound."""
    found = []
    for gpu, peaks in PEAKS.items():
        memory_us = compulsory_bytes / peaks.bandwidth * 1e6
        compute_us = (tensor_flops / tensor_peak(peaks, dtype) + vector_flops / peaks.vector) * 1e6
        bound: Bottleneck = "memory" if memory_us >= compute_us else "compute"
        found.append(
            RooflineBound(gpu, bound, round(max(memory_us, compute_us), 3), round(memory_us, 3), round(compute_us, 3))
        )
    return found


def gpu_key(name: str) -> str | None:
    """The entry of :data:`PEAKS` a device name (``NVIDIA H200``) is, if any."""
    return next((key for key in PEAKS if key in name.upper()), None)
