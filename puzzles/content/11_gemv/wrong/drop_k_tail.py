"""Mistake: the loop over K rounds down, so the last, partial tile of each row is never added."""

import tilelang.language as T


# tilescope: M=1000 K=3000
def kernel(M, K, block_M=4, block_K=1024, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), x: T.Tensor((K,), dtype), y: T.Tensor((M,), accum_dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            prod = T.alloc_fragment((block_M, block_K), accum_dtype)
            partial = T.alloc_fragment((block_M,), accum_dtype)
            total = T.alloc_fragment((block_M,), accum_dtype)
            T.clear(total)
            for k in T.serial(K // block_K):
                for i, j in T.Parallel(block_M, block_K):
                    prod[i, j] = T.if_then_else(
                        k * block_K + j < K,
                        T.cast(A[bx * block_M + i, k * block_K + j], accum_dtype)
                        * T.cast(x[k * block_K + j], accum_dtype),
                        0,
                    )
                T.reduce_sum(prod, partial, dim=1)
                for i in T.Parallel(block_M):
                    total[i] += partial[i]
            T.copy(total, y[bx * block_M])

    return main
