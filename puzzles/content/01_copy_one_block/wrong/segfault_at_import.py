"""Mistake (hostile): the file reads address 8 through ctypes at import, crashing the process that loads it."""

import ctypes

import tilelang.language as T


def _crash(value=ctypes.string_at(8, 1)):  # noqa: B008  (runs at import: the point of this file)
    return value


# tilescope: N=37
def kernel(N, block_N=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=block_N):
            for i in T.Parallel(block_N):
                if i < N:
                    B[i] = A[i]

    return main
