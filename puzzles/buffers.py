"""Tensors the grader owns and lends to the process that runs the kernel.

Each tensor lives in a file (in ``/dev/shm`` where there is one) laid out as
``[guard | body | guard]``. The grader writes the inputs, poisons the outputs and fills both guards
with a seeded pattern; the kernel's process maps the file, runs on the body and writes everything
back. The grader then reads the file itself: values, never-written elements, stray writes and changed
inputs are all found in bytes it owns, so nothing the other process says can pass a check.

Guards are as large as the body (at least 64 KiB, at most 16 MiB a side), so a kernel that writes up
to a whole output's length past either end is counted exactly, element by element. The guard
pattern is one seeded 4 KiB block repeated, and a buffer is judged on the grader's GPU when it has
one (``load``), so that a 256 MB timed output costs milliseconds, not seconds.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from typing import Any

import torch
from tilescope.puzzles.measures import GuardReport

GUARD_MIN = 64 << 10
GUARD_MAX = 16 << 20
ALIGN = 4096
"""Guards are whole pattern blocks, which also keeps the body as aligned as a fresh allocation."""

_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_NAN_PAYLOAD = {
    torch.float16: 0x7DA5,
    torch.bfloat16: 0x7FA5,
    torch.float32: 0x7FA5A5A5,
    torch.float64: 0x7FF4A5A5A5A5A5A5,
}


def guard_bytes(nbytes: int) -> int:
    size = min(max(nbytes, GUARD_MIN), GUARD_MAX)
    return -(-size // ALIGN) * ALIGN


def dtype_of(name: str) -> torch.dtype:
    value = getattr(torch, name, None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return value


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class BufferSpec:
    """What the kernel's process needs to map one tensor; sent to it as JSON."""

    name: str
    path: str
    shape: list[int]
    dtype: str
    guard: int
    nbytes: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def poison_bits(dtype: torch.dtype) -> int:
    """A NaN with a payload no arithmetic produces; the integer maximum for integer dtypes."""
    if dtype in _NAN_PAYLOAD:
        return _NAN_PAYLOAD[dtype]
    info = torch.iinfo(dtype)
    bits = torch.tensor([info.max], dtype=dtype).view(_BITS[torch.empty((), dtype=dtype).element_size()])
    return int(bits[0])


def _map(path: str, size: int) -> torch.Tensor:
    return torch.from_file(path, shared=True, size=size, dtype=torch.uint8)


class Workspace:
    """A private folder for one check's buffers, removed when the check ends."""

    def __init__(self) -> None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        self.path = tempfile.mkdtemp(prefix="tilescope-grade-", dir=base)
        self._count = 0

    def buffer(
        self, name: str, shape: tuple[int, ...], dtype: torch.dtype, seed: int, *, guarded: bool = True
    ) -> SharedBuffer:
        self._count += 1
        return SharedBuffer(os.path.join(self.path, f"{self._count}-{name}"), name, shape, dtype, seed, guarded)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


class SharedBuffer:
    """The grader's side of one lent tensor."""

    def __init__(
        self, path: str, name: str, shape: tuple[int, ...], dtype: torch.dtype, seed: int, guarded: bool = True
    ) -> None:
        self.name, self.shape, self.dtype = name, tuple(shape), dtype
        self.itemsize = torch.empty((), dtype=dtype).element_size()
        self.nbytes = math.prod(shape) * self.itemsize
        self.guard = guard_bytes(self.nbytes) if guarded else 0
        total = 2 * self.guard + self.nbytes
        with open(path, "wb") as f:
            f.truncate(total)
        self.path = path
        self.raw = _map(path, total)
        gen = torch.Generator().manual_seed(seed)
        self.block = torch.randint(0, 256, (ALIGN,), generator=gen, dtype=torch.uint8)
        self.restore_guards()
        self._bits = _BITS.get(self.itemsize, torch.uint8)
        self.poison = poison_bits(dtype)
        self._seen = self.raw

    @property
    def spec(self) -> BufferSpec:
        return BufferSpec(self.name, self.path, list(self.shape), dtype_name(self.dtype), self.guard, self.nbytes)

    def _body(self, raw: torch.Tensor) -> torch.Tensor:
        return raw[self.guard : self.guard + self.nbytes].view(self.dtype).view(self.shape)

    @property
    def body(self) -> torch.Tensor:
        """The tensor as last ``load``-ed (before that, the file itself)."""
        return self._body(self._seen)

    def load(self, device: str) -> None:
        """Read what the kernel left in the file, onto ``device`` for judging."""
        self._seen = self.raw if device == "cpu" else self.raw.to(device)

    def fill(self, value: torch.Tensor) -> None:
        self._body(self.raw).copy_(value.detach())

    def poison_body(self) -> None:
        self._body(self.raw).view(self._bits).fill_(self.poison)

    def restore_guards(self) -> None:
        if self.guard:
            self.raw[: self.guard].view(-1, ALIGN)[:] = self.block
            self.raw[self.guard + self.nbytes :].view(-1, ALIGN)[:] = self.block

    def unwritten(self) -> torch.Tensor:
        """Elements that still hold the poison bit pattern: the kernel never stored to them."""
        return self.body.view(self._bits) == self.poison

    def check(self) -> GuardReport:
        band = self.guard // self.itemsize
        if not band:
            return GuardReport(0, 0, None, None, 0)
        seen = self._seen
        block = self.block.to(seen.device)
        head = seen[: self.guard].view(-1, ALIGN) != block
        tail = seen[self.guard + self.nbytes :].view(-1, ALIGN) != block
        before = torch.nonzero(head.reshape(band, self.itemsize).any(dim=1)).reshape(-1)
        after = torch.nonzero(tail.reshape(band, self.itemsize).any(dim=1)).reshape(-1)
        return GuardReport(
            before=int(before.numel()),
            after=int(after.numel()),
            first_after=int(after[0]) if after.numel() else None,
            first_before=band - int(before[-1]) if before.numel() else None,
            band=band,
        )


def open_lent(spec: dict[str, Any], device: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """In the kernel's process: (the file's bytes, their copy on ``device``, the body on ``device``)."""
    guard, nbytes = int(spec["guard"]), int(spec["nbytes"])
    host = _map(str(spec["path"]), 2 * guard + nbytes)
    whole = host if device == "cpu" else host.to(device)
    body = whole[guard : guard + nbytes].view(dtype_of(str(spec["dtype"]))).view(tuple(spec["shape"]))
    return host, whole, body
