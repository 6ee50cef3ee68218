"""Mistake: the sum of squares is never divided by N, so it is not a mean."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=8, block_N=512, eps=1e-6, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            tile_sum = T.alloc_fragment((block_M,), dtype)
            sum_sq = T.alloc_fragment((block_M,), dtype)
            T.clear(sum_sq)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = tile[i, j] * tile[i, j]
                T.reduce_sum(tile, tile_sum, dim=1)
                for i in T.Parallel(block_M):
                    sum_sq[i] += tile_sum[i]
            for i in T.Parallel(block_M):
                sum_sq[i] = T.rsqrt(sum_sq[i] + eps)
            for k in T.serial(T.ceildiv(N, block_N)):
                for i, j in T.Parallel(block_M, block_N):
                    Y[bx * block_M + i, k * block_N + j] = (
                        X[bx * block_M + i, k * block_N + j] * sum_sq[i] * W[k * block_N + j]
                    )

    return main
