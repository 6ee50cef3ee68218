"""Mistake: every thread adds its elements straight into one shared total per row, with no atomics
and no reduction: a read-modify-write race on shared memory, so most additions are lost."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=1, block_N=4096, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            total = T.alloc_shared((block_M,), dtype)
            T.clear(total)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    total[i] += tile[i, j]
            T.copy(total, Y[bx * block_M])

    return main
