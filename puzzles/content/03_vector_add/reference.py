"""What the kernel must compute, in torch: C = A + B."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    return [sample((args["N"],), torch.float32, gen, values, device) for _ in range(2)]


def reference(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (a + b,)
