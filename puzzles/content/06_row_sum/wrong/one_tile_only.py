"""Mistake: the reduction covers the first block_N columns only; the loop over tiles is missing."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=8, block_N=512, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            total = T.alloc_fragment((block_M,), dtype)
            T.copy(X[bx * block_M, 0], tile)
            T.reduce_sum(tile, total, dim=1)
            T.copy(total, Y[bx * block_M])

    return main
