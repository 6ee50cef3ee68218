"""What the kernel must compute, in torch: y = silu(x) and dx, the gradient of sum(y * dy)."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    n = args["N"]
    return [sample((n,), torch.float32, gen, values, device), sample((n,), torch.float32, gen, "normal", device)]


def reference(x: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, ...]:
    xd = x.double()
    s = torch.sigmoid(xd)
    return (xd * s).float(), (dy.double() * s * (1 + xd * (1 - s))).float()
