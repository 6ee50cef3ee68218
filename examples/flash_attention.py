"""Flash-attention forward (non-causal), written in the eager `@tilelang.jit` style.

Shapes come from the tensors at call time (`T.const`); the online softmax keeps a running
maximum and sum per query row so the full score matrix never exists.
"""

import tilelang
import tilelang.language as T


# tilescope: batch=1 heads=8 seq_len=1024 dim=64
@tilelang.jit
def flash_attention(Q, K, V, sm_scale: float = 0.125, block_M: int = 64, block_N: int = 64, num_stages: int = 2):
    batch, heads, seq_len, dim = T.const("batch heads seq_len dim")
    dtype = "float16"
    accum_dtype = "float32"
    scale = sm_scale * 1.44269504  # softmax scale (1/sqrt(dim)) folded with log2(e)

    Q: T.Tensor((batch, seq_len, heads, dim), dtype)
    K: T.Tensor((batch, seq_len, heads, dim), dtype)
    V: T.Tensor((batch, seq_len, heads, dim), dtype)
    Output = T.empty((batch, seq_len, heads, dim), dtype)

    with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
        Q_shared = T.alloc_shared((block_M, dim), dtype)
        K_shared = T.alloc_shared((block_N, dim), dtype)
        V_shared = T.alloc_shared((block_N, dim), dtype)
        acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
        acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
        acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
        scores_max = T.alloc_fragment((block_M,), accum_dtype)
        scores_max_prev = T.alloc_fragment((block_M,), accum_dtype)
        scores_scale = T.alloc_fragment((block_M,), accum_dtype)
        scores_sum = T.alloc_fragment((block_M,), accum_dtype)
        logsum = T.alloc_fragment((block_M,), accum_dtype)

        T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], Q_shared)
        T.fill(acc_o, 0)
        T.fill(logsum, 0)
        T.fill(scores_max, -T.infinity(accum_dtype))

        for k in T.Pipelined(T.ceildiv(seq_len, block_N), num_stages=num_stages):
            T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], K_shared)
            T.clear(acc_s)
            T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(scores_max, scores_max_prev)
            T.reduce_max(acc_s, scores_max, dim=1, clear=False)
            for i in T.Parallel(block_M):
                scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
            for i in T.Parallel(block_M):
                scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
            T.reduce_sum(acc_s, scores_sum, dim=1)
            for i in T.Parallel(block_M):
                logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
            T.copy(acc_s, acc_s_cast)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] *= scores_scale[i]
            T.copy(V[bz, k * block_N : (k + 1) * block_N, by, :], V_shared)
            T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

        for i, j in T.Parallel(block_M, dim):
            acc_o[i, j] /= logsum[i]
        T.copy(acc_o, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])
    return Output


if __name__ == "__main__":
    import torch

    q, k, v = (torch.randn(1, 1024, 8, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    out = flash_attention(q, k, v)
    ref = torch.nn.functional.scaled_dot_product_attention(*(t.transpose(1, 2) for t in (q, k, v)))
    torch.testing.assert_close(out, ref.transpose(1, 2), rtol=1e-2, atol=1e-2)
    print("ok")
