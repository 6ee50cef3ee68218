"""Flash-attention forward (non-causal): for a block of queries, stream the keys and values
in tiles, keeping a running row maximum and sum (the online softmax of puzzle 08) so the
full score matrix never exists. Keys past the end of a ragged sequence are masked to -inf.

Speed (H200, batch 4, 32 heads, 4096 x 64 fp16: 0.74x the time of SDPA's flash backend in the
search run):
- 128 queries x 128 keys per step with 256 threads: two warpgroups, each running Hopper's wgmma
  on 64 query rows, so every K and V tile loaded from HBM serves 128 queries;
- `T.Pipelined` loads the next K and V tiles (TMA, warp-specialised producer warps) while the
  tensor cores and the softmax work on the current ones;
- the mask is the GEMM's initial value (0 or -inf), so no extra pass over the scores; the scale
  and log2(e) are folded into one multiply before `exp2`;
- P is cast to fp16 in registers and multiplied with V straight from there; the output leaves
  through shared memory (`O_shared`) as one bulk copy per tile.
"""

import tilelang.language as T


# tilescope: batch=1 heads=8 seq_len=1000 dim=64
def kernel(batch, heads, seq_len, dim, block_M=128, block_N=128, num_stages=1, dtype="float16", accum_dtype="float32"):
    scale = (1.0 / dim) ** 0.5 * 1.4426950408889634  # softmax scale with log2(e) folded in
    shape = (batch, seq_len, heads, dim)

    @T.prim_func
    def main(
        Q: T.Tensor(shape, dtype),
        K: T.Tensor(shape, dtype),
        V: T.Tensor(shape, dtype),
        Output: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=256) as (bx, by, bz):
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

            for k in T.Pipelined(T.ceildiv(seq_len, block_N), num_stages=num_stages):
                T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], K_shared)
                for i, j in T.Parallel(block_M, block_N):  # the mask, as the GEMM's starting value
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
