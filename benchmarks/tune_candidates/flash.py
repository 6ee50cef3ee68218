"""Flash attention forward with tunable tiles; ``schedule=1`` overlaps the P·V GEMM of one key tile
with the softmax of the next (a manual software pipeline, as TileLang's wgmma-pipelined example)."""

import tilelang.language as T


def kernel(
    batch,
    heads,
    seq_len,
    dim,
    block_M=128,
    block_N=128,
    num_stages=2,
    threads=256,
    schedule=0,
    dtype="float16",
    accum_dtype="float32",
):
    scale = (1.0 / dim) ** 0.5 * 1.4426950408889634
    shape = (batch, seq_len, heads, dim)
    if schedule:
        pipe = {"order": [0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 3, 4, 5], "stage": [0] * 10 + [1, 1, 1]}
    else:
        pipe = {"num_stages": num_stages}

    @T.prim_func
    def main(
        Q: T.Tensor(shape, dtype),
        K: T.Tensor(shape, dtype),
        V: T.Tensor(shape, dtype),
        Output: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            O_shared = T.alloc_shared((block_M, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            m = T.alloc_fragment((block_M,), accum_dtype)
            m_prev = T.alloc_fragment((block_M,), accum_dtype)
            rescale = T.alloc_fragment((block_M,), accum_dtype)
            tile_sum = T.alloc_fragment((block_M,), accum_dtype)
            l = T.alloc_fragment((block_M,), accum_dtype)  # noqa: E741

            T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(l, 0)
            T.fill(m, -T.infinity(accum_dtype))

            for k in T.Pipelined(T.ceildiv(seq_len, block_N), **pipe):
                T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], K_shared)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.if_then_else(k * block_N + j < seq_len, 0, -T.infinity(accum_dtype))
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m, m_prev)
                T.reduce_max(acc_s, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    rescale[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - m[i] * scale)
                T.reduce_sum(acc_s, tile_sum, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * rescale[i] + tile_sum[i]
                T.copy(acc_s, acc_s_cast)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= rescale[i]
                T.copy(V[bz, k * block_N : (k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= l[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])

    return main
