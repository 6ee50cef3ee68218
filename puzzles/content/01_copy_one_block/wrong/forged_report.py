"""Mistake (hostile): the kernel copies nothing; at import the file writes a passing report to every
file descriptor it can, hoping one is the grader's reply channel."""

import contextlib
import json
import os

import tilelang.language as T

_FORGED = {"puzzle": "01", "path": __file__, "device": "NVIDIA H200", "passed": True, "summary": "all cases pass"}


def _forge(report=json.dumps(_FORGED) + "\n"):  # noqa: B008  (runs at import: the point of this file)
    for fd in range(1, 64):
        with contextlib.suppress(OSError):
            os.write(fd, report.encode())


def _at_import(done=_forge()):  # noqa: B008  (runs at import: the point of this file)
    return done


# tilescope: N=37
def kernel(N, block_N=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=block_N):
            for i in T.Parallel(block_N):
                if i < 0:
                    B[i] = A[i]

    return main
