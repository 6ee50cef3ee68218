"""What the kernel must compute, in torch: y = A @ x, fp16 inputs, fp32 result."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    a = sample((args["M"], args["K"]), torch.float16, gen, values, device)
    x = sample((args["K"],), torch.float16, gen, "normal", device)
    return [a, x]


def reference(a: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return ((a.double() @ x.double()).float(),)


def flops(args: dict) -> int:
    return 2 * args["M"] * args["K"]
