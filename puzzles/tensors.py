"""Test inputs for puzzles: seeded, on any device, with the special values that expose bugs."""

from __future__ import annotations

import torch

VALUE_KINDS = ("normal", "zeros", "negative", "large", "mixed")
"""``large`` is large for the dtype's range and the puzzle's arithmetic (exp overflows past 88)."""

_LARGE = {torch.float32: 100.0, torch.float16: 8.0, torch.bfloat16: 8.0}


def sample(shape: tuple[int, ...], dtype: torch.dtype, gen: torch.Generator, values: str, device: str) -> torch.Tensor:
    """A seeded tensor, generated on the generator's device: a CPU generator gives the same data on every
    machine; a CUDA one makes the large timed inputs in milliseconds instead of seconds."""
    if values not in VALUE_KINDS:
        raise ValueError(f"unknown value kind {values!r}; expected one of {VALUE_KINDS}")
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return torch.randint(info.min, info.max + 1, shape, generator=gen, dtype=dtype, device=gen.device).to(device)
    x = torch.randn(shape, generator=gen, dtype=torch.float32, device=gen.device)
    if values == "zeros":
        x.zero_()
    elif values == "negative":
        x = -x.abs() - 0.5
    elif values == "large":
        x = x * _LARGE.get(dtype, 100.0)
    elif values == "mixed":
        pick = torch.randint(0, 4, shape, generator=gen, device=gen.device)
        x = torch.where(pick == 0, torch.zeros_like(x), x)
        x = torch.where(pick == 1, -x.abs() * 10, x)
    return x.to(dtype).to(device)
