"""What the kernel must compute, in torch: softmax along each row."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    return [sample((args["M"], args["N"]), torch.float32, gen, values, device)]


def reference(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (torch.softmax(x.double(), dim=1).float(),)
