"""What the kernel must compute, in torch: B = A."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    return [sample((args["N"],), torch.float32, gen, values, device)]


def reference(a: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (a.clone(),)
