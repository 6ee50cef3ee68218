"""What the kernel must compute, in torch: C = A @ B, fp16 in and out, accumulated in fp32."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    m, n, k = args["M"], args["N"], args["K"]
    return [sample((m, k), torch.float16, gen, values, device), sample((k, n), torch.float16, gen, values, device)]


def reference(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return ((a.float() @ b.float()).half(),)


def flops(args: dict) -> int:
    return 2 * args["M"] * args["N"] * args["K"]
