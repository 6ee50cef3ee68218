"""A tile interpreter: TileLang kernels run on the CPU, every access checked.

``compile_kernel(prim_func, path)`` gives a callable ``Kernel``; calling it with CPU tensors runs
the launch's grid in place and returns a ``CpuRun`` with the out-of-bounds, uninitialised and
input-write findings. Imports TileLang: use it only inside the worker or a grading child.
"""

from tilescope.core.interpret.kernel import CpuRun, Kernel, compile_kernel
from tilescope.core.interpret.memory import NotInterpretable
from tilescope.core.interpret.report import Finding

__all__ = ["CpuRun", "Finding", "Kernel", "NotInterpretable", "compile_kernel"]
