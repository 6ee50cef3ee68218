"""RMS norm: per-lane sums of squares, one reduction per row, then a backward sweep (L2 hits) that scales."""

import tilelang.language as T


def kernel(M, N, block_M=1, block_N=1024, threads=256, eps=1e-6, dtype="float32"):
    tiles = T.ceildiv(N, block_N)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            lane = T.alloc_fragment((block_M, block_N), dtype)
            rstd = T.alloc_fragment((block_M,), dtype)
            T.clear(lane)
            for k in T.serial(tiles):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    lane[i, j] += tile[i, j] * tile[i, j]
            T.reduce_sum(lane, rstd, dim=1)
            for i in T.Parallel(block_M):
                rstd[i] = T.rsqrt(rstd[i] / N + eps)
            for k in T.serial(tiles):
                back = tiles - 1 - k
                T.copy(X[bx * block_M, back * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = tile[i, j] * rstd[i] * W[back * block_N + j]
                T.copy(tile, Y[bx * block_M, back * block_N])

    return main
