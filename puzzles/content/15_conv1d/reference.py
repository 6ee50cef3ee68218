"""What the kernel must compute, in torch: a valid 1-D correlation of each row of x with w."""

import torch
import torch.nn.functional as F

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    x = sample((args["batch"], args["L"]), torch.float32, gen, values, device)
    w = sample((args["K"],), torch.float32, gen, "normal", device)
    return [x, w]


def reference(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (F.conv1d(x.double()[:, None, :], w.double()[None, None, :])[:, 0, :].float(),)
