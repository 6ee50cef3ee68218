"""Transpose through shared memory: a block reads a square tile row by row (coalesced), then
writes it out transposed, again row by row, from a fragment that reads the tile by columns."""

import tilelang.language as T


# tilescope: M=1000 N=1500
def kernel(M, N, block=64, threads=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=threads) as (bx, by):
            tile = T.alloc_shared((block, block), dtype)
            flipped = T.alloc_fragment((block, block), dtype)
            T.copy(A[by * block, bx * block], tile)
            for i, j in T.Parallel(block, block):
                flipped[i, j] = tile[j, i]
            T.copy(flipped, B[bx * block, by * block])

    return main
