"""C = A + B over fp32 vectors: tiles of the vectors travel through registers with `T.copy`."""

import tilelang.language as T


# tilescope: N=1000003
def kernel(N, block_N=1024, threads=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bx:
            a = T.alloc_fragment((block_N,), dtype)
            b = T.alloc_fragment((block_N,), dtype)
            T.copy(A[bx * block_N], a)
            T.copy(B[bx * block_N], b)
            for i in T.Parallel(block_N):
                a[i] += b[i]
            T.copy(a, C[bx * block_N])

    return main
