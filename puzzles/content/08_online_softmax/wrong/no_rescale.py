"""Mistake: the running sum is not rescaled when the running maximum grows."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=8, block_N=512, dtype="float32"):
    log2e = 1.4426950408889634

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            tile_max = T.alloc_fragment((block_M,), dtype)
            tile_sum = T.alloc_fragment((block_M,), dtype)
            m = T.alloc_fragment((block_M,), dtype)
            m_prev = T.alloc_fragment((block_M,), dtype)
            l = T.alloc_fragment((block_M,), dtype)  # noqa: E741
            T.fill(m, -T.infinity(dtype))
            T.clear(l)
            for k in T.serial(T.ceildiv(N, block_N)):
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.if_then_else(
                        k * block_N + j < N, X[bx * block_M + i, k * block_N + j], -T.infinity(dtype)
                    )
                T.reduce_max(tile, tile_max, dim=1)
                T.copy(m, m_prev)
                for i in T.Parallel(block_M):
                    m[i] = T.max(m_prev[i], tile_max[i])
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.exp2((tile[i, j] - m[i]) * log2e)
                T.reduce_sum(tile, tile_sum, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] + tile_sum[i]
            for k in T.serial(T.ceildiv(N, block_N)):
                for i, j in T.Parallel(block_M, block_N):
                    Y[bx * block_M + i, k * block_N + j] = (
                        T.exp2((X[bx * block_M + i, k * block_N + j] - m[i]) * log2e) / l[i]
                    )

    return main
