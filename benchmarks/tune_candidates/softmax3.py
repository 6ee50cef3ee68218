"""Stable softmax in three sweeps; each thread keeps its own running max and sum across the tiles,
the block reduces once per sweep, and the second sweep runs backwards so it starts on tiles still in L2."""

import tilelang.language as T


def kernel(M, N, block_M=1, block_N=1024, threads=256, dtype="float32"):
    log2e = 1.4426950408889634
    tiles = T.ceildiv(N, block_N)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            lane = T.alloc_fragment((block_M, block_N), dtype)
            row_max = T.alloc_fragment((block_M,), dtype)
            row_sum = T.alloc_fragment((block_M,), dtype)
            T.fill(lane, -T.infinity(dtype))
            for k in T.serial(tiles):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    lane[i, j] = T.max(lane[i, j], T.if_then_else(k * block_N + j < N, tile[i, j], -T.infinity(dtype)))
            T.reduce_max(lane, row_max, dim=1)
            T.clear(lane)
            for k in T.serial(tiles):
                back = tiles - 1 - k
                T.copy(X[bx * block_M, back * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    lane[i, j] += T.if_then_else(back * block_N + j < N, T.exp2((tile[i, j] - row_max[i]) * log2e), 0)
            T.reduce_sum(lane, row_sum, dim=1)
            for i in T.Parallel(block_M):
                row_sum[i] = 1 / row_sum[i]
            for k in T.serial(tiles):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.exp2((tile[i, j] - row_max[i]) * log2e) * row_sum[i]
                T.copy(tile, Y[bx * block_M, k * block_N])

    return main
