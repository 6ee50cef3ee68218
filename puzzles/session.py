"""The grader's helper processes, started early so that their imports overlap the grader's own.

A loader (``builder``) is used for one check: forked from the warm loader (``loader_fork``) where Landlock
can confine each child, else a fresh process, replaced by a spare; the kernel process (``executor``) stays
warm between checks and is replaced after any failure; on a GPU a second kernel process compiles the
hidden shapes ahead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilescope.core.compiler.gpu import local_gpu
from tilescope.core.sandbox.spawn import NO_GPU
from tilescope.core.sandbox.supervise import Limits
from tilescope.puzzles import seal
from tilescope.puzzles.children import ADDRESS_SPACE, Child, ChildGone, Loader
from tilescope.puzzles.loader_fork import LoaderZygote

READY_S = 120.0
"""How long a fresh process may take to import TileLang before it counts as broken."""
DEFAULT_TIMEOUT_S = 60.0
"""A check's default limit on the file's own time: for loading it, then for each compile and run."""
KERNEL_UNSET = ("PYTORCH_NO_CUDA_MEMORY_CACHING",)
"""Kept out of the kernel processes whatever the caller's environment says. With torch's caching
allocator off, freeing tensors after a kernel's illegal access aborts the process (the verdict then
reads as a crash, not as the kernel's CUDA error: seen on the H200), and torch's baselines, which
allocate their outputs on every run, would be timed with ``cudaMalloc`` and ``cudaFree`` inside."""


@dataclass(frozen=True)
class CheckOptions:
    """How one check runs, the same in this process (``IsolatedGrader``) and through the service."""

    device: str | None = None
    """``cuda`` or ``cpu``; ``None``: the GPU when there is one."""
    perf: bool = True
    seed: int | None = None
    sanitize: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S


DEFAULT_OPTIONS = CheckOptions()


class Session:
    def __init__(self, *, cpu_only: bool = False, keep_spare: bool = True, precompile: bool | None = None) -> None:
        self.keep_spare = keep_spare
        maybe_gpu = not cpu_only and local_gpu() is not None  # no torch import just to ask
        self.precompile = maybe_gpu if precompile is None else precompile
        self._helper: Child | None = None
        self.env = dict(NO_GPU) if cpu_only else {}
        self._builder: Child | None = None
        self._zygote: LoaderZygote | None = None
        self.forks = seal.available()
        """Loaders are forked from a warm one (each confined by Landlock), not started."""
        self._executor: Child | None = None
        self.hello: dict[str, Any] | None = None
        self.spawn()

    def spawn(self) -> None:
        """Start whatever is missing: the warm loader (or a spare loader), a kernel process."""
        if self.forks and (self._zygote is None or not self._zygote.alive()):
            if self._zygote is not None:
                self._zygote.kill()
            self._zygote = LoaderZygote()
        if not self.forks and self._builder is None:
            limits = Limits(memory_mb=ADDRESS_SPACE >> 20)
            self._builder = Child("loader", "tilescope.puzzles.builder", limits=limits, sealed=True)
        if self._executor is None or not self._executor.alive():
            self._executor = Child("kernel", "tilescope.puzzles.executor", env=self.env, unset=KERNEL_UNSET)
            self.hello = None
        if self.precompile and (self._helper is None or not self._helper.alive()):
            self._helper = Child("compiler", "tilescope.puzzles.executor", env=self.env, unset=KERNEL_UNSET)

    def helper(self) -> Child | None:
        """A second kernel process that only compiles ahead (see ``gpu_route``); None when not wanted."""
        return self._helper if self._helper is not None and self._helper.alive() else None

    def take_builder(self) -> Loader:
        """A loader for one check (the caller kills it): forked from the warm loader once that is ready, else a
        fresh one, with a spare started in its place. Raises ChildGone when the warm loader did not start."""
        self.spawn()
        zygote = self._zygote
        if zygote is not None:
            if zygote.wait_ready(READY_S):
                return zygote.fork()
            self._zygote = None
            if zygote.alive() and zygote.ready is False:  # it cannot fork safely here: fresh loaders from now on
                zygote.kill()
                self.forks = False
                return self.take_builder()
            raise zygote.failed_start(READY_S)
        builder, self._builder = self._builder, None
        assert builder is not None
        if self.keep_spare:
            self.spawn()
        return builder

    def executor(self, ready_s: float = READY_S) -> tuple[Child, dict[str, Any]]:
        """The warm kernel process and what it said at start (its device), waiting at most ``ready_s`` for that."""
        self.spawn()
        assert self._executor is not None
        if self.hello is None:
            reply = self._executor.receive(min(ready_s, READY_S))
            if not isinstance(reply, dict) or reply.get("op") != "ready":
                self.drop_executor()
                raise ChildGone("kernel", "sent no greeting", None, None, [])
            self.hello = reply
        return self._executor, self.hello

    def drop_executor(self) -> None:
        if self._executor is not None:
            self._executor.kill()
        self._executor, self.hello = None, None

    def close(self) -> None:
        """End every helper now: none holds anything worth waiting for (the grader owns the buffers)."""
        for child in (self._builder, self._zygote, self._executor, self._helper):
            if child is not None:
                child.kill()
        self._builder = self._zygote = self._executor = self._helper = None
