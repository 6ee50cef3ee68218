"""Numerically stable row softmax in three sweeps over each row: maximum, sum of exponentials,
then the normalised output. Subtracting the maximum keeps exp() finite for large inputs."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=8, block_N=512, dtype="float32"):
    log2e = 1.4426950408889634

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            tile_max = T.alloc_fragment((block_M,), dtype)
            row_max = T.alloc_fragment((block_M,), dtype)
            tile_sum = T.alloc_fragment((block_M,), dtype)
            row_sum = T.alloc_fragment((block_M,), dtype)
            T.fill(row_max, -T.infinity(dtype))
            T.clear(row_sum)
            for k in T.serial(T.ceildiv(N, block_N)):
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.if_then_else(
                        k * block_N + j < N, X[bx * block_M + i, k * block_N + j], -T.infinity(dtype)
                    )
                T.reduce_max(tile, tile_max, dim=1)
                for i in T.Parallel(block_M):
                    row_max[i] = T.max(row_max[i], tile_max[i])
            for k in T.serial(T.ceildiv(N, block_N)):
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.if_then_else(
                        k * block_N + j < N, T.exp2((X[bx * block_M + i, k * block_N + j] - row_max[i]) * log2e), 0
                    )
                T.reduce_sum(tile, tile_sum, dim=1)
                for i in T.Parallel(block_M):
                    row_sum[i] += tile_sum[i]
            for k in T.serial(T.ceildiv(N, block_N)):
                for i, j in T.Parallel(block_M, block_N):
                    Y[bx * block_M + i, k * block_N + j] = (
                        T.exp2((X[bx * block_M + i, k * block_N + j] - row_max[i]) * log2e) / row_sum[i]
                    )

    return main
