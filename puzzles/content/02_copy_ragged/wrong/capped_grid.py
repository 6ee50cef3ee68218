"""Mistake: the grid is capped at 1024 blocks, so vectors longer than 2M elements are only partly
copied; every test shape is shorter, only the timed shape is not."""

import tilelang.language as T


# tilescope: N=1000003
def kernel(N, block_N=2048, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.min(T.ceildiv(N, block_N), 1024), threads=256) as bx:
            for i in T.Parallel(block_N):
                if bx * block_N + i < N:
                    B[bx * block_N + i] = A[bx * block_N + i]

    return main
