"""What the kernel must compute, in torch: x / sqrt(mean(x^2) + eps) * w along each row."""

import torch

from tilescope.puzzles.tensors import sample

EPS = 1e-6


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    x = sample((args["M"], args["N"]), torch.float32, gen, values, device)
    w = sample((args["N"],), torch.float32, gen, "normal", device)
    return [x, w]


def reference(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    xd = x.double()
    return ((xd * torch.rsqrt(xd.pow(2).mean(dim=1, keepdim=True) + EPS) * w.double()).float(),)
