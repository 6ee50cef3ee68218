"""Mistake: every thread of a row stores the row's scale into one shared slot at the same time, a
write-after-write race on shared memory (here the values agree, so only a race checker sees it)."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=1, block_N=2048, eps=1e-6, dtype="float32"):
    tiles = T.ceildiv(N, block_N)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            lane = T.alloc_fragment((block_M, block_N), dtype)
            total = T.alloc_fragment((block_M,), dtype)
            rstd = T.alloc_shared((block_M,), dtype)
            T.clear(lane)
            for k in T.serial(tiles):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    lane[i, j] += tile[i, j] * tile[i, j]
            T.reduce_sum(lane, total, dim=1)
            for i, _j in T.Parallel(block_M, block_N):  # every thread, not one per row
                rstd[i] = T.rsqrt(total[i] / N + eps)
            for k in T.serial(tiles):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = tile[i, j] * rstd[i] * W[k * block_N + j]
                T.copy(tile, Y[bx * block_M, k * block_N])

    return main
