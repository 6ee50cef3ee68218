"""What the kernel must compute, in torch: C = relu(A @ B + bias), fp16 in and out."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    m, n, k = args["M"], args["N"], args["K"]
    a = sample((m, k), torch.float16, gen, values, device)
    b = sample((k, n), torch.float16, gen, values, device)
    bias = sample((n,), torch.float16, gen, "normal", device) * 8
    return [a, b, bias]


def reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (torch.relu(a.float() @ b.float() + bias.float()).half(),)


def flops(args: dict) -> int:
    return 2 * args["M"] * args["N"] * args["K"]
