"""What the kernel must compute, in torch: C = A @ W.T where W[n, k] = scale[n] * (q[n, k] - 8)
and q holds two 4-bit values per byte of Bq, element 2k in the low nibble."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    m, n, k = args["M"], args["N"], args["K"]
    a = sample((m, k), torch.float16, gen, values, device)
    bq = torch.randint(0, 256, (n, k // 2), generator=gen, dtype=torch.uint8, device=gen.device).to(device)
    scale = (torch.rand((n,), generator=gen, device=gen.device) * 0.05 + 0.01).half().to(device)
    return [a, bq, scale]


def unpack(bq: torch.Tensor) -> torch.Tensor:
    """(N, K // 2) packed bytes to (N, K) signed values in -8..7."""
    low = (bq & 0xF).to(torch.int16)
    high = (bq >> 4).to(torch.int16)
    return torch.stack([low, high], dim=-1).reshape(bq.shape[0], -1) - 8


def reference(a: torch.Tensor, bq: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, ...]:
    w = unpack(bq).float() * scale.float()[:, None]
    return ((a.float() @ w.t()).half(),)


def flops(args: dict) -> int:
    return 2 * args["M"] * args["N"] * args["K"]
