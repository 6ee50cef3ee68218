"""What the kernel must compute, in torch: softmax(Q K^T / sqrt(dim)) V per batch and head,
with tensors laid out (batch, seq_len, heads, dim)."""

import torch

from tilescope.puzzles.tensors import sample


def inputs(args: dict, gen: torch.Generator, values: str, device: str) -> list[torch.Tensor]:
    shape = (args["batch"], args["seq_len"], args["heads"], args["dim"])
    return [sample(shape, torch.float16, gen, values, device) for _ in range(3)]


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
    qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
    scores = qf @ kf.transpose(-1, -2) / qf.shape[-1] ** 0.5
    out = torch.softmax(scores, dim=-1) @ vf
    return (out.transpose(1, 2).contiguous().half(),)


def flops(args: dict) -> int:
    return 4 * args["batch"] * args["heads"] * args["seq_len"] ** 2 * args["dim"]
