"""Which threads the compiler worker's zygote holds on this machine, step by step (it must hold one to fork).

Run with the worker's environment additions (no GPU visible, one-thread pools), as ``worker.main`` sets them:

    python benchmarks/gpu/zygote_threads.py
"""

from __future__ import annotations

import contextlib
import glob
import os
from pathlib import Path


def threads(step: str) -> None:
    names = []
    for task in sorted(glob.glob("/proc/self/task/*")):
        with contextlib.suppress(OSError):
            names.append(Path(task, "comm").read_text().strip())
    print(f"{step}: {len(names)} {names}", flush=True)


def main() -> None:
    os.environ.update({"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "ROCR_VISIBLE_DEVICES": ""})
    os.environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    threads("start")
    import torch  # noqa: F401

    threads("torch imported")
    import tilelang  # noqa: F401

    threads("tilelang imported")
    from tilescope.core.worker.handler import Worker

    threads("handler imported")
    Worker()
    threads("worker warmed")


def trace_first_thread() -> None:
    """Print the Python stack at the first call after which the process holds a second thread."""
    import sys
    import traceback

    def count() -> int:
        return len(os.listdir("/proc/self/task"))

    def hook(frame: object, event: str, arg: object) -> None:
        if event in ("c_return", "return") and count() > 1:
            sys.setprofile(None)
            print(f"second thread after {event} of {arg!r}", flush=True)
            traceback.print_stack(frame)  # type: ignore[arg-type]

    sys.setprofile(hook)
    import tilelang  # noqa: F401

    sys.setprofile(None)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--trace"]:
        os.environ.update({"CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"})
        trace_first_thread()
    else:
        main()
