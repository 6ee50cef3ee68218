"""GEMV with per-lane partial sums along K and one reduction per row at the end."""

import tilelang.language as T


def kernel(M, K, block_M=2, block_K=2048, threads=256, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), x: T.Tensor((K,), dtype), y: T.Tensor((M,), accum_dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            a = T.alloc_fragment((block_M, block_K), dtype)
            acc = T.alloc_fragment((block_M, block_K), accum_dtype)
            total = T.alloc_fragment((block_M,), accum_dtype)
            T.clear(acc)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[bx * block_M, k * block_K], a)
                for i, j in T.Parallel(block_M, block_K):
                    acc[i, j] += T.cast(a[i, j], accum_dtype) * T.cast(x[k * block_K + j], accum_dtype)
            T.reduce_sum(acc, total, dim=1)
            T.copy(total, y[bx * block_M])

    return main
