"""Dequantised GEMM, C = A @ (scale * (Bq - 8)).T: B arrives as signed 4-bit values packed two
per byte (element 2k in the low nibble, 2k+1 in the high one) with one fp16 scale per output
column. Each K tile is unpacked into fp16 in shared memory, just before `T.gemm` reads it; the
scale is applied once, to the accumulator.

Speed (H200, 8192^3): K steps of 128 with two pipeline stages, 2813 µs against 3157 µs for steps of
64 with three (`benchmarks/tune_references.py`): half as many unpack/multiply turns per tile of C.
"""

import tilelang.language as T


# tilescope: M=1000 N=1000 K=1000
def kernel(M, N, K, block_M=256, block_N=128, block_K=128, num_stages=2, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        Bq: T.Tensor((N, K // 2), "uint8"),
        scale: T.Tensor((N,), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            Bq_shared = T.alloc_shared((block_N, block_K // 2), "uint8")
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(Bq[bx * block_N, k * (block_K // 2)], Bq_shared)
                for i, j in T.Parallel(block_N, block_K):
                    nibble = (T.cast(Bq_shared[i, j // 2], "int32") >> ((j % 2) * 4)) & 15
                    B_shared[i, j] = T.cast(nibble - 8, dtype)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] *= T.cast(scale[bx * block_N + j], accum_dtype)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
