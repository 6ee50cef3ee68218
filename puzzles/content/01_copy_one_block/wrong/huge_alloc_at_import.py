"""Mistake (hostile): the file asks for 60 GB of memory at import."""

import tilelang.language as T


def _hog(buffer=bytearray(60 << 30)):  # noqa: B008  (runs at import: the point of this file)
    return buffer


# tilescope: N=37
def kernel(N, block_N=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=block_N):
            for i in T.Parallel(block_N):
                if i < N:
                    B[i] = A[i]

    return main
