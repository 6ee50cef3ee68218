"""Mistake: the column loop runs a hard-coded 8 times (4096 columns), enough for every test shape
but not for the timed one (N = 8192): half of each row is never added."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=8, block_N=512, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            partial = T.alloc_fragment((block_M,), dtype)
            total = T.alloc_fragment((block_M,), dtype)
            T.clear(total)
            for k in T.serial(8):
                T.copy(X[bx * block_M, k * block_N], tile)
                T.reduce_sum(tile, partial, dim=1)
                for i in T.Parallel(block_M):
                    total[i] += partial[i]
            T.copy(total, Y[bx * block_M])

    return main
