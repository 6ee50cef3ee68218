"""Mistake: the window holds block_N inputs and no halo, so the last K - 1 outputs of every
block read past its end."""

import tilelang.language as T


# tilescope: batch=4 L=100000 K=7
def kernel(batch, L, K, block_N=1024, dtype="float32"):
    L_out = L - K + 1

    @T.prim_func
    def main(X: T.Tensor((batch, L), dtype), W: T.Tensor((K,), dtype), Y: T.Tensor((batch, L_out), dtype)):
        with T.Kernel(T.ceildiv(L_out, block_N), batch, threads=256) as (bx, b):
            window = T.alloc_shared((block_N,), dtype)
            acc = T.alloc_fragment((block_N,), dtype)
            T.copy(X[b, bx * block_N : bx * block_N + block_N], window)
            T.clear(acc)
            for t in T.serial(K):
                for i in T.Parallel(block_N):
                    acc[i] += window[i + t] * W[t]
            T.copy(acc, Y[b, bx * block_N : bx * block_N + block_N])

    return main
