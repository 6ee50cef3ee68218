"""The naive transpose this puzzle's target is measured against: every thread reads A[i, j] and
writes B[j, i] directly, with no shared memory, so one of the two sides is always strided."""

import tilelang.language as T


# tilescope: M=1000 N=1500
def kernel(M, N, block=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=256) as (bx, by):
            for i, j in T.Parallel(block, block):
                if by * block + i < M and bx * block + j < N:
                    B[bx * block + j, by * block + i] = A[by * block + i, bx * block + j]

    return main
