"""A tile interpreter: TileLang kernels run on the CPU, every access checked.

``compile_kernel(prim_func, path)`` gives a callable ``Kernel``; calling it with CPU tensors runs
the launch's grid in place and returns a ``CpuRun`` with the out-of-bounds, uninitialised and
input-write findings. It imports TileLang, so the names load on first use and only inside the
worker or a grading child; ``tilescope.core.interpret`` itself imports nothing heavy.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CpuRun", "Kernel", "NotInterpretable", "compile_kernel"]


def __getattr__(name: str) -> Any:
    if name in ("CpuRun", "Kernel", "compile_kernel"):
        from tilescope.core.interpret import kernel

        return getattr(kernel, name)
    if name == "NotInterpretable":
        from tilescope.core.interpret.memory import NotInterpretable

        return NotInterpretable
    raise AttributeError(name)
