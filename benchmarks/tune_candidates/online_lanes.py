"""Online softmax with a running max and sum per thread lane, merged once per row at the end."""

import tilelang.language as T


def kernel(M, N, block_M=1, block_N=1024, threads=256, dtype="float32"):
    log2e = 1.4426950408889634
    tiles = T.ceildiv(N, block_N)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            m = T.alloc_fragment((block_M, block_N), dtype)
            l = T.alloc_fragment((block_M, block_N), dtype)  # noqa: E741
            row_max = T.alloc_fragment((block_M,), dtype)
            row_sum = T.alloc_fragment((block_M,), dtype)
            T.fill(m, -T.infinity(dtype))
            T.clear(l)
            for k in T.serial(tiles):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    if k * block_N + j < N:
                        m_new = T.max(m[i, j], tile[i, j])
                        l[i, j] = l[i, j] * T.exp2((m[i, j] - m_new) * log2e) + T.exp2((tile[i, j] - m_new) * log2e)
                        m[i, j] = m_new
            T.reduce_max(m, row_max, dim=1)
            for i, j in T.Parallel(block_M, block_N):
                l[i, j] = l[i, j] * T.exp2((m[i, j] - row_max[i]) * log2e)
            T.reduce_sum(l, row_sum, dim=1)
            for i in T.Parallel(block_M):
                row_sum[i] = 1 / row_sum[i]
            for k in T.serial(tiles):
                back = tiles - 1 - k
                T.copy(X[bx * block_M, back * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.exp2((tile[i, j] - row_max[i]) * log2e) * row_sum[i]
                T.copy(tile, Y[bx * block_M, back * block_N])

    return main
