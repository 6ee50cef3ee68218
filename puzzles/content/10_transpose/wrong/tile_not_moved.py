"""Mistake: each tile is transposed, but written back to its own position instead of the
mirrored one."""

import tilelang.language as T


# tilescope: M=1000 N=1500
def kernel(M, N, block=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=256) as (bx, by):
            tile = T.alloc_shared((block, block), dtype)
            flipped = T.alloc_fragment((block, block), dtype)
            T.copy(A[by * block, bx * block], tile)
            for i, j in T.Parallel(block, block):
                flipped[i, j] = tile[j, i]
            T.copy(flipped, B[by * block, bx * block])

    return main
