"""Which GPU this machine has, if any: the one answer every host-side caller asks (``profile``,
``record``, the puzzle grader, the MCP server).

Asked of the driver's device node and ``nvidia-smi``, never by creating a CUDA context in this
process, which would hold device memory for the life of a language server or a class server. A
machine with the node but no ``nvidia-smi`` (some containers) has a GPU whose part is unknown.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass

DEVICE_NODE = "/dev/nvidiactl"
"""Present wherever the NVIDIA driver is loaded and the GPU passed through, whatever the user."""


@dataclass(frozen=True)
class Gpu:
    """The first NVIDIA GPU of this machine."""

    name: str
    """As ``nvidia-smi`` names it (``NVIDIA H200``), else ``NVIDIA GPU``."""
    arch: str | None
    """``sm_XX`` from its compute capability; ``None`` where ``nvidia-smi`` did not say."""


@functools.cache
def local_gpu() -> Gpu | None:
    """This machine's first NVIDIA GPU, or ``None``; asked once per process."""
    if not os.path.exists(DEVICE_NODE):
        return None
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return Gpu("NVIDIA GPU", None)
    try:
        done = subprocess.run(
            [smi, "--query-gpu=name,compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return Gpu("NVIDIA GPU", None)
    first = done.stdout.strip().splitlines()[:1]
    if done.returncode != 0 or not first or "," not in first[0]:
        return Gpu("NVIDIA GPU", None)
    name, cap = (part.strip() for part in first[0].rsplit(",", 1))
    return Gpu(name, "sm_" + cap.replace(".", ""))
